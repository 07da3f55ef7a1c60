package intake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/portdiff"
	"github.com/lablup/perfbot/runner/results"
)

// compareFolderRE is a compare results folder's name, <gfx>_<A's commit>_<B's commit>
// (runner/job writes the 8-digit short SHAs).
var compareFolderRE = regexp.MustCompile(`^([A-Za-z0-9]+)_([0-9a-f]{7,40})_([0-9a-f]{7,40})$`)

// IsCompare says whether the downloaded folder dir looks like a compare's artifact:
// it holds compare.json, or a <gfx>_<A>_<B> folder. It decides only which reader
// copies the artifact; Compare checks everything.
func IsCompare(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, results.CompareFile)); err == nil && fi.Mode().IsRegular() {
		return true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.IsDir() && compareFolderRE.MatchString(e.Name()) {
			return true
		}
	}
	return false
}

// Compare copies the compare results folder at src (the <gfx>_<A8>_<B8> folder
// runner/job writes, or a root holding exactly one such folder) into dst (created;
// must not exist), checking it on the way, and returns the copied folder's path
// (dst/<gfx>_<A8>_<B8>).
func Compare(ctx context.Context, src, dst string, lim Limits) (string, error) {
	r, err := CompareResult(ctx, src, dst, lim)
	return r.Dir, err
}

// CompareResult is Compare that also says which files it copied (a side folder's
// files as a/NAME and b/NAME) and which it left out. The manifest is copied and read
// first (results.ReadCompare), and every other file must be one it names or one of
// the session's own (guard.log, guard.log.jsonl, hostinfo.json); the side folders a/
// and b/ must be the ones it names, each copied with the rules of a profile results
// folder. At the end the copy is read back with results.ReadCompareFolder. On an error
// nothing is left at dst and the Result is empty.
func CompareResult(ctx context.Context, src, dst string, lim Limits) (Result, error) {
	c, err := start(ctx, src, dst, lim)
	if err != nil {
		return Result{}, err
	}
	defer c.closeAll()
	dir, name, err := c.compareFolder()
	if err != nil {
		return Result{}, err
	}
	cc := &compareCheck{folder: name}
	plan, sides, err := c.comparePlan(dir, name, cc)
	if err != nil {
		return Result{}, err
	}
	return c.runThen(name, dir, plan, func(res *Result) error {
		return c.compareSides(dir, name, res.Dir, "", cc, sides, res)
	})
}

// runThen copies the folder d, at rel in the source, by its plan (c.run), then lets
// more copy the folders inside it into the copy, naming their files in res. An error
// of more leaves nothing at the destination and an empty Result; without one, the
// Result's lists are sorted.
func (c *copier) runThen(rel string, d *folder, plan []item, more func(res *Result) error) (Result, error) {
	res, err := c.run(rel, d, plan)
	if err != nil {
		return Result{}, err
	}
	if err := more(&res); err != nil {
		os.RemoveAll(c.dst)
		return Result{}, err
	}
	slices.Sort(res.Files)
	slices.Sort(res.Dropped)
	return res, nil
}

// compareSides copies the side folders (sides, a/ and b/) of the compare folder d, at
// rel in the source, into out, where its files are copied already (the names go into
// res with prefix before them), each with the rules of a profile results folder, and
// reads the copy back with results.ReadCompareFolder.
func (c *copier) compareSides(d *folder, rel, out, prefix string, cc *compareCheck, sides []string, res *Result) error {
	named := map[string]bool{}
	for _, s := range []string{cc.man.DirA, cc.man.DirB} {
		if s != "" {
			named[s] = true
		}
	}
	for _, side := range sides {
		srel := path.Join(rel, side)
		if !named[side] {
			return refuse(srel, ErrUnknown, "the manifest names no %s/ folder (a bench compare has none; a profile compare names a and b)", side)
		}
		sd, err := d.sub(side)
		if err != nil {
			if isLinkError(err) {
				return refuse(srel, ErrLink, "")
			}
			return fmt.Errorf("opening the results artifact: %w", err)
		}
		c.opened = append(c.opened, sd)
		sp, err := c.plan(sd, srel, 0, profileKind)
		if err != nil {
			return err
		}
		sout := filepath.Join(out, side)
		if err := mkdir(sout); err != nil {
			return err
		}
		if err := c.copyPlan(sout, srel, prefix+side+"/", sd, sp, res); err != nil {
			return err
		}
	}
	if _, err := results.ReadCompareFolder(out); err != nil {
		return refuseErr(rel, ErrLayout, errors.New(strings.ReplaceAll(err.Error(), out+string(filepath.Separator), "")))
	}
	return nil
}

// mkdir makes the folder p of a copy, mode 0755 whatever the umask.
func mkdir(p string) error {
	if err := os.Mkdir(p, 0o755); err != nil {
		return fmt.Errorf("making the destination: %w", err)
	}
	return os.Chmod(p, 0o755)
}

// compareFolder finds the <gfx>_<A>_<B> folder: src itself when it has that name, else
// the one such folder src holds, and nothing else beside it.
func (c *copier) compareFolder() (*folder, string, error) {
	base := filepath.Base(filepath.Clean(c.src))
	if compareFolderRE.MatchString(base) {
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
		case !t.IsDir() || !compareFolderRE.MatchString(name):
			return nil, "", refuse(name, ErrUnknown, "the root of a compare artifact holds only its <gfx>_<A>_<B> folder (e.g. gfx1151_1a2b3c4d_5e6f7a8b)")
		}
		found = append(found, name)
	}
	switch len(found) {
	case 0:
		return nil, "", refuse(c.src, ErrLayout, "it is neither a <gfx>_<A>_<B> folder nor holds one: give the compare folder the compare job wrote")
	case 1:
	default:
		return nil, "", refuse(c.src, ErrLayout, "it holds %d compare folders (%s): an artifact carries one compare", len(found), strings.Join(found, ", "))
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

// comparePlan lists the compare folder: its files in copy order (the manifest first)
// and its side folders (a, b). The side folders belong to the compare's layout and do
// not count against Limits.MaxDepth; nothing deeper is allowed.
func (c *copier) comparePlan(d *folder, rel string, cc *compareCheck) ([]item, []string, error) {
	ents, err := c.list(d, rel)
	if err != nil {
		return nil, nil, err
	}
	var plan []item
	var sides []string
	manifest := false
	for _, e := range ents {
		name := e.Name()
		p := path.Join(rel, name)
		if err := checkName(name); err != nil {
			return nil, nil, refuseErr(p, ErrName, err)
		}
		isDir, err := results.CompareName(name)
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			return nil, nil, refuse(p, ErrLink, "")
		case err != nil:
			return nil, nil, refuseErr(p, ErrUnknown, err)
		case t.IsDir() && isDir:
			sides = append(sides, name)
			continue
		case t.IsDir():
			return nil, nil, refuse(p, ErrNested, "")
		case !t.IsRegular():
			return nil, nil, refuse(p, ErrNotRegular, "it is %s", infile.Kind(t))
		case isDir:
			return nil, nil, refuse(p, ErrLayout, "a compare's %s is a folder (a side's profile), not a file", name)
		}
		k := cc.kind(name)
		if name == results.CompareFile {
			manifest = true
			plan = append([]item{{name: name, k: k}}, plan...)
			continue
		}
		plan = append(plan, item{name: name, k: k})
	}
	if !manifest {
		return nil, nil, refuse(rel, ErrLayout, "it holds no %s: a compare folder's manifest", results.CompareFile)
	}
	slices.SortStableFunc(plan[1:], func(a, b item) int { return strings.Compare(a.name, b.name) })
	slices.Sort(sides)
	return plan, sides, nil
}

// compareCheck checks a compare folder: the manifest first, then the files it names.
// folder is the <gfx>_<A>_<B> name the manifest must agree with; "" for a compare
// nested in another results folder.
type compareCheck struct {
	folder string
	man    results.Compare
}

// kind is the kind of a top-level file CompareName accepted.
func (cc *compareCheck) kind(name string) *kind {
	switch {
	case name == results.CompareFile:
		return &kind{what: "the compare manifest", check: cc.checkManifest}
	case name == results.GuardLogFile:
		return guardLogKind
	case name == results.GuardLogFile+results.GuardEventsSuffix:
		return guardJSONKind
	case name == results.HostInfoFile:
		return hostInfoKind
	case strings.HasSuffix(name, ".csv"):
		return &kind{what: "a harness CSV of the pair", check: cc.checkCSV}
	case strings.HasSuffix(name, results.DiffJSONSuffix):
		return &kind{what: "a difference of two decode profiles", check: cc.checkDiffJSON}
	}
	return &kind{what: "a difference of two decode profiles (Markdown)", check: cc.checkDiffMarkdown}
}

func (cc *compareCheck) checkManifest(name string, _ []byte, cp string) error {
	man, err := results.ReadCompare(cp)
	if err != nil {
		return named(err, cp, name)
	}
	if cc.folder == "" {
		// A compare nested in another folder (a nightly's confirming A/B, a
		// bisection's culprit A/B): its name is its place, which the outer manifest
		// checks.
		cc.man = man
		return nil
	}
	m := compareFolderRE.FindStringSubmatch(cc.folder)
	if m == nil || !strings.HasPrefix(man.ShaA, m[2]) || !strings.HasPrefix(man.ShaB, m[3]) || (man.GFX != "" && man.GFX != m[1]) {
		return &ruleError{rule: ErrLayout, err: fmt.Errorf("it is the compare of %s against %s on %s, not of the folder %s",
			safetext.Quote(man.ShaB), safetext.Quote(man.ShaA), safetext.Quote(man.GFX), safetext.Quote(cc.folder))}
	}
	cc.man = man
	return nil
}

func (cc *compareCheck) checkCSV(name string, data []byte, _ string) error {
	if name != cc.man.CSVBefore && name != cc.man.CSVAfter {
		return &ruleError{rule: ErrUnknown, err: errors.New("the manifest does not name it as its CSV pair")}
	}
	_, err := benchcsv.Parse(data, name)
	return err
}

func (cc *compareCheck) diffNamed(name string) bool {
	for _, d := range cc.man.Diffs {
		if name == d.JSON || (d.Markdown != "" && name == d.Markdown) {
			return true
		}
	}
	return false
}

func (cc *compareCheck) checkDiffJSON(name string, data []byte, _ string) error {
	if !cc.diffNamed(name) {
		return &ruleError{rule: ErrUnknown, err: errors.New("the manifest names no such difference")}
	}
	var d portdiff.Diff
	return oneObject(data, &d)
}

func (cc *compareCheck) checkDiffMarkdown(name string, data []byte, _ string) error {
	if !cc.diffNamed(name) {
		return &ruleError{rule: ErrUnknown, err: errors.New("the manifest names no such difference")}
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return errors.New("not UTF-8 text")
	}
	return nil
}
