package abrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/gitrun"
	"github.com/lablup/perfbot/internal/gittest"
)

func TestMain(m *testing.M) { gittest.Main(m) }

// repo makes a repository with two commits that differ in one file and returns it with
// the two SHAs.
func repo(t *testing.T) (dir, shaA, shaB string) {
	t.Helper()
	dir = t.TempDir()
	ctx := context.Background()
	git := func(args ...string) string {
		t.Helper()
		out, err := gitrun.Out(ctx, dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	git("init", "--quiet", "-b", "main")
	for _, v := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, "kernel.rs"), []byte("version "+v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "kernel.rs")
		git("commit", "--quiet", "-m", v)
		if v == "a" {
			shaA = git("rev-parse", "HEAD")
		}
	}
	return dir, shaA, git("rev-parse", "HEAD")
}

func worktreeCount(t *testing.T, repoDir string) int {
	t.Helper()
	out, err := gitrun.Out(context.Background(), repoDir, "worktree", "list", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(out, "worktree ")
}

// TestPrepare: each worktree is at its commit with that commit's files, inside dir;
// Remove takes both away.
func TestPrepare(t *testing.T) {
	src, shaA, shaB := repo(t)
	dir := t.TempDir()
	w, err := Prepare(context.Background(), src, shaA, shaB, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		side Side
		sha  string
		text string
	}{{A, shaA, "version a\n"}, {B, shaB, "version b\n"}} {
		p := w.Path(c.side)
		if !inside(w.Dir, p) || filepath.Dir(p) != w.Dir {
			t.Errorf("%s: %s is not directly inside %s", c.side, p, w.Dir)
		}
		head, err := gitrun.Out(context.Background(), p, "rev-parse", "HEAD")
		if err != nil || head != c.sha || w.Sha(c.side) != c.sha {
			t.Errorf("%s: HEAD %s (%v), want %s", c.side, head, err, c.sha)
		}
		b, err := os.ReadFile(filepath.Join(p, "kernel.rs"))
		if err != nil || string(b) != c.text {
			t.Errorf("%s: kernel.rs %q, %v", c.side, b, err)
		}
	}
	real, _ := filepath.EvalSymlinks(dir)
	if w.Dir != real {
		t.Errorf("dir %s, want %s", w.Dir, real)
	}
	if n := worktreeCount(t, src); n != 3 {
		t.Errorf("%d worktrees", n)
	}
	if err := w.Remove(); err != nil {
		t.Fatal(err)
	}
	if n := worktreeCount(t, src); n != 1 {
		t.Errorf("%d worktrees after Remove", n)
	}
	if _, err := os.Stat(w.A); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("A's checkout is still there: %v", err)
	}
}

// TestPrepareRefuses: anything but two full lowercase SHAs, a path already taken (a
// symlink out of dir included) and a commit the repository lacks are refused, and a
// failure half-way leaves no worktree behind.
func TestPrepareRefuses(t *testing.T) {
	src, shaA, shaB := repo(t)
	ctx := context.Background()
	for _, bad := range []string{"main", "HEAD", shaA[:12], strings.ToUpper(shaA), "--output=/tmp/x" + strings.Repeat("0", 25), shaA + "0", ""} {
		_, err := Prepare(ctx, src, shaA, bad, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "give the full 40-hex-digit SHA") {
			t.Errorf("B %q: %v", bad, err)
		}
	}
	// dir/a is a symlink to somewhere else.
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(ctx, src, shaA, shaB, dir); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("dir/a a symlink: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("something was written outside dir: %v", ents)
	}
	// A commit that is not there: A's worktree, added first, is removed again.
	dir = t.TempDir()
	missing := strings.Repeat("ab", 20)
	_, err := Prepare(ctx, src, shaA, missing, dir)
	if err == nil || !strings.Contains(err.Error(), "commit B ("+missing+") is not in the repository") {
		t.Errorf("missing commit: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
	if n := worktreeCount(t, src); n != 1 {
		t.Errorf("%d worktrees after a failure", n)
	}
	if _, err := Prepare(ctx, src, shaA, shaB, filepath.Join(dir, "none")); err == nil {
		t.Error("a directory that does not exist: no error")
	}
}

// TestBuildBeforeMeasuring: Compare builds A, then B, and only then measures; a failed
// build stops it before B's build and before any run.
func TestBuildBeforeMeasuring(t *testing.T) {
	src, shaA, shaB := repo(t)
	w, err := Prepare(context.Background(), src, shaA, shaB, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Remove()
	var events []string
	build := func(ctx context.Context, wt string) error {
		b, err := os.ReadFile(filepath.Join(wt, "kernel.rs"))
		events = append(events, "build "+strings.TrimSpace(string(b)))
		return err
	}
	m := MeasureFunc(func(ctx context.Context, side Side, model string, i int) (Sample, error) {
		events = append(events, "measure "+side.String())
		v := 60.0
		if side == B {
			v = 90
		}
		return Sample{Values: []float64{v * (1 + float64(i)/1000)}}, nil
	})
	spec := Spec{Models: []string{"g"}, Metrics: tokS, Cap: 10}
	out, err := Session{}.Compare(context.Background(), spec, w, build, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 12 || events[0] != "build version a" || events[1] != "build version b" || events[2] != "measure A" || out.Runs != 10 {
		t.Errorf("events %v", events)
	}
	for _, e := range events[2:] {
		if strings.HasPrefix(e, "build") {
			t.Errorf("a build among the runs: %v", events)
		}
	}

	events = nil
	failA := func(ctx context.Context, wt string) error {
		events = append(events, "build "+filepath.Base(wt))
		return errors.New("cargo failed")
	}
	_, err = Session{}.Compare(context.Background(), spec, w, failA, m, nil)
	if err == nil || err.Error() != "building A ("+shaA+"): cargo failed" || len(events) != 1 {
		t.Errorf("%v, events %v", err, events)
	}
	// Over budget: refused before building.
	events = nil
	_, err = Session{PerRun: time.Minute, Budget: 5 * time.Minute}.Compare(context.Background(), spec, w, build, m, nil)
	if err == nil || !strings.Contains(err.Error(), "over the budget of 5m0s") || len(events) != 0 {
		t.Errorf("%v, events %v", err, events)
	}
	if err := (Worktrees{}).BuildBoth(context.Background(), build); err == nil {
		t.Error("BuildBoth without Prepare: no error")
	}
}

// TestAddCheckout: one worktree at its commit, inside dir; a name that is not one path
// element, a short SHA, a taken name and an unknown commit are refused and leave no
// worktree; Remove takes it away.
func TestAddCheckout(t *testing.T) {
	src, shaA, shaB := repo(t)
	dir := t.TempDir()
	ctx := context.Background()
	c, err := AddCheckout(ctx, src, shaA, dir, shaA[:12])
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(c.Path, "kernel.rs")); err != nil || string(b) != "version a\n" {
		t.Errorf("the checkout holds %q, %v", b, err)
	}
	if c.Sha != shaA || filepath.Dir(c.Path) != c.Dir {
		t.Errorf("checkout %+v", c)
	}
	for _, bad := range []struct{ sha, name string }{
		{shaB, "../x"}, {shaB, ""}, {shaB[:12], "b"}, {shaB, shaA[:12]}, {strings.Repeat("0", 40), "z"},
	} {
		if _, err := AddCheckout(ctx, src, bad.sha, dir, bad.name); err == nil {
			t.Errorf("%q as %q: no error", bad.sha, bad.name)
		}
	}
	if n := worktreeCount(t, src); n != 2 {
		t.Errorf("%d worktrees after the refusals, want the repository's and one", n)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(c.Path); !errors.Is(err, os.ErrNotExist) || worktreeCount(t, src) != 1 {
		t.Errorf("after Remove: %v, %d worktrees", err, worktreeCount(t, src))
	}
}
