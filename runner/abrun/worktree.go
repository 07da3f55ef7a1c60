package abrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/internal/gitrun"
)

// Worktrees are the two checkouts of a session, one per side, under one directory.
type Worktrees struct {
	Repo string // the repository they were added from
	Dir  string // the directory holding both (resolved, absolute)
	A, B string // the checkouts of ShaA and ShaB
	ShaA string
	ShaB string
}

// Path is side's checkout.
func (w Worktrees) Path(side Side) string {
	if side == B {
		return w.B
	}
	return w.A
}

// Sha is side's commit.
func (w Worktrees) Sha(side Side) string {
	if side == B {
		return w.ShaB
	}
	return w.ShaA
}

// IsFullSHA says s is a full commit id: 40 lowercase hex digits.
func IsFullSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Prepare adds two detached worktrees of repoDir, dir/a at shaA and dir/b at shaB, and
// checks that each is at its commit. The SHAs must be full (40 lowercase hex digits:
// no names, no abbreviations, nothing git could read as an option); dir must exist and
// the two paths must not; both stay inside dir (symlinks resolved). On any failure
// what was added is removed again.
func Prepare(ctx context.Context, repoDir, shaA, shaB, dir string) (w Worktrees, err error) {
	for _, s := range []struct{ side, sha string }{{"A", shaA}, {"B", shaB}} {
		if !IsFullSHA(s.sha) {
			return Worktrees{}, fmt.Errorf("commit %s is %q: give the full 40-hex-digit SHA", s.side, s.sha)
		}
	}
	root, err := worktreeRoot(dir)
	if err != nil {
		return Worktrees{}, err
	}
	w = Worktrees{Repo: repoDir, Dir: root, A: filepath.Join(root, "a"), B: filepath.Join(root, "b"), ShaA: shaA, ShaB: shaB}
	for _, p := range []string{w.A, w.B} {
		if !inside(root, p) {
			return Worktrees{}, fmt.Errorf("%s is outside %s", p, root)
		}
		if _, err := os.Lstat(p); err == nil {
			return Worktrees{}, fmt.Errorf("%s already exists: give an empty directory", p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return Worktrees{}, err
		}
	}
	var added []string
	defer func() {
		if err != nil {
			removeWorktrees(repoDir, added)
			w = Worktrees{}
		}
	}()
	for _, s := range []struct {
		side      Side
		path, sha string
	}{{A, w.A, shaA}, {B, w.B, shaB}} {
		if err := addWorktree(ctx, repoDir, root, s.path, s.sha, s.side.String(), &added); err != nil {
			return w, err
		}
	}
	return w, nil
}

// worktreeRoot is dir absolute with its symlinks resolved; it must be a directory.
func worktreeRoot(dir string) (string, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("the worktree directory: %w", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the worktree directory %s is not a directory", root)
	}
	return root, nil
}

// addWorktree adds a detached worktree of repoDir at path (inside root), at sha, and
// checks that it is there and at sha; who names it in errors ("A"). A worktree added is
// appended to added, also when a later check fails, so the caller can remove it.
func addWorktree(ctx context.Context, repoDir, root, path, sha, who string, added *[]string) error {
	if _, err := gitrun.Out(ctx, repoDir, "rev-parse", "--verify", "--quiet", sha+"^{commit}"); err != nil {
		return fmt.Errorf("commit %s (%s) is not in the repository: %w", who, sha, err)
	}
	if _, err := gitrun.Out(ctx, repoDir, "worktree", "add", "--detach", "--quiet", "--", path, sha); err != nil {
		return fmt.Errorf("adding the worktree of %s: %w", who, err)
	}
	*added = append(*added, path)
	real, err := filepath.EvalSymlinks(path)
	if err != nil || !inside(root, real) {
		return fmt.Errorf("the worktree of %s is not inside %s", who, root)
	}
	head, err := gitrun.Out(ctx, path, "rev-parse", "HEAD")
	if err != nil {
		return fmt.Errorf("reading the worktree of %s: %w", who, err)
	}
	if head != sha {
		return fmt.Errorf("the worktree of %s is at %s, not %s", who, head, sha)
	}
	return nil
}

// Checkout is one detached worktree of a repository, for a session that checks out
// commits one at a time (a bisection) rather than a pair.
type Checkout struct {
	Repo string // the repository it was added from
	Dir  string // the directory holding it (resolved, absolute)
	Path string // the checkout: Dir/name
	Sha  string
}

// AddCheckout adds a detached worktree of repoDir at sha as dir/name, with the checks
// of Prepare: a full SHA, dir an existing directory, name one path element that does
// not exist in it, the checkout inside dir (symlinks resolved) and at sha. On any
// failure what was added is removed again.
func AddCheckout(ctx context.Context, repoDir, sha, dir, name string) (Checkout, error) {
	if !IsFullSHA(sha) {
		return Checkout{}, fmt.Errorf("commit %q: give the full 40-hex-digit SHA", sha)
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return Checkout{}, fmt.Errorf("worktree name %q: give one path element", name)
	}
	root, err := worktreeRoot(dir)
	if err != nil {
		return Checkout{}, err
	}
	c := Checkout{Repo: repoDir, Dir: root, Path: filepath.Join(root, name), Sha: sha}
	if _, err := os.Lstat(c.Path); err == nil {
		return Checkout{}, fmt.Errorf("%s already exists: give an empty directory", c.Path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return Checkout{}, err
	}
	var added []string
	if err := addWorktree(ctx, repoDir, root, c.Path, sha, sha[:12], &added); err != nil {
		removeWorktrees(repoDir, added)
		return Checkout{}, err
	}
	return c, nil
}

// Remove removes the checkout and its administrative files in the repository.
func (c Checkout) Remove() error {
	if c.Path == "" || !inside(c.Dir, c.Path) {
		return nil
	}
	return removeWorktrees(c.Repo, []string{c.Path})
}

// Remove removes both worktrees and their administrative files in the repository.
func (w Worktrees) Remove() error {
	var paths []string
	for _, p := range []string{w.A, w.B} {
		if p != "" && inside(w.Dir, p) {
			paths = append(paths, p)
		}
	}
	return removeWorktrees(w.Repo, paths)
}

// removeWorktrees removes the given worktrees (with a fresh context: cleanup must run
// after a cancellation too) and prunes the repository's records of them.
func removeWorktrees(repo string, paths []string) error {
	ctx := context.Background()
	var errs []error
	for _, p := range paths {
		if _, err := gitrun.Out(ctx, repo, "worktree", "remove", "--force", "--force", "--", p); err != nil {
			if rerr := os.RemoveAll(p); rerr != nil {
				errs = append(errs, rerr)
			}
		}
	}
	if _, err := gitrun.Out(ctx, repo, "worktree", "prune"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// inside says p is root or below it (both clean and absolute).
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// errNoWorktree is returned when BuildBoth is called on Worktrees that Prepare did not make.
var errNoWorktree = errors.New("no worktrees: call Prepare first")

// BuildFunc builds the checkout at worktree.
type BuildFunc func(ctx context.Context, worktree string) error

// BuildBoth builds A's checkout, then B's, one after the other (the host's cores go to
// one compiler at a time), and returns when both have finished. A failure names the
// side and its commit; B is not built when A fails.
func (w Worktrees) BuildBoth(ctx context.Context, build BuildFunc) error {
	if w.A == "" || w.B == "" {
		return errNoWorktree
	}
	for _, side := range []Side{A, B} {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("building %s: %w", side, err)
		}
		if err := build(ctx, w.Path(side)); err != nil {
			return fmt.Errorf("building %s (%s): %w", side, w.Sha(side), err)
		}
	}
	return nil
}

// Compare is a whole session on prepared worktrees: the spec and the budget are
// checked, both checkouts are built, and only then does the first measured run start,
// so no compiler runs between measured runs. m measures the builds in w.
func (s Session) Compare(ctx context.Context, spec Spec, w Worktrees, build BuildFunc, m Measurer, progress ProgressFunc) (Outcome, error) {
	if err := s.Check(spec); err != nil {
		return Outcome{}, err
	}
	if err := w.BuildBoth(ctx, build); err != nil {
		return Outcome{}, err
	}
	return s.Run(ctx, spec, m, progress)
}
