package fakehost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/gittest"
)

// The extracted host has its tools executable and its root readable, and the fake
// rocminfo prints the real output it carries.
func TestExtract(t *testing.T) {
	t.Parallel()
	h, err := Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"rocminfo", "hipconfig", "rocprofv3", "mlxcel-bench-decode", "cargo"} {
		fi, err := os.Stat(filepath.Join(h.Bin, tool))
		if err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: %v %v", tool, fi, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(h.Root, "opt", "rocm", "core-10.0", ".info", "version")); err != nil || len(b) == 0 {
		t.Errorf("ROCm version file: %q %v", b, err)
	}
	cmd := exec.Command(filepath.Join(h.Bin, "rocminfo"))
	cmd.Env = append(os.Environ(), h.Env()...)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "gfx1151") {
		t.Errorf("rocminfo: %v\n%s", err, out)
	}
}

// With FAKE_CARGO_DUMP the fake cargo writes what the build could read, its environment
// and its repository's git config, and still builds.
func TestFakeCargoDump(t *testing.T) {
	t.Parallel()
	h, err := Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, dumps := t.TempDir(), t.TempDir()
	gittest.Git(t, repo, "init", "-q")
	gittest.Git(t, repo, "config", "http.extraheader", "AUTHORIZATION: basic dGVzdA==")
	if err := os.WriteFile(filepath.Join(repo, "Cargo.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(h.Bin, "cargo"), "build", "--release", "--bin", "mlxcel-bench-decode")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "FAKE_CARGO_DUMP="+dumps, "DUMP_MARKER=seen")
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "env") {
		t.Fatalf("cargo build: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(repo, "target", "release", "mlxcel-bench-decode")); err != nil {
		t.Errorf("the build made no bench: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dumps, "cargo-*.txt"))
	if len(files) != 1 {
		t.Fatalf("dumps %v, want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nDUMP_MARKER=seen\n", "## git config of " + repo, "extraheader = AUTHORIZATION: basic dGVzdA=="} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the dump has no %q:\n%s", want, b)
		}
	}
}
