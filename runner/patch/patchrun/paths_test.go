package patchrun

import (
	"github.com/lablup/perfbot/runner/patch"

	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moveOut moves the repo's rel (a file or folder) to a folder outside the repo and
// leaves a symbolic link in its place; it returns where it went.
func moveOut(t *testing.T, repo, rel string) string {
	t.Helper()
	outside := filepath.Join(t.TempDir(), filepath.Base(rel))
	if err := os.Rename(filepath.Join(repo, rel), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(repo, rel)); err != nil {
		t.Fatal(err)
	}
	return outside
}

// The patcher neither reads nor writes outside --repo: a symlinked folder on the way
// to either file, or the file itself a link out of the repo, is refused and nothing is
// written on either side of the link. A link to a file inside the repo is fine: the
// write replaces the link, never its target.
func TestGemmGatesStaysInTheRepo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		move    string // moved out of the repo and linked back
		refused string // the path the refusal names; "" when the patch goes through
	}{
		{"scripts folder linked out", "scripts", patch.CheckerPath},
		{"ci folder linked out", "scripts/ci", patch.CheckerPath},
		{"src/lib linked out", "src/lib", patch.RustPath},
		{"the checker itself linked out", patch.CheckerPath, patch.CheckerPath},
		{"the test file itself linked out", patch.RustPath, patch.RustPath},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := copyRepo(t, "upstream")
			outside := moveOut(t, repo, tc.move)
			before, beforeOut := snapshot(t, repo), snapshotAny(t, outside)
			_, err := GemmGates(context.Background(), repo, passOutcome(t), Options{})
			var re *patch.RefusedError
			if !errors.As(err, &re) || len(re.Problems) != 1 || re.Problems[0].Path != tc.refused ||
				!strings.Contains(re.Problems[0].Msg, "leaves the repo") {
				t.Fatalf("err = %v, want a refusal of %s", err, tc.refused)
			}
			if after := snapshot(t, repo); !equalMaps(before, after) {
				t.Error("the repo was written")
			}
			if after := snapshotAny(t, outside); !equalMaps(beforeOut, after) {
				t.Error("the file outside the repo was written")
			}
		})
	}
	t.Run("a link to a file inside the repo", func(t *testing.T) {
		t.Parallel()
		repo := copyRepo(t, "upstream")
		inside := filepath.Join(repo, "scripts", "ci", "real_checker.py")
		checker := filepath.Join(repo, filepath.FromSlash(patch.CheckerPath))
		if err := os.Rename(checker, inside); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real_checker.py", checker); err != nil {
			t.Fatal(err)
		}
		orig := readFile(t, inside)
		r, err := GemmGates(context.Background(), repo, passOutcome(t), Options{})
		if err != nil || r.Checker.Verdict != "passed" {
			t.Fatalf("patch: %v %+v", err, r.Checker)
		}
		if fi, err := os.Lstat(checker); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("the link was not replaced by the patched file: %v %v", fi.Mode(), err)
		}
		if readFile(t, inside) != orig {
			t.Error("the link's target was written")
		}
	})
}

// snapshotAny is snapshot for a file or a folder.
func snapshotAny(t *testing.T, path string) map[string]string {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.IsDir() {
		return snapshot(t, path)
	}
	return map[string]string{"": readFile(t, path)}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A makefile that is a link out of the repo is not read: its target is not offered.
func TestMakefileOutsideTheRepoIsNotRead(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "Makefile"), verifyMakefile)
	if got := patch.DefaultVerifyCommands(repo); len(got) != 2 {
		t.Fatalf("inside: %v", got)
	}
	moveOut(t, repo, "Makefile")
	if got := patch.DefaultVerifyCommands(repo); len(got) != 1 {
		t.Fatalf("linked out: %v, want the checker only", got)
	}
}

// A file far larger than any real copy is refused before it is scanned.
func TestGemmGatesRefusesHugeFiles(t *testing.T) {
	t.Parallel()
	repo := copyRepo(t, "upstream")
	checker := filepath.Join(repo, filepath.FromSlash(patch.CheckerPath))
	f, err := os.OpenFile(checker, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, patch.MaxSourceSize)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = GemmGates(context.Background(), repo, passOutcome(t), Options{})
	var re *patch.RefusedError
	if !errors.As(err, &re) || len(re.Problems) != 1 || re.Problems[0].Path != patch.CheckerPath || !strings.Contains(re.Problems[0].Msg, "refusing to scan it") {
		t.Fatalf("err = %v", err)
	}
}
