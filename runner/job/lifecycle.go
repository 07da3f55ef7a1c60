package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// session is the lifecycle the jobs that fill a results folder share (the profile
// session and the nightly): probe the host, name the folder from the GPU target and
// the commit, start the guard log, build outside the guard, run guarded commands, save
// the manifest after every step, and close it with the state the job ended in. The
// manifest itself is the job's (results.Session, results.Nightly): the session saves
// it through save.
type session struct {
	host     host.Host
	repo     string        // the checkout: the commands' working folder
	guard    guard.Options // the base of every guarded command
	prog     *progress
	now      func() time.Time
	sb       *sandbox.Sandbox // nil: commands run unsandboxed
	folder   string
	guardLog string
	scrub    scrubber
	// manifest names the manifest in a message ("session manifest"); save writes it.
	manifest string
	save     func() error
}

func newSession(h host.Host, repo string, g guard.Options, prog *progress, now func() time.Time, manifest string) session {
	return session{host: h, repo: repo, guard: g, prog: prog, now: now, manifest: manifest}
}

// probe collects the host facts, before any guarded wait: rocminfo and friends open
// /dev/kfd and would count as GPU holders inside one.
func (s *session) probe(ctx context.Context, what string) hostinfo.Info {
	s.prog.printf("probing the host (%s)", what)
	return hostinfo.Collect(ctx, s.host, s.repo)
}

// target is the GPU target and the checkout's commit the folder is named after: gfx
// when given, else the host's. unknownGFX tells the user what to do without one.
func target(info hostinfo.Info, gfx, unknownGFX string) (string, string, error) {
	if gfx == "" {
		if !info.GFX.Known() {
			return "", "", fmt.Errorf("the GPU target is unknown (%s): %s", info.GFX.Reason, unknownGFX)
		}
		gfx = info.GFX.Value
	}
	if !info.MlxcelCommit.Known() {
		return "", "", fmt.Errorf("the checkout's commit is unknown (%s): give an mlxcel git checkout", info.MlxcelCommit.Reason)
	}
	return gfx, info.MlxcelCommit.Value, nil
}

// start sets the results folder, starts the guard log at guardLog (one log per job: a
// rerun starts it again) and the scrubber of the job's local folders, the home folder
// added.
func (s *session) start(folder, guardLog string, subs ...pathSub) error {
	s.folder, s.guardLog = folder, guardLog
	for _, f := range s.guardFiles() {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("starting the guard log: %w", err)
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		subs = append(subs, pathSub{home, "~"})
	}
	s.scrub = newScrubber(subs...)
	return nil
}

func (s *session) guardFiles() []string {
	return []string{s.guardLog, s.guardLog + results.GuardEventsSuffix}
}

// buildStep is how a job builds: the command, where its log goes, and the job's words
// for its progress and errors.
type buildStep struct {
	argv    []string
	logDir  string // the build.log goes here
	doing   string // "building the bench": the progress line and the error's start
	skipped string // the progress line of a skipped build
	logHint string // where the full log is, for the error
}

// runBuild runs the build in the checkout, outside the guard: a build is not a measurement
// (and a compiler inside a guarded run would be its own contention). It records the
// step in b; the error is for a build that failed.
func (s *session) runBuild(ctx context.Context, skip bool, step buildStep, b *results.Build) error {
	if skip {
		s.prog.printf("build skipped: %s", step.skipped)
		return nil
	}
	b.Log = "build.log"
	s.prog.printf("%s: %s", step.doing, strings.Join(step.argv, " "))
	start := time.Now()
	code, out, err := runLogged(ctx, s.sb.Host(s.host), s.repo, filepath.Join(step.logDir, b.Log), step.argv)
	b.Seconds = round1(time.Since(start).Seconds())
	if err != nil || code != 0 {
		b.Status = results.BuildFailed
		why := firstError(out)
		if err != nil {
			why = err.Error()
		}
		b.Reason = s.scrub.text(fmt.Sprintf("%s exited with %s: %s", strings.Join(step.argv[:2], " "), exitText(code), why))
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w: %w", step.doing, errInterrupted, ctx.Err())
		}
		return fmt.Errorf("%s: %s (full log in %s)", step.doing, b.Reason, step.logHint)
	}
	b.Status = results.BuildOK
	s.prog.printf("built in %.0fs", b.Seconds)
	return nil
}

// guardOptions are the base guard options for one command of the job: in the sandbox,
// logging to the job's guard log, in the checkout (cargo and the bench read config from
// their working folder).
func (s *session) guardOptions() guard.Options {
	g := s.guard
	g.Host = s.sb.Host(g.Host)
	g.LogPath = s.guardLog
	g.Dir = s.repo
	return g
}

// runGuarded starts a section of the guard log and runs argv under g in it.
func (s *session) runGuarded(ctx context.Context, section string, g guard.Options, label string, argv, env []string, rawPath, progLabel string, observe func(string)) (guarded, error) {
	if err := guard.Section(s.guardLog, section); err != nil {
		return guarded{}, err
	}
	return runGuardedObserved(ctx, g, label, argv, env, rawPath, s.prog, progLabel, observe), nil
}

// step ends a step of the job: the guard log cleaned of local folders and the manifest
// saved. It returns err, else the failure to save.
func (s *session) step(err error) error {
	s.scrubGuardLog()
	if serr := s.save(); serr != nil && err == nil {
		return serr
	}
	return err
}

// end says what state the job ended in, and the error a manifest records (with local
// folders replaced).
func (s *session) end(err error) (results.SessionState, string) {
	switch {
	case err == nil:
		return results.SessionComplete, ""
	case errors.Is(err, errInterrupted):
		return results.SessionInterrupted, s.scrub.text(err.Error())
	default:
		return results.SessionFailed, s.scrub.text(err.Error())
	}
}

// close cleans the guard log and writes the manifest a last time; a failure to write is
// told, not returned (the job's own error, if any, matters more).
func (s *session) close() {
	s.scrubGuardLog()
	if serr := s.save(); serr != nil {
		s.prog.printf("could not write the %s: %v", s.manifest, serr)
	}
}

// scrubGuardLog replaces local folders in the guard log and its JSON lines, which are
// committed. Between guarded commands no guard has them open.
func (s *session) scrubGuardLog() {
	for _, f := range s.guardFiles() {
		if err := s.scrub.file(f); err != nil {
			s.prog.printf("could not clean local paths out of %s: %v", filepath.Base(f), err)
		}
	}
}

var errInterrupted = errors.New("interrupted")

// interruptedDuring is the error of a guarded command a signal or the context stopped.
func (r guarded) interruptedDuring(ctx context.Context, what string) error {
	cause := r.err
	if cause == nil {
		cause = context.Cause(ctx)
	}
	return fmt.Errorf("%w during %s: %w", errInterrupted, what, cause)
}

// singleRun is one run of the harness's single-model mode, as the sessions that
// re-measure commits (a compare, a bisection) run it.
type singleRun struct {
	model   string // the model's folder name: the CSV row's model
	dir     string // the harness's argument (modelArg)
	cfgDir  string // the config's folder of the model, written into the row
	label   string // the guard log's section and the progress label: "compare <model> A run 1"
	logPath string // the run's raw log
}

// singleReading is what one run gave: the harness's row and header, or a rejection by
// the guard with its reason.
type singleReading struct {
	row      benchcsv.Row
	header   []string
	rejected bool
	reason   string
}

// runSingle runs r in the session's current checkout (s.repo, in s.sb) under the guard
// with one attempt: the CSVs the harness writes are told apart from those there before
// and removed after, a rejection by the guard is returned as such (the caller redoes
// the run), and anything but one row of the model with both speeds is an error.
func (s *session) runSingle(ctx context.Context, r singleRun) (singleReading, error) {
	harness := filepath.Join(s.repo, HarnessOutput)
	before, err := csvNames(harness)
	if err != nil {
		return singleReading{}, err
	}
	fresh := func() ([]string, error) { return freshCSVs(harness, before) }
	clear := func() error {
		left, err := fresh()
		for _, n := range left {
			if rerr := os.Remove(filepath.Join(harness, n)); rerr != nil && err == nil {
				err = rerr
			}
		}
		return err
	}
	g := s.guardOptions()
	g.MaxAttempts = 1
	g.BeforeAttempt = func(int) error { return clear() }
	label := r.label
	res, err := s.runGuarded(ctx, "== "+label, g, label, results.RemeasureCommand(r.dir), nil, r.logPath, label, nil)
	if err != nil {
		return singleReading{}, err
	}
	s.scrubGuardLog()
	defer clear()
	switch {
	case res.interrupted():
		return singleReading{}, res.interruptedDuring(ctx, label)
	case res.err != nil:
		return singleReading{}, fmt.Errorf("guarding %s: %w", label, res.err)
	case res.gaveUp():
		why := s.scrub.text(res.gaveUpReason(g))
		s.prog.printf("%s: rejected by the guard, redone in place: %s", label, why)
		return singleReading{rejected: true, reason: why}, nil
	case res.out.ExitCode != 0:
		why := fmt.Sprintf("the harness exited with %s", exitText(res.out.ExitCode))
		if tail := tailLines(res.output, 3); len(tail) > 0 {
			why += "; last lines: " + strings.Join(tail, " | ")
		}
		return singleReading{}, errors.New(s.scrub.text(why))
	}
	made, err := fresh()
	if err != nil {
		return singleReading{}, err
	}
	if len(made) != 1 {
		return singleReading{}, fmt.Errorf("%s: the harness wrote %d CSVs in %s/, want one", label, len(made), HarnessOutput)
	}
	f, err := benchcsv.ReadFile(filepath.Join(harness, made[0]))
	if err != nil {
		return singleReading{}, fmt.Errorf("%s: %w", label, err)
	}
	rows := f.RowsOf(r.model)
	if len(rows) != 1 {
		return singleReading{}, fmt.Errorf("%s: %s has %d rows of %s, want one", label, made[0], len(rows), r.model)
	}
	row := rows[0]
	if !row.OK() || !row.HasPrefill || row.DecodeTokS <= 0 || row.PrefillTokS <= 0 {
		return singleReading{}, fmt.Errorf("%s: the harness gave no reading (%s)", label, orNone(benchcsv.StatusText(row.Status)))
	}
	if filepath.IsAbs(r.dir) && !filepath.IsAbs(r.cfgDir) {
		// The harness writes its argument into the row: the committed CSV names the
		// config's folder, not this host's.
		row.ModelPath = strings.TrimSuffix(r.cfgDir, "/") + "/"
	}
	return singleReading{row: row, header: f.Header}, nil
}

// modelArg is the harness's argument for model m (and the config's folder): the
// config's folder, in the worktree when there, else in the checkout (the models are
// seldom committed), visible to the worktree's sandbox sb.
func modelArg(m config.Model, worktree, checkout string, sb *sandbox.Sandbox) (arg, cfgDir string, err error) {
	dir := m.Dir
	switch {
	case filepath.IsAbs(dir):
	case isDir(filepath.Join(worktree, filepath.FromSlash(dir))):
		return dir, m.Dir, nil
	default:
		dir = filepath.Join(checkout, filepath.FromSlash(dir))
	}
	if !isDir(dir) {
		return "", "", fmt.Errorf("model directory %s of models.%s is neither in the worktree nor in the checkout", m.Dir, m.Name)
	}
	if !sb.Visible(dir) {
		return "", "", fmt.Errorf("the model folder %s is outside the sandbox (the worktree and %s): add its folder to %s on the runner", m.Dir, sandbox.EnvReadOnly, sandbox.EnvReadOnly)
	}
	return dir, m.Dir, nil
}
