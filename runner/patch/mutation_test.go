package patch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

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
			p := filepath.Join(repo, filepath.FromSlash(CheckerPath))
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
			md := (&Report{Decision: Switch, Checker: res}).Markdown()
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
			o.Tests[1] = TestResult{Name: TestNames[1], Outcome: BuildFailed, Detail: "error[E0425]"}
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

// splice replaces a range of lines, at the end of the file too.
func TestSplice(t *testing.T) {
	t.Parallel()
	ls := []line{{text: "a"}, {text: "b"}, {text: "c"}}
	for _, c := range []struct {
		from, to int
		repl     []line
		want     string
	}{{2, 3, nil, "ab"}, {0, 3, []line{{text: "x"}}, "x"}, {1, 1, []line{{text: "x"}, {text: "y"}}, "axybc"}, {3, 3, []line{{text: "z"}}, "abcz"}} {
		var got strings.Builder
		for _, l := range splice(ls, c.from, c.to, c.repl...) {
			got.WriteString(l.text)
		}
		if got.String() != c.want {
			t.Errorf("splice(%d, %d) = %q, want %q", c.from, c.to, got.String(), c.want)
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

// A detail is cut to max runes only when it is longer.
func TestOneLineCut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{{"abcdef", 6, "abcdef"}, {"abcdefg", 6, "abc..."}, {"a\n b\tc", 10, "a b c"}} {
		if got := oneLine(c.s, c.max); got != c.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}

// A problem about the whole file names no line.
func TestProblemString(t *testing.T) {
	t.Parallel()
	if got := (Problem{Path: "a.py", Msg: "m"}).String(); got != "a.py: m" {
		t.Errorf("line 0: %q", got)
	}
	if got := (Problem{Path: "a.py", Line: 1, Msg: "m"}).String(); got != "a.py:1: m" {
		t.Errorf("line 1: %q", got)
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

// The output tail keeps the last limit bytes, and when it had to cut, starts at a line
// boundary in its first half or at least at a rune.
func TestTailBuffer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		limit     int
		writes    []string
		want      string
		truncated bool
	}{
		{10, []string{"abc\ndefghi"}, "abc\ndefghi", false},
		{10, []string{"01234", "abcd\nfghij"}, "fghij", true},
		{10, []string{"01234", "abcde\nghij"}, "abcde\nghij", true},
		{10, []string{"0123456789", "abcdefg\nij"}, "abcdefg\nij", true},
		{4, []string{"éééé"}, "éé", true},
		{3, []string{"a", "\x80\x80\x80"}, "", true},
	} {
		tb := &tailBuffer{limit: c.limit}
		for _, w := range c.writes {
			tb.Write([]byte(w))
		}
		got, _, truncated := tb.result()
		if got != c.want || truncated != c.truncated {
			t.Errorf("limit %d, writes %q: %q (truncated %v), want %q (%v)", c.limit, c.writes, got, truncated, c.want, c.truncated)
		}
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

// A count too large to be read is no count: it stays.
func TestRecountNotANumber(t *testing.T) {
	t.Parallel()
	const huge = "99999999999999999999 files wait"
	for _, before := range []int{0, 1, 2} {
		if got, ok := recount(huge, before, max(before-1, 0)); ok || got != huge {
			t.Errorf("recount(huge, %d) = %q, %v", before, got, ok)
		}
	}
	if got, ok := recount("One file waits", 1, 0); !ok || got != "Zero files wait" {
		t.Errorf("recount(One, 1, 0) = %q, %v", got, ok)
	}
}

// Verification passes only when there was something to run and all of it passed; a
// command's output is kept whole up to the default limit (16 KiB).
func TestVerifyEdges(t *testing.T) {
	t.Parallel()
	if VerifyPassed(nil) {
		t.Error("no verification counted as passed")
	}
	rs := VerifyWith(context.Background(), t.TempDir(), [][]string{{"sh", "-c", "printf '%0100d' 0"}}, VerifyOptions{})
	if len(rs) != 1 || !VerifyPassed(rs) || rs[0].Output != strings.Repeat("0", 100) || rs[0].Truncated {
		t.Errorf("a command printing 100 bytes: %+v", rs)
	}
	// After a stop, the rest are not run and say so, with no exit code of their own.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs = VerifyWith(ctx, t.TempDir(), [][]string{{"true"}}, VerifyOptions{})
	if len(rs) != 1 || rs[0].ExitCode != -1 || !strings.HasPrefix(rs[0].Err, "not run: ") || VerifyPassed(rs) {
		t.Errorf("after a stop: %+v", rs)
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
