// Package testfix locates the real data the tests read: verbatim copies of files written
// by others (rocprofv3 outputs, bench logs, webhook payloads, API examples), kept in the
// repository under testdata/real with their provenance in testdata/real/SOURCES.md.
// It looks inside the repository only, so a fresh clone anywhere passes its tests. It
// must never write to the data; a test that needs a variation writes it to a temp dir.
package testfix

import (
	"os"
	"path/filepath"
)

// TB is the part of testing.TB the helpers use; *testing.T, *testing.B and testing.TB
// satisfy it. Not importing testing keeps the package usable from code the perfbot
// binary links (the demo's GitHub fake, whose tests find the REST description here).
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// RepoRoot returns the directory holding go.mod, searching up from the working directory.
func RepoRoot(t TB) string {
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

// Dir returns the repository's real-data directory, testdata/real.
func Dir(t TB) string {
	t.Helper()
	d := filepath.Join(RepoRoot(t), "testdata", "real")
	if _, err := os.Stat(filepath.Join(d, "SOURCES.md")); err != nil {
		t.Fatalf("testfix: real test data not found at %s: %v", d, err)
	}
	return d
}

// Path returns a path inside testdata/real.
func Path(t TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Dir(t)}, elem...)...)
}
