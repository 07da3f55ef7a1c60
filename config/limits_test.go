package config

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/runner/results"
)

// Every validation limit, exactly at its edge (valid) and one step past it (the one
// error naming the key): a valid file must not be refused, nor a bad one accepted.
func TestValidateLimitsAtTheirEdges(t *testing.T) {
	t.Parallel()
	good := func() Config {
		c := Default()
		c.Models = []Model{{Name: "llama", Dir: "m/llama", ModelType: "llama", WeightsGiB: 4.5}}
		return c
	}
	cases := []struct {
		name string
		edit func(*Config)
		want string // the one error, "" for valid
	}{
		{"epic 0", func(c *Config) { c.Epic = 0 }, ""},
		{"epic -1", func(c *Config) { c.Epic = -1 }, "epic: must be an issue number, or 0 for no epic comment (got -1)"},
		{"prompt 1", func(c *Config) { c.Shape.Prompt = 1 }, ""},
		{"prompt 0", func(c *Config) { c.Shape.Prompt = 0 }, "shape.prompt: must be >= 1 token (got 0)"},
		{"generate 1", func(c *Config) { c.Shape.Generate = 1 }, ""},
		{"generate 0", func(c *Config) { c.Shape.Generate = 0 }, "shape.generate: must be >= 1 token (got 0)"},
		{"warmup 0", func(c *Config) { c.Shape.Warmup = 0 }, ""},
		{"warmup -1", func(c *Config) { c.Shape.Warmup = -1 }, "shape.warmup: must be >= 0 tokens (got -1)"},
		{"max models 1", func(c *Config) { c.Limits.MaxModels = 1 }, ""},
		{"max models 0", func(c *Config) { c.Limits.MaxModels = 0 }, "limits.max_models: must be >= 1 and at most 256 (got 0)"},
		{"max models 256", func(c *Config) { c.Limits.MaxModels = 256 }, ""},
		{"max models 257", func(c *Config) { c.Limits.MaxModels = 257 }, "limits.max_models: must be >= 1 and at most 256 (got 257)"},
		{"models at max models", func(c *Config) {
			c.Limits.MaxModels = 2
			c.Models = append(c.Models, Model{Name: "qwen", Dir: "m/qwen", ModelType: "qwen3_moe", WeightsGiB: 16})
		}, ""},
		{"models past max models", func(c *Config) {
			c.Limits.MaxModels = 1
			c.Models = append(c.Models, Model{Name: "qwen", Dir: "m/qwen", ModelType: "qwen3_moe", WeightsGiB: 16})
		}, "default_models: a plain `/profile rocm` would run 2 models, more than limits.max_models (1); set default_models to fewer or raise the limit"},
		{"run timeout 1 minute", func(c *Config) { c.Limits.RunTimeout = time.Minute }, ""},
		{"run timeout under a minute", func(c *Config) { c.Limits.RunTimeout = time.Minute - time.Second }, "limits.run_timeout_mins: must be >= 1 minute (got 59s)"},
		{"run timeout 5 days", func(c *Config) { c.Limits.RunTimeout = 5 * 24 * time.Hour }, ""},
		{"run timeout past 5 days", func(c *Config) { c.Limits.RunTimeout = 5*24*time.Hour + time.Minute },
			"limits.run_timeout_mins: must be <= 7200: GitHub Actions ends a self-hosted job after 5 days"},
		{"comment bytes 1", func(c *Config) { c.Limits.CommentMaxBytes = 1 }, ""},
		{"comment bytes 0", func(c *Config) { c.Limits.CommentMaxBytes = 0 }, "limits.comment_max_bytes: must be in 1..65536, GitHub's comment size limit (got 0)"},
		{"comment bytes 65536", func(c *Config) { c.Limits.CommentMaxBytes = 65536 }, ""},
		{"comment bytes 65537", func(c *Config) { c.Limits.CommentMaxBytes = 65537 }, "limits.comment_max_bytes: must be in 1..65536, GitHub's comment size limit (got 65537)"},
		{"repeats 5", func(c *Config) { c.Limits.MaxRepeats = 5 }, ""},
		{"repeats 4", func(c *Config) { c.Limits.MaxRepeats = 4 }, "limits.max_repeats: must be in 5..100: a compare starts with 5 repeats per side (got 4)"},
		{"repeats 100", func(c *Config) { c.Limits.MaxRepeats = 100 }, ""},
		{"repeats 101", func(c *Config) { c.Limits.MaxRepeats = 101 }, "limits.max_repeats: must be in 5..100: a compare starts with 5 repeats per side (got 101)"},
		{"bisect commits 2", func(c *Config) { c.Limits.MaxBisectCommits = 2 }, ""},
		{"bisect commits 1", func(c *Config) { c.Limits.MaxBisectCommits = 1 }, "limits.max_bisect_commits: must be in 2..1024: a bisection's range holds the good commit, the bad one and those between (got 1)"},
		{"bisect commits 1024", func(c *Config) { c.Limits.MaxBisectCommits = 1024 }, ""},
		{"bisect commits 1025", func(c *Config) { c.Limits.MaxBisectCommits = 1025 }, "limits.max_bisect_commits: must be in 2..1024: a bisection's range holds the good commit, the bad one and those between (got 1025)"},
		{"bisect runs 8", func(c *Config) { c.Limits.MaxBisectRuns = 8 }, ""},
		{"bisect runs 7", func(c *Config) { c.Limits.MaxBisectRuns = 7 }, "limits.max_bisect_runs: must be in 8..1000: a bisection starts with 4 runs of each end (got 7)"},
		{"bisect runs 1000", func(c *Config) { c.Limits.MaxBisectRuns = 1000 }, ""},
		{"bisect runs 1001", func(c *Config) { c.Limits.MaxBisectRuns = 1001 }, "limits.max_bisect_runs: must be in 8..1000: a bisection starts with 4 runs of each end (got 1001)"},
		{"fail slower 1000 %", func(c *Config) { c.Compare.FailSlowerPct = 1000 }, ""},
		{"fail slower past 1000 %", func(c *Config) { c.Compare.FailSlowerPct = 1000.5 }, "compare.fail_slower_pct: must be 0 (the check run stays neutral) or a slowdown in percent up to 1000 (got 1000.5)"},
		{"creep 0.5 %", func(c *Config) { c.Nightly.CreepPct = 0.5 }, ""},
		{"creep 50 %", func(c *Config) { c.Nightly.CreepPct = 50 }, ""},
		{"nightly bisect runs 0", func(c *Config) { c.Nightly.BisectRuns = 0 }, ""},
		{"nightly bisect runs 1000", func(c *Config) { c.Nightly.BisectRuns = 1000 }, ""},
		{"idle 1 s", func(c *Config) { c.Guard.IdleWindow = time.Second }, ""},
		{"idle under 1 s", func(c *Config) { c.Guard.IdleWindow = time.Second - time.Millisecond }, "guard.idle_secs: must be >= 1 second (got 999ms)"},
		{"sample hz 1", func(c *Config) { c.Guard.SampleHz = 1 }, ""},
		{"sample hz 0", func(c *Config) { c.Guard.SampleHz = 0 }, "guard.sample_hz: must be in 1..100 (got 0)"},
		{"sample hz 100", func(c *Config) { c.Guard.SampleHz = 100 }, ""},
		{"sample hz 101", func(c *Config) { c.Guard.SampleHz = 101 }, "guard.sample_hz: must be in 1..100 (got 101)"},
		{"attempts 1", func(c *Config) { c.Guard.MaxAttempts = 1 }, ""},
		{"attempts 0", func(c *Config) { c.Guard.MaxAttempts = 0 }, "guard.max_attempts: must be >= 1 (got 0)"},
		{"max wait equal to the idle window", func(c *Config) { c.Guard.MaxWait = c.Guard.IdleWindow }, ""},
		{"max wait under the idle window", func(c *Config) { c.Guard.MaxWait = c.Guard.IdleWindow - time.Second },
			"guard.max_wait_secs: (89) is shorter than guard.idle_secs (90): the guard could never see a full idle window"},
		{"foreign cpu 0", func(c *Config) { c.Guard.MaxForeignCPUPct = 0 }, ""},
		{"foreign cpu at the cap", func(c *Config) { c.Guard.MaxForeignCPUPct = 100000 }, ""},
		{"foreign cpu past the cap", func(c *Config) { c.Guard.MaxForeignCPUPct = 100000.5 },
			"guard.max_foreign_cpu_pct: must be >= 0 and at most 100000, percent of one core (0 turns CPU-contention detection off)"},
		{"foreign cpu negative", func(c *Config) { c.Guard.MaxForeignCPUPct = -0.5 }, "guard.max_foreign_cpu_pct: must be >= 0 and at most 100000, percent of one core (0 turns CPU-contention detection off)"},
		{"foreign cpu NaN", func(c *Config) { c.Guard.MaxForeignCPUPct = math.NaN() }, "guard.max_foreign_cpu_pct: must be >= 0 and at most 100000, percent of one core (0 turns CPU-contention detection off)"},
		{"weights tiny", func(c *Config) { c.Models[0].WeightsGiB = 1e-9 }, ""},
		{"weights 4096", func(c *Config) { c.Models[0].WeightsGiB = 4096 }, ""},
		{"weights past 4096", func(c *Config) { c.Models[0].WeightsGiB = 4096.5 }, "models.llama.weights_gib: must be > 0 and at most 4096 (the size of the weights in GiB, used to plan memory)"},
		{"weights 0", func(c *Config) { c.Models[0].WeightsGiB = 0 }, "models.llama.weights_gib: must be > 0 and at most 4096 (the size of the weights in GiB, used to plan memory)"},
		{"weights infinite", func(c *Config) { c.Models[0].WeightsGiB = math.Inf(1) }, "models.llama.weights_gib: must be > 0 and at most 4096 (the size of the weights in GiB, used to plan memory)"},
	}
	models := func(n int) func(*Config) {
		return func(c *Config) {
			c.Models = nil
			for i := range n {
				name := "m" + strconv.Itoa(i)
				c.Models = append(c.Models, Model{Name: name, Dir: "m/" + name, ModelType: "llama", WeightsGiB: 1})
			}
			c.DefaultModels = []string{"m0"}
		}
	}
	samplings := func(n int) func(*Config) {
		return func(c *Config) {
			c.Sampling, c.SamplingTags = nil, nil
			for i := range n {
				s := results.Sampling{Temperature: float64(i+1) / 100, TopP: 1}
				c.Sampling, c.SamplingTags = append(c.Sampling, s), append(c.SamplingTags, s.Tag())
			}
		}
	}
	cases = append(cases, []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"256 models", models(256), ""},
		{"257 models", models(257), "models: 257 models, more than the 256 perfbot takes; keep the models you profile"},
		{"32 samplings", samplings(32), ""},
		{"33 samplings", samplings(33), "sampling: has 33 settings, more than 32; every model runs at each of them"},
	}...)
	for _, c := range cases {
		cfg := good()
		c.edit(&cfg)
		var got []string
		if err := cfg.Validate(); err != nil {
			got = strings.Split(err.Error(), "\n")
		}
		var want []string
		if c.want != "" {
			want = []string{c.want}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: errors (-want +got):\n%s", c.name, diff)
		}
	}
}

// Durations in the file are bounded to a year either way before they become a
// time.Duration: a year is read, a second more is refused.
func TestParseDurationRange(t *testing.T) {
	t.Parallel()
	const year = 366 * 24 * 3600
	head := "version: 1\nmodels:\n  llama: {dir: m/llama, model_type: llama, weights_gib: 4.5}\n"
	cases := []struct {
		secs int
		want string
	}{
		{year, ""},
		{year + 1, "p.yml:4: guard.max_wait_secs: 31622401 is out of range (more than a year)"},
		// A year back is in range, and then too short for the idle window.
		{-year, "p.yml:4: guard.max_wait_secs: (-31622400) is shorter than guard.idle_secs (90): the guard could never see a full idle window"},
		{-year - 1, "p.yml:4: guard.max_wait_secs: -31622401 is out of range (more than a year)"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(head+"guard: {max_wait_secs: "+strconv.Itoa(c.secs)+"}\n"), "p.yml")
		got := ""
		if err != nil {
			got, _, _ = strings.Cut(err.Error(), "\n") // the first error is the one about the value
		}
		if got != c.want {
			t.Errorf("max_wait_secs %d: error %q, want %q", c.secs, got, c.want)
		}
	}
}

// A file of exactly MaxFileBytes is read; one byte more is refused before parsing.
func TestParseFileSizeEdge(t *testing.T) {
	t.Parallel()
	head := "version: 1\nmodels:\n  llama: {dir: m/llama, model_type: llama, weights_gib: 4.5}\n#"
	at := head + strings.Repeat("x", MaxFileBytes-len(head)-1) + "\n"
	if _, err := Parse([]byte(at), "p.yml"); err != nil {
		t.Errorf("a file of %d bytes: %v", len(at), err)
	}
	if _, err := Parse([]byte(at+"\n"), "p.yml"); err == nil || !strings.HasPrefix(err.Error(), "p.yml: ") || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("a file of %d bytes: %v, want it refused for its size", len(at)+1, err)
	}
}
