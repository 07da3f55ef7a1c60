package intake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/results"
)

// IsBisect says whether the downloaded folder dir looks like a bisection's artifact: it
// holds bisect.json, or one bisect-<model> folder. It decides only which reader copies
// the artifact; Bisect checks everything.
func IsBisect(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, results.BisectFile)); err == nil && fi.Mode().IsRegular() {
		return true
	}
	_, ok := bisectSub(dir)
	return ok
}

// bisectSub is the one bisect-<model> folder dir holds beside nothing else.
func bisectSub(dir string) (string, bool) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || !ents[0].IsDir() || !strings.HasPrefix(ents[0].Name(), results.BisectDirPrefix) {
		return "", false
	}
	return ents[0].Name(), true
}

// Bisect copies the bisection folder at src (the folder holding bisect.json, or a root
// holding exactly one bisect-<model> folder) into dst (created; must not exist),
// checking it on the way, and returns the copied folder's path (dst, or
// dst/bisect-<model>).
func Bisect(ctx context.Context, src, dst string, lim Limits) (string, error) {
	r, err := BisectResult(ctx, src, dst, lim)
	return r.Dir, err
}

// BisectResult is Bisect that also says which files it copied (the culprit A/B's as
// culprit/NAME, culprit/a/NAME ...). The manifest is copied and read first
// (results.ReadBisect); every other file must be one of the bisection's own
// (guard.log, guard.log.jsonl, hostinfo.json), and the one folder allowed is the
// culprit A/B the manifest names, copied as a compare folder is. On an error nothing is
// left at dst and the Result is empty.
func BisectResult(ctx context.Context, src, dst string, lim Limits) (Result, error) {
	c, err := start(ctx, src, dst, lim)
	if err != nil {
		return Result{}, err
	}
	defer c.closeAll()
	d, rel := c.root, ""
	if _, err := os.Lstat(filepath.Join(src, results.BisectFile)); err != nil {
		name, ok := bisectSub(src)
		if !ok {
			return Result{}, refuse(src, ErrLayout, "it holds neither %s nor one %s<model> folder: give the bisection folder the bisect job wrote", results.BisectFile, results.BisectDirPrefix)
		}
		if lim.MaxDepth < 1 {
			return Result{}, refuse(name, ErrDepth, "the limit is %d", lim.MaxDepth)
		}
		if d, err = c.root.sub(name); err != nil {
			if isLinkError(err) {
				return Result{}, refuse(name, ErrLink, "")
			}
			return Result{}, fmt.Errorf("opening the results artifact: %w", err)
		}
		c.opened = append(c.opened, d)
		rel = name
	}
	return c.runThen(rel, d, nil, func(res *Result) error {
		_, err := c.copyBisect(d, rel, res.Dir, "", res)
		return err
	})
}

// bisectCheck checks a bisection folder: its manifest first.
type bisectCheck struct {
	man  results.Bisect
	read bool
}

func (b *bisectCheck) kind(name string) (*kind, bool, error) {
	switch name {
	case results.BisectFile:
		return &kind{what: "the bisection manifest", check: b.checkManifest}, false, nil
	case results.GuardLogFile:
		return guardLogKind, false, nil
	case results.GuardLogFile + results.GuardEventsSuffix:
		return guardJSONKind, false, nil
	case results.HostInfoFile:
		return hostInfoKind, false, nil
	}
	return nil, false, errors.New(results.BisectLayout)
}

func (b *bisectCheck) checkManifest(name string, _ []byte, cp string) error {
	man, err := results.ReadBisect(cp)
	if err != nil {
		return named(err, cp, name)
	}
	b.man, b.read = man, true
	return nil
}

// copyBisect copies the bisection folder d, at rel in the source, into out (made):
// the manifest first, then the bisection's own files, then the culprit A/B it names
// (a compare folder). The names go into res with prefix before them.
func (c *copier) copyBisect(d *folder, rel, out, prefix string, res *Result) (results.Bisect, error) {
	bc := &bisectCheck{}
	plan, dirs, err := c.planWith(d, rel, 0, bc.kind, func(name string) bool {
		dir, err := results.BisectName(name)
		return err == nil && dir
	})
	if err != nil {
		return results.Bisect{}, err
	}
	at := slices.IndexFunc(plan, func(it item) bool { return it.name == results.BisectFile })
	if at < 0 {
		return results.Bisect{}, refuse(orSrc(rel, c.src), ErrLayout, "it holds no %s: a bisection folder's manifest", results.BisectFile)
	}
	m := plan[at]
	copy(plan[1:at+1], plan[:at])
	plan[0] = m
	if err := c.copyPlan(out, rel, prefix, d, plan, res); err != nil {
		return results.Bisect{}, err
	}
	for _, name := range dirs {
		p := path.Join(rel, name)
		if bc.man.Culprit != name {
			return results.Bisect{}, refuse(p, ErrUnknown, "the manifest names no culprit A/B (%s)", safetext.Quote(bc.man.CulpritReason))
		}
		if _, err := c.copyCompareIn(d, name, rel, out, prefix, res); err != nil {
			return results.Bisect{}, err
		}
	}
	return bc.man, nil
}

// copyCompareIn copies the compare folder name of d (d at rel in the source) into
// out/name, made: a compare nested in another results folder, whose name the outer
// manifest gave, copied and checked as a compare artifact's is.
func (c *copier) copyCompareIn(d *folder, name, rel, out, prefix string, res *Result) (results.Compare, error) {
	p := path.Join(rel, name)
	sd, err := d.sub(name)
	if err != nil {
		if isLinkError(err) {
			return results.Compare{}, refuse(p, ErrLink, "")
		}
		return results.Compare{}, fmt.Errorf("opening the results artifact: %w", err)
	}
	c.opened = append(c.opened, sd)
	cc := &compareCheck{}
	plan, sides, err := c.comparePlan(sd, p, cc)
	if err != nil {
		return results.Compare{}, err
	}
	sout := filepath.Join(out, name)
	if err := mkdir(sout); err != nil {
		return results.Compare{}, err
	}
	sp := prefix + name + "/"
	if err := c.copyPlan(sout, p, sp, sd, plan, res); err != nil {
		return results.Compare{}, err
	}
	return cc.man, c.compareSides(sd, p, sout, sp, cc, sides, res)
}

// nightlyFolders copies the folders of a nightly folder (its root d, copied into out
// already) that its manifest names: each suspect's confirming A/B (a compare folder,
// Remeasure.Confirm) and each bisection (Nightly.Bisects' Dir).
func (c *copier) nightlyFolders(d *folder, out string, man results.Nightly, dirs []string, res *Result) error {
	for _, name := range dirs {
		confirm := slices.ContainsFunc(man.Remeasures, func(r results.Remeasure) bool { return r.Confirm == name })
		bisect := slices.ContainsFunc(man.Bisects, func(b results.NightBisect) bool { return b.Dir == name })
		switch {
		case confirm && strings.HasPrefix(name, results.ConfirmDirPrefix):
			if _, err := c.copyCompareIn(d, name, "", out, "", res); err != nil {
				return err
			}
		case bisect && strings.HasPrefix(name, results.BisectDirPrefix):
			sd, err := d.sub(name)
			if err != nil {
				if isLinkError(err) {
					return refuse(name, ErrLink, "")
				}
				return fmt.Errorf("opening the results artifact: %w", err)
			}
			c.opened = append(c.opened, sd)
			sout := filepath.Join(out, name)
			if err := mkdir(sout); err != nil {
				return err
			}
			b, err := c.copyBisect(sd, name, sout, name+"/", res)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(man.Bisects, func(nb results.NightBisect) bool { return nb.Dir == name && nb.Model == b.Model }) {
				return refuse(name, ErrLayout, "it bisects %s, not the model the nightly manifest names for it", safetext.Quote(b.Model))
			}
		default:
			return refuse(name, ErrUnknown, "the nightly manifest names no such folder (a suspect's confirming A/B, %s<model>, or a bisection, %s<model>)", results.ConfirmDirPrefix, results.BisectDirPrefix)
		}
	}
	return nil
}

// isNightlyFolder says a folder's name is one a nightly folder may hold
// (results.NightlyName).
func isNightlyFolder(name string) bool {
	dir, err := results.NightlyName(name)
	return err == nil && dir
}

func orSrc(rel, src string) string {
	if rel == "" {
		return src
	}
	return rel
}
