// Package golden compares a test's whole output, as users see it, with a file kept
// under the package's testdata, so a changed figure, row or word anywhere fails the
// test and shows the difference. It is for tests only; it must not be imported by
// non-test code. Run the tests with UPDATE_GOLDEN=1 to rewrite the files after a
// deliberate change, then review the diff before committing it.
package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check fails t when got differs from the file at path (relative to the test's
// package folder), showing the difference; with UPDATE_GOLDEN=1 it writes got there.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the golden file: %v (UPDATE_GOLDEN=1 writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; UPDATE_GOLDEN=1 rewrites it after a deliberate change):\n%s", path, diff)
	}
}
