package patchrun

import (
	"github.com/lablup/perfbot/runner/patch"

	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

const verifyMakefile = `# Verification targets of the repo.
PYTHON ?= python3
VERIFY_LOG := verify.log

.PHONY: verify-kernel-port-dispatch hang

verify-kernel-port-dispatch: ## rule 4 and friends
	$(PYTHON) scripts/ci/check_kernel_port_dispatch.py

hang:
	sleep 600 & echo $$! > sleep.pid; wait
`

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultVerifyCommands(t *testing.T) {
	t.Parallel()
	checker := []string{"python3", patch.CheckerPath}
	withMake := [][]string{checker, {"make", patch.MakeTarget}}
	cases := []struct {
		name  string
		files map[string]string
		want  [][]string
	}{
		{"no makefile", nil, [][]string{checker}},
		{"target", map[string]string{"Makefile": verifyMakefile}, withMake},
		{"target among several", map[string]string{"Makefile": "all lint verify-kernel-port-dispatch:: build\n\ttrue\n"}, withMake},
		{"only .PHONY and a variable", map[string]string{"Makefile": ".PHONY: verify-kernel-port-dispatch\nverify-kernel-port-dispatch := no\n# verify-kernel-port-dispatch: commented\n\techo verify-kernel-port-dispatch: in a recipe\n"}, [][]string{checker}},
		{"GNUmakefile wins over Makefile", map[string]string{"GNUmakefile": "other:\n", "Makefile": verifyMakefile}, [][]string{checker}},
		{"lower-case makefile", map[string]string{"makefile": verifyMakefile}, withMake},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, data := range tc.files {
				writeFile(t, filepath.Join(dir, name), data)
			}
			if d := cmp.Diff(tc.want, patch.DefaultVerifyCommands(dir)); d != "" {
				t.Error(d)
			}
		})
	}
}

// TestVerifyPatchedTree runs the default verification (the stand-in checker and the
// real make target) before and after a change that breaks rule 4.
func TestVerifyPatchedTree(t *testing.T) {
	t.Parallel()
	repo := copyRepo(t, "upstream")
	writeFile(t, filepath.Join(repo, "Makefile"), verifyMakefile)
	if _, err := GemmGates(context.Background(), repo, passOutcome(t), Options{}); err != nil {
		t.Fatal(err)
	}
	rs := Verify(context.Background(), repo, nil)
	if len(rs) != 2 || !patch.VerifyPassed(rs) {
		t.Fatalf("verification of the patched tree: %+v", rs)
	}
	for _, r := range rs {
		if !strings.Contains(r.Output, "Kernel port dispatch check passed: 5 Rust files scanned, 2 awaiting a predicate.") {
			t.Errorf("%v output: %q", r.Command, r.Output)
		}
	}

	// An unlisted Metal/CUDA gate: both the checker and make fail.
	writeFile(t, filepath.Join(repo, "examples", "warmup.rs"), "fn main() {\n    if metal_is_available() && cuda_is_available() {}\n}\n")
	rs = Verify(context.Background(), repo, nil)
	if patch.VerifyPassed(rs) {
		t.Fatal("verification passed with an unlisted gate")
	}
	if rs[0].ExitCode != 1 || rs[1].ExitCode != 2 {
		t.Errorf("exit codes %d, %d; want 1 (checker), 2 (make)", rs[0].ExitCode, rs[1].ExitCode)
	}
	for _, r := range rs {
		if !strings.Contains(r.Output, "  examples/warmup.rs:2: rule 4: gate enumerates Metal and CUDA") {
			t.Errorf("%v output lacks the failure line: %q", r.Command, r.Output)
		}
	}
	md := patch.VerifyMarkdown(rs)
	for _, s := range []string{"| `make verify-kernel-port-dispatch` | **failed** (exit 2) |", "examples/warmup.rs:2: rule 4", "this pull request stays a draft"} {
		if !strings.Contains(md, s) {
			t.Errorf("Markdown lacks %q:\n%s", s, md)
		}
	}
	checkTables(t, md, 1)
}

func TestVerifyOutputTail(t *testing.T) {
	t.Parallel()
	prog := "import sys\nfor i in range(5000):\n    print(f'line {i:05d} ' + 'x' * 40)\nprint('héllo END', file=sys.stderr)\nsys.exit(3)\n"
	rs := VerifyWith(context.Background(), t.TempDir(), [][]string{{"python3", "-c", prog}}, VerifyOptions{OutputLimit: 1000})
	r := rs[0]
	if r.ExitCode != 3 || r.Passed() || r.Err != "" {
		t.Errorf("result: exit %d err %q", r.ExitCode, r.Err)
	}
	if !r.Truncated || r.OutputBytes != int64(5000*52+len("héllo END\n")) || len(r.Output) > 1000 {
		t.Errorf("truncated %v, total %d, kept %d", r.Truncated, r.OutputBytes, len(r.Output))
	}
	if !strings.HasPrefix(r.Output, "line ") || !strings.HasSuffix(r.Output, "héllo END\n") {
		t.Errorf("tail does not start at a line or lacks the end: %q", r.Output)
	}
	md := patch.VerifyMarkdown(rs)
	if !strings.Contains(md, "(last "+strconv.Itoa(len(r.Output))+" of "+strconv.FormatInt(r.OutputBytes, 10)+" bytes of output)") {
		t.Errorf("Markdown does not say the output was cut:\n%s", md)
	}
}

func TestVerifyCannotStart(t *testing.T) {
	t.Parallel()
	rs := Verify(context.Background(), t.TempDir(), [][]string{{"perfbot-no-such-command"}, {}})
	if !strings.HasPrefix(rs[0].Err, "could not start") || rs[0].ExitCode != -1 {
		t.Errorf("missing command: %+v", rs[0])
	}
	if rs[1].Err != "empty command" {
		t.Errorf("empty command: %+v", rs[1])
	}
}

func TestVerifyCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs := Verify(ctx, t.TempDir(), [][]string{{"true"}, {"true"}})
	for _, r := range rs {
		if r.Passed() || !strings.HasPrefix(r.Err, "not run: context canceled") {
			t.Errorf("%+v", r)
		}
	}
}

// TestReportMarkdownParses reads every golden report back with goldmark: one table of
// three tests, and a detail with a pipe stays inside its cell.
func TestReportMarkdownParses(t *testing.T) {
	t.Parallel()
	for _, v := range variants {
		for _, mode := range []string{"pass", "fail"} {
			md := readFile(t, filepath.Join("..", "testdata", "variants", v, "want", mode, "report.md"))
			checkTables(t, md, 1)
		}
	}
	r := patch.Report{OverlayCommit: "75915908", Decision: patch.Record, Tests: []patch.TestResult{
		{Name: patch.TestNames[0], Outcome: patch.Failed, Detail: "left | right: `a` != ``b``"},
		{Name: patch.TestNames[1], Outcome: patch.Passed},
		{Name: patch.TestNames[2], Outcome: patch.Passed},
	}}
	checkTables(t, r.Markdown(), 1)
}

// checkTables parses md as GitHub Markdown and checks it has n tables, each of whose
// rows has as many cells as its header.
func checkTables(t *testing.T, md string, n int) {
	t.Helper()
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := gm.Parser().Parse(text.NewReader([]byte(md)))
	tables := 0
	err := ast.Walk(doc, func(node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if tbl, ok := node.(*east.Table); ok {
			tables++
			width := len(tbl.Alignments)
			for row := tbl.FirstChild(); row != nil; row = row.NextSibling() {
				if row.ChildCount() != width {
					t.Errorf("a table row has %d cells, the header %d:\n%s", row.ChildCount(), width, md)
				}
			}
			if tbl.ChildCount() < 2 {
				t.Errorf("a table has no rows:\n%s", md)
			}
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tables != n {
		t.Errorf("found %d tables, want %d:\n%s", tables, n, md)
	}
}

// Verification passes only when there was something to run and all of it passed; a
// command's output is kept whole up to the default limit (16 KiB).
func TestVerifyEdges(t *testing.T) {
	t.Parallel()
	if patch.VerifyPassed(nil) {
		t.Error("no verification counted as passed")
	}
	rs := VerifyWith(context.Background(), t.TempDir(), [][]string{{"sh", "-c", "printf '%0100d' 0"}}, VerifyOptions{})
	if len(rs) != 1 || !patch.VerifyPassed(rs) || rs[0].Output != strings.Repeat("0", 100) || rs[0].Truncated {
		t.Errorf("a command printing 100 bytes: %+v", rs)
	}
	// After a stop, the rest are not run and say so, with no exit code of their own.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs = VerifyWith(ctx, t.TempDir(), [][]string{{"true"}}, VerifyOptions{})
	if len(rs) != 1 || rs[0].ExitCode != -1 || !strings.HasPrefix(rs[0].Err, "not run: ") || patch.VerifyPassed(rs) {
		t.Errorf("after a stop: %+v", rs)
	}
}
