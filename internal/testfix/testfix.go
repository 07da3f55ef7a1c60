// Package testfix locates the shared fixtures (real data written by others) for tests.
// The fixtures live in `../shared/fixtures` beside the checkout, on a developer's
// machine and in CI alike. It must never write to them.
package testfix

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot returns the directory holding go.mod, searching up from the working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testfix: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Dir returns the shared fixtures directory; the test fails if it is missing.
func Dir(t testing.TB) string {
	t.Helper()
	d := filepath.Join(RepoRoot(t), "..", "shared", "fixtures")
	if _, err := os.Stat(filepath.Join(d, "SOURCES.md")); err != nil {
		t.Fatalf("testfix: shared fixtures not found at %s: %v", d, err)
	}
	return d
}

// Path returns a path inside the fixtures directory.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Dir(t)}, elem...)...)
}
