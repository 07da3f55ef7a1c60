package job

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/abrun"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/portdiff"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// CompareDir is the folder under the results root that holds compare folders, each
// named <gfx>_<A's commit8>_<B's commit8>.
const CompareDir = "compare"

// DefaultComparePerRun is the measured time of one run a compare's budget is
// estimated with when the caller gives none: one harness run of one model, its
// cooldown included.
const DefaultComparePerRun = 2 * time.Minute

// CompareOptions configure one compare session (docs/ab.md, "The GPU session").
type CompareOptions struct {
	Kind    results.CompareKind // bench or profile
	Host    host.Host           // nil means host.Local()
	RepoDir string              // the repository holding both commits (the pinned head's checkout)
	// ShaA is the base, ShaB the change: full 40-hex-digit SHAs.
	ShaA, ShaB string
	// Label names the CSV pair (pr-1900); "" means the two short SHAs, <A7>-<B7>.
	Label  string
	Config config.Config // the pinned head's config
	// Models are config model names; nil means Config.DefaultModels (all when empty).
	Models []string
	// Sampling settings of a profile compare; nil means Config.Sampling.
	Sampling []results.Sampling
	// OutDir is the results root: the compare folder is OutDir/compare/<gfx>_<A8>_<B8>;
	// the builds' and runs' logs go to OutDir/compare-logs, the worktrees to
	// OutDir/compare-worktrees (removed at the end).
	OutDir string
	// Folder is the compare folder, "" for OutDir/compare/<gfx>_<A8>_<B8>: a job that
	// runs a compare as one of its steps (the nightly's confirming A/B, a bisection's
	// culprit profile) puts it in its own folder. LogDir is where the builds' and runs'
	// logs go, "" for OutDir/compare-logs.
	Folder, LogDir string
	// TraceDir is the traces root of a profile compare ("" means <OutDir>/traces).
	TraceDir string
	Guard    guard.Options
	Rules    *attrib.Rules // a profile compare's attribution; nil means the config's, else perfbot's
	// Start and Cap are the repeats per side before the first decision and at most
	// (0: abrun's default start, 5, and the config's limits.max_repeats, else 10); MaxRedo the guard rejections of one run before
	// the session fails (0: 3).
	Start, Cap, MaxRedo int
	// PerRun is the measured time of one run (0: DefaultComparePerRun); Budget the
	// most the compare may take (0: the config's limits.run_timeout, none when unset).
	PerRun, Budget time.Duration
	// Every is the least time between two progress reports (0: a minute).
	Every   time.Duration
	Sandbox *sandbox.Settings
	// Progress gets the job's lines and, at most once per Every, the runs done of
	// those planned and the current verdicts.
	Progress io.Writer
	Now      func() time.Time // nil means time.Now
}

// CompareReport is what Compare did.
type CompareReport struct {
	// Folder is the compare folder; "" when the session stopped before it knew the GPU.
	Folder  string
	Compare results.Compare
}

// Compare runs a compare session: both commits checked out in worktrees and built
// before anything is measured, then for a bench compare every model measured in ABBA
// blocks with the repo's harness (each run under the guard, a rejected run redone in
// place, adaptive repeats, runner/abrun), or for a profile compare each side's
// profile session (a/ and b/) and the difference of the two decode profiles per run.
// A compare whose worst case is over the budget is refused before anything is built.
// compare.json is written with what was measured also when the session fails or is
// interrupted (state failed or interrupted).
func Compare(ctx context.Context, o CompareOptions) (CompareReport, error) {
	return runJob(ctx, "ROCm, GPU, checkout", func() (*comparer, error) { return newComparer(o) },
		func(c *comparer) CompareReport { return CompareReport{Folder: c.folder, Compare: *c.man} })
}

type comparer struct {
	session
	o      CompareOptions
	man    *results.Compare
	models []config.Model
	spec   abrun.Spec
	wt     abrun.Worktrees
	logs   string
	sbs    [2]*sandbox.Sandbox
	rows   map[rowKey]benchcsv.Row
	header []string
}

type rowKey struct {
	side  abrun.Side
	model string
	i     int
}

func newComparer(o CompareOptions) (*comparer, error) {
	jobDefaults(&o.Host, &o.Guard, &o.Now)
	if o.Kind != results.CompareBench && o.Kind != results.CompareProfile {
		return nil, badRequestf("compare kind %q: give bench or profile", o.Kind)
	}
	for _, s := range []struct{ side, sha string }{{"A (the base)", o.ShaA}, {"B", o.ShaB}} {
		if !abrun.IsFullSHA(s.sha) {
			return nil, badRequestf("commit %s is %q: give the full 40-hex-digit SHA", s.side, s.sha)
		}
	}
	if o.Label == "" {
		o.Label = strs.ShortSHA(o.ShaA)[:7] + "-" + strs.ShortSHA(o.ShaB)[:7]
	}
	if err := results.CheckCompareLabel(o.Label); err != nil {
		return nil, &badRequest{err: err}
	}
	if err := absFolders(folderArg{"the repository (RepoDir)", &o.RepoDir}, folderArg{"the results root (OutDir)", &o.OutDir}); err != nil {
		return nil, err
	}
	if o.TraceDir == "" {
		o.TraceDir = filepath.Join(o.OutDir, "traces")
	}
	if err := absFolder("the traces root (TraceDir)", &o.TraceDir); err != nil {
		return nil, err
	}
	if err := stepFolders(o.OutDir, "compare-logs", &o.LogDir, &o.Folder); err != nil {
		return nil, err
	}
	if !isDir(o.RepoDir) {
		return nil, fmt.Errorf("the repository %s is not a folder: give the checkout holding both commits", o.RepoDir)
	}
	if o.PerRun == 0 {
		o.PerRun = DefaultComparePerRun
	}
	if o.Budget == 0 {
		o.Budget = o.Config.Limits.RunTimeout
	}
	c := &comparer{o: o, rows: map[rowKey]benchcsv.Row{},
		session: newSession(o.Host, o.RepoDir, o.Guard, &progress{w: o.Progress, now: o.Now}, o.Now, "compare manifest")}
	c.save = func() error { return c.man.Save(c.folder) }
	if err := c.pickModels(); err != nil {
		return nil, err
	}
	c.spec = abrun.Spec{Start: o.Start, Cap: o.Cap, MaxRedo: o.MaxRedo,
		Metrics: []abrun.Metric{{Name: "decode tok/s", Direction: abstat.HigherIsBetter}, {Name: "prefill tok/s", Direction: abstat.HigherIsBetter}}}
	if c.spec.Cap == 0 {
		c.spec.Cap = o.Config.Limits.MaxRepeats
	}
	if c.spec.Cap == 0 {
		c.spec.Cap = 10
	}
	if c.spec.Start == 0 {
		c.spec.Start = min(abrun.DefaultStart, c.spec.Cap)
	}
	for _, m := range c.models {
		c.spec.Models = append(c.spec.Models, modelFolder(m))
	}
	if o.Kind == results.CompareProfile {
		samp, err := samplingOf(o.Sampling, o.Config.Sampling)
		if err != nil {
			return nil, err
		}
		c.o.Sampling = samp
		c.spec.Metrics = c.spec.Metrics[:1]
	} else if err := (abrun.Session{}).Check(c.spec); err != nil {
		return nil, &badRequest{err: err}
	}
	// The budget first: nothing is built for a compare that would be refused.
	if o.Budget > 0 {
		if err := abrun.CheckBudget(c.budgetSpec(), o.PerRun, o.Budget); err != nil {
			return nil, &badRequest{err: err}
		}
	}
	return c, nil
}

// budgetSpec is what the budget is checked on: for a bench compare the session's
// models at the cap; for a profile compare one run per model and setting a side.
func (c *comparer) budgetSpec() abrun.Spec {
	if c.o.Kind == results.CompareBench {
		return c.spec
	}
	s := abrun.Spec{Cap: 1}
	for _, m := range c.models {
		for _, smp := range c.o.Sampling {
			s.Models = append(s.Models, results.RunName(m.Dir, smp))
		}
	}
	return s
}

// pickModels resolves the requested model names against the config, in its order.
func (c *comparer) pickModels() error {
	models, err := wantedModels(c.o.Config, c.o.Models, "compare")
	if err != nil {
		return err
	}
	for _, m := range models {
		if err := results.CheckRunName(modelFolder(m)); err != nil {
			return badRequestf("models.%s.dir: %v", m.Name, err)
		}
	}
	c.models = models
	return nil
}

// open names the folder, starts the guard log and writes the first manifest.
func (c *comparer) open(info hostinfo.Info) error {
	o := c.o
	c.logs = o.LogDir
	wtDir := filepath.Join(o.OutDir, "compare-worktrees")
	gfx, err := c.openPair(info, pairFolder{given: o.Folder, out: o.OutDir, under: CompareDir, a: o.ShaA, b: o.ShaB, logs: c.logs, repo: o.RepoDir,
		manifest: results.CompareFile, what: "compare", noGFX: "the compare folder and its CSVs are named after it; check the ROCm install",
		subs: []pathSub{{wtDir, "<worktrees>"}, {o.TraceDir, "<trace-dir>"}}})
	if err != nil {
		return err
	}
	now := o.Now()
	date := now.Format(time.DateOnly)
	c.man = &results.Compare{
		Kind: o.Kind, ShaA: o.ShaA, ShaB: o.ShaB, Label: o.Label, Backend: "rocm", Host: benchcsv.HostTag(gfx), GFX: gfx,
		Date: date, Started: now, State: results.SessionRunning, Start: c.spec.Start, Cap: c.spec.Cap, MaxRedo: c.spec.MaxRedo,
		Options: abstat.DefaultOptions(), GuardLog: results.GuardLogFile, HostInfo: results.HostInfoFile,
	}
	if c.man.MaxRedo == 0 {
		c.man.MaxRedo = abrun.DefaultMaxRedo
	}
	for _, m := range c.spec.Metrics {
		c.man.Metrics = append(c.man.Metrics, results.CompareMetric{Name: m.Name, Direction: m.Direction.String()})
	}
	for _, name := range c.resultNames() {
		c.man.Models = append(c.man.Models, results.CompareModel{Model: name})
	}
	if o.Kind == results.CompareProfile {
		// Each side's guard log is its profile folder's.
		c.man.Start, c.man.Cap, c.man.GuardLog = 1, 1, ""
	}
	runs := fmt.Sprintf("up to %d repeats per side", c.man.Cap)
	if o.Kind == results.CompareProfile {
		runs = "one profile per side"
	}
	c.prog.printf("%s compare of %s (A) and %s (B), label %s, %s: %d model(s), folder %s", o.Kind,
		strs.ShortSHA(o.ShaA), strs.ShortSHA(o.ShaB), o.Label, runs, len(c.models), c.folder)
	// The worktrees' folder is made fresh: a left-over one is removed with its
	// worktrees' records first.
	if err := freshFolder(wtDir); err != nil {
		return err
	}
	return c.save()
}

// resultNames are the manifest's models: the model folders of a bench compare, the run
// names (<model dir>_<tag>) of a profile compare.
func (c *comparer) resultNames() []string {
	if c.o.Kind == results.CompareBench {
		return c.spec.Models
	}
	return c.budgetSpec().Models
}

// run prepares and builds both sides, then measures.
func (c *comparer) run(ctx context.Context) (err error) {
	wtDir := filepath.Join(c.o.OutDir, "compare-worktrees")
	c.prog.printf("checking out A and B in their own worktrees")
	if c.wt, err = abrun.Prepare(ctx, c.o.RepoDir, c.o.ShaA, c.o.ShaB, wtDir); err != nil {
		return err
	}
	defer func() {
		if rerr := c.wt.Remove(); rerr != nil {
			c.prog.printf("could not remove the worktrees: %v", rerr)
		}
	}()
	for _, side := range []abrun.Side{abrun.A, abrun.B} {
		wt := c.wt.Path(side)
		writable := []string{filepath.Join(wt, "target")}
		if c.o.Kind == results.CompareBench {
			writable = append(writable, filepath.Join(wt, HarnessOutput))
			if fi, err := os.Stat(filepath.Join(wt, results.HarnessCommand[0])); err != nil || fi.Mode()&0o111 == 0 {
				return fmt.Errorf("commit %s (%s) has no executable %s: a bench compare runs the repo's own harness on both sides", side, strs.ShortSHA(c.wt.Sha(side)), results.HarnessCommand[0])
			}
		} else {
			writable = append(writable, c.o.TraceDir)
		}
		sb, err := jobSandbox(c.o.Sandbox, c.prog, wt, writable...)
		if err != nil {
			return err
		}
		c.sbs[side] = sb
	}
	// Both builds before the first measured run: no compiler runs between them.
	build := func(ctx context.Context, worktree string) error {
		side := abrun.A
		if worktree == c.wt.B {
			side = abrun.B
		}
		c.use(side)
		argv := results.BenchBuildCommand
		if c.o.Kind == results.CompareProfile {
			argv = results.BuildCommand
		}
		logDir := filepath.Join(c.logs, strings.ToLower(side.String()))
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return err
		}
		var b results.Build
		return c.runBuild(ctx, false, buildStep{argv: argv, logDir: logDir, doing: "building " + side.String(),
			logHint: relHint(c.o.OutDir, filepath.Join(logDir, "build.log"))}, &b)
	}
	if err := c.wt.BuildBoth(ctx, build); err != nil {
		return err
	}
	if c.o.Kind == results.CompareProfile {
		return c.profiles(ctx)
	}
	return c.bench(ctx)
}

// use points the session's commands at side's worktree and sandbox.
func (c *comparer) use(side abrun.Side) {
	c.repo = c.wt.Path(side)
	c.sb = c.sbs[side]
}

// bench measures every model in ABBA blocks with the harness's single-model mode.
func (c *comparer) bench(ctx context.Context) error {
	s := abrun.Session{Now: c.o.Now, Every: c.o.Every}
	out, err := s.Run(ctx, c.spec, abrun.MeasureFunc(c.measureBench), c.report)
	c.record(out)
	c.finalStep(out)
	return err
}

// finalStep tells a progress file the runs measured and the verdicts the session
// ended with (the reports come at most once per Every, so the last may be older).
func (c *comparer) finalStep(out abrun.Outcome) {
	var verdicts []string
	for _, mo := range out.Models {
		var vs []abstat.Verdict
		for _, r := range mo.Results {
			vs = append(vs, r.Verdict)
		}
		if v := c.verdictLine(mo.Model, vs); v != "" && len(verdicts) < results.ProgressVerdictsMax {
			verdicts = append(verdicts, v)
		}
	}
	c.prog.step(Step{Phase: results.PhaseBench, Done: out.Runs, Planned: max(out.Runs, c.man.Planned), ETA: -1, Verdicts: verdicts})
}

// verdictLine is one model's verdicts for a progress file, "llama: decode tok/s
// faster, prefill tok/s no significant change"; "" without any.
func (c *comparer) verdictLine(model string, vs []abstat.Verdict) string {
	var parts []string
	for k, v := range vs {
		if k < len(c.spec.Metrics) {
			parts = append(parts, c.spec.Metrics[k].Name+" "+string(v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return model + ": " + strings.Join(parts, ", ")
}

// report writes a progress line, tells a progress file the runs done of those planned
// and the current verdicts, and keeps the planned count in the manifest.
func (c *comparer) report(p abrun.Progress) {
	c.man.Planned = p.Planned
	var parts, verdicts []string
	for _, m := range p.Models {
		if m.NA == 0 && m.NB == 0 {
			continue
		}
		var vs []string
		for k, v := range m.Verdicts {
			vs = append(vs, c.spec.Metrics[k].Name+": "+string(v))
		}
		st := fmt.Sprintf("%s A %d B %d", m.Model, m.NA, m.NB)
		if len(vs) > 0 {
			st += " (" + strings.Join(vs, ", ") + ")"
		}
		if v := c.verdictLine(m.Model, m.Verdicts); v != "" && len(verdicts) < results.ProgressVerdictsMax {
			verdicts = append(verdicts, v)
		}
		parts = append(parts, st)
	}
	c.prog.printf("compare: %d of %d runs done, measuring %s; %s", p.Done, p.Planned, p.Model, strings.Join(parts, "; "))
	c.prog.step(Step{Phase: results.PhaseBench, Done: min(p.Done, p.Planned), Planned: p.Planned, Model: p.Model, ETA: -1, Verdicts: verdicts})
}

// measureBench is one run: the harness's single-model mode in side's worktree, under
// the guard, with one attempt (runSingle); a rejection goes back to the session, which
// redoes the run in place.
func (c *comparer) measureBench(ctx context.Context, side abrun.Side, model string, i int) (abrun.Sample, error) {
	c.use(side)
	dir, cfgDir, err := c.modelDir(side, model)
	if err != nil {
		return abrun.Sample{}, err
	}
	label := fmt.Sprintf("compare %s %s run %d", model, side, i+1)
	logName := fmt.Sprintf("%s-%s-%d.log", model, strings.ToLower(side.String()), i+1)
	r, err := c.runSingle(ctx, singleRun{model: model, dir: dir, cfgDir: cfgDir, label: label, logPath: filepath.Join(c.logs, logName)})
	if err != nil {
		return abrun.Sample{}, err
	}
	if r.rejected {
		return abrun.Sample{Rejected: true, Reason: r.reason}, nil
	}
	if c.header == nil {
		c.header = r.header
	}
	c.rows[rowKey{side, model, i}] = r.row
	return abrun.Sample{Values: []float64{r.row.DecodeTokS, r.row.PrefillTokS}}, nil
}

// relHint is path relative to the results root when below it, for an error that says
// where a log is without naming local folders.
func relHint(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(p)
}

func orNone(s string) string {
	if s == "" {
		return "no measured row"
	}
	return s
}

// modelDir is the harness's argument for model (and the config's folder), for side's
// worktree and sandbox (modelArg).
func (c *comparer) modelDir(side abrun.Side, model string) (arg, cfgDir string, err error) {
	for _, m := range c.models {
		if modelFolder(m) == model {
			return modelArg(m, c.wt.Path(side), c.o.RepoDir, c.sbs[side])
		}
	}
	return "", "", fmt.Errorf("no model folder %s in the config", model)
}

// record puts a session's outcome in the manifest: the runs in the order they ran,
// each model's results, and the CSV pair of the accepted runs.
func (c *comparer) record(out abrun.Outcome) {
	c.man.Runs, c.man.Rejected = nil, out.Rejected
	var before, after []benchcsv.Row
	for mi, mo := range out.Models {
		cm := &c.man.Models[mi]
		cm.NA, cm.NB, cm.Done, cm.Results = mo.Count(abrun.A), mo.Count(abrun.B), mo.Done, nil
		for _, r := range mo.Runs {
			side := results.SideA
			if r.Side == abrun.B {
				side = results.SideB
			}
			c.man.Runs = append(c.man.Runs, results.CompareRun{Model: mo.Model, Side: side, I: r.I, Values: slices.Clone(r.Values), Rejected: r.Rejected})
			if row, ok := c.rows[rowKey{r.Side, mo.Model, r.I}]; ok {
				if r.Side == abrun.A {
					before = append(before, row)
				} else {
					after = append(after, row)
				}
			}
		}
		if mo.Done {
			for k, res := range mo.Results {
				look := 0
				if k < len(mo.Decisions) {
					look = mo.Decisions[k].Look
				}
				cm.Results = append(cm.Results, results.CompareResult{Metric: c.spec.Metrics[k].Name, Look: look, Result: res})
			}
		}
	}
	c.man.Planned = max(c.man.Planned, len(c.man.Runs))
	if c.header == nil || len(before)+len(after) == 0 {
		return
	}
	names := [2]string{}
	for k, rows := range [][]benchcsv.Row{before, after} {
		name, err := results.CompareCSVName(c.man.Backend, c.man.Host, c.man.Date, c.man.Label, k == 0)
		if err == nil {
			err = results.WriteFileAtomic(filepath.Join(c.folder, name), benchcsv.Format(c.header, rows))
		}
		if err != nil {
			c.prog.printf("could not write the CSV pair: %v", err)
			return
		}
		names[k] = name
	}
	c.man.CSVBefore, c.man.CSVAfter = names[0], names[1]
}

// profiles runs each side's profile session into a/ and b/ and the difference of the
// two decode profiles of every run both have.
func (c *comparer) profiles(ctx context.Context) error {
	rules := c.o.Rules
	if rules == nil {
		rules = attrib.Default()
		if c.o.Config.Rules != "" {
			r, err := attrib.Load(filepath.Join(c.wt.B, filepath.FromSlash(c.o.Config.Rules)))
			if err != nil {
				return fmt.Errorf("loading the attribution rules (rules: %s in the config): %w", c.o.Config.Rules, err)
			}
			rules = r
		}
	}
	names := []string{results.CompareDirA, results.CompareDirB}
	var reps [2]ProfileReport
	for _, side := range []abrun.Side{abrun.A, abrun.B} {
		dir := names[side]
		var models []string
		for _, m := range c.models {
			models = append(models, m.Name)
		}
		stage := filepath.Join(c.o.OutDir, "compare-stage-"+dir)
		if err := os.RemoveAll(stage); err != nil {
			return err
		}
		c.prog.printf("profile of %s (%s) into %s/", side, strs.ShortSHA(c.wt.Sha(side)), dir)
		rep, err := Profile(ctx, ProfileOptions{
			Host: c.o.Host, RepoDir: c.wt.Path(side), Config: c.o.Config, Models: models, Sampling: c.o.Sampling,
			OutDir: stage, TraceDir: filepath.Join(c.o.TraceDir, dir), Guard: c.o.Guard, Rules: rules, SkipBuild: true,
			Sandbox: c.o.Sandbox, Progress: c.o.Progress, Now: c.o.Now,
		})
		reps[side] = rep
		if rep.Folder != "" {
			dst := filepath.Join(c.folder, dir)
			if rerr := os.RemoveAll(dst); rerr != nil {
				return rerr
			}
			if rerr := os.Rename(rep.Folder, dst); rerr != nil {
				return fmt.Errorf("moving %s's profile into %s/: %w", side, dir, rerr)
			}
			os.RemoveAll(stage)
			if side == abrun.A {
				c.man.DirA = dir
			} else {
				c.man.DirB = dir
			}
		}
		c.recordProfile(reps)
		if err := c.step(err); err != nil {
			if stopped(ctx, err) {
				return fmt.Errorf("%w: the profile of %s: %w", errInterrupted, side, err)
			}
			return fmt.Errorf("the profile of %s: %w", side, err)
		}
	}
	return c.diffs(rules)
}

// recordProfile puts the profiled runs in the manifest: per run, each side's decode
// tok/s (the plain run's when there is one), A's runs first.
func (c *comparer) recordProfile(reps [2]ProfileReport) {
	c.man.Runs = nil
	vals := map[string][2][]float64{}
	for _, side := range []abrun.Side{abrun.A, abrun.B} {
		dir := []string{results.CompareDirA, results.CompareDirB}[side]
		for _, r := range reps[side].Session.Runs {
			if r.Status != results.StatusOK {
				continue
			}
			sum, err := results.ReadSummary(filepath.Join(c.folder, dir, r.Name+results.SummarySuffix))
			if err != nil {
				continue
			}
			v := float64(sum.ProfiledDecodeTokS)
			if sum.PlainDecodeTokS != nil && *sum.PlainDecodeTokS > 0 {
				v = float64(*sum.PlainDecodeTokS)
			}
			if v <= 0 {
				continue
			}
			cs := results.SideA
			if side == abrun.B {
				cs = results.SideB
			}
			c.man.Runs = append(c.man.Runs, results.CompareRun{Model: r.Name, Side: cs, I: 0, Values: []float64{v}, Run: r.Name})
			x := vals[r.Name]
			x[side] = append(x[side], v)
			vals[r.Name] = x
		}
	}
	for i := range c.man.Models {
		m := &c.man.Models[i]
		x := vals[m.Model]
		m.NA, m.NB, m.Done, m.Results = len(x[0]), len(x[1]), false, nil
		if m.NA > 0 && m.NB > 0 {
			res, err := abstat.Compare(x[0], x[1], abstat.HigherIsBetter, c.man.Options)
			if err == nil {
				m.Done = true
				m.Results = []results.CompareResult{{Metric: c.spec.Metrics[0].Name, Result: res}}
			}
		}
	}
	c.man.Planned = 2 * len(c.man.Models)
}

// diffs writes <run>_diff.json and <run>_diff.md for every run profiled on both sides.
func (c *comparer) diffs(rules *attrib.Rules) error {
	for _, m := range c.man.Models {
		if !m.Done {
			continue
		}
		a, err := portdiff.ReadRun(filepath.Join(c.folder, results.CompareDirA, m.Model+results.SummarySuffix))
		if err != nil {
			return fmt.Errorf("the profile of A: %w", err)
		}
		b, err := portdiff.ReadRun(filepath.Join(c.folder, results.CompareDirB, m.Model+results.SummarySuffix))
		if err != nil {
			return fmt.Errorf("the profile of B: %w", err)
		}
		d, err := portdiff.Compare(a, b, rules)
		if err != nil {
			return fmt.Errorf("comparing the profiles of %s: %w", m.Model, err)
		}
		js, err := d.JSON()
		if err != nil {
			return err
		}
		cd := results.CompareDiff{Model: m.Model, JSON: m.Model + results.DiffJSONSuffix, Markdown: m.Model + results.DiffMarkdownSuffix}
		if err := results.WriteFileAtomic(filepath.Join(c.folder, cd.JSON), js); err != nil {
			return err
		}
		if err := results.WriteFileAtomic(filepath.Join(c.folder, cd.Markdown), []byte(d.Markdown())); err != nil {
			return err
		}
		c.man.Diffs = append(c.man.Diffs, cd)
		c.prog.printf("%s: %d kernels changed, %d appeared, %d vanished", m.Model, len(d.Kernels), len(d.Appeared), len(d.Vanished))
	}
	return nil
}

// finish closes the manifest with the state the session ended in; it returns err,
// marked as an interruption when the context was cancelled.
func (c *comparer) finish(ctx context.Context, err error) error {
	return c.closeWith(ctx, err, func(t time.Time, st results.SessionState, msg string) {
		c.man.Finished, c.man.State, c.man.Error = t, st, msg
	})
}
