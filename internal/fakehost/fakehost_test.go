package fakehost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
