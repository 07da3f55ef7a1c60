package job

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/changepoint"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// HarnessOutput is where both harnesses write their CSVs in the checkout (bench_mlxlm.py
// has no option for it).
const HarnessOutput = "benchmarks"

// BenchOptions configure one nightly baseline run.
type BenchOptions struct {
	Host    host.Host // nil means host.Local()
	RepoDir string    // the mlxcel checkout, built (or to build) at the commit measured
	Config  config.Config
	// OutDir is the results root: the CSVs, the guard evidence and the manifest go to
	// OutDir/<results.benchmarks>/, the harnesses' output to OutDir/logs/.
	OutDir string
	// HistoryDir is the nightly history to compare with (the default branch's
	// benchmarks folder); "" means the checkout's <results.benchmarks>.
	HistoryDir string
	// ModelsDir is MODELS_DIR for the harnesses, relative to the checkout; "" means the
	// folder holding the config's model folders (models/mlx), else models.
	ModelsDir string
	Guard     guard.Options
	SkipBuild bool
	// NoBaseline skips the mlx-lm sweep; NoRemeasure reports suspects unconfirmed.
	NoBaseline  bool
	NoRemeasure bool
	Rules       baseline.Rules
	// Sandbox are the host's sandbox settings for the build and the harnesses; nil
	// means the host's, read from perfbot's environment (sandbox.FromEnv).
	Sandbox  *sandbox.Settings
	Progress io.Writer
	Now      func() time.Time // nil means time.Now
}

// BenchReport is what Bench did.
type BenchReport struct {
	// Folder holds the files to publish; "" when the run stopped before it knew the GPU.
	Folder   string
	Manifest results.Nightly
}

// HarnessProblems are the checks' errors: a CSV the harness got wrong.
func (r BenchReport) HarnessProblems() []benchcsv.Problem {
	return benchcsv.Errors(r.Manifest.Problems)
}

// Failed lists the sweeps and re-measures that did not give their result.
func (r BenchReport) Failed() []string {
	var out []string
	for _, s := range r.Manifest.Sweeps {
		if s.Status != results.SweepOK {
			out = append(out, s.Name+" sweep ("+string(s.Status)+")")
		}
	}
	for _, m := range r.Manifest.Remeasures {
		if m.Reason != "" && m.Decode == 0 {
			out = append(out, "re-measure of "+m.Model)
		}
	}
	return out
}

// OnlyGuardGaveUp says every failure was the guard giving up (a busy host), and there
// was one.
func (r BenchReport) OnlyGuardGaveUp() bool {
	n := 0
	for _, s := range r.Manifest.Sweeps {
		if s.Status == results.SweepOK {
			continue
		}
		if s.Status != results.SweepGuardGaveUp {
			return false
		}
		n++
	}
	return n > 0 && len(r.HarnessProblems()) == 0
}

// bencher is one nightly run in progress.
type bencher struct {
	session
	o       BenchOptions
	logs    string
	harness string // the checkout's harness output folder
	man     *results.Nightly
	last    results.Nightly // last night's manifest, for the ETA
	hasLast bool
	models  []string // the model folders' names, in the harness's order
}

// Bench runs the nightly baseline: host facts, the build, the mlxcel sweep and the
// mlx-lm sweep (each once under the guard, a contended attempt rerun from scratch), the
// checks of their CSVs, the comparison with the nightly history and one re-measure of
// each suspect. Everything it makes goes to the folder, with the manifest; a sweep that
// fails is recorded and the run goes on. The error is for a run that could not go on.
func Bench(ctx context.Context, o BenchOptions) (BenchReport, error) {
	return runJob(ctx, "ROCm, GPU, memory, checkout", func() (*bencher, error) { return newBencher(o) },
		func(b *bencher) BenchReport { return BenchReport{Folder: b.folder, Manifest: *b.man} })
}

func newBencher(o BenchOptions) (*bencher, error) {
	jobDefaults(&o.Host, &o.Guard, &o.Now)
	if o.Rules == (baseline.Rules{}) {
		o.Rules = baseline.DefaultRules()
	}
	if err := o.Rules.Validate(); err != nil {
		return nil, err
	}
	if o.Config.Results.Benchmarks == "" {
		o.Config.Results.Benchmarks = config.Default().Results.Benchmarks
	}
	if err := absFolder("the checkout (RepoDir)", &o.RepoDir); err != nil {
		return nil, err
	}
	if err := absFolder("the results root (OutDir)", &o.OutDir); err != nil {
		return nil, err
	}
	if !isDir(o.RepoDir) {
		return nil, fmt.Errorf("the checkout %s is not a folder: give the mlxcel checkout to benchmark", o.RepoDir)
	}
	if o.HistoryDir == "" {
		o.HistoryDir = filepath.Join(o.RepoDir, filepath.FromSlash(o.Config.Results.Benchmarks))
	}
	if o.ModelsDir == "" {
		o.ModelsDir = modelsDirOf(o.Config)
	}
	if filepath.IsAbs(o.ModelsDir) || strings.HasPrefix(filepath.Clean(o.ModelsDir), "..") {
		// The harnesses write the model path into every row: a relative one keeps local
		// folders out of the committed CSVs.
		return nil, fmt.Errorf("the models folder %s must be relative to the checkout (the harnesses write it into every CSV row)", o.ModelsDir)
	}
	for _, s := range []string{results.HarnessCommand[0], results.BaselineCommand[0]} {
		if s == results.BaselineCommand[0] && o.NoBaseline {
			continue
		}
		if fi, err := os.Stat(filepath.Join(o.RepoDir, s)); err != nil || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("the checkout has no executable %s: the nightly runs the repo's own harness; check out a commit that has it", s)
		}
	}
	b := &bencher{o: o, session: newSession(o.Host, o.RepoDir, o.Guard, &progress{w: o.Progress, now: o.Now}, o.Now, "nightly manifest"),
		harness: filepath.Join(o.RepoDir, HarnessOutput)}
	b.save = func() error { return b.man.Save(b.folder) }
	ents, err := os.ReadDir(filepath.Join(o.RepoDir, filepath.FromSlash(o.ModelsDir)))
	if err != nil {
		return nil, fmt.Errorf("reading the models folder %s of the checkout: %w (give --models-dir)", o.ModelsDir, err)
	}
	for _, e := range ents {
		if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			b.models = append(b.models, e.Name())
		}
	}
	if len(b.models) == 0 {
		return nil, fmt.Errorf("the models folder %s of the checkout has no model folder: nothing to benchmark", o.ModelsDir)
	}
	// The build writes the cargo target dir, the harnesses their CSVs: nothing else.
	sb, err := jobSandbox(o.Sandbox, b.prog, o.RepoDir, filepath.Join(o.RepoDir, "target"), b.harness)
	if err != nil {
		return nil, err
	}
	for _, m := range b.models {
		if dir := filepath.Join(o.RepoDir, filepath.FromSlash(o.ModelsDir), m); !sb.Visible(dir) {
			return nil, fmt.Errorf("the model folder %s/%s is outside the sandbox (the checkout and %s, symbolic links resolved): add its folder to %s on the runner",
				o.ModelsDir, m, sandbox.EnvReadOnly, sandbox.EnvReadOnly)
		}
	}
	b.sb = sb
	return b, nil
}

// modelsDirOf is the folder the config's model folders share (models/mlx), else models.
func modelsDirOf(c config.Config) string {
	common := ""
	for i, m := range c.Models {
		d := filepath.Dir(filepath.Clean(filepath.FromSlash(m.Dir)))
		if filepath.IsAbs(d) {
			return "models"
		}
		if i == 0 {
			common = d
		} else if d != common {
			return "models"
		}
	}
	if common == "" || common == "." {
		return "models"
	}
	return filepath.ToSlash(common)
}

// open names the folder and the files, and refuses a checkout where today's CSVs exist
// already (a harness would overwrite or resume from them).
func (b *bencher) open(info hostinfo.Info) error {
	o := b.o
	gfx, commit, err := target(info, "", "the files are named after it; check the ROCm install")
	if err != nil {
		return err
	}
	now := o.Now()
	date := now.Format(time.DateOnly)
	name := benchcsv.Name{Backend: "rocm", Host: benchcsv.HostTag(gfx), Date: date}
	if ents, err := os.ReadDir(b.harness); err == nil {
		for _, e := range ents {
			if n, err := benchcsv.ParseName(e.Name()); err == nil && n.Date == date {
				return fmt.Errorf("%s/%s (dated today) is already in the checkout: the harness would overwrite it (bench_decode.sh) or resume from it (bench_mlxlm.py); move it away first",
					HarnessOutput, e.Name())
			}
		}
	}
	folder := filepath.Join(o.OutDir, filepath.FromSlash(o.Config.Results.Benchmarks))
	b.logs = filepath.Join(o.OutDir, "logs")
	for _, d := range []string{folder, b.logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating the results folder: %w", err)
		}
	}
	stem := name.Stem()
	if err := b.start(folder, filepath.Join(folder, stem+results.GuardLogSuffix),
		pathSub{o.RepoDir, "<checkout>"}, pathSub{o.OutDir, "<out>"}, pathSub{o.HistoryDir, "<history>"}, pathSub{os.TempDir(), "<tmp>"}); err != nil {
		return err
	}
	b.man = &results.Nightly{
		Date: date, Started: now, State: results.SessionRunning, Commit: commit, GFX: gfx,
		Host: name.Host, Stem: stem, ModelsDir: o.ModelsDir, HostInfo: info,
		Build: results.Build{Command: results.BenchBuildCommand, Status: results.BuildSkipped}, GuardLog: filepath.Base(b.guardLog),
	}
	b.last, b.hasLast = results.LastNight(o.HistoryDir, name.Pair(), date)
	if b.hasLast {
		b.prog.printf("ETA from the durations of %s", b.last.Stem)
	}
	b.prog.printf("nightly %s at %s: %d model folders in %s, files to %s", stem, strs.ShortSHA(b.man.Commit), len(b.models), o.ModelsDir, b.folder)
	return b.save()
}

// run does the steps; it returns only what stops the run.
func (b *bencher) run(ctx context.Context) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	sweeps := []struct {
		name string
		argv []string
	}{{results.SweepMlxcel, results.HarnessCommand}, {results.SweepMlxLM, results.BaselineCommand}}
	for _, s := range sweeps {
		if s.name == results.SweepMlxLM && b.o.NoBaseline {
			b.man.Sweeps = append(b.man.Sweeps, results.Sweep{Name: s.name, Command: s.argv, Status: results.SweepNotRun, Reason: "skipped (--no-baseline)"})
			continue
		}
		sw, err := b.sweep(ctx, s.name, s.argv)
		b.man.Sweeps = append(b.man.Sweeps, sw)
		b.man.CSVs = append(b.man.CSVs, sw.CSVs...)
		if err := b.step(err); err != nil {
			return err
		}
	}
	b.check()
	return b.compare(ctx)
}

// build builds the nightly's binaries (results.BenchBuildCommand), its log in the logs
// folder.
func (b *bencher) build(ctx context.Context) error {
	return b.runBuild(ctx, b.o.SkipBuild, buildStep{argv: results.BenchBuildCommand, logDir: b.logs,
		doing: "building", skipped: "the harness runs the binaries already built", logHint: "logs/build.log"}, &b.man.Build)
}

// snapshot lists the CSVs in the checkout's harness folder.
func (b *bencher) snapshot() (map[string]bool, error) {
	out, err := csvNames(b.harness)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", HarnessOutput, err)
	}
	return out, nil
}

// fresh lists the CSVs a harness added to the checkout since before.
func (b *bencher) fresh(before map[string]bool) ([]string, error) {
	return freshCSVs(b.harness, before)
}

// guarded runs one harness command under the guard; before every attempt the files an
// earlier attempt added are removed, so a rerun starts from scratch (bench_mlxlm.py
// would otherwise resume from the rejected attempt's rows). The CSVs of the last
// attempt are moved to the folder.
func (b *bencher) guarded(ctx context.Context, section, label string, argv []string, logName string, observe func(string)) (guarded, []string, error) {
	before, err := b.snapshot()
	if err != nil {
		return guarded{}, nil, err
	}
	g := b.guardOptions()
	g.BeforeAttempt = func(k int) error {
		left, err := b.fresh(before)
		if err != nil {
			return err
		}
		for _, name := range left {
			if err := os.Remove(filepath.Join(b.harness, name)); err != nil {
				return fmt.Errorf("removing %s of the rejected attempt: %w", name, err)
			}
		}
		return nil
	}
	env := []string{"MODELS_DIR=" + b.o.ModelsDir}
	r, err := b.runGuarded(ctx, section, g, label, argv, env, filepath.Join(b.logs, logName), label, observe)
	if err != nil {
		return guarded{}, nil, err
	}
	made, ferr := b.fresh(before)
	if ferr != nil {
		return r, nil, ferr
	}
	var moved []string
	for _, name := range made {
		if r.out.Verdict != guard.Clean {
			// A rejected or stopped attempt's rows are not results.
			os.Remove(filepath.Join(b.harness, name))
			continue
		}
		if err := moveFile(filepath.Join(b.harness, name), filepath.Join(b.folder, name)); err != nil {
			return r, moved, fmt.Errorf("collecting %s: %w", name, err)
		}
		moved = append(moved, name)
	}
	b.scrubGuardLog()
	return r, moved, nil
}

// moveFile renames, or copies and removes across file systems.
func moveFile(from, to string) error {
	if err := os.Rename(from, to); err == nil {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, benchcsv.MaxFileBytes+1)); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Remove(from)
}

// sweep runs one harness over every model.
func (b *bencher) sweep(ctx context.Context, name string, argv []string) (results.Sweep, error) {
	sw := results.Sweep{Name: name, Command: argv, Log: name + ".log"}
	models := b.models
	if name == results.SweepMlxLM {
		models = b.checkpoints()
	}
	t := &sweepTracker{name: name, names: models, prog: b.prog, now: b.o.Now}
	if b.hasLast {
		t.last = b.last.Durations(name)
	}
	label := "nightly " + name
	r, csvs, err := b.guarded(ctx, "== "+label, label, argv, sw.Log, t.line)
	t.end()
	sw.Models, sw.CSVs = t.times, csvs
	sw.Phase = phaseOf(label, sw.Log, r)
	b.tenants(name+" sweep", r)
	switch {
	case err != nil && r.out.Verdict == "":
		sw.Status, sw.Reason = results.SweepFailed, b.scrub.text(err.Error())
		return sw, err
	case r.interrupted():
		sw.Status, sw.Reason = results.SweepInterrupted, "stopped during the sweep"
		return sw, r.interruptedDuring(ctx, "the "+name+" sweep")
	case r.err != nil && r.out.Verdict == guard.NotStarted:
		sw.Status, sw.Reason = results.SweepFailed, b.scrub.text(fmt.Sprintf("the sweep could not start: %v", r.err))
	case r.err != nil:
		sw.Status, sw.Reason = results.SweepFailed, b.scrub.text(fmt.Sprintf("the GPU guard failed: %v", r.err))
		return sw, fmt.Errorf("guarding the %s sweep: %w", name, r.err)
	case r.gaveUp():
		sw.Status, sw.Reason = results.SweepGuardGaveUp, b.scrub.text(r.gaveUpReason(b.o.Guard))
	case r.out.ExitCode != 0:
		sw.Status = results.SweepFailed
		sw.Reason = fmt.Sprintf("%s exited with %s", argv[0], exitText(r.out.ExitCode))
		if tail := tailLines(r.output, 3); len(tail) > 0 {
			sw.Reason += "; last lines: " + strings.Join(tail, " | ")
		}
		sw.Reason = b.scrub.text(sw.Reason)
	case len(csvs) == 0:
		sw.Status, sw.Reason = results.SweepFailed, fmt.Sprintf("%s exited 0 but wrote no CSV in %s/", argv[0], HarnessOutput)
	default:
		sw.Status = results.SweepOK
	}
	if err == nil && sw.Status == results.SweepOK {
		b.prog.printf("%s sweep done: %s", name, strings.Join(csvs, ", "))
	} else if sw.Reason != "" {
		b.prog.printf("%s sweep: %s", name, sw.Reason)
	}
	return sw, err
}

// checkpoints are the model folders the mlx-lm harness runs: a config.json and a
// *.safetensors file.
func (b *bencher) checkpoints() []string {
	var out []string
	for _, m := range b.models {
		dir := filepath.Join(b.o.RepoDir, filepath.FromSlash(b.o.ModelsDir), m)
		if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
			continue
		}
		if w, _ := filepath.Glob(filepath.Join(dir, "*.safetensors")); len(w) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// tenants records what the guard saw besides the run: a rejected attempt's foreign
// holders and compilers, and what kept an idle wait waiting.
func (b *bencher) tenants(what string, r guarded) {
	for _, a := range r.out.Attempts {
		if a.Verdict == guard.Contended {
			b.man.Tenants = append(b.man.Tenants, fmt.Sprintf("%s, attempt %d rejected: foreign_gpu=%s compilers=%s", what, a.Attempt, holders(a.ForeignGPU), holders(a.Compilers)))
		}
		if a.IdleResets > 0 {
			b.man.Tenants = append(b.man.Tenants, fmt.Sprintf("%s, attempt %d: the idle wait was reset %d time(s) by another GPU process or a compiler", what, a.Attempt, a.IdleResets))
		}
	}
}

// check applies the CSV checks with the host's facts.
func (b *bencher) check() {
	in := b.man.HostInfo
	rocm, _, _ := strings.Cut(in.ROCm.Value, "-")
	e := benchcsv.Expect{
		Backend: "rocm", GFX: b.man.GFX, ROCm: rocm, HIP: in.HIPShort(), Overlay: in.OverlayCommit.Value,
		Commit: b.man.Commit, Date: b.man.Date, DeviceMemBytes: in.VRAMBytes, HostMemBytes: in.HostMemoryBytes,
		ModelBytes: b.modelBytes(),
	}
	for _, name := range b.man.CSVs {
		f, err := benchcsv.ReadFile(filepath.Join(b.folder, name))
		if err != nil {
			b.man.Problems = append(b.man.Problems, benchcsv.Problem{Severity: benchcsv.Error, Kind: "row", File: name, Text: err.Error()})
			continue
		}
		b.man.Problems = append(b.man.Problems, benchcsv.Check(f, e)...)
	}
	for _, p := range b.man.Problems {
		if p.Severity != benchcsv.Note {
			b.prog.printf("%s", p)
		}
	}
}

// modelBytes is each model's weights: the config's weights_gib for its folder, else the
// size of its *.safetensors files.
func (b *bencher) modelBytes() map[string]int64 {
	out := map[string]int64{}
	for _, m := range b.o.Config.Models {
		out[filepath.Base(filepath.FromSlash(m.Dir))] = int64(m.WeightsGiB * (1 << 30))
	}
	for _, m := range b.models {
		if out[m] > 0 {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(b.o.RepoDir, filepath.FromSlash(b.o.ModelsDir), m, "*.safetensors"))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				out[m] += fi.Size()
			}
		}
	}
	return out
}

// compare judges the mlxcel CSV against the history, re-measures each suspect (an A/B
// of the last good commit and tonight's, else a single re-run) and bisects the
// regressions the A/B confirmed.
func (b *bencher) compare(ctx context.Context) error {
	sw, _ := b.man.Sweep(results.SweepMlxcel)
	var f *benchcsv.File
	for _, name := range sw.CSVs {
		n, err := benchcsv.ParseName(name)
		if err != nil || n.Backend != "rocm" || !n.Nightly() {
			continue
		}
		if f, err = benchcsv.ReadFile(filepath.Join(b.folder, name)); err != nil {
			f = nil
		}
		break
	}
	if f == nil {
		b.prog.printf("no ROCm CSV of the sweep to compare with the history")
		return nil
	}
	h := &baseline.History{Dir: b.o.HistoryDir}
	if isDir(b.o.HistoryDir) {
		var err error
		if h, err = baseline.LoadDir(b.o.HistoryDir); err != nil {
			return err
		}
	}
	rep := baseline.CompareNightly(h, f, b.o.Rules)
	// A history long enough for segments is judged against its current segment, cut at
	// the changes earlier nights confirmed (their manifests are in the history folder).
	if err := rep.JudgeBySegments(h, f, changepoint.DefaultParams(), results.ConfirmedChanges(b.o.HistoryDir, f.Name.Pair(), f.Name.Date)); err != nil {
		return err
	}
	b.man.Comparison = &rep
	for _, m := range rep.Models {
		b.prog.printf("%s: %s: %s", m.Model, m.Verdict, m.Text)
	}
	suspects := map[string]nightSuspect{}
	for _, model := range rep.Suspects() {
		if b.o.NoRemeasure {
			b.man.Remeasures = append(b.man.Remeasures, results.Remeasure{Model: model, Verdict: baseline.Suspected, Reason: "not re-measured (--no-remeasure)"})
			continue
		}
		rm, ns, err := b.confirm(ctx, model, &rep)
		suspects[model] = ns
		b.man.Remeasures = append(b.man.Remeasures, rm)
		if rm.CSV != "" {
			b.man.CSVs = append(b.man.CSVs, rm.CSV)
		}
		if err := b.step(err); err != nil {
			return err
		}
	}
	return b.bisectAll(ctx, suspects)
}

// remeasure runs the harness's single-model mode for model under the guard.
func (b *bencher) remeasure(ctx context.Context, model string, rep *baseline.Report) (results.Remeasure, error) {
	rm := results.Remeasure{Model: model, Verdict: baseline.Suspected, Since: since(modelResult(rep, model))}
	dir := filepath.ToSlash(filepath.Join(b.o.ModelsDir, model))
	label := "remeasure " + model
	b.prog.printf("%s: %s; re-measuring once: %s", model, suspectedWhy(modelResult(rep, model)), strings.Join(results.RemeasureCommand(dir), " "))
	r, csvs, err := b.guarded(ctx, "== "+label, label, results.RemeasureCommand(dir), "remeasure-"+model+".log", nil)
	rm.Phase = phaseOf(label, "remeasure-"+model+".log", r)
	b.tenants("re-measure of "+model, r)
	if err != nil && r.out.Verdict == "" {
		rm.Reason = b.scrub.text(err.Error())
		return rm, err
	}
	switch {
	case r.interrupted():
		rm.Reason = "stopped during the re-measure"
		return rm, fmt.Errorf("%w during the re-measure of %s: %w", errInterrupted, model, context.Cause(ctx))
	case r.err != nil:
		rm.Reason = b.scrub.text(fmt.Sprintf("the GPU guard failed: %v", r.err))
		return rm, fmt.Errorf("guarding the re-measure of %s: %w", model, r.err)
	case r.gaveUp():
		rm.Reason = b.scrub.text(r.gaveUpReason(b.o.Guard))
	case r.out.ExitCode != 0:
		rm.Reason = fmt.Sprintf("the harness exited with %s", exitText(r.out.ExitCode))
	case len(csvs) == 0:
		rm.Reason = "the harness wrote no CSV"
	}
	if len(csvs) > 0 {
		rm.CSV = csvs[0]
	}
	if rm.Reason != "" {
		b.prog.printf("%s: re-measure failed: %s; the suspect stays unconfirmed", model, rm.Reason)
		return rm, nil
	}
	f, ferr := benchcsv.ReadFile(filepath.Join(b.folder, rm.CSV))
	var p baseline.Point
	ok := false
	if ferr == nil {
		p, ok = baseline.PointOf(f, model)
	}
	if !ok {
		rm.Reason = fmt.Sprintf("%s has no measured row of %s", rm.CSV, model)
		if ferr != nil {
			rm.Reason = ferr.Error()
		}
		return rm, nil
	}
	rm.Decode = p.Value()
	if err := rep.Remeasured(model, p); err != nil {
		return rm, err
	}
	for _, m := range rep.Models {
		if m.Model == model {
			rm.Verdict = m.Verdict
			b.prog.printf("%s: %s: %s", model, m.Verdict, m.Text)
		}
	}
	return rm, nil
}

// finish closes the manifest.
func (b *bencher) finish(_ context.Context, err error) error {
	b.man.Finished = b.o.Now()
	b.man.State, b.man.Error = b.end(err)
	b.close()
	return err
}
