package config

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/results"
)

// fieldError is one broken rule, at a dotted key path of the file.
type fieldError struct {
	path string
	msg  string
}

var (
	// Model names are typed in comments (`models=llama,qwen3`) and used as key paths,
	// so no commas, dots or spaces.
	modelNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	backendRE   = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)
)

// MaxModels bounds the models of one config. A request runs a few of them, each for
// minutes under the guard; a config of thousands is a mistake (or an attack on the
// checks, which must stay cheap), refused with one error.
const MaxModels = 256

// MinRepeats and MaxRepeats bound limits.max_repeats: a compare starts with MinRepeats
// runs per side (fewer cannot reach p < 0.05 with a rank test), and at most MaxRepeats
// per side keeps one request within a working day of GPU time.
const (
	MinRepeats = 5
	MaxRepeats = 100
)

// MinBisectRuns and MaxBisectRuns bound limits.max_bisect_runs: a bisection measures
// each end 4 times before any commit between them, and 1000 runs is days of GPU time.
const (
	MinBisectRuns = 8
	MaxBisectRuns = 1000
)

// maxSamplings bounds the sampling settings: every model runs at each of them.
const maxSamplings = 32

// Bounds of the float values: the weights of a model that fits a GPU host, and the CPU
// share of one process in percent of one core on a host of up to 1,000 cores.
const (
	maxWeightsGiB       = 4096
	maxForeignCPUPctCap = 100000
)

const (
	// GitHub refuses comments above 65536 characters; bytes are the safe bound.
	maxCommentBytes = 65536
	// GitHub Actions ends a job on a self-hosted runner after 5 days.
	maxRunTimeout = 5 * 24 * time.Hour
	maxSampleHz   = 100
	// A compare slower by more than 1000 % is not a threshold anyone means.
	maxFailSlowerPct = 1000
)

// The nightly's bisection budget: DefaultBisectRuns single-model runs (the
// bisection's own budget: one bisection of a 32-commit range at a 5 % step), at most
// MaxBisectRuns.
const DefaultBisectRuns = 80

// Validate checks every rule of the schema. Errors name the key path
// (`models.llama.weights_gib: must be > 0`); Parse adds the file and line.
func (c Config) Validate() error {
	fes := c.check()
	if len(fes) == 0 {
		return nil
	}
	errs := make([]error, len(fes))
	for i, fe := range fes {
		errs[i] = fmt.Errorf("%s: %s", fe.path, fe.msg)
	}
	return errors.Join(errs...)
}

func (c Config) check() []fieldError {
	var fes []fieldError
	add := func(p, format string, a ...any) {
		fes = append(fes, fieldError{p, fmt.Sprintf(format, a...)})
	}

	switch c.Version {
	case Version:
	case 0:
		add("version", "missing; put `version: 1` at the top of the file")
	default:
		add("version", "schema version %d is not supported; this perfbot reads version %d", c.Version, Version)
	}
	if c.Epic < 0 {
		add("epic", "must be an issue number, or 0 for no epic comment (got %d)", c.Epic)
	}
	if !slices.Contains(Permissions, c.Trigger.MinPermission) {
		add("trigger.min_permission", "unknown permission %s; use one of %s",
			q(c.Trigger.MinPermission), strings.Join(Permissions, ", "))
	}

	c.checkModels(add)
	c.checkSampling(add)

	if c.Shape.Prompt < 1 {
		add("shape.prompt", "must be >= 1 token (got %d)", c.Shape.Prompt)
	}
	if c.Shape.Generate < 1 {
		add("shape.generate", "must be >= 1 token (got %d)", c.Shape.Generate)
	}
	if c.Shape.Warmup < 0 {
		add("shape.warmup", "must be >= 0 tokens (got %d)", c.Shape.Warmup)
	}

	c.checkRunners(add)
	c.checkGuard(add)

	for _, b := range []struct{ key, name string }{
		{"branches.profile", c.Branches.Profile},
		{"branches.baseline", c.Branches.Baseline},
	} {
		if msg := checkBranch(b.name); msg != "" {
			add(b.key, "%s", msg)
		}
	}
	if p, b := c.Branches.Profile, c.Branches.Baseline; p != "" && b != "" {
		switch {
		case p == b:
			add("branches.baseline", "is the same branch as branches.profile; give each its own")
		case strings.HasPrefix(b, p+"/") || strings.HasPrefix(p, b+"/"):
			add("branches.baseline", "%s and %s cannot both exist in git (one is a folder of the other)", q(p), q(b))
		}
	}

	for _, r := range []struct{ key, p string }{
		{"results.profiles", c.Results.Profiles},
		{"results.reports", c.Results.Reports},
		{"results.benchmarks", c.Results.Benchmarks},
	} {
		if msg := checkRepoPath(r.p); msg != "" {
			add(r.key, "%s", msg)
		}
	}
	if c.Rules != "" {
		if msg := checkRepoPath(c.Rules); msg != "" {
			add("rules", "%s (or \"\" for perfbot's own rules)", msg)
		}
	}

	for i, argv := range c.Verify {
		key := "verify." + strconv.Itoa(i)
		if len(argv) == 0 {
			add(key, "is an empty command; give an argv list like [python3, scripts/check.py]")
		} else if strings.TrimSpace(argv[0]) == "" {
			add(key+".0", "the program name is empty")
		}
	}

	c.checkTrend(add)

	if c.Limits.MaxModels < 1 || c.Limits.MaxModels > MaxModels {
		add("limits.max_models", "must be >= 1 and at most %d (got %d)", MaxModels, c.Limits.MaxModels)
	}
	if c.Limits.RunTimeout < time.Minute {
		add("limits.run_timeout_mins", "must be >= 1 minute (got %s)", c.Limits.RunTimeout)
	} else if c.Limits.RunTimeout > maxRunTimeout {
		add("limits.run_timeout_mins", "must be <= %d: GitHub Actions ends a self-hosted job after 5 days",
			int(maxRunTimeout/time.Minute))
	}
	if c.Limits.CommentMaxBytes < 1 || c.Limits.CommentMaxBytes > maxCommentBytes {
		add("limits.comment_max_bytes", "must be in 1..%d, GitHub's comment size limit (got %d)",
			maxCommentBytes, c.Limits.CommentMaxBytes)
	}
	if c.Limits.MaxRepeats < MinRepeats || c.Limits.MaxRepeats > MaxRepeats {
		add("limits.max_repeats", "must be in %d..%d: a compare starts with %d repeats per side (got %d)",
			MinRepeats, MaxRepeats, MinRepeats, c.Limits.MaxRepeats)
	}
	if n := c.Limits.MaxBisectCommits; n < 2 || n > results.MaxBisectCommits {
		add("limits.max_bisect_commits", "must be in 2..%d: a bisection's range holds the good commit, the bad one and those between (got %d)",
			results.MaxBisectCommits, n)
	}
	if n := c.Limits.MaxBisectRuns; n < MinBisectRuns || n > MaxBisectRuns {
		add("limits.max_bisect_runs", "must be in %d..%d: a bisection starts with %d runs of each end (got %d)",
			MinBisectRuns, MaxBisectRuns, MinBisectRuns/2, n)
	}
	if p := c.Compare.FailSlowerPct; !(p >= 0 && p <= maxFailSlowerPct) {
		add("compare.fail_slower_pct", "must be 0 (the check run stays neutral) or a slowdown in percent up to %d (got %v)", maxFailSlowerPct, p)
	}
	if p := c.Nightly.CreepPct; !(p >= 0.5 && p <= 50) {
		add("nightly.creep_pct", "must be in 0.5..50 percent: the gap to the best segment of the last 90 days reported as slow creep (got %g)", p)
	}
	if n := c.Nightly.BisectRuns; n < 0 || n > MaxBisectRuns {
		add("nightly.bisect_runs", "must be 0 (no bisection in the nightly) or a number of single-model runs up to %d (got %d)", MaxBisectRuns, n)
	}
	return fes
}

func (c Config) checkModels(add func(p, format string, a ...any)) {
	if len(c.Models) == 0 {
		add("models", "no models; configure at least one (name: {dir: ..., model_type: ..., weights_gib: ...})")
	}
	if len(c.Models) > MaxModels {
		add("models", "%d models, more than the %d perfbot takes; keep the models you profile", len(c.Models), MaxModels)
		return
	}
	seen := map[string]bool{}
	byBase := map[string]string{}
	for _, m := range c.Models {
		key := "models." + m.Name
		if !modelNameRE.MatchString(m.Name) {
			add(key, "model name %s: use letters, digits, '-' and '_' (at most 64, no dots or commas)", q(m.Name))
		}
		if seen[m.Name] {
			add(key, "model %s is configured twice", q(m.Name))
		}
		seen[m.Name] = true
		if m.Dir == "" {
			add(key+".dir", "missing; give the model's directory")
		} else if msg := checkRepoPath(m.Dir); msg != "" {
			add(key+".dir", "%s", msg)
		} else {
			// Run names are `<basename of dir>_<tag>`: two dirs with one basename would
			// write over each other's results.
			base := path.Base(strings.TrimRight(m.Dir, "/"))
			if other, dup := byBase[base]; dup {
				add(key+".dir", "has the same directory name %s as models.%s; their run names and results files would collide", q(base), other)
			} else {
				byBase[base] = m.Name
			}
		}
		switch {
		case m.ModelType == "" && m.ConfigPath == "":
			add(key, "give either model_type (e.g. llama) or config (the path of the model's config.json)")
		case m.ModelType != "" && m.ConfigPath != "":
			add(key+".config", "give model_type or config, not both")
		case m.ModelType != "":
			if strings.ContainsAny(m.ModelType, " \t\n/") {
				add(key+".model_type", "%s is not a model type (like llama or qwen3_moe)", q(m.ModelType))
			}
		default:
			if msg := checkRepoPath(m.ConfigPath); msg != "" {
				add(key+".config", "%s", msg)
			} else if !strings.HasSuffix(m.ConfigPath, ".json") {
				add(key+".config", "%s is not a JSON file; give the path of the model's config.json", q(m.ConfigPath))
			}
		}
		if !(m.WeightsGiB > 0 && m.WeightsGiB <= maxWeightsGiB) {
			add(key+".weights_gib", "must be > 0 and at most %d (the size of the weights in GiB, used to plan memory)", maxWeightsGiB)
		}
		if results.CheckRunName(results.RunName(m.Dir, results.Greedy)) != nil && m.Dir != "" && checkRepoPath(m.Dir) == "" {
			add(key+".dir", "its last folder %s cannot name a run (a printable name, not starting with a dot); run names are <folder>_<tag>",
				q(path.Base(strings.TrimRight(m.Dir, "/"))))
		}
	}
	known := make(map[string]bool, len(c.Models))
	for _, m := range c.Models {
		known[m.Name] = true
	}

	if c.DefaultModels != nil && len(c.DefaultModels) == 0 {
		add("default_models", "is empty; name at least one model, or leave the key out to run all")
	}
	picked := map[string]bool{}
	for i, name := range c.DefaultModels {
		key := "default_models." + strconv.Itoa(i)
		if !known[name] {
			add(key, "%s is not a configured model; known: %s", q(name), c.knownModels())
		}
		if picked[name] {
			add(key, "%s is listed twice", q(name))
		}
		picked[name] = true
	}
	n := len(c.DefaultModels)
	if c.DefaultModels == nil {
		n = len(c.Models)
	}
	if c.Limits.MaxModels >= 1 && n > c.Limits.MaxModels {
		add("default_models", "a plain `/profile rocm` would run %d models, more than limits.max_models (%d); set default_models to fewer or raise the limit",
			n, c.Limits.MaxModels)
	}
}

func (c Config) checkSampling(add func(p, format string, a ...any)) {
	if len(c.SamplingTags) == 0 {
		add("sampling", "is empty; list at least one setting (greedy, t<T> or t<T>-p<P>)")
	}
	if len(c.SamplingTags) > maxSamplings {
		add("sampling", "has %d settings, more than %d; every model runs at each of them", len(c.SamplingTags), maxSamplings)
		return
	}
	if len(c.Sampling) != len(c.SamplingTags) {
		add("sampling", "has %d settings but %d tags", len(c.Sampling), len(c.SamplingTags))
		return
	}
	seen := map[string]int{}
	for i, tag := range c.SamplingTags {
		key := "sampling." + strconv.Itoa(i)
		s, err := results.ParseSampling(tag)
		if err != nil {
			add(key, "%v", err)
			continue
		}
		if s != c.Sampling[i] {
			add(key, "tag %s does not match its setting %+v", q(tag), c.Sampling[i])
		}
		if j, dup := seen[s.Tag()]; dup {
			add(key, "is the same setting as sampling.%d (run tag %s)", j, s.Tag())
		} else {
			seen[s.Tag()] = i
		}
	}
}

func (c Config) checkRunners(add func(p, format string, a ...any)) {
	if len(c.Runners["rocm"]) == 0 {
		add("runners.rocm", "missing; the rocm jobs need runner labels, e.g. [self-hosted, linux, rocm]")
	}
	for _, backend := range slices.Sorted(maps.Keys(c.Runners)) {
		key := "runners." + backend
		if !backendRE.MatchString(backend) {
			add(key, "backend %s: use lowercase letters and digits (like rocm)", q(backend))
		}
		labels := c.Runners[backend]
		if len(labels) == 0 && backend != "rocm" {
			add(key, "has no labels; list the runner labels its jobs need")
		}
		seen := map[string]bool{}
		for i, l := range labels {
			lk := key + "." + strconv.Itoa(i)
			switch {
			case strings.TrimSpace(l) == "":
				add(lk, "is an empty label")
			case strings.ContainsAny(l, " \t\n,"):
				add(lk, "label %s contains a space or comma; runner labels cannot", q(l))
			case seen[strings.ToLower(l)]:
				add(lk, "label %s is listed twice (labels are case-insensitive)", q(l))
			}
			seen[strings.ToLower(l)] = true
		}
	}
}

func (c Config) checkGuard(add func(p, format string, a ...any)) {
	g := c.Guard
	if g.IdleWindow < time.Second {
		add("guard.idle_secs", "must be >= 1 second (got %s)", g.IdleWindow)
	}
	if g.SampleHz < 1 || g.SampleHz > maxSampleHz {
		add("guard.sample_hz", "must be in 1..%d (got %d)", maxSampleHz, g.SampleHz)
	}
	if g.MaxAttempts < 1 {
		add("guard.max_attempts", "must be >= 1 (got %d)", g.MaxAttempts)
	}
	if g.MaxWait < g.IdleWindow {
		add("guard.max_wait_secs", "(%d) is shorter than guard.idle_secs (%d): the guard could never see a full idle window",
			int(g.MaxWait/time.Second), int(g.IdleWindow/time.Second))
	}
	if !(g.MaxForeignCPUPct >= 0 && g.MaxForeignCPUPct <= maxForeignCPUPctCap) {
		add("guard.max_foreign_cpu_pct", "must be >= 0 and at most %d, percent of one core (0 turns CPU-contention detection off)", maxForeignCPUPctCap)
	}
	switch {
	case g.Lock == "":
		add("guard.lock", "missing; give the host-wide lock file shared with scripts/rocm_gpu_guard.sh")
	case !strings.HasPrefix(g.Lock, "/"):
		add("guard.lock", "%s must be an absolute path on the host (every guard on the host must agree on it)", q(g.Lock))
	case strings.HasSuffix(g.Lock, "/") || path.Clean(g.Lock) != g.Lock:
		add("guard.lock", "%s is not a clean file path; write it like /tmp/mlxcel-rocm-gpu-guard.lock", q(g.Lock))
	}
}

// maxTrendPath bounds trend.path: a folder name, not a document.
const maxTrendPath = 200

// checkTrend checks where the trend page goes: a known mode, a folder of its own
// (never one of the results folders, which hold files perfbot does not write there)
// and, for Pages, a branch that is none of the bot's others and no default branch.
func (c Config) checkTrend(add func(p, format string, a ...any)) {
	t := c.Trend
	if !slices.Contains(TrendModes, t.Publish) {
		add("trend.publish", "unknown mode %s; use one of %s", q(t.Publish), strings.Join(TrendModes, ", "))
	}
	if msg := checkRepoPath(t.Path); msg != "" {
		add("trend.path", "%s", msg)
	} else {
		switch clean := path.Clean(t.Path); {
		case len(t.Path) > maxTrendPath:
			add("trend.path", "is %d bytes long; give a folder of at most %d", len(t.Path), maxTrendPath)
		case clean != t.Path || strings.HasSuffix(t.Path, "/"):
			add("trend.path", "%s is not a clean folder path; write it like docs/benchmark_results/trend", q(t.Path))
		case slices.ContainsFunc(strings.Split(clean, "/"), func(p string) bool { return strings.HasPrefix(p, ".") }):
			add("trend.path", "%s has a part starting with .; give a plain folder like docs/benchmark_results/trend", q(t.Path))
		default:
			for _, r := range []struct{ key, p string }{
				{"results.profiles", c.Results.Profiles},
				{"results.reports", c.Results.Reports},
				{"results.benchmarks", c.Results.Benchmarks},
			} {
				rp := path.Clean(r.p)
				if clean == rp || strings.HasPrefix(rp, clean+"/") || (r.key != "results.reports" && strings.HasPrefix(clean, rp+"/")) {
					add("trend.path", "%s overlaps %s (%s); give the trend page a folder of its own", q(t.Path), r.key, q(r.p))
				}
			}
		}
	}
	if t.Publish != TrendPages {
		return
	}
	if msg := checkBranch(t.PagesBranch); msg != "" {
		add("trend.pages_branch", "%s", msg)
		return
	}
	for _, b := range []struct{ key, name string }{
		{"branches.profile", c.Branches.Profile},
		{"branches.baseline", c.Branches.Baseline},
	} {
		pb := t.PagesBranch
		switch {
		case b.name == "":
		case pb == b.name:
			add("trend.pages_branch", "is the same branch as %s; give the Pages branch its own", b.key)
		case strings.HasPrefix(pb, b.name+"-") || strings.HasPrefix(pb, b.name+"/") || strings.HasPrefix(b.name, pb+"/"):
			add("trend.pages_branch", "%s is taken by %s (its requests' branches, or a folder of it); give the Pages branch a name of its own", q(pb), b.key)
		}
	}
	if slices.Contains([]string{"main", "master"}, t.PagesBranch) {
		add("trend.pages_branch", "%s is a default branch name; perfbot pushes the trend page to a Pages branch of its own (gh-pages)", q(t.PagesBranch))
	}
}

// checkRepoPath returns why p is not a path inside the repository, or "".
func checkRepoPath(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is empty; give a path relative to the repository root"
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		return fmt.Sprintf("%s is absolute; give a path relative to the repository root", q(p))
	case strings.Contains(p, `\`):
		return fmt.Sprintf("%s contains a backslash; use / between folders", q(p))
	case len(p) >= 2 && p[1] == ':':
		return fmt.Sprintf("%s looks like a drive path; give a path relative to the repository root", q(p))
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Sprintf("%s leaves the repository with ..; give a path inside it", q(p))
		}
	}
	if path.Clean(p) == "." {
		return fmt.Sprintf("%s is the repository root; name a folder or file inside it", q(p))
	}
	return ""
}

// CheckBranch returns why git would refuse name as a branch (git check-ref-format), or ""
// when git accepts it. The bot's command parser checks ref=BRANCH with it too.
func CheckBranch(name string) string { return checkBranch(name) }

// checkBranch returns why git would refuse name as a branch (git check-ref-format), or "".
func checkBranch(name string) string {
	bad := func(why string) string {
		return fmt.Sprintf("%s is not a valid branch name: %s", q(name), why)
	}
	switch {
	case name == "":
		return "is empty; give a branch name like perfbot/rocm-profile"
	case name == "@" || name == "HEAD":
		return bad("git reserves that name")
	case strings.HasPrefix(name, "-"):
		return bad("it starts with -")
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/"):
		return bad("it starts or ends with /")
	case strings.Contains(name, "//"):
		return bad("it has an empty folder (//)")
	case strings.Contains(name, ".."):
		return bad("it contains ..")
	case strings.Contains(name, "@{"):
		return bad("it contains @{")
	case strings.HasSuffix(name, "."):
		return bad("it ends with .")
	case strings.HasPrefix(name, "refs/"):
		return bad("give the short name, without refs/")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return bad(fmt.Sprintf("it contains %q", r))
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return bad("a part starts with .")
		}
		if strings.HasSuffix(part, ".lock") {
			return bad("a part ends with .lock")
		}
	}
	return ""
}

// q quotes a value from the file for a message: cut, control characters escaped.
func q(s string) string { return safetext.Quote(s) }

// knownModels lists the configured model names for an error, the first few of them.
func (c Config) knownModels() string {
	const shown = 20
	names := c.modelNames()
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return safetext.Clean(list)
}

func (c Config) modelNames() []string {
	names := make([]string, len(c.Models))
	for i, m := range c.Models {
		names[i] = m.Name
	}
	return names
}
