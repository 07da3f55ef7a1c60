package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// What the jobs that fill one results folder share beyond the session: how they are
// driven, how their folders are resolved and opened, and how the models asked for
// are found in the config.

// folderJob is a job that fills one folder: opened with the host's facts, run, then
// closed with the state it ended in.
type folderJob interface {
	jobSession() *session
	open(hostinfo.Info) error
	run(context.Context) error
	finish(context.Context, error) error
}

func (s *session) jobSession() *session { return s }

// runJob builds a job with build, probes the host (before any guarded wait: rocminfo
// and friends open /dev/kfd and would count as GPU holders inside one), opens the
// job's folder and runs it; report is what the job did once its folder is open.
func runJob[J folderJob, R any](ctx context.Context, probe string, build func() (J, error), report func(J) R) (R, error) {
	var none R
	j, err := build()
	if err != nil {
		return none, err
	}
	if err := j.open(j.jobSession().probe(ctx, probe)); err != nil {
		return none, err
	}
	err = j.finish(ctx, j.run(ctx))
	return report(j), err
}

// closeWith closes the job's manifest with the state err ends it in (set writes the
// end time, the state and the error into it) and returns err, marked as an
// interruption when ctx was cancelled.
func (s *session) closeWith(ctx context.Context, err error, set func(time.Time, results.SessionState, string)) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, errInterrupted) {
		err = fmt.Errorf("%w: %w", errInterrupted, err)
	}
	st, msg := s.end(err)
	set(s.now(), st, msg)
	s.close()
	return err
}

// folderArg is one folder option of a job and its name in an error.
type folderArg struct {
	name string
	p    *string
}

// absFolders makes each folder absolute (absFolder), in order.
func absFolders(dirs ...folderArg) error {
	for _, d := range dirs {
		if err := absFolder(d.name, d.p); err != nil {
			return err
		}
	}
	return nil
}

// stepFolders resolves the folders of a session that a job may run as one of its
// steps: its logs folder (default <out>/<logs>) and its own folder when the caller
// names one (else the session names it below out), both made absolute.
func stepFolders(out, logs string, logDir, folder *string) error {
	if *logDir == "" {
		*logDir = filepath.Join(out, logs)
	}
	dirs := []folderArg{{"the logs folder (LogDir)", logDir}}
	if *folder != "" {
		dirs = append(dirs, folderArg{"the session's folder (Folder)", folder})
	}
	return absFolders(dirs...)
}

// openFolders makes a session's folder and its logs folder, refusing a folder that
// holds a manifest (file, a what) already: a session never writes over another.
func openFolders(folder, logs, file, what string) error {
	if _, err := os.Lstat(filepath.Join(folder, file)); err == nil {
		return fmt.Errorf("%s already holds a %s: give another results root or move it away", folder, what)
	}
	for _, d := range []string{folder, logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating the %s folder: %w", what, err)
		}
	}
	return nil
}

// freshFolder removes dir, left over from an earlier session, and makes it again.
func freshFolder(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clearing %s: %w", dir, err)
	}
	return os.MkdirAll(dir, 0o755)
}

// wantedModels resolves the model names asked for (none: the config's default
// models, else all of them) against the config: at most limits.max_models, each known,
// in the config's order. what says what the models are for in an error ("run").
func wantedModels(c config.Config, want []string, what string) ([]config.Model, error) {
	if len(want) == 0 {
		want = c.DefaultModels
	}
	if len(want) == 0 {
		for _, m := range c.Models {
			want = append(want, m.Name)
		}
	}
	if len(want) == 0 {
		return nil, badRequestf("no models to %s: the config names none", what)
	}
	if mx := c.Limits.MaxModels; mx > 0 && len(want) > mx {
		return nil, badRequestf("%d models asked for, more than limits.max_models (%d): ask for fewer or raise the limit", len(want), mx)
	}
	// Sets, not searches: a config of many models must cost linear time.
	known := make(map[string]bool, len(c.Models))
	for _, m := range c.Models {
		known[m.Name] = true
	}
	wanted := make(map[string]bool, len(want))
	for _, name := range want {
		if !known[name] {
			return nil, badRequestf("model %s is not in the config; known: %s", safetext.Quote(name), knownModels(c))
		}
		wanted[name] = true
	}
	var out []config.Model
	for _, m := range c.Models {
		if wanted[m.Name] {
			out = append(out, m)
		}
	}
	return out, nil
}

// pairFolder is where a session over two commits (a compare, a bisection) puts its
// results.
type pairFolder struct {
	given    string // the caller's folder, "" for <out>/<under>/<gfx>_<a8>_<b8>
	out      string // the results root
	under    string
	a, b     string // the two commits
	logs     string
	repo     string // the checkout
	manifest string // the manifest's file name, and what the session is in messages
	what     string
	noGFX    string    // what to do without a GPU target
	subs     []pathSub // the session's own local folders, replaced in the guard log
}

// openPair opens the folder of a session over two commits: the GPU target from the
// host's facts, the folder and the logs folder made (a folder holding a manifest
// refused), the guard log started (local folders replaced: the session's own, the
// checkout, the results root, the temp folder), the host facts written. It returns the
// GPU target.
func (s *session) openPair(info hostinfo.Info, f pairFolder) (string, error) {
	gfx, _, err := target(info, "", f.noGFX)
	if err != nil {
		return "", err
	}
	folder := f.given
	if folder == "" {
		folder = filepath.Join(f.out, f.under, gfx+"_"+strs.ShortSHA(f.a)+"_"+strs.ShortSHA(f.b))
	}
	if err := openFolders(folder, f.logs, f.manifest, f.what); err != nil {
		return "", err
	}
	subs := append(f.subs, pathSub{f.repo, "<checkout>"}, pathSub{f.out, "<out>"}, pathSub{os.TempDir(), "<tmp>"})
	if err := s.start(folder, filepath.Join(folder, results.GuardLogFile), subs...); err != nil {
		return "", err
	}
	return gfx, results.WriteJSON(folder, results.HostInfoFile, "host facts", info)
}

// cleanLine makes s one line of printable text, at most 4096 bytes, as the manifest
// keeps its error.
func cleanLine(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "?")), " ")
	s = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) && r != ' ' {
			return '?'
		}
		return r
	}, s)
	if len(s) > 4000 {
		s = strings.ToValidUTF8(s[:4000], "") + " ..."
	}
	return s
}

// modelFolder is the name of model m's folder: the harness's name of the model, and
// the name its results go by.
func modelFolder(m config.Model) string { return path.Base(m.Dir) }

// jobDefaults fills what every job takes from the machine when the caller leaves it
// out: the host, the guard's host and the clock.
func jobDefaults(h *host.Host, g *guard.Options, now *func() time.Time) {
	if *h == nil {
		*h = host.Local()
	}
	if g.Host == nil {
		g.Host = *h
	}
	if *now == nil {
		*now = time.Now
	}
}

// jobSandbox prepares the sandbox the job's commands run in (nil when the host's
// settings say off): settings nil means the host's, read from perfbot's environment.
// The checkout is dir; writable are the only folders the commands may write.
func jobSandbox(settings *sandbox.Settings, prog *progress, dir string, writable ...string) (*sandbox.Sandbox, error) {
	if settings == nil {
		s, err := sandbox.FromEnv(os.Getenv)
		if err != nil {
			return nil, err
		}
		settings = &s
	}
	sb, err := sandbox.New(*settings, dir, writable...)
	if err != nil {
		return nil, fmt.Errorf("preparing the sandbox: %w", err)
	}
	if sb != nil {
		names := make([]string, len(writable))
		for i, w := range writable {
			names[i] = filepath.Base(w)
		}
		prog.printf("sandbox: bwrap, no network; the checkout read-only, writable: %s", strings.Join(names, ", "))
	}
	return sb, nil
}

// absFolder resolves a folder option, naming it when it is missing.
func absFolder(what string, p *string) error {
	if *p == "" {
		return fmt.Errorf("no folder given for %s", what)
	}
	abs, err := filepath.Abs(*p)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", what, err)
	}
	*p = abs
	return nil
}

// freshCSVs lists, sorted, the CSVs in dir that are not in before (csvNames): what a
// harness added.
func freshCSVs(dir string, before map[string]bool) ([]string, error) {
	now, err := csvNames(dir)
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

// stopped says err is an interruption, or the context was cancelled: the job stops
// rather than records a failure and goes on.
func stopped(ctx context.Context, err error) bool {
	return errors.Is(err, errInterrupted) || ctx.Err() != nil
}

// samplingOf is the sampling settings given, else the config's; none is an error.
func samplingOf(given, cfg []results.Sampling) ([]results.Sampling, error) {
	if len(given) == 0 {
		given = cfg
	}
	if len(given) == 0 {
		return nil, badRequestf("no sampling settings: give some (greedy, t0.7, t0.7-p0.95) or set sampling in the config")
	}
	return given, nil
}
