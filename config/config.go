// Package config owns perfbot's one configuration file, the target repository's
// `.github/perfbot.yml` (schema version 1): its Go types, its defaults, strict parsing
// and validation with errors that name the file, the line and the key. The bot, the
// Action, the runner and the nightly job all read it through this package. It must not
// read anything but the file it is given: no GitHub calls, no model files, no host probes.
package config

import (
	"time"

	"github.com/lablup/perfbot/runner/results"
)

// DefaultPath is where the config lives in the target repository.
const DefaultPath = ".github/perfbot.yml"

// Version is the only schema version this package reads.
const Version = 1

// Permissions are GitHub's repository permission levels, weakest first.
var Permissions = []string{"read", "triage", "write", "maintain", "admin"}

// Config is a parsed and validated perfbot.yml.
type Config struct {
	Version int
	// Epic is the issue that gets the ranking comment; 0 means none.
	Epic    int
	Trigger Trigger
	// Models keeps the file's order: it is the run order.
	Models []Model
	// DefaultModels are the names `/profile rocm` runs without models=.
	DefaultModels []string
	// Sampling and SamplingTags are parallel: SamplingTags[i] is Sampling[i].Tag().
	Sampling     []results.Sampling
	SamplingTags []string
	Shape        Shape
	// Runners maps a backend (rocm) to the runner labels its jobs ask for.
	Runners  map[string][]string
	Guard    Guard
	Branches Branches
	Results  ResultPaths
	// Rules is the repo path of the attribution rules file; "" means perfbot's own.
	Rules string
	// Verify are argv lists run on the patched tree before pushing; empty means none.
	Verify [][]string
	Limits Limits
	Trend  Trend
	// Compare holds the A/B compares' settings.
	Compare Compare
	// Nightly holds the nightly baseline's settings.
	Nightly Nightly
}

// Nightly holds the nightly baseline's settings.
type Nightly struct {
	// CreepPct is the gap, in percent, between a model's current segment and the best
	// segment of the last 90 days that the baseline page reports as slow creep.
	CreepPct float64
	// BisectRuns caps the single-model runs a nightly spends bisecting its confirmed
	// regressions, all of them together; 0 turns the inline bisection off.
	BisectRuns int
}

// Trigger says who may start runs.
type Trigger struct {
	// MinPermission is one of Permissions.
	MinPermission string
}

// Model is one configured model. Exactly one of ModelType and ConfigPath is set.
type Model struct {
	Name       string
	Dir        string
	ModelType  string
	ConfigPath string
	WeightsGiB float64
}

// Shape is the bench's workload: prompt tokens, generated tokens, warmup tokens.
type Shape struct {
	Prompt   int
	Generate int
	Warmup   int
}

// Guard holds the idle-GPU guard's settings.
type Guard struct {
	IdleWindow  time.Duration
	SampleHz    int
	MaxAttempts int
	MaxWait     time.Duration
	// MaxForeignCPUPct of 0 turns CPU-contention detection off.
	MaxForeignCPUPct float64
	// Lock is the host-wide lock file shared with the repo's shell guard.
	Lock string
}

// Branches are the bot's branch names.
type Branches struct {
	Profile  string
	Baseline string
	// DeleteStale deletes, at each profile's publication, the bot branches (under
	// Profile) of requests whose issue or pull request is closed or merged.
	DeleteStale bool
}

// ResultPaths are the repo folders results are committed to.
type ResultPaths struct {
	Profiles   string
	Reports    string
	Benchmarks string
}

// Trend says where the nightly publish puts the trend page (docs/nightly.md).
type Trend struct {
	// Publish is TrendCommit, TrendPages or TrendOff.
	Publish string
	// Path is the repo folder of the page (commit) or its folder on the Pages site.
	Path string
	// PagesBranch is the branch GitHub Pages serves, for TrendPages.
	PagesBranch string
}

// Where the trend page goes (trend.publish).
const (
	TrendCommit = "commit" // committed in the baseline commit: Markdown and SVG files
	TrendPages  = "pages"  // one HTML page pushed to the Pages branch
	TrendOff    = "off"
)

// TrendModes lists trend.publish's values.
var TrendModes = []string{TrendCommit, TrendPages, TrendOff}

// Compare holds the A/B compares' settings.
type Compare struct {
	// FailSlowerPct fails a compare's check run when a comparison is called slower by
	// this many percent or more (the change of the medians); 0 leaves it neutral.
	FailSlowerPct float64
}

// Limits bound what one request may cost.
type Limits struct {
	MaxModels       int
	RunTimeout      time.Duration
	CommentMaxBytes int
	// MaxRepeats is the most repeats per side one compare may run (the cap of its
	// adaptive plan); repeats= of /bench rocm compare may ask for fewer.
	MaxRepeats int
	// MaxBisectCommits is the most commits one bisection's range may hold, both ends
	// included (/bench rocm bisect); at most results.MaxBisectCommits.
	MaxBisectCommits int
	// MaxBisectRuns is the most single-model runs one bisection may make (its budget),
	// the ends included.
	MaxBisectRuns int
}

// Default returns every default of the schema in one place: a key left out of the file
// takes the value here. It has no models (and so does not validate by itself);
// DefaultModels empty here means "all models".
func Default() Config {
	return Config{
		Version:       Version,
		Epic:          0,
		Trigger:       Trigger{MinPermission: "write"},
		Models:        nil,
		DefaultModels: nil,
		Sampling:      []results.Sampling{results.Greedy},
		SamplingTags:  []string{results.Greedy.Tag()},
		Shape:         Shape{Prompt: 512, Generate: 128, Warmup: 20},
		Runners:       map[string][]string{"rocm": {"self-hosted", "linux", "rocm", "gfx1151"}},
		Guard: Guard{
			IdleWindow:       90 * time.Second,
			SampleHz:         10,
			MaxAttempts:      5,
			MaxWait:          14400 * time.Second,
			MaxForeignCPUPct: 0,
			Lock:             "/tmp/mlxcel-rocm-gpu-guard.lock",
		},
		Branches: Branches{Profile: "perfbot/rocm-profile", Baseline: "perfbot/rocm-baseline", DeleteStale: true},
		Results: ResultPaths{
			Profiles:   "benchmarks/rocm_profiles",
			Reports:    "docs/benchmark_results",
			Benchmarks: "benchmarks",
		},
		Rules:   "",
		Verify:  [][]string{{"python3", "scripts/ci/check_kernel_port_dispatch.py"}},
		Limits:  Limits{MaxModels: 8, RunTimeout: 240 * time.Minute, CommentMaxBytes: 65536, MaxRepeats: 10, MaxBisectCommits: 64, MaxBisectRuns: DefaultBisectRuns},
		Trend:   Trend{Publish: TrendCommit, Path: "docs/benchmark_results/trend", PagesBranch: "gh-pages"},
		Nightly: Nightly{CreepPct: 5, BisectRuns: DefaultBisectRuns},
	}
}

// Model returns the model of that name.
func (c Config) Model(name string) (Model, bool) {
	for _, m := range c.Models {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}
