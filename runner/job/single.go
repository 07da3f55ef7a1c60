package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

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
	fresh := func() ([]string, error) {
		now, err := csvNames(harness)
		if err != nil {
			return nil, err
		}
		var out []string
		for n := range now {
			if !before[n] {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out, nil
	}
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

// csvNames lists the CSVs in dir (none when it does not exist).
func csvNames(dir string) (map[string]bool, error) {
	out := map[string]bool{}
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".csv") {
			out[e.Name()] = true
		}
	}
	return out, nil
}
