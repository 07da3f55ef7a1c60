package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// The folders a nightly and a bisection nest (docs/nightly.md): the nightly's
// confirming A/B of a suspect (confirm-<model>, a bench compare), the nightly's
// bisection of a confirmed regression (bisect-<model>, a bisection folder) and a
// bisection's culprit profile A/B (culprit, a profile compare). A manifest read from
// disk is hostile: the readers below take the folder's name from the manifest only
// when it is exactly the expected one, find it a real directory in the folder (not a
// link), read the nested manifest with its own reader and check that it is the one
// the outer manifest means.

// maxNestedReason bounds the reason a nightly gives for a bisection it skipped.
const maxNestedReason = maxBisectWhy

// nestedFolder is dir/name, where name must be want exactly and a directory of dir,
// not a link.
func nestedFolder(dir, name, want, what string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("no %s folder", what)
	}
	if name != want {
		return "", fmt.Errorf("the %s folder is %s: it must be %s", what, safetext.Quote(name), safetext.Quote(want))
	}
	p := filepath.Join(dir, name)
	fi, err := os.Lstat(p)
	if err != nil {
		return "", fmt.Errorf("the %s folder %s: %w", what, name, err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return "", fmt.Errorf("the %s folder %s is a symbolic link, not a folder", what, name)
	case !fi.IsDir():
		return "", fmt.Errorf("the %s folder %s is %s, not a folder", what, name, infile.Kind(fi.Mode()))
	}
	return p, nil
}

// validateNested checks the nightly's fields that name nested folders: a re-measure's
// A/B folder is confirm-<its model>; a bisection's model is a folder name, its commits
// full SHAs, its folder bisect-<its model> or none with a reason, each model bisected
// once.
func (n *Nightly) validateNested() error {
	for i, rm := range n.Remeasures {
		if rm.Since != "" {
			if _, err := time.Parse(time.DateOnly, rm.Since); err != nil {
				return fmt.Errorf("re-measure %d: the first night %s is not YYYY-MM-DD", i+1, safetext.Quote(rm.Since))
			}
		}
		if rm.Confirm == "" {
			continue
		}
		if err := checkModelName(rm.Model); err != nil {
			return fmt.Errorf("re-measure %d: %v", i+1, err)
		}
		if rm.Confirm != ConfirmDirPrefix+rm.Model {
			return fmt.Errorf("re-measure %d names the A/B folder %s: it must be %s%s", i+1, safetext.Quote(rm.Confirm), ConfirmDirPrefix, rm.Model)
		}
	}
	seen := map[string]bool{}
	for i, b := range n.Bisects {
		if err := checkModelName(b.Model); err != nil {
			return fmt.Errorf("bisection %d: %v", i+1, err)
		}
		if seen[b.Model] {
			return fmt.Errorf("bisection %d: %s is bisected twice", i+1, safetext.Quote(b.Model))
		}
		seen[b.Model] = true
		if !isFullSHA(b.Good) || !isFullSHA(b.Bad) || b.Good == b.Bad {
			return fmt.Errorf("bisection %d: the range %s..%s is not two full SHAs", i+1, safetext.Quote(b.Good), safetext.Quote(b.Bad))
		}
		if b.Dir != "" && b.Dir != BisectDirPrefix+b.Model {
			return fmt.Errorf("bisection %d names the folder %s: it must be %s%s", i+1, safetext.Quote(b.Dir), BisectDirPrefix, b.Model)
		}
		if b.Dir == "" && b.Reason == "" {
			return fmt.Errorf("bisection %d has neither a folder nor a reason", i+1)
		}
		if len(b.Reason) > maxNestedReason || !bisectText(b.Reason) {
			return fmt.Errorf("bisection %d: the reason is not printable text of at most %d bytes", i+1, maxNestedReason)
		}
	}
	return nil
}

// ReadNightlyConfirm reads the A/B that re-measured rm, a re-measure of the nightly
// manifest in folder: rm.Confirm must be confirm-<rm.Model>, a folder in folder (not
// a link), holding a bench compare (ReadCompareFolder) of rm.Model alone.
func ReadNightlyConfirm(folder string, rm Remeasure) (Compare, error) {
	if err := checkModelName(rm.Model); err != nil {
		return Compare{}, err
	}
	dir, err := nestedFolder(folder, rm.Confirm, ConfirmDirPrefix+rm.Model, "A/B")
	if err != nil {
		return Compare{}, err
	}
	c, err := ReadCompareFolder(dir)
	if err != nil {
		return Compare{}, err
	}
	if c.Kind != CompareBench || len(c.Models) != 1 || c.Models[0].Model != rm.Model {
		return Compare{}, fmt.Errorf("%s: a %s compare of %d model(s), not the bench A/B of %s", rm.Confirm, c.Kind, len(c.Models), safetext.Quote(rm.Model))
	}
	return c, nil
}

// ReadNightBisect reads the bisection nb of the nightly manifest in folder: nb.Dir
// must be bisect-<nb.Model>, a folder in folder (not a link), whose bisect.json
// (ReadBisect) bisects nb.Good..nb.Bad for nb.Model. A bisection that did not run (no
// Dir) is an error that wraps ErrNoBisect.
func ReadNightBisect(folder string, nb NightBisect) (Bisect, error) {
	if nb.Dir == "" {
		return Bisect{}, fmt.Errorf("%w of %s: %s", ErrNoBisect, safetext.Quote(nb.Model), safetext.Clean(nb.Reason))
	}
	if err := checkModelName(nb.Model); err != nil {
		return Bisect{}, err
	}
	dir, err := nestedFolder(folder, nb.Dir, BisectDirPrefix+nb.Model, "bisection")
	if err != nil {
		return Bisect{}, err
	}
	b, err := ReadBisect(filepath.Join(dir, BisectFile))
	if err != nil {
		return Bisect{}, err
	}
	if b.Model != nb.Model || b.Good != nb.Good || b.Bad != nb.Bad {
		return Bisect{}, fmt.Errorf("%s bisects %s..%s for %s, not the nightly's %s..%s for %s", nb.Dir,
			b.Good, b.Bad, safetext.Quote(b.Model), safetext.Quote(nb.Good), safetext.Quote(nb.Bad), safetext.Quote(nb.Model))
	}
	return b, nil
}

// ErrNoBisect says a nightly's bisection did not run (its reason says why).
var ErrNoBisect = errors.New("no bisection")

// ReadCulprit reads the culprit's profile A/B of the bisection b whose folder is
// bisectFolder: b.Culprit must be culprit, a folder in bisectFolder (not a link),
// holding a profile compare (ReadCompareFolder) of b's model whose A is the last good
// commit and B the first bad one of b's outcome.
func ReadCulprit(bisectFolder string, b Bisect) (Compare, error) {
	if b.Outcome == nil || b.Outcome.Outcome != BisectFound {
		return Compare{}, errors.New("the bisection found no first bad commit: there is no culprit to read")
	}
	dir, err := nestedFolder(bisectFolder, b.Culprit, CulpritDir, "culprit")
	if err != nil {
		return Compare{}, err
	}
	c, err := ReadCompareFolder(dir)
	if err != nil {
		return Compare{}, err
	}
	if c.Kind != CompareProfile || c.ShaA != b.Outcome.LastGood || c.ShaB != b.Outcome.FirstBad {
		return Compare{}, fmt.Errorf("%s: a %s compare of %s..%s, not the profile A/B of the first bad commit %s against its parent %s",
			CulpritDir, c.Kind, c.ShaA, c.ShaB, b.Outcome.FirstBad, b.Outcome.LastGood)
	}
	for _, m := range c.Models {
		if model, _, _, ok := SplitRunName(m.Model); !ok || model != b.Model {
			return Compare{}, fmt.Errorf("%s: the run %s is not of the bisected model %s", CulpritDir, safetext.Quote(m.Model), safetext.Quote(b.Model))
		}
	}
	return c, nil
}

// NightlyName classifies a top-level name of a nightly results folder: dir true for a
// folder a nightly may nest (confirm-<model>, bisect-<model>, the model a folder name:
// ReadNightlyConfirm and ReadNightBisect read them against the manifest), false for a
// name that may be a file of the nightly (the manifest, a guard log or its events, a
// CSV: checked by what reads them). Any other name is an error.
func NightlyName(name string) (dir bool, err error) {
	for _, prefix := range []string{ConfirmDirPrefix, BisectDirPrefix} {
		if model, ok := strings.CutPrefix(name, prefix); ok {
			if err := checkModelName(model); err != nil {
				return false, fmt.Errorf("%s: %v", safetext.Quote(name), err)
			}
			return true, nil
		}
	}
	switch {
	case IsNightlyManifest(name), strings.HasSuffix(name, GuardLogSuffix), strings.HasSuffix(name, GuardLogSuffix+GuardEventsSuffix), strings.HasSuffix(name, ".csv"):
		return false, nil
	}
	return false, fmt.Errorf("%s: %s", safetext.Quote(name), NightlyLayout)
}

// BisectLayout says what a bisection folder holds, for an error about a name that is
// not of it.
const BisectLayout = "a bisection folder holds bisect.json, guard.log, guard.log.jsonl, hostinfo.json and the folder culprit of the first bad commit's profile A/B (docs/nightly.md)"

// BisectName classifies a top-level name of a bisection folder: dir true for the
// culprit's folder (a profile compare folder: ReadCulprit), false for a file of the
// bisection. Any other name is an error.
func BisectName(name string) (dir bool, err error) {
	switch name {
	case CulpritDir:
		return true, nil
	case BisectFile, GuardLogFile, GuardLogFile + GuardEventsSuffix, HostInfoFile:
		return false, nil
	}
	return false, fmt.Errorf("%s: %s", safetext.Quote(name), BisectLayout)
}
