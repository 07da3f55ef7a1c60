package patch

import (
	"os"
	"path/filepath"
	"testing"
)

// seed adds the test copies of rel and their patched golden versions to the corpus.
func seed(f *testing.F, rel string) {
	f.Helper()
	for _, v := range variants {
		b, err := variantFile(v, rel)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, p := range []string{
			filepath.Join("testdata", "variants", v, "want", "pass", filepath.Base(rel)),
			filepath.Join("testdata", "variants", v, "want", "fail", filepath.Base(rel)),
		} {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

// outcomes are valid outcomes for each decision (tests in file order).
func outcomeFor(d Decision) Outcome {
	o := Outcome{OverlayCommit: "75915908"}
	for i, name := range TestNames {
		r := TestResult{Name: name, Outcome: Passed, Detail: "ok"}
		switch {
		case d == Record && i == 1:
			r.Outcome, r.Detail = Failed, "thread 'x' panicked at src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs:72:9: expert 3 was not selected"
		case d == Hold && i == 2:
			r.Outcome, r.Detail = BuildFailed, "error[E0425]: cannot find function"
		}
		o.Tests = append(o.Tests, r)
	}
	return o
}

// FuzzPlanRust: the Rust scanner never panics on any file; what it accepts it patches
// to a file it accepts again and leaves as is the second time (a second run changes
// nothing), and only a switch changes the text, by a bounded amount.
func FuzzPlanRust(f *testing.F) {
	seed(f, RustPath)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxSource {
			return // GemmGates refuses it unread
		}
		src := string(b)
		for _, d := range []Decision{Switch, Record, Hold} {
			p, probs := planRust(src, d)
			if len(probs) > 0 {
				continue
			}
			if d != Switch && p.out != src {
				t.Fatalf("%s changed the file", d)
			}
			if len(p.out) > len(src)+4096 {
				t.Fatalf("%s grew the file from %d to %d bytes", d, len(src), len(p.out))
			}
			again, probs := planRust(p.out, d)
			if len(probs) > 0 {
				t.Fatalf("%s: the patched file is refused: %v\n%q", d, probs, p.out)
			}
			if again.out != p.out {
				t.Fatalf("%s: a second run changes the file:\n%q\n%q", d, p.out, again.out)
			}
		}
	})
}

// FuzzPlanChecker: the same for the Python scanner of the checker script, for every
// decision and whether GemmGates requires the entry (always on a record; on a switch
// or a hold, when the gates still enumerate Metal and CUDA).
func FuzzPlanChecker(f *testing.F) {
	seed(f, CheckerPath)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxSource {
			return // GemmGates refuses it unread
		}
		src := string(b)
		for _, d := range []Decision{Switch, Record, Hold} {
			o := outcomeFor(d)
			for _, need := range []bool{true, false} {
				if d == Record && !need {
					continue
				}
				p, probs := planChecker(src, d, o, need)
				if len(probs) > 0 {
					continue
				}
				if d == Hold && p.out != src {
					t.Fatalf("hold changed the file")
				}
				if len(p.out) > len(src)+4096 {
					t.Fatalf("%s grew the file from %d to %d bytes", d, len(src), len(p.out))
				}
				// After a switch the gates ask the predicate: the entry is no longer
				// needed. Otherwise the gates are as they were.
				needAgain := need && d != Switch
				again, probs := planChecker(p.out, d, o, needAgain)
				if len(probs) > 0 {
					t.Fatalf("%s (need=%v): the patched file is refused: %v\n%q", d, need, probs, p.out)
				}
				if again.out != p.out {
					t.Fatalf("%s (need=%v): a second run changes the file:\n%q\n%q", d, need, p.out, again.out)
				}
			}
		}
	})
}
