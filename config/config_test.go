package config

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/results"
)

const name = ".github/perfbot.yml"

// base is the smallest valid file: lines 1-6; cases append from line 7 on.
const base = `version: 1
models:
  llama:
    dir: models/llama
    model_type: llama
    weights_gib: 4.5
`

func TestMinimalFileTakesTheDocumentedDefaults(t *testing.T) {
	t.Parallel()
	got, err := Parse([]byte(base), name)
	if err != nil {
		t.Fatal(err)
	}
	// Written out literally (not from Default()) so that a changed default fails here
	// and in docs/config.md's review alike.
	want := Config{
		Version:       1,
		Epic:          0,
		Trigger:       Trigger{MinPermission: "write"},
		Models:        []Model{{Name: "llama", Dir: "models/llama", ModelType: "llama", WeightsGiB: 4.5}},
		DefaultModels: []string{"llama"},
		Sampling:      []results.Sampling{{Temperature: 0, TopP: 1}},
		SamplingTags:  []string{"greedy"},
		Shape:         Shape{Prompt: 512, Generate: 128, Warmup: 20},
		Runners:       map[string][]string{"rocm": {"self-hosted", "linux", "rocm", "gfx1151"}},
		Guard: Guard{
			IdleWindow:       90 * time.Second,
			SampleHz:         10,
			MaxAttempts:      5,
			MaxWait:          4 * time.Hour,
			MaxForeignCPUPct: 0,
			Lock:             "/tmp/mlxcel-rocm-gpu-guard.lock",
		},
		Branches: Branches{Profile: "perfbot/rocm-profile", Baseline: "perfbot/rocm-baseline", DeleteStale: true},
		Results:  ResultPaths{Profiles: "benchmarks/rocm_profiles", Reports: "docs/benchmark_results", Benchmarks: "benchmarks"},
		Rules:    "",
		Verify:   [][]string{{"python3", "scripts/ci/check_kernel_port_dispatch.py"}},
		Limits:   Limits{MaxModels: 8, RunTimeout: 4 * time.Hour, CommentMaxBytes: 65536, MaxRepeats: 10, MaxBisectCommits: 64, MaxBisectRuns: 80},
		Trend:    Trend{Publish: "commit", Path: "docs/benchmark_results/trend", PagesBranch: "gh-pages"},
		Nightly:  Nightly{CreepPct: 5, BisectRuns: 80},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("minimal file (-want +got):\n%s", d)
	}
	def := Default()
	want.Models, want.DefaultModels = nil, nil
	if d := cmp.Diff(want, def); d != "" {
		t.Errorf("Default() (-want +got):\n%s", d)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate() of a parsed config = %v", err)
	}
}

func TestExampleFileParses(t *testing.T) {
	t.Parallel()
	path := filepath.Join(testfix.RepoRoot(t), "docs", "perfbot.example.yml")
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Epic != 1814 {
		t.Errorf("Epic = %d, want 1814", c.Epic)
	}
	wantModels := []Model{
		{Name: "llama", Dir: "models/mlx/Meta-Llama-3.1-8B-Instruct-4bit", ModelType: "llama", WeightsGiB: 4.5},
		{Name: "qwen3", Dir: "models/mlx/Qwen3-30B-A3B-4bit", ConfigPath: "models/mlx/Qwen3-30B-A3B-4bit/config.json", WeightsGiB: 16},
	}
	if d := cmp.Diff(wantModels, c.Models); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"greedy", "t0.7", "t0.7-p0.95"}, c.SamplingTags); d != "" {
		t.Errorf("sampling tags (-want +got):\n%s", d)
	}
	wantSampling := []results.Sampling{{Temperature: 0, TopP: 1}, {Temperature: 0.7, TopP: 1}, {Temperature: 0.7, TopP: 0.95}}
	if d := cmp.Diff(wantSampling, c.Sampling); d != "" {
		t.Errorf("sampling (-want +got):\n%s", d)
	}
	// The example spells out every default except the models: the rest must equal Default().
	def := Default()
	c.Models, c.DefaultModels, c.Epic, c.Sampling, c.SamplingTags = nil, nil, 0, def.Sampling, def.SamplingTags
	if d := cmp.Diff(def, c); d != "" {
		t.Errorf("example's other keys differ from the defaults (-default +example):\n%s", d)
	}
}

func TestParseKeepsModelOrderAndResolvesOptionalKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		in    string
		check func(t *testing.T, c Config)
	}{
		{"model order is file order", `version: 1
models:
  zeta: {dir: m/zeta, model_type: llama, weights_gib: 1}
  alpha: {dir: m/alpha, config: m/alpha/config.json, weights_gib: 2}
  mid: {dir: m/mid, model_type: qwen3_moe, weights_gib: 3}
`, func(t *testing.T, c Config) {
			var names []string
			for _, m := range c.Models {
				names = append(names, m.Name)
			}
			if d := cmp.Diff([]string{"zeta", "alpha", "mid"}, names); d != "" {
				t.Errorf("model order (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"zeta", "alpha", "mid"}, c.DefaultModels); d != "" {
				t.Errorf("default models without the key (-want +got):\n%s", d)
			}
			if m, ok := c.Model("alpha"); !ok || m.ConfigPath != "m/alpha/config.json" || m.ModelType != "" {
				t.Errorf("Model(alpha) = %+v, %v", m, ok)
			}
			if _, ok := c.Model("nope"); ok {
				t.Error("Model(nope) found a model")
			}
		}},
		{"sampling tags are canonical", base + "sampling: [t0.70, t1, t0.5-p0.90, t0]\n", func(t *testing.T, c Config) {
			if d := cmp.Diff([]string{"t0.7", "t1", "t0.5-p0.9", "greedy"}, c.SamplingTags); d != "" {
				t.Errorf("tags (-want +got):\n%s", d)
			}
		}},
		{"runners replace the default map whole", base + "runners:\n  rocm: [self-hosted, strix]\n  cuda: [self-hosted, h100]\n", func(t *testing.T, c Config) {
			want := map[string][]string{"rocm": {"self-hosted", "strix"}, "cuda": {"self-hosted", "h100"}}
			if d := cmp.Diff(want, c.Runners); d != "" {
				t.Errorf("runners (-want +got):\n%s", d)
			}
		}},
		{"an empty verify list means no verification", base + "verify: []\n", func(t *testing.T, c Config) {
			if len(c.Verify) != 0 {
				t.Errorf("Verify = %q, want none", c.Verify)
			}
		}},
		{"a partial block keeps the other defaults", base + "guard:\n  idle_secs: 30\nlimits: {run_timeout_mins: 60}\n", func(t *testing.T, c Config) {
			want := Default().Guard
			want.IdleWindow = 30 * time.Second
			if d := cmp.Diff(want, c.Guard); d != "" {
				t.Errorf("guard (-want +got):\n%s", d)
			}
			if c.Limits.RunTimeout != time.Hour || c.Limits.MaxModels != 8 {
				t.Errorf("limits = %+v", c.Limits)
			}
		}},
		{"an empty key keeps its default", base + "epic:\nsampling:\nguard:\nverify:\nrunners:\ndefault_models:\n", func(t *testing.T, c Config) {
			def := Default()
			if c.Epic != 0 || c.Guard != def.Guard || !cmp.Equal(c.SamplingTags, def.SamplingTags) ||
				!cmp.Equal(c.Sampling, def.Sampling) || !cmp.Equal(c.Verify, def.Verify) || !cmp.Equal(c.Runners, def.Runners) ||
				!cmp.Equal(c.DefaultModels, []string{"llama"}) {
				t.Errorf("got %+v", c)
			}
		}},
		{"every value given", base + `epic: 7
trigger: {min_permission: maintain}
default_models: [llama]
shape: {prompt: 1024, generate: 64, warmup: 0}
guard: {idle_secs: 10, sample_hz: 1, max_attempts: 1, max_wait_secs: 10, max_foreign_cpu_pct: 12.5, lock: /run/lock/gpu.lock}
branches: {profile: bots/p, baseline: bots/b, delete_stale: false}
results: {profiles: out/profiles/, reports: out/reports, benchmarks: out}
rules: .github/perfbot-rules.yml
verify: [[make, check], [./scripts/verify.sh]]
limits: {max_models: 2, run_timeout_mins: 7200, comment_max_bytes: 1000, max_repeats: 100, max_bisect_commits: 1024, max_bisect_runs: 8}
nightly: {creep_pct: 7.5, bisect_runs: 0}
`, func(t *testing.T, c Config) {
			if c.Nightly.CreepPct != 7.5 || c.Nightly.BisectRuns != 0 {
				t.Errorf("nightly = %+v", c.Nightly)
			}
			if c.Epic != 7 || c.Trigger.MinPermission != "maintain" || c.Shape != (Shape{1024, 64, 0}) {
				t.Errorf("epic %d trigger %+v shape %+v", c.Epic, c.Trigger, c.Shape)
			}
			wantGuard := Guard{IdleWindow: 10 * time.Second, SampleHz: 1, MaxAttempts: 1, MaxWait: 10 * time.Second, MaxForeignCPUPct: 12.5, Lock: "/run/lock/gpu.lock"}
			if c.Guard != wantGuard {
				t.Errorf("guard = %+v", c.Guard)
			}
			if c.Branches != (Branches{"bots/p", "bots/b", false}) || c.Results != (ResultPaths{"out/profiles/", "out/reports", "out"}) {
				t.Errorf("branches %+v results %+v", c.Branches, c.Results)
			}
			if c.Rules != ".github/perfbot-rules.yml" || len(c.Verify) != 2 || c.Verify[1][0] != "./scripts/verify.sh" {
				t.Errorf("rules %q verify %q", c.Rules, c.Verify)
			}
			if c.Limits != (Limits{MaxModels: 2, RunTimeout: 120 * time.Hour, CommentMaxBytes: 1000, MaxRepeats: 100, MaxBisectCommits: 1024, MaxBisectRuns: 8}) {
				t.Errorf("limits = %+v", c.Limits)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tc.in), name)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// replace swaps the line `    weights_gib: 4.5` of base for repl.
func replace(repl string) string {
	return strings.Replace(base, "    weights_gib: 4.5\n", repl, 1)
}

func TestParseRejectsBadFiles(t *testing.T) {
	t.Parallel()
	const two = base + "  qwen3:\n    dir: models/qwen3\n    model_type: qwen3_moe\n    weights_gib: 16\n"
	cases := []struct {
		name, in string
		want     string // a prefix of one error line
	}{
		// syntax and shape
		{"empty file", "", name + ": the file is empty"},
		{"two documents", base + "---\nversion: 1\n", name + ":7: a second YAML document"},
		{"not a mapping", "- a\n- b\n", name + ":1: want a mapping, not a list"},
		{"duplicate model", base + "  llama:\n    dir: x\n", name + `:7: mapping key "llama" already defined at line 3`},
		{"unknown top-level key", base + "bogus: 1\n", name + ":7: bogus: unknown key; the top-level keys are version, epic, trigger, models,"},
		{"unknown nested key", base + "guard:\n  idle_sec: 30\n", name + ":8: guard.idle_sec: unknown key; the keys of guard are idle_secs, sample_hz,"},
		{"unknown model key", base + "    colour: red\n", name + ":7: models.llama.colour: unknown key; the keys of models.llama are dir, model_type, config, weights_gib"},
		{"unknown key in a flow mapping", base + "shape: {prompt: 1, tokens: 2}\n", name + ":7: shape.tokens: unknown key"},
		{"a sandbox setting", base + "sandbox: {mode: off}\n", name + ":7: sandbox: unknown key; the sandbox is the runner host's setting (PERFBOT_SANDBOX"},
		{"a sandbox setting in guard", base + "guard:\n  sandbox: off\n", name + ":8: guard.sandbox: unknown key; the sandbox is the runner host's setting"},
		// types
		{"version as decimal", strings.Replace(base, "version: 1", "version: 1.0", 1), name + ":1: version: want a whole number, not `1.0`"},
		{"version as text", strings.Replace(base, "version: 1", `version: "1"`, 1), name + ":1: version: want a whole number, not `1`"},
		{"number as text in a flow mapping", base + "shape: {generate: 128, prompt: lots}\n", name + ":7: shape.prompt: want a whole number, not `lots`"},
		{"fraction for a whole number", base + "guard: {idle_secs: 1.5}\n", name + ":7: guard.idle_secs: want a whole number, not `1.5`"},
		{"yes for a boolean", base + "branches:\n  delete_stale: yes\n", name + ":8: branches.delete_stale: want true or false, not `yes`"},
		{"text for a boolean", base + "branches:\n  delete_stale: \"true\"\n", name + ":8: branches.delete_stale: want true or false, not `true`"},
		{"weights as text", replace("    weights_gib: abc\n"), name + ":6: models.llama.weights_gib: want a number, not `abc`"},
		{"weights nan", replace("    weights_gib: .nan\n"), name + ":6: models.llama.weights_gib: want a number, not `.nan`"},
		{"list for text", base + "rules: [a, b]\n", name + ":7: rules: want text, not a list"},
		{"text for a list", base + "sampling: greedy\n", name + ":7: sampling: want a list, not `greedy`"},
		{"command not a list", base + "verify: [python3, check.py]\n", name + ":7: verify.0: want a list, not `python3`"},
		{"mapping for a list", base + "default_models: {llama: 1}\n", name + ":7: default_models: want a list, not a mapping"},
		// version and trigger
		{"version missing", strings.Replace(base, "version: 1\n", "", 1), name + ":1: version: missing; put `version: 1`"},
		{"version 2", strings.Replace(base, "version: 1", "version: 2", 1), name + ":1: version: schema version 2 is not supported"},
		{"negative epic", base + "epic: -3\n", name + ":7: epic: must be an issue number"},
		{"unknown permission", base + "trigger:\n  min_permission: owner\n", name + `:8: trigger.min_permission: unknown permission "owner"; use one of read, triage, write, maintain, admin`},
		// models
		{"no models", "version: 1\n", name + ":1: models: no models"},
		{"empty models", "version: 1\nmodels: {}\n", name + ":2: models: no models"},
		{"bad model name", strings.Replace(base, "  llama:", "  llama,8b:", 1), name + `:3: models.llama,8b: model name "llama,8b"`},
		{"weights zero", replace("    weights_gib: 0\n"), name + ":6: models.llama.weights_gib: must be > 0"},
		{"weights negative", replace("    weights_gib: -1\n"), name + ":6: models.llama.weights_gib: must be > 0"},
		{"weights missing", replace(""), name + ":3: models.llama.weights_gib: must be > 0"},
		{"dir missing", strings.Replace(base, "    dir: models/llama\n", "", 1), name + ":3: models.llama.dir: missing"},
		{"dir absolute", strings.Replace(base, "dir: models/llama", "dir: /data/models/llama", 1), name + `:4: models.llama.dir: "/data/models/llama" is absolute`},
		{"dir leaves the repo", strings.Replace(base, "dir: models/llama", "dir: models/../../llama", 1), name + `:4: models.llama.dir: "models/../../llama" leaves the repository`},
		{"dir home", strings.Replace(base, "dir: models/llama", "dir: ~/llama", 1), name + `:4: models.llama.dir: "~/llama" is absolute`},
		{"dir backslash", strings.Replace(base, "dir: models/llama", `dir: models\llama`, 1), name + `:4: models.llama.dir: "models\\llama" contains a backslash`},
		{"same dir name twice", strings.Replace(two, "dir: models/qwen3", "dir: other/llama", 1), name + `:8: models.qwen3.dir: has the same directory name "llama" as models.llama`},
		{"neither type nor config", strings.Replace(base, "    model_type: llama\n", "", 1), name + ":3: models.llama: give either model_type"},
		{"both type and config", base + "    config: models/llama/config.json\n", name + ":7: models.llama.config: give model_type or config, not both"},
		{"config not json", strings.Replace(base, "model_type: llama", "config: models/llama/config.yaml", 1), name + `:5: models.llama.config: "models/llama/config.yaml" is not a JSON file`},
		{"config absolute", strings.Replace(base, "model_type: llama", "config: /m/config.json", 1), name + `:5: models.llama.config: "/m/config.json" is absolute`},
		{"model type with a space", strings.Replace(base, "model_type: llama", "model_type: llama 3", 1), name + `:5: models.llama.model_type: "llama 3" is not a model type`},
		{"default model unknown", base + "default_models: [llama, gemma]\n", name + `:7: default_models.1: "gemma" is not a configured model; known: llama`},
		{"default model twice", base + "default_models: [llama, llama]\n", name + `:7: default_models.1: "llama" is listed twice`},
		{"default models empty", base + "default_models: []\n", name + ":7: default_models: is empty"},
		{"default models above the limit", two + "limits: {max_models: 1}\n", name + ":1: default_models: a plain `/profile rocm` would run 2 models, more than limits.max_models (1)"},
		// sampling and shape
		{"bad sampling tag", base + "sampling: [greedy, warm]\n", name + `:7: sampling.1: sampling "warm": want greedy, t<T> or t<T>-p<P>`},
		{"top-p above 1", base + "sampling: [t0.7-p1.5]\n", name + `:7: sampling.0: sampling "t0.7-p1.5": top-p must be in (0, 1]`},
		{"same sampling twice", base + "sampling:\n  - t0.7\n  - t0.70\n", name + ":9: sampling.1: is the same setting as sampling.0 (run tag t0.7)"},
		{"greedy spelt t0", base + "sampling: [greedy, t0]\n", name + ":7: sampling.1: is the same setting as sampling.0 (run tag greedy)"},
		{"empty sampling", base + "sampling: []\n", name + ":7: sampling: is empty"},
		{"zero prompt", base + "shape: {prompt: 0}\n", name + ":7: shape.prompt: must be >= 1 token"},
		{"zero generate", base + "shape: {generate: 0}\n", name + ":7: shape.generate: must be >= 1 token"},
		{"negative warmup", base + "shape: {warmup: -1}\n", name + ":7: shape.warmup: must be >= 0"},
		// runners
		{"no rocm labels", base + "runners:\n  rocm: []\n", name + ":8: runners.rocm: missing"},
		{"no rocm backend", base + "runners:\n  cuda: [self-hosted]\n", name + ":7: runners.rocm: missing"},
		{"empty label", base + "runners:\n  rocm: [self-hosted, \"\"]\n", name + ":8: runners.rocm.1: is an empty label"},
		{"label with a space", base + "runners:\n  rocm: [self-hosted, strix halo]\n", name + `:8: runners.rocm.1: label "strix halo" contains a space`},
		{"label twice", base + "runners:\n  rocm: [self-hosted, Self-Hosted]\n", name + `:8: runners.rocm.1: label "Self-Hosted" is listed twice`},
		{"bad backend name", base + "runners:\n  rocm: [x]\n  CUDA: [y]\n", name + `:9: runners.CUDA: backend "CUDA"`},
		{"backend without labels", base + "runners:\n  rocm: [x]\n  cuda: []\n", name + ":9: runners.cuda: has no labels"},
		// guard
		{"zero idle window", base + "guard:\n  idle_secs: 0\n", name + ":8: guard.idle_secs: must be >= 1 second"},
		{"zero sample rate", base + "guard:\n  sample_hz: 0\n", name + ":8: guard.sample_hz: must be in 1..100"},
		{"sample rate too high", base + "guard:\n  sample_hz: 1000\n", name + ":8: guard.sample_hz: must be in 1..100"},
		{"zero attempts", base + "guard:\n  max_attempts: 0\n", name + ":8: guard.max_attempts: must be >= 1"},
		{"wait below the idle window", base + "guard:\n  idle_secs: 90\n  max_wait_secs: 60\n", name + ":9: guard.max_wait_secs: (60) is shorter than guard.idle_secs (90)"},
		{"wait far too large", base + "guard:\n  max_wait_secs: 999999999999999\n", name + ":8: guard.max_wait_secs: 999999999999999 is out of range (more than a year)"},
		{"wait far too negative", base + "guard:\n  max_wait_secs: -999999999999999\n", name + ":8: guard.max_wait_secs: -999999999999999 is out of range (more than a year)"},
		{"negative cpu share", base + "guard:\n  max_foreign_cpu_pct: -5\n", name + ":8: guard.max_foreign_cpu_pct: must be >= 0"},
		{"relative lock", base + "guard:\n  lock: gpu.lock\n", name + `:8: guard.lock: "gpu.lock" must be an absolute path`},
		{"unclean lock", base + "guard:\n  lock: /tmp//gpu.lock\n", name + `:8: guard.lock: "/tmp//gpu.lock" is not a clean file path`},
		{"empty lock", base + "guard:\n  lock: \"\"\n", name + ":8: guard.lock: missing"},
		// branches
		{"branch with a space", base + "branches:\n  profile: perfbot/rocm profile\n", name + `:8: branches.profile: "perfbot/rocm profile" is not a valid branch name: it contains ' '`},
		{"branch with a colon", base + "branches:\n  profile: a:b\n", name + `:8: branches.profile: "a:b" is not a valid branch name: it contains ':'`},
		{"branch with ..", base + "branches:\n  profile: a..b\n", name + `:8: branches.profile: "a..b" is not a valid branch name: it contains ..`},
		{"branch part starting with a dot", base + "branches:\n  profile: perfbot/.x\n", name + ":8: branches.profile: \"perfbot/.x\" is not a valid branch name: a part starts with ."},
		{"branch ending .lock", base + "branches:\n  baseline: perfbot/x.lock\n", name + ":8: branches.baseline: \"perfbot/x.lock\" is not a valid branch name: a part ends with .lock"},
		{"branch ending with /", base + "branches:\n  profile: perfbot/\n", name + ":8: branches.profile: \"perfbot/\" is not a valid branch name: it starts or ends with /"},
		{"branch with @{", base + "branches:\n  profile: a@{1}\n", name + ":8: branches.profile: \"a@{1}\" is not a valid branch name: it contains @{"},
		{"branch @", base + "branches:\n  profile: \"@\"\n", name + ":8: branches.profile: \"@\" is not a valid branch name"},
		{"branch with a star", base + "branches:\n  profile: perf*\n", name + ":8: branches.profile: \"perf*\" is not a valid branch name: it contains '*'"},
		{"branch starting with -", base + "branches:\n  profile: -x\n", name + ":8: branches.profile: \"-x\" is not a valid branch name: it starts with -"},
		{"full ref name", base + "branches:\n  profile: refs/heads/x\n", name + ":8: branches.profile: \"refs/heads/x\" is not a valid branch name: give the short name"},
		{"empty branch", base + "branches:\n  profile: \"\"\n", name + ":8: branches.profile: is empty"},
		{"same branch twice", base + "branches:\n  profile: perfbot/x\n  baseline: perfbot/x\n", name + ":9: branches.baseline: is the same branch as branches.profile"},
		{"branch inside the other", base + "branches:\n  profile: perfbot\n  baseline: perfbot/base\n", name + `:9: branches.baseline: "perfbot" and "perfbot/base" cannot both exist`},
		// paths
		{"absolute results path", base + "results:\n  profiles: /srv/profiles\n", name + `:8: results.profiles: "/srv/profiles" is absolute`},
		{"results path leaving the repo", base + "results:\n  reports: ../docs\n", name + `:8: results.reports: "../docs" leaves the repository`},
		{"empty results path", base + "results:\n  benchmarks: \"\"\n", name + ":8: results.benchmarks: is empty"},
		{"results path at the root", base + "results:\n  benchmarks: ./\n", name + `:8: results.benchmarks: "./" is the repository root`},
		{"drive path", base + "results:\n  benchmarks: C:/bench\n", name + `:8: results.benchmarks: "C:/bench" looks like a drive path`},
		{"absolute rules", base + "rules: /etc/rules.yml\n", name + `:7: rules: "/etc/rules.yml" is absolute`},
		// verify and limits
		{"empty command", base + "verify: [[]]\n", name + ":7: verify.0: is an empty command"},
		{"empty program", base + "verify: [[\"\", x]]\n", name + ":7: verify.0.0: the program name is empty"},
		{"zero max models", base + "limits: {max_models: 0}\n", name + ":7: limits.max_models: must be >= 1"},
		{"zero timeout", base + "limits: {run_timeout_mins: 0}\n", name + ":7: limits.run_timeout_mins: must be >= 1 minute"},
		{"timeout above 5 days", base + "limits: {run_timeout_mins: 7201}\n", name + ":7: limits.run_timeout_mins: must be <= 7200"},
		{"comment limit above GitHub's", base + "limits: {comment_max_bytes: 65537}\n", name + ":7: limits.comment_max_bytes: must be in 1..65536"},
		{"comment limit zero", base + "limits: {comment_max_bytes: 0}\n", name + ":7: limits.comment_max_bytes: must be in 1..65536"},
		{"creep threshold zero", base + "nightly: {creep_pct: 0}\n", name + ":7: nightly.creep_pct: must be in 0.5..50 percent"},
		{"creep threshold above 50", base + "nightly: {creep_pct: 51}\n", name + ":7: nightly.creep_pct: must be in 0.5..50 percent"},
		{"creep threshold not a number", base + "nightly: {creep_pct: five}\n", name + ":7"},
		{"bisection budget negative", base + "nightly: {bisect_runs: -1}\n", name + ":7: nightly.bisect_runs: must be 0 (no bisection in the nightly) or a number of single-model runs up to 1000 (got -1)"},
		{"bisection budget above 1000", base + "nightly: {bisect_runs: 1001}\n", name + ":7: nightly.bisect_runs: must be 0"},
		{"bisection budget not whole", base + "nightly: {bisect_runs: 2.5}\n", name + ":7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tc.in), name)
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tc.in)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if strings.HasPrefix(line, tc.want) {
					return
				}
			}
			t.Errorf("error:\n%v\nhas no line starting %q", err, tc.want)
		})
	}
}

func TestParseReportsEveryErrorAtOnce(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(replace("    weights_gib: -1\n")+"epic: -1\nguard: {sample_hz: 0}\n"), name)
	if err == nil {
		t.Fatal("Parse accepted three bad values")
	}
	want := []string{
		name + ":7: epic: must be an issue number, or 0 for no epic comment (got -1)",
		name + ":6: models.llama.weights_gib: must be > 0 and at most 4096 (the size of the weights in GiB, used to plan memory)",
		name + ":8: guard.sample_hz: must be in 1..100 (got 0)",
	}
	if d := cmp.Diff(want, strings.Split(err.Error(), "\n")); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

func TestValidateWithoutAFileNamesTheKey(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err == nil || !strings.HasPrefix(err.Error(), "models: no models") {
		t.Errorf("Default().Validate() = %v, want the missing models", err)
	}
	c := Default()
	c.Models = []Model{{Name: "llama", Dir: "m/llama", ModelType: "llama", WeightsGiB: 4.5}}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() of a good config built in code = %v", err)
	}
	c.Sampling = append(c.Sampling, results.Sampling{Temperature: 0.7, TopP: 1})
	if err := c.Validate(); err == nil || err.Error() != "sampling: has 2 settings but 1 tags" {
		t.Errorf("Validate() with mismatched sampling = %v", err)
	}
	c = Default()
	c.Models = []Model{{Name: "a", Dir: "m/a", ModelType: "llama", WeightsGiB: 1}, {Name: "a", Dir: "n/b", ModelType: "llama", WeightsGiB: 1}}
	c.SamplingTags = []string{"t0.5"}
	err := c.Validate()
	for _, want := range []string{`models.a: model "a" is configured twice`, `sampling.0: tag "t0.5" does not match its setting`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want %q in it", err, want)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "perfbot.yml")
	if err := os.WriteFile(good, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(good); err != nil || len(c.Models) != 1 {
		t.Errorf("Load(good) = %+v, %v", c, err)
	}
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte(base+"epic: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":7: epic:") {
		t.Errorf("Load(bad) error = %v, want it to name the file and line", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yml")); err == nil || !os.IsNotExist(errorsUnwrapAll(err)) {
		t.Errorf("Load(missing) error = %v, want a not-exist error", err)
	}
}

func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

// TestBranchRulesAgreeWithGit checks the branch rules against git itself.
func TestBranchRulesAgreeWithGit(t *testing.T) {
	t.Parallel()
	// Names git takes but perfbot refuses on purpose: `@` means HEAD to git commands,
	// and a full ref name would become refs/heads/refs/heads/...
	stricter := map[string]bool{"@": true, "refs/heads/x": true}
	names := []string{
		"perfbot/rocm-profile", "perfbot/rocm-baseline", "a.b", "x@", "@x", "ünï/côde", "a-b_c/d.e",
		"@", "HEAD", "refs/heads/x", "-x", "a b", "a\tb", "a..b", "perfbot/.x", ".a", "x.lock", "a/b.lock/c",
		"a@{1}", "foo/bar@{", "perfbot/", "/x", "a//b", "x.", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", `a\b`, "a\x7fb",
	}
	for _, n := range names {
		err := exec.CommandContext(t.Context(), "git", "check-ref-format", "--branch", n).Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("running git: %v", err)
		}
		gitOK, ours := err == nil, checkBranch(n)
		switch {
		case stricter[n]:
			if !gitOK || ours == "" {
				t.Errorf("%q: git ok=%v, ours=%q; want git to take it and perfbot to refuse it", n, gitOK, ours)
			}
		case gitOK != (ours == ""):
			t.Errorf("%q: git ok=%v but perfbot says %q", n, gitOK, ours)
		}
	}
}
