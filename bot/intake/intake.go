package intake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// Limits bound what one artifact may hold.
type Limits struct {
	// MaxFiles is how many entries the artifact may hold in all, folders included.
	MaxFiles int
	// MaxFileBytes bounds one file, MaxTotalBytes all the files copied together.
	MaxFileBytes, MaxTotalBytes int64
	// MaxDepth is how many folder levels below the source may be entered: 1 lets a
	// profile artifact be a root holding its <gfx>_<commit> folder, 0 does not.
	MaxDepth int
}

// DefaultLimits are the limits for perfbot's own jobs (docs/intake.md): a thousand
// entries (a session writes five files per run and five of its own), one file as large
// as a commit may hold one (bot/gitpub's DefaultMaxFileSize), 256 MiB in all, and one
// folder level.
func DefaultLimits() Limits {
	return Limits{MaxFiles: 1000, MaxFileBytes: gitpub.DefaultMaxFileSize, MaxTotalBytes: 256 << 20, MaxDepth: 1}
}

func (l Limits) check() error {
	if l.MaxFiles <= 0 || l.MaxFileBytes <= 0 || l.MaxTotalBytes <= 0 || l.MaxDepth < 0 {
		return fmt.Errorf("intake limits %+v: MaxFiles, MaxFileBytes and MaxTotalBytes must be positive and MaxDepth not negative (start from DefaultLimits)", l)
	}
	return nil
}

// Result is what a copy made.
type Result struct {
	// Dir is the copied folder: dst/<gfx>_<commit> for a profile, dst for a nightly.
	Dir string
	// Files are the names copied into Dir, sorted.
	Files []string
	// Dropped are the names left out without an error, sorted: the profiler traces
	// (*_trace.csv, *_results.db) that the publisher never commits.
	Dropped []string
	// Notes say what was copied although its reader refused it: the bench log or
	// kernel stats of a run that failed and left no summary.
	Notes []string
}

// Profile copies the profile results folder at src (the <gfx>_<commit> folder, or a
// root holding exactly one such folder) into dst (created; must not exist), checking
// it on the way, and returns the copied folder's path (dst/<gfx>_<commit>).
func Profile(ctx context.Context, src, dst string, lim Limits) (string, error) {
	r, err := ProfileResult(ctx, src, dst, lim)
	return r.Dir, err
}

// Nightly does the same for the bench job's nightly results: src is the folder `perfbot
// run bench` writes under results.benchmarks (one <stem>.nightly.json, the CSVs it
// names, <stem>.guard.log and its .jsonl, and the folders it names: a suspect's
// confirming A/B, a bisection), copied into dst, which it returns.
func Nightly(ctx context.Context, src, dst string, lim Limits) (string, error) {
	r, err := NightlyResult(ctx, src, dst, lim)
	return r.Dir, err
}

// ProfileResult is Profile that also says which files it copied and which it left out.
// On an error nothing is left at dst and the Result is empty.
func ProfileResult(ctx context.Context, src, dst string, lim Limits) (Result, error) {
	c, err := start(ctx, src, dst, lim)
	if err != nil {
		return Result{}, err
	}
	defer c.closeAll()
	dir, name, err := c.profileFolder()
	if err != nil {
		return Result{}, err
	}
	lvl := 0
	if dir != c.root {
		lvl = 1
	}
	plan, err := c.plan(dir, name, lvl, profileKind)
	if err != nil {
		return Result{}, err
	}
	return c.run(name, dir, plan)
}

// NightlyResult is Nightly that also says which files it copied. The folders the
// manifest names are copied too, each checked as its kind's artifact is: a suspect's
// confirming A/B (confirm-<model>, a compare folder) and a bisection (bisect-<model>,
// with its culprit A/B); their files are listed as confirm-<model>/NAME ...
func NightlyResult(ctx context.Context, src, dst string, lim Limits) (Result, error) {
	c, err := start(ctx, src, dst, lim)
	if err != nil {
		return Result{}, err
	}
	defer c.closeAll()
	n := &nightlyCheck{}
	plan, dirs, err := c.planWith(c.root, "", 0, n.kind, isNightlyFolder)
	if err != nil {
		return Result{}, err
	}
	if err := n.order(c.src, plan); err != nil {
		return Result{}, err
	}
	return c.runThen("", c.root, plan, func(res *Result) error {
		return c.nightlyFolders(c.root, res.Dir, n.man, dirs, res)
	})
}

// copier carries one copy.
type copier struct {
	ctx     context.Context
	lim     Limits
	src     string
	dst     string
	root    *folder
	opened  []*folder
	entries int   // entries listed so far
	total   int64 // bytes copied so far
}

func start(ctx context.Context, src, dst string, lim Limits) (*copier, error) {
	if err := lim.check(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("copying the results artifact: %w", err)
	}
	if src == "" || dst == "" {
		return nil, errors.New("copying the results artifact: give both the source folder and the destination")
	}
	root, err := openRoot(src)
	if err != nil {
		if isLinkError(err) {
			return nil, refuse(src, ErrLink, "")
		}
		return nil, fmt.Errorf("opening the results artifact: %w", err)
	}
	return &copier{ctx: ctx, lim: lim, src: src, dst: dst, root: root, opened: []*folder{root}}, nil
}

func (c *copier) closeAll() {
	for _, d := range c.opened {
		d.close()
	}
}

// folderRE is a profile results folder's name, <gfx>_<commit> (bot/publish reads the
// same).
var folderRE = regexp.MustCompile(`^([A-Za-z0-9]+)_([0-9a-f]{7,40})$`)

// profileFolder finds the <gfx>_<commit> folder: src itself when it has that name,
// else the one such folder src holds, and nothing else beside it.
func (c *copier) profileFolder() (*folder, string, error) {
	base := filepath.Base(filepath.Clean(c.src))
	if folderRE.MatchString(base) {
		return c.root, base, nil
	}
	ents, err := c.list(c.root, "")
	if err != nil {
		return nil, "", err
	}
	var found []string
	for _, e := range ents {
		name := e.Name()
		if err := checkName(name); err != nil {
			return nil, "", refuseErr(name, ErrName, err)
		}
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			return nil, "", refuse(name, ErrLink, "")
		case !t.IsDir():
			if k, drop, _ := profileKind(name); k != nil || drop {
				return nil, "", refuse(name, ErrUnknown, "the root of a profile artifact holds only its <gfx>_<commit> folder; "+
					"this is a results file: give the folder holding it, named <gfx>_<commit> as the runner names it (an artifact of the folder alone loses its name: upload its parent)")
			}
			return nil, "", refuse(name, ErrUnknown, "the root of a profile artifact holds only its <gfx>_<commit> folder")
		case !folderRE.MatchString(name):
			return nil, "", refuse(name, ErrUnknown, "the root of a profile artifact holds only its <gfx>_<commit> folder (e.g. gfx1151_929c80ab)")
		}
		found = append(found, name)
	}
	switch len(found) {
	case 0:
		return nil, "", refuse(c.src, ErrLayout, "it is neither a <gfx>_<commit> folder nor holds one: give the results folder `perfbot run profile` wrote")
	case 1:
	default:
		slices.Sort(found)
		return nil, "", refuse(c.src, ErrLayout, "it holds %d results folders (%s): an artifact carries one profile", len(found), strings.Join(found, ", "))
	}
	if c.lim.MaxDepth < 1 {
		return nil, "", refuse(found[0], ErrDepth, "the limit is %d", c.lim.MaxDepth)
	}
	d, err := c.root.sub(found[0])
	if err != nil {
		if isLinkError(err) {
			return nil, "", refuse(found[0], ErrLink, "")
		}
		return nil, "", fmt.Errorf("opening the results artifact: %w", err)
	}
	c.opened = append(c.opened, d)
	return d, found[0], nil
}

// list reads every entry of d, no more than the limit lets through.
func (c *copier) list(d *folder, rel string) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	for {
		if err := c.ctx.Err(); err != nil {
			return nil, fmt.Errorf("copying the results artifact: %w", err)
		}
		batch, err := d.list(256)
		out = append(out, batch...)
		c.entries += len(batch)
		if c.entries > c.lim.MaxFiles {
			where := rel
			if where == "" {
				where = c.src
			}
			return nil, refuse(where, ErrTooMany, "more than %d", c.lim.MaxFiles)
		}
		if err == io.EOF || (err == nil && len(batch) == 0) {
			// In name order, so that of two bad entries the same one is named each time.
			slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing the results artifact: %w", err)
		}
	}
}

// kind is what a file of the layout is and how it is checked.
type kind struct {
	what string // for messages: "a run summary"
	// check parses the copied bytes with perfbot's reader for the kind; cp is the path
	// of the copy, for the readers that read a path.
	check func(name string, data []byte, cp string) error
	// failedRun, when set, names the run of a file the runner keeps also for a run that
	// failed (a crash's bench log, the profiler's stats of a run whose analysis
	// failed). Such a file of a run with no summary in the folder is kept with a note
	// when its reader refuses it, as the publisher has always committed it.
	failedRun func(name string) string
}

// classify says what a name is: a kind to copy, drop (true) to leave out, or an error.
type classify func(name string) (k *kind, drop bool, err error)

// item is one file to copy.
type item struct {
	name string
	k    *kind
}

// plan lists the folder, refuses what the layout has no place for, and returns the
// files to copy in name order (the dropped ones are kept aside with a nil kind).
func (c *copier) plan(d *folder, rel string, lvl int, what classify) ([]item, error) {
	plan, _, err := c.planWith(d, rel, lvl, what, nil)
	return plan, err
}

// planWith is plan for a folder whose layout holds folders too: the folders dirs
// accepts are returned aside (in name order) instead of refused, and do not count
// against Limits.MaxDepth (a compare's side folders, a nightly's confirming A/B and
// bisection, a bisection's culprit A/B).
func (c *copier) planWith(d *folder, rel string, lvl int, what classify, dirs func(name string) bool) ([]item, []string, error) {
	ents, err := c.list(d, rel)
	if err != nil {
		return nil, nil, err
	}
	var out []item
	var folders []string
	for _, e := range ents {
		name := e.Name()
		p := path.Join(rel, name)
		if err := checkName(name); err != nil {
			return nil, nil, refuseErr(p, ErrName, err)
		}
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			return nil, nil, refuse(p, ErrLink, "")
		case t.IsDir() && dirs != nil && dirs(name):
			folders = append(folders, name)
			continue
		case t.IsDir():
			if lvl+1 > c.lim.MaxDepth {
				return nil, nil, refuse(p, ErrDepth, "the limit is %d", c.lim.MaxDepth)
			}
			return nil, nil, refuse(p, ErrNested, "")
		case !t.IsRegular():
			return nil, nil, refuse(p, ErrNotRegular, "it is %s", infile.Kind(t))
		}
		k, drop, err := what(name)
		switch {
		case err != nil:
			return nil, nil, refuseErr(p, ErrUnknown, err)
		case drop:
			out = append(out, item{name: name})
		default:
			out = append(out, item{name: name, k: k})
		}
	}
	slices.SortFunc(out, func(a, b item) int { return strings.Compare(a.name, b.name) })
	slices.Sort(folders)
	return out, folders, nil
}

// run creates dst, copies the plan into dst/rel and checks every copy; on any error it
// removes dst again.
func (c *copier) run(rel string, d *folder, plan []item) (res Result, err error) {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(c.dst)), 0o755); err != nil {
		return Result{}, fmt.Errorf("making the parent of the destination: %w", err)
	}
	if err := os.Mkdir(c.dst, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Result{}, refuse(c.dst, ErrExists, "")
		}
		return Result{}, fmt.Errorf("making the destination: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(c.dst)
			res = Result{}
		}
	}()
	if err := os.Chmod(c.dst, 0o755); err != nil {
		return Result{}, err
	}
	out := c.dst
	if rel != "" {
		out = filepath.Join(c.dst, rel)
		if err := os.Mkdir(out, 0o755); err != nil {
			return Result{}, fmt.Errorf("making the destination: %w", err)
		}
		if err := os.Chmod(out, 0o755); err != nil {
			return Result{}, err
		}
	}
	res.Dir = out
	if err := c.copyPlan(out, rel, "", d, plan, &res); err != nil {
		return Result{}, err
	}
	slices.Sort(res.Files)
	return res, nil
}

// copyPlan copies the plan's files of d (at rel in the source) into out and checks
// each copy; the names go into res with prefix before them (a side folder's "a/").
func (c *copier) copyPlan(out, rel, prefix string, d *folder, plan []item, res *Result) error {
	summaries := map[string]bool{}
	for _, it := range plan {
		if run, ok := strings.CutSuffix(it.name, "_summary.json"); ok && it.k != nil {
			summaries[run] = true
		}
	}
	for _, it := range plan {
		if err := c.ctx.Err(); err != nil {
			return fmt.Errorf("copying the results artifact: %w", err)
		}
		p := path.Join(rel, it.name)
		if it.k == nil {
			res.Dropped = append(res.Dropped, prefix+it.name)
			continue
		}
		cp := filepath.Join(out, it.name)
		data, err := c.copyFile(d, p, it.name, cp)
		if err != nil {
			return err
		}
		if err := it.k.check(it.name, data, cp); err != nil {
			if re, ok := err.(*ruleError); ok {
				return refuseErr(p, re.rule, re.err)
			}
			if it.k.failedRun == nil || summaries[it.k.failedRun(it.name)] {
				return refuseErr(p, ErrFormat, fmt.Errorf("as %s: %w", it.k.what, err))
			}
			res.Notes = append(res.Notes, fmt.Sprintf("%s is kept although its reader refuses it (run %s failed and left no summary): %v",
				safetext.Quote(p), safetext.Quote(it.k.failedRun(it.name)), err))
		}
		res.Files = append(res.Files, prefix+it.name)
	}
	return nil
}

// copyFile reads the entry name of d, within the limits and without following a link,
// and writes it to to with mode 0644; it returns the bytes.
func (c *copier) copyFile(d *folder, p, name, to string) ([]byte, error) {
	f, err := d.open(name)
	if err != nil {
		if isLinkError(err) {
			return nil, refuse(p, ErrLink, "")
		}
		return nil, fmt.Errorf("opening %s of the results artifact: %w", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s of the results artifact: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, refuse(p, ErrNotRegular, "it is %s", infile.Kind(fi.Mode().Type()))
	}
	if err := c.fits(p, fi.Size()); err != nil {
		return nil, err
	}
	// The file may grow while it is read: never take more than the caps allow, plus one.
	room := min(c.lim.MaxFileBytes, c.lim.MaxTotalBytes-c.total)
	data, err := io.ReadAll(io.LimitReader(infile.Reader(c.ctx, f), room+1))
	if err != nil {
		if c.ctx.Err() != nil {
			return nil, fmt.Errorf("copying the results artifact: %w", c.ctx.Err())
		}
		return nil, fmt.Errorf("reading %s of the results artifact: %w", p, err)
	}
	if err := c.fits(p, int64(len(data))); err != nil {
		return nil, err
	}
	c.total += int64(len(data))
	if err := writeNew(to, data); err != nil {
		return nil, fmt.Errorf("writing the copy of %s: %w", p, err)
	}
	return data, nil
}

func (c *copier) fits(p string, size int64) error {
	if size > c.lim.MaxFileBytes {
		return refuse(p, ErrTooLarge, "%d bytes, more than %d (%s)", size, c.lim.MaxFileBytes, infile.Size(c.lim.MaxFileBytes))
	}
	if c.total+size > c.lim.MaxTotalBytes {
		return refuse(p, ErrTotal, "with it the files come to %d bytes, more than %d (%s)", c.total+size, c.lim.MaxTotalBytes, infile.Size(c.lim.MaxTotalBytes))
	}
	return nil
}

// writeNew writes a new file (never over an existing one, never through a link) with
// mode 0644 whatever the umask.
func writeNew(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxNameBytes is a file name's limit on Linux file systems.
const maxNameBytes = 255

// checkName refuses a name that is not one plain path element.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("the name is empty")
	case len(name) > maxNameBytes:
		return fmt.Errorf("the name is %d bytes long, more than %d", len(name), maxNameBytes)
	case !utf8.ValidString(name):
		return errors.New("the name is not valid UTF-8")
	case strings.ContainsAny(name, "/\\\x00"):
		return errors.New("the name holds a /, \\ or NUL")
	case strings.Contains(name, ".."):
		return errors.New("the name holds ..")
	case name[0] == '.':
		return errors.New("the name starts with a dot")
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("the name holds the character %U, which is not printable", r)
		}
	}
	return nil
}
