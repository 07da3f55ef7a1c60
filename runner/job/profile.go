package job

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/analyze"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/modelcfg"
	"github.com/lablup/perfbot/runner/proc"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
	"github.com/lablup/perfbot/runner/sandbox"
)

// DefaultBench is the bench binary the build leaves, relative to the checkout.
const DefaultBench = "target/release/mlxcel-bench-decode"

// PhaseMarksEnv makes the bench print its phase marks (docs/formats.md §2).
const PhaseMarksEnv = "MLXCEL_BENCH_PHASE_MARKS=1"

// ProfileOptions configure one profile session.
type ProfileOptions struct {
	Host    host.Host // the machine: every command and host fact; nil means host.Local()
	RepoDir string    // the mlxcel checkout
	Config  config.Config
	// Models are config model names; nil means Config.DefaultModels (all models when
	// that is empty). They run in the config's order.
	Models []string
	// Sampling settings; nil means Config.Sampling.
	Sampling []results.Sampling
	// OutDir is the results root: the folder is OutDir/<results.profiles>/<gfx>_<commit8>.
	OutDir string
	// TraceDir is the traces root: each run's profiler output goes to TraceDir/<run>/.
	TraceDir string
	// Guard is the base of every guarded run (GuardOptions builds it from the config);
	// the job sets its log, label, environment and output writers.
	Guard guard.Options
	// Rules attribute the kernels; nil means the config's rules file, else perfbot's.
	Rules *attrib.Rules
	// SkipBuild uses the bench already built.
	SkipBuild bool
	// Bench is the bench binary, relative to the checkout or absolute; "" is DefaultBench.
	Bench string
	// GFX overrides the GPU target rocminfo reports (it names the results folder).
	GFX string
	// Sandbox are the host's sandbox settings for the build and the runs; nil means
	// the host's, read from perfbot's environment (sandbox.FromEnv).
	Sandbox *sandbox.Settings
	// Progress gets one line per step: which run, which attempt, waits and since when.
	Progress io.Writer
	Now      func() time.Time // nil means time.Now
}

// GuardOptions turns the config's guard settings into guard options (the caller
// applies the environment overrides after, as the shell guard does).
func GuardOptions(g config.Guard) guard.Options {
	o := guard.DefaultOptions()
	o.Idle = g.IdleWindow
	o.SampleHz = float64(g.SampleHz)
	o.MaxAttempts = g.MaxAttempts
	o.MaxWait = g.MaxWait
	o.MaxForeignCPU = g.MaxForeignCPUPct
	if g.Lock != "" {
		o.LockPath = g.Lock
	}
	return o
}

// modelRun is one model of the session, resolved from the config.
type modelRun struct {
	cfg config.Model
	arg string // the -m argument: relative to the checkout, or absolute
	err error  // the model dir could not be found
}

// profiler is one profile session in progress.
type profiler struct {
	session
	o        ProfileOptions
	sess     *results.Session
	info     hostinfo.Info
	flags    []string
	rules    *attrib.Rules
	models   []modelRun
	sampling []results.Sampling
}

// Profile runs a profile session: it probes the host, builds the bench, runs every
// model at every sampling setting (plain, then profiled, each under the guard),
// analyzes each run and fills the results folder. A run that fails is recorded with
// its reason and the others go on; the error is for a session that could not go on
// at all (bad options, no GPU target or commit, a failed build, a guard that cannot
// work, an interrupt). The report says how each run ended, also with an error.
func Profile(ctx context.Context, o ProfileOptions) (ProfileReport, error) {
	return runJob(ctx, "ROCm, GPU, rocprofv3, checkout", func() (*profiler, error) { return newProfiler(o) },
		func(p *profiler) ProfileReport { return ProfileReport{Folder: p.folder, Session: *p.sess} })
}

func newProfiler(o ProfileOptions) (*profiler, error) {
	jobDefaults(&o.Host, &o.Guard, &o.Now)
	if o.Bench == "" {
		o.Bench = DefaultBench
	}
	err := absFolders(folderArg{"the checkout (RepoDir)", &o.RepoDir}, folderArg{"the results root (OutDir)", &o.OutDir}, folderArg{"the traces root (TraceDir)", &o.TraceDir})
	if err != nil {
		return nil, err
	}
	if !isDir(o.RepoDir) {
		return nil, fmt.Errorf("the checkout %s is not a folder: give the mlxcel checkout to profile", o.RepoDir)
	}
	p := &profiler{o: o, session: newSession(o.Host, o.RepoDir, o.Guard, &progress{w: o.Progress, now: o.Now}, o.Now, "session manifest")}
	p.save = func() error { return p.sess.Save(p.folder) }
	if err := p.pickModels(); err != nil {
		return nil, err
	}
	if p.sampling, err = samplingOf(o.Sampling, o.Config.Sampling); err != nil {
		return nil, err
	}
	// Run names become file and folder names: refuse one that is not a plain name
	// before anything runs.
	for _, m := range p.models {
		for _, s := range p.sampling {
			if err := results.CheckRunName(results.RunName(m.cfg.Dir, s)); err != nil {
				return nil, fmt.Errorf("models.%s.dir %s: %w", m.cfg.Name, safetext.Quote(m.cfg.Dir), err)
			}
		}
	}
	if o.Config.Shape.Generate < 1 || o.Config.Shape.Prompt < 1 {
		return nil, fmt.Errorf("the config's shape (prompt %d, generate %d) is not a workload: load the config with config.Load",
			o.Config.Shape.Prompt, o.Config.Shape.Generate)
	}
	rules, err := p.loadRules()
	if err != nil {
		return nil, err
	}
	p.rules = rules
	// The build writes the cargo target dir, the profiler the traces: nothing else.
	if p.sb, err = jobSandbox(o.Sandbox, p.prog, o.RepoDir, filepath.Join(o.RepoDir, "target"), o.TraceDir); err != nil {
		return nil, err
	}
	for i := range p.models {
		m := &p.models[i]
		if m.err == nil && !p.sb.Visible(p.repoPath(m.arg)) {
			m.err = fmt.Errorf("model directory %s of models.%s is outside the sandbox (the checkout and %s, symbolic links resolved): add its folder to %s on the runner",
				m.cfg.Dir, m.cfg.Name, sandbox.EnvReadOnly, sandbox.EnvReadOnly)
		}
	}
	return p, nil
}

// pickModels resolves the requested model names against the config, in its order.
func (p *profiler) pickModels() error {
	models, err := wantedModels(p.o.Config, p.o.Models, "run")
	for _, m := range models {
		arg, err := p.modelArg(m)
		p.models = append(p.models, modelRun{cfg: m, arg: arg, err: err})
	}
	return err
}

// knownModels lists the config's model names for an error, the first few of them.
func knownModels(c config.Config) string {
	const shown = 20
	names := make([]string, 0, min(len(c.Models), shown))
	for _, m := range c.Models[:min(len(c.Models), shown)] {
		names = append(names, m.Name)
	}
	list := strings.Join(names, ", ")
	if len(c.Models) > shown {
		list += fmt.Sprintf(" and %d more", len(c.Models)-shown)
	}
	return safetext.Clean(list)
}

// modelArg finds the model directory: absolute as given, else in the checkout (the
// bench runs there), else in perfbot's working folder.
func (p *profiler) modelArg(m config.Model) (string, error) {
	if filepath.IsAbs(m.Dir) {
		if isDir(m.Dir) {
			return m.Dir, nil
		}
		return "", fmt.Errorf("model directory %s of models.%s does not exist: fix models.%s.dir or put the model there", m.Dir, m.Name, m.Name)
	}
	if isDir(filepath.Join(p.o.RepoDir, m.Dir)) {
		return m.Dir, nil
	}
	if abs, err := filepath.Abs(m.Dir); err == nil && isDir(abs) {
		return abs, nil
	}
	return "", fmt.Errorf("model directory %s of models.%s is neither in the checkout nor in the working folder: fix models.%s.dir or put the model there",
		m.Dir, m.Name, m.Name)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func (p *profiler) repoPath(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(p.o.RepoDir, filepath.FromSlash(rel))
}

func (p *profiler) loadRules() (*attrib.Rules, error) {
	if p.o.Rules != nil {
		return p.o.Rules, nil
	}
	if p.o.Config.Rules == "" {
		return attrib.Default(), nil
	}
	r, err := attrib.Load(p.repoPath(p.o.Config.Rules))
	if err != nil {
		return nil, fmt.Errorf("loading the attribution rules (rules: %s in the config): %w", p.o.Config.Rules, err)
	}
	return r, nil
}

// open names and prepares the results folder and writes the host facts and the
// first manifest.
func (p *profiler) open(info hostinfo.Info) error {
	p.info = info
	gfx, commit, err := target(p.info, p.o.GFX, "the results folder is named after it; check the ROCm install or give the target (gfx1151)")
	if err != nil {
		return err
	}
	folder := filepath.Join(p.o.OutDir, filepath.FromSlash(p.o.Config.Results.Profiles), results.FolderName(gfx, commit))
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return fmt.Errorf("creating the results folder: %w", err)
	}
	if err := os.MkdirAll(p.o.TraceDir, 0o755); err != nil {
		return fmt.Errorf("creating the traces folder: %w", err)
	}
	if err := p.start(folder, filepath.Join(folder, results.GuardLogFile),
		pathSub{p.o.TraceDir, "<trace-dir>"}, pathSub{p.o.RepoDir, "<checkout>"}, pathSub{p.o.OutDir, "<out>"}, pathSub{os.TempDir(), "<tmp>"}); err != nil {
		return err
	}
	if err := results.WriteJSON(p.folder, results.HostInfoFile, "host facts", p.info); err != nil {
		return err
	}
	p.flags = profilerFlags(p.info.Rocprof)
	now := p.o.Now()
	p.sess = &results.Session{
		Commit: commit, GFX: gfx, Folder: filepath.Base(p.folder),
		Date: now.Format(time.DateOnly), Started: now, State: results.SessionRunning,
		Shape: shapeOf(p.o.Config.Shape), Profiler: p.flags,
		Build:    results.Build{Command: results.BuildCommand, Status: results.BuildSkipped},
		GuardLog: results.GuardLogFile, HostInfo: results.HostInfoFile,
	}
	if p.info.OverlayCommit.Known() {
		p.sess.OverlayCommit = p.info.OverlayCommit.Value
	}
	for _, m := range p.models {
		p.sess.Models = append(p.sess.Models, m.cfg.Name)
	}
	for _, s := range p.sampling {
		p.sess.Sampling = append(p.sess.Sampling, s.Tag())
	}
	for _, m := range p.models {
		for _, s := range p.sampling {
			p.sess.Runs = append(p.sess.Runs, results.RunRecord{
				Name: results.RunName(m.cfg.Dir, s), Model: m.cfg.Name, ModelDir: m.cfg.Dir,
				Sampling: s.Tag(), Status: results.StatusNotRun,
			})
		}
	}
	p.prog.printf("results folder %s: %d runs (%s x %s)", p.folder, len(p.sess.Runs),
		strings.Join(p.sess.Models, ","), strings.Join(p.sess.Sampling, ","))
	return p.save()
}

// profilerFlags are the rocprofv3 flags the installed version supports (docs/formats.md
// §1.1): --hip-graph-trace only when listed; csv asked for explicitly, with
// --output-format (every version) unless only -f is listed.
func profilerFlags(f hostinfo.RocprofFlags) []string {
	flags := []string{"--kernel-trace"}
	if f.HIPGraphTrace {
		flags = append(flags, "--hip-graph-trace")
	}
	flags = append(flags, "--stats")
	format := "--output-format"
	if f.Known && f.ShortFormat && !f.OutputFormat {
		format = "-f"
	}
	return append(flags, format, "csv")
}

// finish closes the manifest: the state, the end time, runs that never started.
func (p *profiler) finish(_ context.Context, err error) error {
	p.sess.Finished = p.o.Now()
	p.sess.State, p.sess.Error = p.end(err)
	for i := range p.sess.Runs {
		r := &p.sess.Runs[i]
		if r.Status == results.StatusNotRun && r.Reason == "" {
			r.Reason = "the session stopped before this run: " + p.sess.Error
		}
	}
	p.close()
	return err
}

// run builds the bench and runs everything.
func (p *profiler) run(ctx context.Context) error {
	if _, err := p.o.Host.LookPath("rocprofv3"); err != nil {
		return fmt.Errorf("rocprofv3 is not on the PATH (%v): install rocprofiler-sdk (ROCm 6.2 or later) on the runner", err)
	}
	if err := p.build(ctx); err != nil {
		return err
	}
	bench := p.o.Bench
	if !filepath.IsAbs(bench) {
		bench = filepath.Join(p.o.RepoDir, bench)
	}
	if fi, err := os.Stat(bench); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("the bench %s is not an executable file: build it (cargo build --release --features rocm --bin mlxcel-bench-decode) or give its path", p.o.Bench)
	}
	if !p.sb.Visible(bench) {
		return fmt.Errorf("the bench %s is outside the sandbox (the checkout and %s): give one in the checkout", p.o.Bench, sandbox.EnvReadOnly)
	}
	i := 0
	for _, m := range p.models {
		for _, s := range p.sampling {
			rec := &p.sess.Runs[i]
			i++
			if err := p.step(p.runOne(ctx, fmt.Sprintf("[%d/%d]", i, len(p.sess.Runs)), m, s, rec)); err != nil {
				return err
			}
		}
	}
	return nil
}

// build builds the bench (results.BuildCommand) in the checkout, its log in the traces
// folder; when it fails, no run can go on.
func (p *profiler) build(ctx context.Context) error {
	err := p.runBuild(ctx, p.o.SkipBuild, buildStep{argv: results.BuildCommand, logDir: p.o.TraceDir,
		doing: "building the bench", skipped: "using " + p.o.Bench, logHint: "the traces folder, build.log"}, &p.sess.Build)
	if b := p.sess.Build; b.Status == results.BuildFailed {
		for i := range p.sess.Runs {
			p.sess.Runs[i].Reason = "the bench did not build: " + b.Reason
		}
		p.prog.printf("build failed after %.0fs: %s", b.Seconds, b.Reason)
	}
	return err
}

// runLogged runs argv in dir (not guarded), writing its output to logPath ("" for
// none); it returns the exit status (128+signal when a signal ended it) and the output.
// It goes through runner/proc, so nothing the command starts outlives it, and ctx
// ending stops all of it.
func runLogged(ctx context.Context, h host.Host, dir, logPath string, argv []string) (int, []byte, error) {
	var buf bytes.Buffer
	var w io.Writer = &buf
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return -1, nil, fmt.Errorf("creating the log: %w", err)
		}
		defer f.Close()
		w = io.MultiWriter(f, &buf)
	}
	cmd := h.Command(context.Background(), argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = 5 * time.Second
	res, err := proc.Run(ctx, cmd, proc.DefaultGrace)
	if err != nil && res.Status == (proc.Status{Code: -1}) {
		return -1, buf.Bytes(), fmt.Errorf("running %s: %w", argv[0], err)
	}
	return res.Status.ShellCode(), buf.Bytes(), nil
}

// firstError is the first compiler error of a build log, with its location when the
// next line gives one.
func firstError(out []byte) string {
	lines := strings.Split(string(out), "\n")
	for i, ln := range lines {
		t := strings.TrimSpace(ln)
		if !strings.HasPrefix(t, "error") {
			continue
		}
		if i+1 < len(lines) {
			if loc, ok := strings.CutPrefix(strings.TrimSpace(lines[i+1]), "--> "); ok {
				return t + " at " + loc
			}
		}
		return t
	}
	if tail := tailLines(out, 1); len(tail) > 0 {
		return tail[0]
	}
	return "no output"
}

// runOne runs one model at one sampling setting: the plain bench, the profiled bench,
// the analysis. It returns an error only when the session cannot go on.
func (p *profiler) runOne(ctx context.Context, idx string, m modelRun, s results.Sampling, rec *results.RunRecord) error {
	run := rec.Name
	defer slices.Sort(rec.Files)
	if m.err != nil {
		rec.Reason = m.err.Error()
		p.prog.printf("%s %s: not run: %s", idx, run, rec.Reason)
		return nil
	}
	rec.Status = results.StatusRunning
	rec.Reason = ""
	if err := p.sess.Save(p.folder); err != nil {
		return err
	}
	// A rerun replaces the run's files: stale ones would pass for this session's.
	for _, name := range results.RunFiles(run) {
		if err := os.Remove(filepath.Join(p.folder, name)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("removing the last session's files of %s: %w", run, err)
		}
	}
	traces := filepath.Join(p.o.TraceDir, run)
	if err := os.RemoveAll(traces); err != nil {
		return fmt.Errorf("clearing the traces of %s: %w", run, err)
	}
	if err := os.MkdirAll(traces, 0o755); err != nil {
		return fmt.Errorf("creating the traces folder of %s: %w", run, err)
	}
	rec.Traces = run
	shape := p.o.Config.Shape
	bench := []string{p.o.Bench, "-m", m.arg, "-p", "profile", "-n", strconv.Itoa(shape.Generate),
		"--warmup-tokens", strconv.Itoa(shape.Warmup), "--ignore-eos", "--prompt-tokens", strconv.Itoa(shape.Prompt)}
	bench = append(bench, s.BenchArgs()...)

	// The plain run: the bench alone, for the profiler's slowdown.
	plainLog := run + "_plain_bench.log"
	plain, err := p.phase(ctx, idx, run, "plain", bench, nil, filepath.Join(traces, run+"_plain_bench.raw.log"), plainLog, rec)
	rec.Plain = phaseOf(run+" plain", plainLog, plain)
	if err != nil || rec.Status != results.StatusRunning {
		return err
	}

	// The profiled run.
	prof := append([]string{"rocprofv3"}, p.flags...)
	prof = append(prof, "-d", traces, "-o", run, "--")
	prof = append(prof, bench...)
	benchLog := run + "_bench.log"
	profiled, err := p.phase(ctx, idx, run, "profiled", prof, []string{PhaseMarksEnv}, filepath.Join(traces, run+"_bench.raw.log"), benchLog, rec)
	rec.Profiled = phaseOf(run+" profiled", benchLog, profiled)
	if err != nil || rec.Status != results.StatusRunning {
		return err
	}
	p.analyze(ctx, idx, m, s, rec, traces, plain.output, profiled.output)
	return nil
}

// phase runs one guarded bench command and records its cleaned log. It leaves
// rec.Status at running when the command ran clean and exited 0.
func (p *profiler) phase(ctx context.Context, idx, run, what string, argv, env []string, rawPath, logName string, rec *results.RunRecord) (guarded, error) {
	label := run + " " + what
	g := p.guardOptions()
	r, err := p.runGuarded(ctx, label, g, label, argv, env, rawPath, idx+" "+label, nil)
	if err != nil {
		return guarded{}, err
	}
	// A log is kept whenever the command printed something, a crash's above all; a
	// run the guard never started has only the guard's lines, which are in guard.log.
	if clean := benchlog.Clean(r.output, p.scrub.paths()); len(bytes.TrimSpace(clean)) > 0 {
		if err := results.WriteFileAtomic(filepath.Join(p.folder, logName), clean); err != nil {
			return r, fmt.Errorf("writing %s: %w", logName, err)
		}
		rec.Files = append(rec.Files, logName)
	}
	switch {
	case r.interrupted():
		rec.Status, rec.Reason = results.StatusInterrupted, "stopped during the "+what+" run"
		p.prog.printf("%s %s: interrupted", idx, label)
		return r, r.interruptedDuring(ctx, label)
	case r.err != nil && r.out.Verdict == guard.NotStarted:
		rec.Status = results.StatusBenchCrashed
		rec.Reason = p.scrub.text(fmt.Sprintf("the %s run could not start: %v", what, r.err))
		return r, fmt.Errorf("running %s: %w", label, r.err)
	case r.err != nil:
		// The guard itself could not work (no KFD dir, unwritable log, a broken
		// monitor): every later run would fail the same way.
		rec.Status = results.StatusNotRun
		rec.Reason = p.scrub.text(fmt.Sprintf("the GPU guard failed in the %s run: %v", what, r.err))
		return r, fmt.Errorf("guarding %s: %w", label, r.err)
	case r.gaveUp():
		rec.Status, rec.Reason = results.StatusGuardGaveUp, p.scrub.text(r.gaveUpReason(g))+" ("+what+" run)"
		p.prog.printf("%s %s: %s", idx, label, rec.Reason)
	case r.out.ExitCode != 0:
		rec.Status = results.StatusBenchCrashed
		why := fmt.Sprintf("the %s run exited with %s", what, exitText(r.out.ExitCode))
		if tail := tailLines(benchlog.Clean(r.output, p.scrub.paths()), 3); len(tail) > 0 {
			why += "; last lines: " + strings.Join(tail, " | ")
		}
		rec.Reason = p.scrub.text(why)
		p.prog.printf("%s %s: %s", idx, label, rec.Reason)
	default:
		p.prog.printf("%s %s: done (%d attempt(s))", idx, label, len(r.out.Attempts))
	}
	return r, nil
}

// maxStatsBytes bounds the kernel_stats.csv copied into the results folder.
const maxStatsBytes = 16 << 20

// analyze finds the profiler's files, copies the stats and writes the decode kernels
// and the summary.
func (p *profiler) analyze(ctx context.Context, idx string, m modelRun, s results.Sampling, rec *results.RunRecord, traces string, plainLog, benchLog []byte) {
	run := rec.Name
	fail := func(format string, a ...any) {
		rec.Status, rec.Reason = results.StatusAnalysisFailed, p.scrub.text(fmt.Sprintf(format, a...))
		p.prog.printf("%s %s: analysis failed: %s", idx, run, rec.Reason)
	}
	outs, err := rocprof.FindOutputs(traces, run)
	if err != nil {
		fail("finding the profiler's files: %v", err)
		return
	}
	for _, f := range []string{outs.KernelTrace, outs.KernelStats, outs.AgentInfo} {
		if f != "" {
			rec.ProfilerFiles = append(rec.ProfilerFiles, filepath.Base(f))
		}
	}
	for _, f := range outs.Other {
		rec.ProfilerFiles = append(rec.ProfilerFiles, filepath.Base(f))
	}
	slices.Sort(rec.ProfilerFiles)
	if outs.KernelTrace == "" {
		why := fmt.Sprintf("rocprofv3 wrote no %s_kernel_trace.csv in <trace-dir>/%s", run, run)
		if reported := rocprof.OpenedResultFiles(benchLog); len(reported) > 0 {
			names := make([]string, len(reported))
			for i, r := range reported {
				names[i] = filepath.Base(r)
			}
			why += " (it reported " + safetext.Clean(strings.Join(names, ", ")) + ")"
		}
		fail("%s: was csv output asked for, and did the bench dispatch any kernel?", why)
		return
	}
	if outs.KernelStats != "" {
		b, err := infile.ReadFile(outs.KernelStats, maxStatsBytes)
		if err == nil {
			err = results.WriteFileAtomic(filepath.Join(p.folder, run+"_kernel_stats.csv"), b)
		}
		if err != nil {
			fail("copying the kernel stats: %v", err)
			return
		}
		rec.Files = append(rec.Files, run+"_kernel_stats.csv")
	}
	trace, err := rocprof.ReadKernelTraceContext(ctx, outs.KernelTrace)
	if err != nil {
		fail("reading the kernel trace: %v", err)
		return
	}
	lg, err := benchlog.Parse(bytes.NewReader(benchLog), run+"_bench.log")
	if err != nil {
		fail("reading the bench log: %v", err)
		return
	}
	in := analyze.Input{Name: run, Trace: trace, Log: lg, Sampling: s, Rules: p.rules}
	if len(plainLog) > 0 {
		if in.Plain, err = benchlog.Parse(bytes.NewReader(plainLog), run+"_plain_bench.log"); err != nil {
			fail("reading the plain bench log: %v", err)
			return
		}
	}
	if in.Model, err = p.modelConfig(m); err != nil {
		fail("%v", err)
		return
	}
	res, err := analyze.Analyze(in)
	if err != nil {
		fail("analyzing: %v", err)
		return
	}
	written, err := res.WriteOutputs(p.folder)
	if err != nil {
		fail("writing the analysis: %v", err)
		return
	}
	rec.Files = append(rec.Files, filepath.Base(written.Kernels), filepath.Base(written.Summary))
	for _, w := range res.Warnings {
		p.prog.printf("%s %s: warning: %s", idx, run, w)
	}
	sum := res.Summary
	rec.Status = results.StatusOK
	rec.DecodeDispatches = sum.DecodeDispatches
	rec.GPUMsPerToken = float64(sum.GPUMsPerToken)
	rec.HostGapMsPerToken = float64(sum.HostGapMsPerToken)
	p.prog.printf("%s %s: %d decode dispatches, %s GPU ms/token, %s host gap ms/token", idx, run,
		sum.DecodeDispatches, results.PyFloat(float64(sum.GPUMsPerToken)), results.PyFloat(float64(sum.HostGapMsPerToken)))
}

// modelConfig is what the analysis needs of the model: the config's config.json when
// it names one, else the model_type it gives (with the model dir's config.json for the
// rope scaling, when there is one).
func (p *profiler) modelConfig(m modelRun) (modelcfg.Model, error) {
	if m.cfg.ConfigPath != "" {
		mc, err := modelcfg.Read(p.repoPath(m.cfg.ConfigPath))
		if err != nil {
			return modelcfg.Model{}, fmt.Errorf("reading models.%s.config: %w", m.cfg.Name, err)
		}
		return mc, nil
	}
	dir := m.arg
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.o.RepoDir, dir)
	}
	mc, err := modelcfg.Read(filepath.Join(dir, "config.json"))
	if err != nil {
		mc = modelcfg.Model{}
	}
	mc.ModelType = m.cfg.ModelType
	return mc, nil
}
