package patchrun

import (
	"github.com/lablup/perfbot/runner/patch"

	"bufio"
	"context"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/sampletree"
	"github.com/lablup/perfbot/internal/testfix"
)

var update = flag.Bool("update", false, "rewrite the golden files under runner/patch/testdata/variants/*/want")

var variants = []string{"upstream", "crlf-tabs-last", "reversed-prefix", "after-comments"}

// overlayCommit is the short overlay commit of the real profile, read from the
// overlay's UPSTREAM file.
func overlayCommit(t *testing.T) string {
	t.Helper()
	f, err := os.Open(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "commit: "); ok {
			return v[:8]
		}
	}
	t.Fatal("UPSTREAM has no commit line")
	return ""
}

func passOutcome(t *testing.T) patch.Outcome {
	return patch.Outcome{OverlayCommit: overlayCommit(t), Tests: []patch.TestResult{
		{Name: patch.TestNames[0], Outcome: patch.Passed, Detail: "ok (0.91s)"},
		{Name: patch.TestNames[1], Outcome: patch.Passed, Detail: "ok (0.37s)"},
		{Name: patch.TestNames[2], Outcome: patch.Passed, Detail: "ok (1.20s)"},
	}}
}

func failOutcome(t *testing.T) patch.Outcome {
	return patch.Outcome{OverlayCommit: overlayCommit(t), Tests: []patch.TestResult{
		// Out of file order on purpose: the recorded comment follows the file.
		{Name: patch.TestNames[2], Outcome: patch.Aborted, Detail: "  signal 6 (SIGABRT): HIP error: invalid device function (hipErrorInvalidDeviceFunction) at gather_mm.hip:211\n"},
		{Name: patch.TestNames[0], Outcome: patch.Passed, Detail: "ok (0.91s)"},
		{Name: patch.TestNames[1], Outcome: patch.Failed, Detail: "thread 'grouped_gemm_numeric_tests::gather_mm_selects_the_indexed_expert' panicked at src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs:72:9:\r\n\texpert 3 was not selected: got [0.0, 0.0, 0.0, 0.0]"},
	}}
}

// copyRepo writes the sample mlxcel checkout's sources into a temp dir and lays the
// variant's own copies over them.
func copyRepo(t testing.TB, variant string) string {
	t.Helper()
	dir := t.TempDir()
	if err := sampletree.WriteSources(dir); err != nil {
		t.Fatal(err)
	}
	if r := variantRepo(variant); r != "" {
		if err := hosttest.CopyTree(r, dir); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range leftOut[variant] {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		// and the folders that leaves empty: Remove refuses one that is not
		for p = filepath.Dir(p); p != dir; p = filepath.Dir(p) {
			if os.Remove(p) != nil {
				break
			}
		}
	}
	return dir
}

// leftOut are the sample's dispatch sources a variant's checkout does not have: its
// checker's set has no entries for them, so with them the checker would fail on them
// rather than on the gates.
var leftOut = map[string][]string{
	"crlf-tabs-last":  {"src/lib/mlxcel-core/src/attention/sdpa_dispatch.rs", "src/lib/mlxcel-models/src/moe/router.rs"},
	"reversed-prefix": {"src/lib/mlxcel-core/src/attention/sdpa_dispatch.rs"},
}

// variantRepo is the folder of a variant's own copies of the sample's files; the
// "upstream" variant is the sample itself.
func variantRepo(variant string) string {
	if variant == "upstream" {
		return ""
	}
	return filepath.Join("..", "testdata", "variants", variant, "repo")
}

// variantFile is the variant's copy of the repo file rel: its own, or the sample's.
func variantFile(variant, rel string) ([]byte, error) {
	if r := variantRepo(variant); r != "" {
		b, err := os.ReadFile(filepath.Join(r, filepath.FromSlash(rel)))
		if !errors.Is(err, fs.ErrNotExist) {
			return b, err
		}
	}
	return sampletree.ReadFile(rel)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// golden compares got with a golden file byte for byte (or rewrites it with -update).
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readFile(t, path)
	if got != want {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", path,
			cmp.Diff(strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")))
	}
}

// snapshot records every file under dir (path -> bytes), to prove nothing was written.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			m[rel] = "link to " + target
			return err
		}
		m[rel] = readFile(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGemmGatesGolden(t *testing.T) {
	t.Parallel()
	for _, v := range variants {
		for _, mode := range []string{"pass", "fail"} {
			t.Run(v+"/"+mode, func(t *testing.T) {
				t.Parallel()
				repo := copyRepo(t, v)
				o := passOutcome(t)
				if mode == "fail" {
					o = failOutcome(t)
				}
				before := snapshot(t, repo)
				r, err := GemmGates(context.Background(), repo, o, Options{})
				if err != nil {
					t.Fatalf("GemmGates: %v", err)
				}
				want := filepath.Join("..", "testdata", "variants", v, "want", mode)
				rust := readFile(t, filepath.Join(repo, patch.RustPath))
				checker := readFile(t, filepath.Join(repo, patch.CheckerPath))
				golden(t, filepath.Join(want, filepath.Base(patch.RustPath)), rust)
				golden(t, filepath.Join(want, filepath.Base(patch.CheckerPath)), checker)
				golden(t, filepath.Join(want, "report.md"), r.Markdown())

				if r.Checker == nil || r.Checker.Verdict != "passed" {
					t.Fatalf("checker verdict: %+v", r.Checker)
				}
				wantAwaiting := r.EntriesBefore
				if mode == "pass" {
					wantAwaiting--
					if r.GatesReplaced != 3 || r.Entry != patch.EntryRemoved {
						t.Errorf("pass: gates replaced %d, entry %q; want 3, removed", r.GatesReplaced, r.Entry)
					}
					if strings.Contains(rust, "metal_is_available() && !") || !strings.Contains(rust, "gpu_backend_available()`), ROCm included") {
						t.Errorf("pass: the test file still enumerates Metal and CUDA or lacks the new doc sentence")
					}
				} else {
					if r.GatesReplaced != 0 || r.Entry != patch.EntryRecorded {
						t.Errorf("fail: gates replaced %d, entry %q; want 0, comment rewritten", r.GatesReplaced, r.Entry)
					}
					if rust != before[filepath.FromSlash(patch.RustPath)] {
						t.Error("fail: the test file changed; the gates must stay")
					}
					for _, s := range []string{o.OverlayCommit, "gather_mm_selects_the_indexed_expert failed", "expert 3 was not selected", "gather_mm_half_precision_matches_reference aborted"} {
						if !strings.Contains(checker, s) {
							t.Errorf("fail: the checker entry comment lacks %q", s)
						}
					}
				}
				if r.Checker.Awaiting != wantAwaiting {
					t.Errorf("awaiting a predicate = %d, want %d", r.Checker.Awaiting, wantAwaiting)
				}
				// Everything but the two files is untouched, and no temp file is left.
				after := snapshot(t, repo)
				for p := range before {
					if p != filepath.FromSlash(patch.RustPath) && p != filepath.FromSlash(patch.CheckerPath) && after[p] != before[p] {
						t.Errorf("%s changed", p)
					}
				}
				if len(after) != len(before) {
					t.Errorf("the tree has %d files after, %d before", len(after), len(before))
				}

				// A second run with the same outcome changes nothing.
				r2, err := GemmGates(context.Background(), repo, o, Options{})
				if err != nil {
					t.Fatalf("second GemmGates: %v", err)
				}
				if r2.Changed() {
					t.Errorf("second run reports changes: %+v", r2.Files)
				}
				if d := cmp.Diff(after, snapshot(t, repo)); d != "" {
					t.Errorf("second run changed the tree (-first +second):\n%s", d)
				}
				if r2.Checker.Verdict != "passed" || r2.Checker.Awaiting != wantAwaiting {
					t.Errorf("second run checker: %+v", r2.Checker)
				}
			})
		}
	}
}

func TestGemmGatesKeepsFileMode(t *testing.T) {
	t.Parallel()
	repo := copyRepo(t, "upstream")
	checker := filepath.Join(repo, patch.CheckerPath)
	if err := os.Chmod(checker, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := GemmGates(context.Background(), repo, passOutcome(t), Options{}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(checker)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o755 {
		t.Errorf("checker mode = %v, want 0755 kept", st.Mode().Perm())
	}
}

func TestGemmGatesDryRun(t *testing.T) {
	t.Parallel()
	repo := copyRepo(t, "upstream")
	before := snapshot(t, repo)
	r, err := GemmGates(context.Background(), repo, passOutcome(t), Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed() || r.GatesReplaced != 3 || r.Entry != patch.EntryRemoved || r.Checker != nil {
		t.Errorf("dry run report: changed %v, gates %d, entry %q, checker %v", r.Changed(), r.GatesReplaced, r.Entry, r.Checker)
	}
	if d := cmp.Diff(before, snapshot(t, repo)); d != "" {
		t.Errorf("dry run wrote files:\n%s", d)
	}
	md := r.Markdown()
	for _, s := range []string{"Would change (dry run, nothing written)", "The checker did not run (dry run)."} {
		if !strings.Contains(md, s) {
			t.Errorf("dry-run Markdown lacks %q:\n%s", s, md)
		}
	}
}

// TestGemmGatesHold: a build failure or a test that matched nothing is no evidence
// either way, so nothing changes, but the checker still runs.
func TestGemmGatesHold(t *testing.T) {
	t.Parallel()
	for _, oc := range []patch.TestOutcome{patch.BuildFailed, patch.NotRun} {
		t.Run(string(oc), func(t *testing.T) {
			t.Parallel()
			repo := copyRepo(t, "upstream")
			before := snapshot(t, repo)
			o := passOutcome(t)
			o.Tests[1] = patch.TestResult{Name: patch.TestNames[1], Outcome: oc, Detail: "error[E0425]: cannot find function `gather_mm`"}
			r, err := GemmGates(context.Background(), repo, o, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Decision != patch.Hold || r.Changed() || r.Entry != patch.EntryUnchanged {
				t.Errorf("decision %q, changed %v, entry %q; want hold, no change", r.Decision, r.Changed(), r.Entry)
			}
			if d := cmp.Diff(before, snapshot(t, repo)); d != "" {
				t.Errorf("hold wrote files:\n%s", d)
			}
			if r.Checker == nil || r.Checker.Verdict != "passed" || r.Checker.Awaiting != 3 {
				t.Errorf("checker: %+v", r.Checker)
			}
			if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], patch.TestNames[1]) {
				t.Errorf("notes = %q, want one about %s", r.Notes, patch.TestNames[1])
			}
		})
	}
}

// TestGemmGatesCheckerFails: a Metal/CUDA gate elsewhere in src/ that the set does not
// list makes the repo's checker fail after the patch; the report carries its lines.
func TestGemmGatesCheckerFails(t *testing.T) {
	t.Parallel()
	repo := copyRepo(t, "crlf-tabs-last")
	extra := filepath.Join(repo, "src", "lib", "mlxcel-core", "src", "rope.rs")
	if err := os.WriteFile(extra, []byte("pub fn rope() {\n    if crate::metal_is_available() || crate::cuda_is_available() {\n        return;\n    }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := GemmGates(context.Background(), repo, passOutcome(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Checker
	if c.Verdict != "failed" || c.ExitCode != 1 || c.Awaiting != -1 {
		t.Fatalf("checker: verdict %q exit %d awaiting %d", c.Verdict, c.ExitCode, c.Awaiting)
	}
	want := []string{"src/lib/mlxcel-core/src/rope.rs:2: rule 4: gate enumerates Metal and CUDA; use a backend predicate such as gpu_backend_available()"}
	if d := cmp.Diff(want, c.Failures); d != "" {
		t.Errorf("failures (-want +got):\n%s", d)
	}
	if md := r.Markdown(); !strings.Contains(md, "**failed** (exit 1)") || !strings.Contains(md, want[0]) {
		t.Errorf("Markdown does not show the failure:\n%s", md)
	}
}

func TestGemmGatesCheckerMissingPython(t *testing.T) {
	t.Parallel()
	repo := copyRepo(t, "upstream")
	r, err := GemmGates(context.Background(), repo, passOutcome(t), Options{Python: filepath.Join(t.TempDir(), "no-python")})
	if err != nil {
		t.Fatal(err)
	}
	if r.Checker.Verdict != "failed" || !strings.HasPrefix(r.Checker.Err, "could not start") {
		t.Errorf("checker: %+v", r.Checker)
	}
}

// TestGemmGatesRefusals: each unexpected shape is refused with what was found, and
// nothing is written, even when only the second file is wrong.
func TestGemmGatesRefusals(t *testing.T) {
	t.Parallel()
	rustGate := "    if !crate::metal_is_available() && !crate::cuda_is_available() {\n"
	cases := []struct {
		name    string
		variant string
		fail    bool // use the failing outcome
		edit    func(rust, checker string) (string, string)
		want    []string // substrings of the error
		not     string   // a text the error must not have
	}{
		{
			name: "gate missing", variant: "upstream",
			edit: func(r, c string) (string, string) {
				i := strings.Index(r, "fn gather_mm_selects_the_indexed_expert")
				return r[:i] + strings.Replace(r[i:], rustGate+"        return;\n    }\n", "", 1), c
			},
			want: []string{patch.RustPath + ":57: fn gather_mm_selects_the_indexed_expert does not start with the gate", "found `let (num_experts, k) = (8, 16);`"},
		},
		{
			name: "file ends at a gate", variant: "upstream",
			edit: func(r, c string) (string, string) {
				const sig = "fn gather_mm_half_precision_matches_reference() {\n"
				return r[:strings.Index(r, sig)+len(sig)] + rustGate, c
			},
			want: []string{patch.RustPath + ":83: the gate of fn gather_mm_half_precision_matches_reference is not followed by `return;` and `}` on their own lines: found ``"},
		},
		{
			name: "file ends after a gate's return", variant: "upstream",
			edit: func(r, c string) (string, string) {
				const sig = "fn gather_mm_half_precision_matches_reference() {\n"
				return r[:strings.Index(r, sig)+len(sig)] + rustGate + "        return;\n", c
			},
			want: []string{patch.RustPath + ":83: the gate of fn gather_mm_half_precision_matches_reference is not followed by `return;` and `}` on their own lines: found `return;`"},
		},
		{
			name: "fourth gate", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return strings.Replace(r, "    let r = ramp(34, 1.0);\n", rustGate+"        return;\n    }\n    let r = ramp(34, 1.0);\n", 1), c
			},
			want: []string{patch.RustPath + ":101: found a Metal/CUDA gate in fn ramp_is_deterministic_and_signed"},
		},
		{
			name: "fourth gate in an expression", variant: "reversed-prefix",
			edit: func(r, c string) (string, string) {
				return r + "\nconst ON_GPU: fn() -> bool = || mlxcel_core::metal_is_available() || cuda_is_available();\n", c
			},
			want: []string{"found a Metal/CUDA gate", "ON_GPU"},
		},
		{
			name: "one-line gate", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return strings.Replace(r, rustGate+"        return;\n    }\n", "    if !crate::metal_is_available() && !crate::cuda_is_available() { return; }\n", 1), c
			},
			want: []string{"does not start with the gate", "{ return; }"},
		},
		{
			name: "gate without return", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return strings.Replace(r, rustGate+"        return;\n", rustGate+"        eprintln!(\"skipping\");\n", 1), c
			},
			want: []string{"is not followed by `return;` and `}`", "eprintln!"},
		},
		{
			name: "test renamed", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return strings.Replace(r, "fn gather_mm_half_precision_matches_reference()", "fn gather_mm_f16_matches_reference()", 1), c
			},
			want: []string{"no fn gather_mm_half_precision_matches_reference found", "gather_mm_f16_matches_reference"},
		},
		{
			name: "not a test", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return strings.Replace(r, "#[test]\nfn gather_mm_selects_the_indexed_expert", "fn gather_mm_selects_the_indexed_expert", 1), c
			},
			want: []string{patch.RustPath + ":54: fn gather_mm_selects_the_indexed_expert is not marked #[test]"},
		},
		{
			name: "no body", variant: "upstream",
			edit: func(r, c string) (string, string) {
				const sig = "fn gather_mm_half_precision_matches_reference() {\n"
				return r[:strings.Index(r, sig)+len(sig)] + "    // cut here\n\n", c
			},
			want: []string{patch.RustPath + ":81: fn gather_mm_half_precision_matches_reference has no body"},
		},
		{
			name: "doc sentence missing", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return strings.Replace(r, "//! GPU-only (Metal or CUDA); these skip on a CPU-only build.\n", "//! Run them with `--test-threads=1`.\n", 1), c
			},
			want: []string{"does not end with a paragraph saying the tests are Metal-or-CUDA-only", "found `Run them with"},
		},
		{
			name: "two Metal and CUDA sentences", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return strings.Replace(r, "CPU-only build.\n", "CPU-only build. On Metal and CUDA they use the vendor GEMM.\n", 1), c
			},
			want: []string{"more than one sentence naming Metal and CUDA"},
		},
		{
			name: "entry missing", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return r, strings.Replace(c, "    \"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs\",\n", "", 1)
			},
			want: []string{patch.CheckerPath + ":", "has no entry \"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs\"", "src/lib/mlxcel-core/src/attention/sdpa_dispatch.rs"},
		},
		{
			name: "entry missing on failure", variant: "upstream", fail: true,
			edit: func(r, c string) (string, string) {
				return r, strings.Replace(c, "    \"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs\",\n", "", 1)
			},
			want: []string{"has no entry"},
		},
		{
			name: "set literal missing", variant: "crlf-tabs-last",
			edit: func(r, c string) (string, string) {
				return r, strings.Replace(c, "BACKEND_ENUMERATION_TODO: set[str] = {", "BACKEND_ENUMERATION_ALLOW: set[str] = {", 1)
			},
			want: []string{"no `BACKEND_ENUMERATION_TODO: set[str] = {...}` literal found"},
		},
		{
			name: "set assigned twice", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return r, strings.Replace(c, "_PREFIX = ", "BACKEND_ENUMERATION_TODO = set()\n_PREFIX = ", 1)
			},
			want: []string{"scripts/ci/check_kernel_port_dispatch.py:37: BACKEND_ENUMERATION_TODO is assigned 2 times (first at line 28); expected one literal"},
		},
		{
			name: "empty dict", variant: "upstream",
			edit: func(r, c string) (string, string) {
				i := strings.Index(c, "BACKEND_ENUMERATION_TODO: set[str] = {")
				j := strings.Index(c[i:], "}\n")
				return r, c[:i] + "BACKEND_ENUMERATION_TODO: set[str] = {}\n" + c[i+j+2:]
			},
			want: []string{"scripts/ci/check_kernel_port_dispatch.py:28: BACKEND_ENUMERATION_TODO is `{}`, which Python reads as an empty dict"},
		},
		{
			name: "one-line literal", variant: "upstream",
			edit: func(r, c string) (string, string) {
				i := strings.Index(c, "BACKEND_ENUMERATION_TODO: set[str] = {")
				j := strings.Index(c[i:], "}\n")
				return r, c[:i] + "BACKEND_ENUMERATION_TODO: set[str] = {\"src/x.rs\", \"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs\"}\n" + c[i+j+2:]
			},
			want: []string{"scripts/ci/check_kernel_port_dispatch.py:28: BACKEND_ENUMERATION_TODO is written on one line"},
		},
		{
			// The entry is found on a one-line literal too: the refusal is about the
			// layout, not a missing entry.
			name: "one-line literal on failure", variant: "upstream", fail: true,
			edit: func(r, c string) (string, string) {
				i := strings.Index(c, "BACKEND_ENUMERATION_TODO: set[str] = {")
				j := strings.Index(c[i:], "}\n")
				return r, c[:i] + "BACKEND_ENUMERATION_TODO: set[str] = {\"src/x.rs\", \"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs\"}\n" + c[i+j+2:]
			},
			want: []string{"scripts/ci/check_kernel_port_dispatch.py:28: BACKEND_ENUMERATION_TODO is written on one line"},
			not:  "has no entry",
		},
		{
			name: "literal never closed", variant: "upstream",
			edit: func(r, c string) (string, string) {
				i := strings.Index(c, "BACKEND_ENUMERATION_TODO: set[str] = {")
				j := strings.Index(c[i:], "}\n")
				return r, c[:i+j]
			},
			want: []string{"scripts/ci/check_kernel_port_dispatch.py:28: BACKEND_ENUMERATION_TODO opens `{` but no line closes it with `}`"},
		},
		{
			name: "two entries on a line", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return r, strings.Replace(c, "    \"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs\",\n", "    \"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs\", \"src/x.rs\",\n", 1)
			},
			want: []string{"scripts/ci/check_kernel_port_dispatch.py:32: inside BACKEND_ENUMERATION_TODO, expected one quoted path per line"},
		},
		{
			name: "prose mention above the set", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return r, strings.Replace(c, "# 3 files still enumerate", "# grouped_gemm_numeric_tests.rs goes once ROCm passes.\n# 3 files still enumerate", 1)
			},
			want: []string{"scripts/ci/check_kernel_port_dispatch.py:24: the comment above BACKEND_ENUMERATION_TODO mentions grouped_gemm_numeric_tests.rs in prose", "found `# grouped_gemm_numeric_tests.rs goes once ROCm passes.`"},
		},
		{
			name: "failure after the switch", variant: "upstream", fail: true,
			edit: func(r, c string) (string, string) {
				return strings.ReplaceAll(r, "if !crate::metal_is_available() && !crate::cuda_is_available() {", "if !crate::gpu_backend_available() {"), c
			},
			want: []string{"the gates already ask gpu_backend_available(), but a test failed on ROCm"},
		},
		{
			name: "mixed gates", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return strings.Replace(r, "if !crate::metal_is_available() && !crate::cuda_is_available() {", "if !crate::gpu_backend_available() {", 1), c
			},
			want: []string{"the gates are mixed: 2 still enumerate Metal and CUDA and 1 already ask"},
		},
		{
			name: "both files wrong", variant: "upstream",
			edit: func(r, c string) (string, string) {
				return strings.Replace(r, "fn gather_mm_selects_the_indexed_expert()", "fn gather_mm_picks_the_expert()", 1),
					strings.Replace(c, "BACKEND_ENUMERATION_TODO: set[str] = {", "TODO: set[str] = {", 1)
			},
			want: []string{"no fn gather_mm_selects_the_indexed_expert found", "no `BACKEND_ENUMERATION_TODO"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := copyRepo(t, tc.variant)
			rustFile, checkerFile := filepath.Join(repo, patch.RustPath), filepath.Join(repo, patch.CheckerPath)
			r, c := tc.edit(readFile(t, rustFile), readFile(t, checkerFile))
			if r == readFile(t, rustFile) && c == readFile(t, checkerFile) {
				t.Fatal("the edit changed nothing; the test is broken")
			}
			if err := os.WriteFile(rustFile, []byte(r), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(checkerFile, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, repo)
			o := passOutcome(t)
			if tc.fail {
				o = failOutcome(t)
			}
			_, err := GemmGates(context.Background(), repo, o, Options{})
			var refused *patch.RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("err = %v, want a *patch.RefusedError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if tc.not != "" && strings.Contains(err.Error(), tc.not) {
				t.Errorf("error has %q:\n%v", tc.not, err)
			}
			if !strings.Contains(err.Error(), "nothing was written") {
				t.Errorf("error does not say nothing was written:\n%v", err)
			}
			if d := cmp.Diff(before, snapshot(t, repo)); d != "" {
				t.Errorf("a refused patch wrote files:\n%s", d)
			}
		})
	}
}

func TestGemmGatesMissingFiles(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	_, err := GemmGates(context.Background(), repo, passOutcome(t), Options{})
	var refused *patch.RefusedError
	if !errors.As(err, &refused) || len(refused.Problems) != 2 {
		t.Fatalf("err = %v, want a refusal naming both files", err)
	}
	var paths []string
	for _, p := range refused.Problems {
		paths = append(paths, p.Path)
	}
	sort.Strings(paths)
	if d := cmp.Diff([]string{patch.CheckerPath, patch.RustPath}, paths); d != "" {
		t.Error(d)
	}
	if len(snapshot(t, repo)) != 0 {
		t.Error("files were created")
	}
}

func TestGemmGatesInvalidOutcome(t *testing.T) {
	t.Parallel()
	o := passOutcome(t)
	o.Tests = o.Tests[:2]
	if _, err := GemmGates(context.Background(), t.TempDir(), o, Options{}); err == nil || !strings.Contains(err.Error(), "exactly 3") {
		t.Errorf("err = %v, want a complaint about the number of tests", err)
	}
}

func TestGemmGatesCanceled(t *testing.T) {
	t.Parallel()
	repo := copyRepo(t, "upstream")
	before := snapshot(t, repo)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := GemmGates(ctx, repo, passOutcome(t), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := cmp.Diff(before, snapshot(t, repo)); d != "" {
		t.Errorf("a canceled patch wrote files:\n%s", d)
	}
}

// BenchmarkGemmGatesDryRun measures reading, checking and planning both files of the
// upstream-like copy (no writes, no checker run).
func BenchmarkGemmGatesDryRun(b *testing.B) {
	dir := copyRepo(b, "upstream")
	o := patch.Outcome{OverlayCommit: "75915908"}
	for _, n := range patch.TestNames {
		o.Tests = append(o.Tests, patch.TestResult{Name: n, Outcome: patch.Passed})
	}
	for b.Loop() {
		if _, err := GemmGates(context.Background(), dir, o, Options{DryRun: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// The checker's verdict is its success line AND a clean exit in time: a checker that
// prints "passed" and then exits non-zero, is killed, or runs past its timeout has
// failed, and the report says so.
func TestCheckerSuccessLineIsNotEnough(t *testing.T) {
	t.Parallel()
	const ok = "echo 'Kernel port dispatch check passed: 12 files, 3 awaiting a predicate'"
	cases := []struct {
		name, script string
		verdict      string
		awaiting     int
		timeout      time.Duration // 0: 20 s, far past what a checker that ends takes on a loaded machine
		report       string        // the checker line of the Markdown report
	}{
		{"passed", ok, "passed", 3, 0, "Checker `sh scripts/ci/check_kernel_port_dispatch.py`: **passed**, 3 awaiting a predicate."},
		{"success line then exit 1", ok + "; exit 1", "failed", 3, 0, "Checker `sh scripts/ci/check_kernel_port_dispatch.py`: **failed** (exit 1)."},
		{"success line then killed", ok + "; kill -9 $$", "failed", 3, 0, "Checker `sh scripts/ci/check_kernel_port_dispatch.py`: **failed** (killed by signal 9 (killed))."},
		{"success line then hangs", ok + "; exec sleep 60", "failed", 3, 2 * time.Second, "Checker `sh scripts/ci/check_kernel_port_dispatch.py`: **failed** (timed out after 2s)."},
		{"exit 0 without the success line", "echo 'all good'", "failed", -1, 0, "Checker `sh scripts/ci/check_kernel_port_dispatch.py`: **failed** (exit 0)."},
		{"failure lines", "echo 'Kernel port dispatch check failed:'; echo '  src/a.rs:3: enumerates Metal'; echo '  not a failure line'; exit 1", "failed", -1, 0,
			"Checker `sh scripts/ci/check_kernel_port_dispatch.py`: **failed** (exit 1)."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := t.TempDir()
			p := filepath.Join(repo, filepath.FromSlash(patch.CheckerPath))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(c.script+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			timeout := c.timeout
			if timeout == 0 {
				timeout = 20 * time.Second
			}
			start := time.Now()
			res := runChecker(ctx, repo, Options{Python: "sh", CheckerTimeout: timeout})
			if waited := time.Since(start); c.timeout != 0 && waited > 15*time.Second {
				t.Fatalf("the checker run took %v: the timeout did not stop it", waited)
			}
			if res.Verdict != c.verdict || res.Awaiting != c.awaiting {
				t.Errorf("verdict %q awaiting %d, want %q %d (result %+v)", res.Verdict, res.Awaiting, c.verdict, c.awaiting, res.VerifyResult)
			}
			md := (&patch.Report{Decision: patch.Switch, Checker: res}).Markdown()
			var line string
			for _, l := range strings.Split(md, "\n") {
				if strings.HasPrefix(l, "Checker ") {
					line = l
				}
			}
			if line != c.report {
				t.Errorf("report line %q, want %q\n%s", line, c.report, md)
			}
			if c.name == "failure lines" && (len(res.Failures) != 1 || res.Failures[0] != "src/a.rs:3: enumerates Metal") {
				t.Errorf("failures %q, want the one path:line line", res.Failures)
			}
			// The report quotes the failure lines when there are some, the output
			// otherwise.
			switch c.name {
			case "failure lines":
				if !strings.Contains(md, "src/a.rs:3: enumerates Metal") || strings.Contains(md, "not a failure line") {
					t.Errorf("the report does not quote just the failure lines:\n%s", md)
				}
			case "exit 0 without the success line":
				if !strings.Contains(md, "\nall good\n") {
					t.Errorf("the report does not quote the output:\n%s", md)
				}
			}
		})
	}
}

// When the checker passes but counts another number awaiting a predicate than the set
// has entries, the report notes it, a count of 0 too; a failed checker's count is not
// compared.
func TestGemmGatesNotesTheCheckersCount(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, script string
		note         bool
	}{
		{"passed, 0 awaiting", "echo 'Kernel port dispatch check passed: 12 files, 0 awaiting a predicate'", true},
		{"passed, 3 awaiting", "echo 'Kernel port dispatch check passed: 12 files, 3 awaiting a predicate'", false},
		{"failed, 0 awaiting", "echo 'Kernel port dispatch check passed: 12 files, 0 awaiting a predicate'; exit 1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := copyRepo(t, "upstream")
			py := filepath.Join(t.TempDir(), "python3")
			if err := os.WriteFile(py, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			o := passOutcome(t)
			o.Tests[1] = patch.TestResult{Name: patch.TestNames[1], Outcome: patch.BuildFailed, Detail: "error[E0425]"}
			r, err := GemmGates(context.Background(), repo, o, Options{Python: py})
			if err != nil {
				t.Fatal(err)
			}
			want := "the checker counts 0 awaiting a predicate but BACKEND_ENUMERATION_TODO has 3 entries"
			if got := slices.Contains(r.Notes, want); got != c.note {
				t.Errorf("notes %q: the count noted %v, want %v", r.Notes, got, c.note)
			}
		})
	}
}

// A repository reached through a symbolic link is patched like any other: its files are
// inside it once the link is resolved.
func TestGemmGatesThroughALinkedRepo(t *testing.T) {
	t.Parallel()
	repo := copyRepo(t, "upstream")
	link := filepath.Join(t.TempDir(), "repo")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	r, err := GemmGates(context.Background(), link, passOutcome(t), Options{})
	if err != nil || !r.Changed() {
		t.Fatalf("through a link: %+v, %v", r, err)
	}
}
