package job

import (
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
	"github.com/lablup/perfbot/internal/gitrun"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/abrun"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/changepoint"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// BisectDir is the folder under the results root that holds bisection folders, each
// named <gfx>_<good's commit8>_<bad's commit8>.
const BisectDir = "bisect"

// DefaultBisectMaxCommits bounds the range of a bisection when the caller gives no
// bound: the commits from good to bad, both included.
const DefaultBisectMaxCommits = 256

// bisectMetric is what a bisection measures: the harness's decode speed.
const bisectMetric = "decode tok/s"

// BisectOptions configure one bisection on the GPU host (docs/nightly.md, "Bisection
// on the GPU host").
type BisectOptions struct {
	Host    host.Host // nil means host.Local()
	RepoDir string    // the repository holding the range (the pinned head's checkout)
	// Good is the last known good commit, Bad the first known bad one: full
	// 40-hex-digit SHAs, Good an ancestor of Bad on its first-parent history.
	Good, Bad string
	Config    config.Config // the pinned head's config
	// Model is the config's name of the one model measured.
	Model string
	// Params are the bisection's knobs; the zero value (no budget, error rate or end
	// runs) means changepoint.DefaultBisectParams. Budget caps the single-model runs.
	Params changepoint.BisectParams
	// MaxCommits bounds the range, both ends included (0: DefaultBisectMaxCommits).
	MaxCommits int
	// OutDir is the results root: the folder is OutDir/bisect/<gfx>_<good8>_<bad8>; the
	// builds' and runs' logs go to OutDir/bisect-logs, the worktrees to
	// OutDir/bisect-worktrees (removed at the end).
	OutDir string
	// Folder is the bisection folder, "" for OutDir/bisect/<gfx>_<good8>_<bad8> (the
	// nightly puts its bisections in its own folder); LogDir is where the builds' and
	// runs' logs go, "" for OutDir/bisect-logs.
	Folder, LogDir string
	// NoCulprit skips the profile A/B of a first bad commit found against its parent.
	NoCulprit bool
	// Guard is the guard's settings, Sandbox the host's sandbox's (nil: from the
	// environment); MaxRedo is the guard rejections of one run before the bisection
	// fails (0: 3).
	Guard   guard.Options
	Sandbox *sandbox.Settings
	MaxRedo int
	// Progress gets the job's lines and, at most once per Every (0: a minute), the
	// runs done.
	Progress io.Writer
	Every    time.Duration
	Now      func() time.Time // nil means time.Now
}

// BisectSession bisects the range Good..Bad on the GPU host for one model: it lists
// the first-parent commits of the range (oldest first, at most MaxCommits), then lets
// runner/changepoint's Bisect choose which commit to measure and how many times; a
// commit is measured by checking it out in its own worktree (built once, kept until
// the end: a commit is often measured again) and running the repo's harness for the
// model under the guard, one run at a time (a rejected run redone, at most MaxRedo
// times). bisect.json is saved after every run and closed with the state the session
// ended in: a cancelled bisection keeps its readings and its outcome so far. The
// worktrees are removed at the end.
func BisectSession(ctx context.Context, o BisectOptions) (BisectReport, error) {
	return runJob(ctx, "ROCm, GPU, checkout", func() (*bisecter, error) { return newBisecter(ctx, o) },
		func(b *bisecter) BisectReport { return BisectReport{Folder: b.folder, Bisect: *b.man} })
}

// BisectReport is what BisectSession did: the bisection folder ("" when the session
// stopped before it knew the GPU) and its manifest.
type BisectReport struct {
	Folder string
	Bisect results.Bisect
}

type bisecter struct {
	session
	o       BisectOptions
	model   config.Model
	commits []string
	man     *results.Bisect
	logs    string
	wtDir   string
	trees   map[string]*bisectTree
	last    time.Time // the last progress report
}

// bisectTree is one commit's built worktree and its sandbox.
type bisectTree struct {
	co abrun.Checkout
	sb *sandbox.Sandbox
}

func newBisecter(ctx context.Context, o BisectOptions) (*bisecter, error) {
	jobDefaults(&o.Host, &o.Guard, &o.Now)
	for _, s := range []struct{ what, sha string }{{"good", o.Good}, {"bad", o.Bad}} {
		if !abrun.IsFullSHA(s.sha) {
			return nil, badRequestf("the %s commit is %q: give the full 40-hex-digit SHA", s.what, s.sha)
		}
	}
	if o.Good == o.Bad {
		return nil, badRequestf("the good and the bad commit are both %s: give a range", o.Good)
	}
	if err := absFolders(folderArg{"the repository (RepoDir)", &o.RepoDir}, folderArg{"the results root (OutDir)", &o.OutDir}); err != nil {
		return nil, err
	}
	if !isDir(o.RepoDir) {
		return nil, fmt.Errorf("the repository %s is not a folder: give the checkout holding the range", o.RepoDir)
	}
	if err := stepFolders(o.OutDir, "bisect-logs", &o.LogDir, &o.Folder); err != nil {
		return nil, err
	}
	if o.Params.Budget == 0 && o.Params.ErrorRate == 0 && o.Params.EndRuns == 0 {
		o.Params = changepoint.DefaultBisectParams()
	}
	if err := o.Params.Validate(); err != nil {
		return nil, &badRequest{err: err}
	}
	if o.MaxCommits == 0 {
		o.MaxCommits = DefaultBisectMaxCommits
	}
	if o.MaxCommits < 2 || o.MaxCommits > results.MaxBisectCommits {
		return nil, badRequestf("at most %d commits: give 2 to %d", o.MaxCommits, results.MaxBisectCommits)
	}
	if o.MaxRedo == 0 {
		o.MaxRedo = abrun.DefaultMaxRedo
	}
	m, ok := o.Config.Model(o.Model)
	if !ok {
		return nil, badRequestf("model %q is not in the config; known: %s", o.Model, knownModels(o.Config))
	}
	if err := results.CheckRunName(modelFolder(m)); err != nil {
		return nil, badRequestf("models.%s.dir: %v", m.Name, err)
	}
	commits, err := BisectRange(ctx, o.RepoDir, o.Good, o.Bad, o.MaxCommits)
	if err != nil {
		return nil, err
	}
	b := &bisecter{o: o, model: m, commits: commits, trees: map[string]*bisectTree{},
		session: newSession(o.Host, o.RepoDir, o.Guard, &progress{w: o.Progress, now: o.Now}, o.Now, "bisection manifest")}
	b.save = func() error { return b.man.Save(b.folder) }
	return b, nil
}

// BisectRange lists the commits of good..bad in repo on bad's first-parent history,
// oldest first, good first and bad last, at most max of them: good must be an
// ancestor of bad on that history (a commit merged in from a side branch is not),
// both full SHAs.
func BisectRange(ctx context.Context, repo, good, bad string, max int) ([]string, error) {
	for _, s := range []struct{ what, sha string }{{"good", good}, {"bad", bad}} {
		if !abrun.IsFullSHA(s.sha) {
			return nil, badRequestf("the %s commit is %q: give the full 40-hex-digit SHA", s.what, s.sha)
		}
		if _, err := gitrun.Out(ctx, repo, "rev-parse", "--verify", "--quiet", s.sha+"^{commit}"); err != nil {
			return nil, badRequestf("the %s commit %s is not in the repository", s.what, s.sha)
		}
	}
	if _, err := gitrun.Out(ctx, repo, "merge-base", "--is-ancestor", good, bad); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, badRequestf("the good commit %s is not an ancestor of the bad commit %s: give good=<older> bad=<newer>", strs.ShortSHA(good), strs.ShortSHA(bad))
	}
	out, err := gitrun.Out(ctx, repo, "rev-list", "--count", "--first-parent", bad, "^"+good)
	if err != nil {
		return nil, fmt.Errorf("counting the commits of the range: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return nil, fmt.Errorf("counting the commits of the range: git said %q", out)
	}
	if n+1 > max {
		return nil, badRequestf("the range %s..%s holds %d commits, more than %d: give a narrower range", strs.ShortSHA(good), strs.ShortSHA(bad), n+1, max)
	}
	out, err = gitrun.Out(ctx, repo, "rev-list", "--first-parent", "--reverse", "--max-count="+strconv.Itoa(n), bad, "^"+good)
	if err != nil {
		return nil, fmt.Errorf("listing the commits of the range: %w", err)
	}
	commits := append([]string{good}, strings.Fields(out)...)
	if len(commits) != n+1 || commits[n] != bad {
		return nil, fmt.Errorf("listing the commits of the range: %d listed of %d", len(commits)-1, n)
	}
	// The oldest listed commit's first parent must be good: else good was reached only
	// through a merge's other parent.
	parent, err := gitrun.Out(ctx, repo, "rev-parse", "--verify", "--quiet", commits[1]+"^1")
	if err != nil || parent != good {
		return nil, badRequestf("the good commit %s is not on the first-parent history of the bad commit %s (it came in through a merge): give the merge's parent on the main line", strs.ShortSHA(good), strs.ShortSHA(bad))
	}
	return commits, nil
}

// open names the folder, starts the guard log and writes the first manifest.
func (b *bisecter) open(info hostinfo.Info) error {
	o := b.o
	b.logs, b.wtDir = o.LogDir, filepath.Join(o.OutDir, "bisect-worktrees")
	gfx, err := b.openPair(info, pairFolder{given: o.Folder, out: o.OutDir, under: BisectDir, a: o.Good, b: o.Bad, logs: b.logs, repo: o.RepoDir,
		manifest: results.BisectFile, what: "bisection", noGFX: "the bisection folder is named after it; check the ROCm install",
		subs: []pathSub{{b.wtDir, "<worktrees>"}}})
	if err != nil {
		return err
	}
	now := o.Now()
	p := o.Params
	b.man = &results.Bisect{
		Good: o.Good, Bad: o.Bad, Model: modelFolder(b.model), Metric: bisectMetric, Commits: b.commits,
		Backend: "rocm", Host: benchcsv.HostTag(gfx), GFX: gfx, Date: now.Format(time.DateOnly), Started: now,
		State: results.SessionRunning, Steps: []results.BisectMeasurement{},
		Params: results.BisectParams{ErrorRate: p.ErrorRate, EndRuns: p.EndRuns, Start: p.Start, Step: p.Step,
			MaxPerCommit: p.MaxPerCommit, Budget: p.Budget, EndAlpha: p.EndAlpha, MinSigmaPct: p.MinSigmaPct},
		GuardLog: results.GuardLogFile, HostInfo: results.HostInfoFile,
	}
	b.prog.printf("bisection of %s..%s (%d commits) for %s, at most %d runs, folder %s",
		strs.ShortSHA(o.Good), strs.ShortSHA(o.Bad), len(b.commits), b.man.Model, p.Budget, b.folder)
	// The worktrees' folder is made fresh: a left-over one is removed with its
	// worktrees' records after it.
	if err := freshFolder(b.wtDir); err != nil {
		return err
	}
	if _, err := gitrun.Out(context.Background(), o.RepoDir, "worktree", "prune"); err != nil {
		return err
	}
	return b.save()
}

// run bisects, then profiles the culprit when the bisection found one.
func (b *bisecter) run(ctx context.Context) error {
	if err := b.bisect(ctx); err != nil {
		return err
	}
	return b.culprit(ctx)
}

// bisect bisects and records the outcome; the worktrees are removed at the end.
func (b *bisecter) bisect(ctx context.Context) error {
	defer func() {
		for _, c := range b.commits {
			if t := b.trees[c]; t != nil {
				if err := t.co.Remove(); err != nil {
					b.prog.printf("could not remove the worktree of %s: %v", strs.ShortSHA(c), err)
				}
			}
		}
	}()
	r, err := changepoint.Bisect(ctx, b.commits, b.measure, b.o.Params)
	b.record(r)
	if err == nil {
		b.prog.printf("bisection %s: %s", r.Outcome, r.Why)
	}
	return err
}

// record puts the bisection's outcome in the manifest: nil before the first reading.
func (b *bisecter) record(r changepoint.BisectResult) {
	if b.man.Runs == 0 || r.Outcome == "" {
		return
	}
	out := &results.BisectOutcome{Outcome: string(r.Outcome), FirstBad: r.FirstBad, LastGood: r.LastGood,
		Confidence: r.Confidence, EndsP: r.EndsP, ChangePct: r.ChangePct, Why: cleanLine(b.scrub.text(r.Why))}
	for _, s := range r.Steps {
		out.Posterior = append(out.Posterior, results.BisectPosterior{Commit: s.Commit, Runs: len(s.Runs), PBad: s.PBad, Side: s.Side})
	}
	b.man.Outcome = out
}

// measure is changepoint's Measure: commit's worktree (added and built on its first
// measurement), then n runs of the harness for the model, each saved in the manifest
// as it comes.
func (b *bisecter) measure(ctx context.Context, commit string, n int) ([]float64, error) {
	t, err := b.tree(ctx, commit)
	if err != nil {
		return nil, err
	}
	b.repo, b.sb = t.co.Path, t.sb
	dir, cfgDir, err := modelArg(b.model, t.co.Path, b.o.RepoDir, t.sb)
	if err != nil {
		return nil, err
	}
	b.man.Steps = append(b.man.Steps, results.BisectMeasurement{Commit: commit})
	step := &b.man.Steps[len(b.man.Steps)-1]
	defer func() {
		// A measurement stopped before its first reading leaves no step.
		if len(step.Readings) == 0 {
			b.man.Steps = b.man.Steps[:len(b.man.Steps)-1]
		}
	}()
	var out []float64
	for len(out) < n {
		i := b.man.Runs + 1
		label := fmt.Sprintf("bisect %s %s run %d", b.man.Model, strs.ShortSHA(commit), i)
		logName := fmt.Sprintf("run-%d-%s.log", i, strs.ShortSHA(commit))
		var r singleReading
		for redo := 0; ; redo++ {
			r, err = b.runSingle(ctx, singleRun{model: b.man.Model, dir: dir, cfgDir: cfgDir, label: label, logPath: filepath.Join(b.logs, logName)})
			if err != nil {
				return out, err
			}
			if !r.rejected {
				break
			}
			b.man.Rejected++
			if redo+1 >= b.o.MaxRedo {
				return out, fmt.Errorf("%s: the guard rejected it %d times: %s", label, redo+1, r.reason)
			}
		}
		v := r.row.DecodeTokS
		out = append(out, v)
		step.Readings = append(step.Readings, v)
		b.man.Runs++
		if err := b.step(nil); err != nil {
			return out, err
		}
		b.report(commit)
	}
	return out, nil
}

// report writes a progress line at most once per Every.
func (b *bisecter) report(commit string) {
	every := b.o.Every
	if every == 0 {
		every = time.Minute
	}
	now := b.o.Now()
	if !b.last.IsZero() && now.Sub(b.last) < every {
		return
	}
	b.last = now
	b.prog.printf("bisect: %d of at most %d runs done, measuring %s (%d of %d in the range), %d commits measured",
		b.man.Runs, b.o.Params.Budget, strs.ShortSHA(commit), slices.Index(b.commits, commit), len(b.commits)-1, len(b.trees))
}

// tree is commit's worktree, added, checked for the harness and built on first use.
func (b *bisecter) tree(ctx context.Context, commit string) (*bisectTree, error) {
	if t := b.trees[commit]; t != nil {
		return t, nil
	}
	short := strs.ShortSHA(commit)
	b.prog.printf("checking out %s in its own worktree", short)
	co, err := abrun.AddCheckout(ctx, b.o.RepoDir, commit, b.wtDir, commit[:12])
	if err != nil {
		return nil, err
	}
	t := &bisectTree{co: co}
	b.trees[commit] = t
	if fi, err := os.Stat(filepath.Join(co.Path, results.HarnessCommand[0])); err != nil || fi.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("commit %s has no executable %s: a bisection runs the repo's own harness", short, results.HarnessCommand[0])
	}
	if t.sb, err = jobSandbox(b.o.Sandbox, b.prog, co.Path, filepath.Join(co.Path, "target"), filepath.Join(co.Path, HarnessOutput)); err != nil {
		return nil, err
	}
	b.repo, b.sb = co.Path, t.sb
	logDir := filepath.Join(b.logs, short)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	var build results.Build
	if err := b.runBuild(ctx, false, buildStep{argv: results.BenchBuildCommand, logDir: logDir, doing: "building " + short,
		logHint: relHint(b.o.OutDir, filepath.Join(logDir, "build.log"))}, &build); err != nil {
		return nil, fmt.Errorf("commit %s: %w", short, err)
	}
	return t, nil
}

// finish closes the manifest with the state the session ended in; it returns err,
// marked as an interruption when the context was cancelled.
func (b *bisecter) finish(ctx context.Context, err error) error {
	return b.closeWith(ctx, err, func(t time.Time, st results.SessionState, msg string) {
		b.man.Finished, b.man.State, b.man.Error = t, st, cleanLine(msg)
	})
}
