package patch

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lablup/perfbot/internal/sampletree"
)

// Apply writes the patched files and runs nothing: its report has no checker verdict,
// and the files are the golden ones runner/patch/patchrun's GemmGates checks too. A
// dry run writes nothing.
func TestApplyRunsNoChecker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := sampletree.WriteSources(dir); err != nil {
		t.Fatal(err)
	}
	o := outcomeFor(Switch)
	before, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(RustPath)))
	if err != nil {
		t.Fatal(err)
	}
	dry, err := Apply(context.Background(), dir, o, true)
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if !dry.DryRun || !dry.Changed() || dry.Checker != nil {
		t.Errorf("dry run report: dry %v, changed %v, checker %+v", dry.DryRun, dry.Changed(), dry.Checker)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(RustPath))); string(b) != string(before) {
		t.Error("the dry run wrote the test file")
	}

	r, err := Apply(context.Background(), dir, o, false)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if r.Checker != nil {
		t.Errorf("Apply ran the checker: %+v", r.Checker)
	}
	if r.Decision != Switch || r.GatesReplaced != 3 || r.Entry != EntryRemoved {
		t.Errorf("decision %q, gates replaced %d, entry %q; want switch, 3, removed", r.Decision, r.GatesReplaced, r.Entry)
	}
	for _, rel := range []string{RustPath, CheckerPath} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "variants", "upstream", "want", "pass", filepath.Base(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from the golden file", rel)
		}
	}
}

// SetChecker notes a passing checker whose count disagrees with the patched set, and
// only then.
func TestSetChecker(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		verdict  string
		awaiting int
		note     bool
	}{
		{"passed", 2, false},
		{"passed", 0, true},
		{"passed", -1, false},
		{"failed", 0, false},
	} {
		r := Report{EntriesAfter: 2}
		r.SetChecker(&CheckerResult{Verdict: c.verdict, Awaiting: c.awaiting})
		if r.Checker == nil || (len(r.Notes) > 0) != c.note {
			t.Errorf("%s with %d awaiting: notes %q, want a note: %v", c.verdict, c.awaiting, r.Notes, c.note)
		}
	}
}

// ParseChecker counts a clean exit with the success line as passed, anything else as
// failed, and reads the failure lines.
func TestParseChecker(t *testing.T) {
	t.Parallel()
	ok := ParseChecker(VerifyResult{Output: "Kernel port dispatch check passed: 5 files, 2 awaiting a predicate\n"})
	if ok.Verdict != "passed" || ok.Awaiting != 2 {
		t.Errorf("clean exit: %+v", ok)
	}
	bad := ParseChecker(VerifyResult{ExitCode: 1, Output: "Kernel port dispatch check failed:\n  src/a.rs:3: enumerates Metal and CUDA\n"})
	if bad.Verdict != "failed" || bad.Awaiting != -1 || len(bad.Failures) != 1 || bad.Failures[0] != "src/a.rs:3: enumerates Metal and CUDA" {
		t.Errorf("failure: %+v", bad)
	}
	late := ParseChecker(VerifyResult{ExitCode: 1, Output: "Kernel port dispatch check passed: 5 files, 2 awaiting a predicate\n"})
	if late.Verdict != "failed" {
		t.Errorf("success line then exit 1: %+v", late)
	}
}
