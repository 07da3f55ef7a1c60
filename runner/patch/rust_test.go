package patch

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rustFile builds a minimal test file with the given header and gate lines.
func rustFile(header string, gates [3]string) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("\nuse crate::ops::gather_mm;\n")
	for i, n := range TestNames {
		b.WriteString("\n#[test]\n")
		if i == 1 {
			b.WriteString("#[cfg_attr(miri, ignore)]\n")
		}
		b.WriteString("fn " + n + "() {\n")
		if i == 2 {
			b.WriteString("    // Skip without a GPU.\n")
		}
		b.WriteString("    " + gates[i] + "\n        return;\n    }\n    assert!(gather_mm_ok());\n}\n")
	}
	return b.String()
}

func TestPlanRust(t *testing.T) {
	t.Parallel()
	const doc = "//! GPU-only (Metal or CUDA); these skip on a CPU-only build.\n"
	const newDoc = "//! GPU-only: these run on every GPU backend (`gpu_backend_available()`), ROCm\n//! included, and skip on a CPU-only build.\n"
	sw := "if !crate::gpu_backend_available() {"
	cases := []struct {
		name   string
		in     string
		want   string
		gates  int
		docNew bool
	}{
		{
			name:  "unqualified and spaced gates, licence header, inner attribute",
			in:    rustFile("// SPDX-License-Identifier: Apache-2.0\n#![cfg(test)]\n//! Grouped GEMM checks.\n//!\n"+doc, [3]string{"if !metal_is_available() && !cuda_is_available() {", "if ! crate::metal_is_available()  &&  ! crate::cuda_is_available() {", "if !mlxcel_core::metal_is_available() && !crate::cuda_is_available() {  "}),
			want:  rustFile("// SPDX-License-Identifier: Apache-2.0\n#![cfg(test)]\n//! Grouped GEMM checks.\n//!\n"+newDoc, [3]string{sw, sw, sw + "  "}),
			gates: 3, docNew: true,
		},
		{
			name:   "gates already switched, doc still old: only the doc changes",
			in:     rustFile(doc, [3]string{sw, sw, sw}),
			want:   rustFile(newDoc, [3]string{sw, sw, sw}),
			docNew: true,
		},
		{
			name:   "narrow doc keeps a width of at least 80 columns",
			in:     rustFile("//! Checks.\n//!\n//! GPU-only (Metal or\n//! CUDA); these skip on a CPU-only build.\n//! See e.g. the Metal docs.\n", [3]string{sw, sw, sw}),
			want:   rustFile("//! Checks.\n//!\n//! GPU-only: these run on every GPU backend (`gpu_backend_available()`), ROCm\n//! included, and skip on a CPU-only build. See e.g. the Metal docs.\n", [3]string{sw, sw, sw}),
			docNew: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, probs := planRust(tc.in, Switch)
			if len(probs) > 0 {
				t.Fatalf("problems: %v", probs)
			}
			if d := cmp.Diff(strings.SplitAfter(tc.want, "\n"), strings.SplitAfter(p.out, "\n")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if p.gatesReplaced != tc.gates || p.docRewritten != tc.docNew {
				t.Errorf("gates %d doc %v, want %d %v", p.gatesReplaced, p.docRewritten, tc.gates, tc.docNew)
			}
			again, probs := planRust(p.out, Switch)
			if len(probs) > 0 || again.out != p.out {
				t.Errorf("second plan: problems %v, changed %v", probs, again.out != p.out)
			}
		})
	}
}

func TestPlanRustRecordAndHoldLeaveTheFile(t *testing.T) {
	t.Parallel()
	in := rustFile("//! No doc sentence here, which only the switch needs.\n", [3]string{
		"if !crate::metal_is_available() && !crate::cuda_is_available() {",
		"if !crate::cuda_is_available() && !crate::metal_is_available() {",
		"if !crate::metal_is_available() && !crate::cuda_is_available() {",
	})
	for _, d := range []Decision{Record, Hold} {
		p, probs := planRust(in, d)
		if len(probs) > 0 || p.out != in || p.state != stateEnumerate {
			t.Errorf("%s: problems %v, changed %v, state %q", d, probs, p.out != in, p.state)
		}
	}
}

func TestPlanRustSameBackendTwiceIsNoGate(t *testing.T) {
	t.Parallel()
	in := rustFile("//! GPU-only (Metal or CUDA); these skip on a CPU-only build.\n", [3]string{
		"if !crate::metal_is_available() && !crate::metal_is_available() {",
		"if !crate::metal_is_available() && !crate::cuda_is_available() {",
		"if !crate::metal_is_available() && !crate::cuda_is_available() {",
	})
	_, probs := planRust(in, Switch)
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "fn "+TestNames[0]+" does not start with the gate") {
		t.Errorf("problems = %v", probs)
	}
}

func TestSplitSentences(t *testing.T) {
	t.Parallel()
	got := splitSentences("GPU-only (Metal or CUDA); see e.g. the docs. Run them alone! Why? `cargo test` works.")
	want := []string{"GPU-only (Metal or CUDA); see e.g. the docs.", "Run them alone!", "Why?", "`cargo test` works."}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

func BenchmarkPlanRust(b *testing.B) {
	src := rustFile("//! GPU-only (Metal or CUDA); these skip on a CPU-only build.\n"+strings.Repeat("// filler\nfn helper() { let x = 1 + 2; }\n", 1000), [3]string{
		"if !crate::metal_is_available() && !crate::cuda_is_available() {",
		"if !crate::metal_is_available() && !crate::cuda_is_available() {",
		"if !crate::metal_is_available() && !crate::cuda_is_available() {",
	})
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, probs := planRust(src, Switch); len(probs) > 0 {
			b.Fatal(probs)
		}
	}
}

// A line enumerates Metal and CUDA when any of its pairs names both, not only its first.
func TestEnumeratesAnyPair(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"let a = metal_is_available() && metal_is_available(); let b = cuda_is_available() || metal_is_available();": true,
		"let a = metal_is_available() && metal_is_available();":                                                      false,
		"// if metal_is_available() && cuda_is_available() {":                                                        false,
	} {
		if got := enumerates(s); got != want {
			t.Errorf("enumerates(%q) = %v, want %v", s, got, want)
		}
	}
}

// The change list names what was done only: no "0 gates" line.
func TestRustPlanChanges(t *testing.T) {
	t.Parallel()
	if got := (rustPlan{docRewritten: true}).changes(); len(got) != 1 || !strings.HasPrefix(got[0], "the module doc now says") {
		t.Errorf("changes %q", got)
	}
	if got := (rustPlan{gatesReplaced: 1}).changes(); len(got) != 1 || got[0] != "1 gates now ask `crate::gpu_backend_available()` instead of Metal and CUDA" {
		t.Errorf("changes %q", got)
	}
}

// The Rust helpers at the first line of a file.
func TestRustHelpersAtTheFirstLine(t *testing.T) {
	t.Parallel()
	ls := []line{{text: "#[test]"}, {text: "fn a() {"}, {text: "}"}, {text: "fn helper() {"}, {text: "}"}}
	if !hasTestAttr(ls, 1) || hasTestAttr(ls, 3) {
		t.Error("hasTestAttr: the attribute on line 0 is not seen, or a plain fn is a test")
	}
	fns := []string{"", "a", "", "helper", ""}
	if got := testFns(ls, fns); !slices.Equal(got, []string{"a"}) {
		t.Errorf("testFns = %q", got)
	}
	if got := testFns(ls[3:], fns[3:]); !slices.Equal(got, []string{"none"}) {
		t.Errorf("testFns without tests = %q", got)
	}
	if got := enclosingFn([]string{"a", "", ""}, 2); got != "a" {
		t.Errorf("enclosingFn = %q, want the fn on line 0", got)
	}
}

// The module doc: a paragraph on the file's first line, paragraphs separated by blank
// lines (the last one is rewritten), refusals on the last paragraph's line, and a doc
// that ends the file without a newline.
func TestRewriteModuleDocEdges(t *testing.T) {
	t.Parallel()
	const old = "//! GPU-only (Metal or CUDA); these skip on a CPU-only build."
	rewrite := func(src string) (string, bool, []Problem) {
		var ps problems
		out, ok := rewriteModuleDoc(splitLines(src), &ps)
		return joinLines(out), ok, ps.list
	}
	want := "//! Numeric tests.\n\n//! GPU-only: these run on every GPU backend (`gpu_backend_available()`), ROCm\n//! included, and skip on a CPU-only build.\n\nuse x;\n"
	if got, ok, probs := rewrite("//! Numeric tests.\n\n" + old + "\n\nuse x;\n"); !ok || got != want || len(probs) != 0 {
		t.Errorf("two paragraphs from line 0: %v %v\n%s", ok, probs, got)
	}
	want = "//! GPU-only: these run on every GPU backend (`gpu_backend_available()`), ROCm\n//! included, and skip on a CPU-only build."
	if got, ok, probs := rewrite(old); !ok || got != want || len(probs) != 0 {
		t.Errorf("a doc ending the file without a newline: %v %v\n%q", ok, probs, got)
	}
	for src, msg := range map[string]string{
		"// licence\n\n//! Intro.\n\n//! Run them with care.\nuse x;\n":                               "5: the module doc does not end with a paragraph",
		"// licence\n//! Intro.\n//!\n//! Metal and CUDA first. Then Metal and CUDA again.\nuse x;\n": "4: the last module doc paragraph has more than one sentence",
	} {
		_, ok, probs := rewrite(src)
		if ok || len(probs) != 1 || !strings.HasPrefix(probs[0].String(), ":"+msg) {
			t.Errorf("%q: %v %v, want a problem at line %s", src, ok, probs, msg)
		}
	}
}
