package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.md")
	if err := os.WriteFile(p, []byte("| a |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, got string
		fail            bool
	}{
		{"same", p, "| a |\n", false},
		{"one character differs", p, "| b |\n", true},
		{"trailing newline missing", p, "| a |", true},
		{"no golden file", filepath.Join(dir, "missing.md"), "x", true},
	}
	for _, c := range cases {
		r := &recorder{TB: t}
		Check(r, c.path, c.got)
		if r.failed != c.fail {
			t.Errorf("%s: failed = %v, want %v", c.name, r.failed, c.fail)
		}
	}
	t.Setenv("UPDATE_GOLDEN", "1")
	Check(t, filepath.Join(dir, "new", "x.md"), "written\n")
	if b, err := os.ReadFile(filepath.Join(dir, "new", "x.md")); err != nil || string(b) != "written\n" {
		t.Errorf("UPDATE_GOLDEN=1 wrote %q, %v", b, err)
	}
}
