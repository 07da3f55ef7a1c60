// Package hosttest is test setup for the host jobs and what follows them: a copy of the
// fake gfx1151 host's root (internal/fakehost/host) and a target repository (a bare remote
// standing in for GitHub and a clone of it) holding the sources the patcher knows. The
// CLI's, the runner's and the Action's tests share it. It holds test setup only and
// never writes into the repository.
package hosttest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/gittest"
	"github.com/lablup/perfbot/internal/sampletree"
	"github.com/lablup/perfbot/internal/testfix"
)

// CopyTree copies the regular files under src into dst, creating folders as needed
// and keeping files dst already has unless src has the same path.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}

// PatcherRepo writes the sources of the sample mlxcel checkout (internal/sampletree: the
// grouped_gemm test file, the checker, the dispatch sources) into a temp dir.
func PatcherRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := sampletree.WriteSources(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Git runs git for test setup with a fixed identity and home, without user or system
// config, and returns its trimmed output.
func Git(t testing.TB, home, dir string, args ...string) string {
	t.Helper()
	cmd := gittest.Command(dir, args...)
	cmd.Env = append(cmd.Env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	out, err := gittest.Run(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// Target is a target repository: Bare stands in for GitHub, Repo is a clone of it, and
// Base is the one commit of main.
type Target struct {
	Repo, Bare, Base string
}

// NewTarget commits the sample checkout's sources (PatcherRepo) plus files (repo path
// -> content; a file starting with #! is executable) as the one commit of main, clones
// it bare into a temp dir and clones that.
func NewTarget(t testing.TB, home string, files map[string]string) Target {
	t.Helper()
	root := t.TempDir()
	seed := filepath.Join(root, "seed")
	Git(t, home, root, "init", "--quiet", "--initial-branch=main", seed)
	if err := CopyTree(PatcherRepo(t), seed); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(seed, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, home, seed, "add", "-A")
	Git(t, home, seed, "commit", "--quiet", "-m", "mlxcel at the commit to profile")
	tg := Target{Base: Git(t, home, seed, "rev-parse", "HEAD"), Bare: filepath.Join(root, "remote.git"), Repo: filepath.Join(root, "mlxcel")}
	Git(t, home, root, "clone", "--quiet", "--bare", seed, tg.Bare)
	Git(t, home, root, "clone", "--quiet", tg.Bare, tg.Repo)
	return tg
}

// Root copies the fake host's root into dir/root with the real /proc linked in for the
// guard and an empty KFD proc dir where the guard looks by default, and returns it.
func Root(t testing.TB, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "root")
	src := filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "root")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "proc" {
			return fs.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(root, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc", filepath.Join(root, "proc")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(KFDDir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// KFDDir is the KFD proc dir of a root made by Root.
func KFDDir(root string) string { return filepath.Join(root, "sys", "class", "kfd", "kfd", "proc") }

// Bin is the fake host's tools: rocminfo, rocprofv3, the bench, cargo.
func Bin(t testing.TB) string {
	return filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "bin")
}

// Path puts the fake host's tools first, then dirs, then the system's.
func Path(t testing.TB, dirs ...string) string {
	return strings.Join(append(append([]string{Bin(t)}, dirs...), "/usr/local/bin", "/usr/bin", "/bin"), ":")
}
