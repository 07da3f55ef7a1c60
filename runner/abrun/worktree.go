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
	root, err := filepath.Abs(dir)
	if err != nil {
		return Worktrees{}, err
	}
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		return Worktrees{}, fmt.Errorf("the worktree directory: %w", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return Worktrees{}, fmt.Errorf("the worktree directory %s is not a directory", root)
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
		if _, err := gitrun.Out(ctx, repoDir, "rev-parse", "--verify", "--quiet", s.sha+"^{commit}"); err != nil {
			return w, fmt.Errorf("commit %s (%s) is not in the repository: %w", s.side, s.sha, err)
		}
		if _, err := gitrun.Out(ctx, repoDir, "worktree", "add", "--detach", "--quiet", "--", s.path, s.sha); err != nil {
			return w, fmt.Errorf("adding the worktree of %s: %w", s.side, err)
		}
		added = append(added, s.path)
		real, err := filepath.EvalSymlinks(s.path)
		if err != nil || !inside(root, real) {
			return w, fmt.Errorf("the worktree of %s is not inside %s", s.side, root)
		}
		head, err := gitrun.Out(ctx, s.path, "rev-parse", "HEAD")
		if err != nil {
			return w, fmt.Errorf("reading the worktree of %s: %w", s.side, err)
		}
		if head != s.sha {
			return w, fmt.Errorf("the worktree of %s is at %s, not %s", s.side, head, s.sha)
		}
	}
	return w, nil
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
