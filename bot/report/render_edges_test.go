package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/runner/results"
)

// The whole rendered documents, compared with the files under testdata: every row,
// figure and word users see.
func TestRenderGolden(t *testing.T) {
	t.Parallel()
	page := pageData(t)
	// One run on each side of the "negative slowdown" label, and one without a plain run.
	neg, zero := results.Num(-0.01), results.Num(0)
	page.Runs[0].ProfilerDecodeSlowdownPct = &neg
	page.Runs[1].ProfilerDecodeSlowdownPct = &zero
	noPlain := fixtureSummary(t, "Meta-Llama-3.1-8B-Instruct-4bit_greedy")
	noPlain.Name = "no-plain_greedy"
	noPlain.ProfilerDecodeSlowdownPct = nil
	page.Runs = append(page.Runs, noPlain)
	report := Link{Text: "page.md", URL: "https://github.com/o/r/blob/abc/docs/benchmark_results/page.md"}
	pr := &Link{Text: "#57", URL: "https://github.com/o/r/pull/57"}
	cur := HistoryEntry{Key: "k2", Date: "2026-10-01", GFX: "gfx1151", Commit: "abc", Order: []string{"2065", "2067"}}
	prev := HistoryEntry{Key: "k1", Date: "2026-09-30", GFX: "gfx1151", Commit: "def", Order: []string{"2067", "2065", "2063"}}
	cases := []struct {
		file string
		kind Kind
		data any
	}{
		{"page.md", Page, withChart(page)},
		{"pr.md", PRBody, PRData{GFX: "gfx1151", Date: "2026-09-30", Commit: "abc", Models: []string{"a|b", "c"}, Sampling: []string{"greedy"}, Issue: 12,
			Report: report, Runs: page.Runs, Order: "#2065", RankingMD: "**Ranked port order: #2065**\n", GemmMD: "### grouped_gemm\n\npassed\n",
			VerifyMD: "### Verification\n\nok\n", Draft: true, DraftReasons: []string{"verification `make` failed | exit 2", "second"},
			Files: []Link{{Text: "a.csv", URL: "benchmarks/a.csv"}}, Notes: []string{"a *note*"},
			Units: []EpicUnit{
				{Rank: 1, ID: "2065", Port: "fused | MoE", Evidence: true, BestRun: "q|x", RecoverableMsPerToken: 0.6261, RecoverablePctOfWall: 3.69},
				{Rank: 2, ID: "2067", Port: "p", FallbackNotReachedPct: 0.83},
			},
			RankingLink: Link{Text: "the full ranking table", URL: "https://github.com/o/r/blob/abc/docs/benchmark_results/page.md#ranked-port-order"},
			Chart:       &Link{Text: "GPU ms/token by port unit", URL: "https://github.com/o/r/raw/abc/docs/benchmark_results/page.svg"}}},
		{"pr-ready.md", PRBody, PRData{GFX: "gfx1151", Date: "2026-09-30", Commit: "abc", Models: []string{"a"}, Sampling: []string{"greedy"},
			Report: report, Runs: page.Runs[:1], Order: "#2065", RankingMD: "r\n", VerifyMD: "### Verification\n\nok\n"}},
		{"epic.md", Epic, EpicData{Current: cur, Report: report, PR: pr, Previous: &prev, History: []HistoryEntry{cur, prev},
			Changes: Changes(prev.Order, cur.Order),
			Units: []EpicUnit{
				{Rank: 1, ID: "2065", Port: "fused | MoE", Evidence: true, BestRun: "q|x", ReachedSharePct: 46.79, RecoverableMsPerToken: 0.6261, RecoverablePctOfWall: 3.69, DispatchesRemoved: 523.9, FallbackNotReachedPct: 29.2, Note: "*n*"},
				{Rank: 2, ID: "2067", Port: "p", FallbackNotReachedPct: 0.83, Override: "pinned"},
			}}},
		{"status-failed.md", Status, StatusData{State: "failed", Command: "/profile rocm", Links: []Link{report},
			Steps: []Step{{Name: "pull request", Outcome: "not opened", Error: "needs `pull_requests: write` | 403"}, {Name: "commit", Outcome: "abc", Link: pr}}, Errors: []string{"x | y"}}},
		{"status-running.md", Status, StatusData{State: "running", Command: "/profile rocm", Model: 2, Models: 4, Detail: "guard waiting"}},
		{"step-summary.md", StepSummary, SummaryData{GFX: "g", Date: "d", Commit: "c", Runs: page.Runs, Order: "#1", RankingMD: "r\n", Report: report, PR: pr,
			Verified: true, Steps: []Step{{Name: "commit", Outcome: "abc on b"}}, Gemm: page.Gemm}},
		{"check-run.md", CheckRun, SummaryData{GFX: "g", Date: "d", Commit: "c", DryRun: true, Runs: page.Runs, Order: "#1", Report: report, Draft: true, Errors: []string{"boom"}}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			md, err := Render(c.kind, c.data)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/golden/"+c.file, md)
		})
	}
}

func withChart(d PageData) PageData {
	d.Chart = &Link{Text: "GPU ms/token of each run split by port unit", URL: "page.svg"}
	return d
}

// The reading of the profiler's slowdown flips exactly at zero.
func TestSlowdownLabelBoundary(t *testing.T) {
	t.Parallel()
	pct := func(v float64) *results.Num { n := results.Num(v); return &n }
	cases := []struct {
		pct  *results.Num
		want string
	}{
		{nil, "no plain run"},
		{pct(-0.01), "negative: run-to-run noise between one plain and one profiled run, not a speed-up"},
		{pct(0), "profiled run slower by this much"},
		{pct(0.01), "profiled run slower by this much"},
	}
	for _, c := range cases {
		if got := slowdown(&results.Summary{ProfilerDecodeSlowdownPct: c.pct}); got != c.want {
			t.Errorf("slowdown(%v) = %q, want %q", c.pct, got, c.want)
		}
	}
}

func TestNum(t *testing.T) {
	t.Parallel()
	n := results.Num(2.5)
	var none *results.Num
	cases := []struct {
		in   any
		want string
	}{
		{results.Num(1), "1.0"},
		{&n, "2.5"},
		{none, "—"},
		{0.125, "0.125"},
		{7, "7"},
		{"x", "x"},
	}
	for _, c := range cases {
		if got := num(c.in); got != c.want {
			t.Errorf("num(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// tidy trims and collapses blank lines outside fenced code blocks and keeps the text
// inside them as it is, up to the fence that really closes the block.
func TestTidy(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"blank runs collapse", "\n\na  \n\n\n\nb\t\n", "a\n\nb\n"},
		{"one blank kept", "a\n\nb", "a\n\nb\n"},
		{"fence keeps its text",
			"x\n```text\nkeep  \n\n\n\n```not a close\n  ```\nafter  \n\n\n\ny\n",
			"x\n```text\nkeep  \n\n\n\n```not a close\n  ```\nafter\n\ny\n"},
		{"tilde fence", "~~~~\na  \n\n\n~~~\n~~~~\nb  \n", "~~~~\na  \n\n\n~~~\n~~~~\nb\n"},
	}
	for _, c := range cases {
		if got := tidy(c.in); got != c.want {
			t.Errorf("%s: tidy(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestLineOf(t *testing.T) {
	t.Parallel()
	v := &validator{src: []byte("ab\n\ncd\nlast")}
	cases := []struct {
		pos  int
		n    int
		line string
	}{
		{-5, 1, "ab"},
		{0, 1, "ab"},
		{2, 1, "ab"},
		{3, 2, ""},
		{4, 3, "cd"},
		{7, 4, "last"},
		{10, 4, "last"},
		{99, 4, "last"},
	}
	for _, c := range cases {
		if n, line := v.lineOf(c.pos); n != c.n || line != c.line {
			t.Errorf("lineOf(%d) = %d, %q; want %d, %q", c.pos, n, line, c.n, c.line)
		}
	}
}

// Each problem names its line, and every problem of a document is listed.
func TestValidateProblemsExactly(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200)
	cases := []struct {
		name, md string
		want     []string
	}{
		{"rows and sections", "# T\n\n| a | b |\n| --- | --- |\n| 1 | 2 | 3 |\n| 4 |\n\n## Empty\n\n## Full\n\ntext\n", []string{
			"line 5: a table row has 3 cells, its header 2: | 1 | 2 | 3 |",
			"line 6: a table row has 1 cells, its header 2: | 4 |",
			`line 8: section "Empty" is empty`,
		}},
		{"heading without text", "# T\n\ntext\n\n##\n", []string{`line 5: section "" is empty`}},
		{"long line clipped", "# T\n\n| " + long + " |\n| --- |\n", []string{
			"line 3: a table has a header but no rows: | " + strings.Repeat("x", 115) + "...",
		}},
		{"html that is not a comment is content", "# T\n\n## A\n\n<div>x</div>\n\n## B\n\n<!-- a --> <!-- b -->\n", []string{`line 7: section "B" is empty`}},
		{"unclosed comment is content", "# T\n\n## A\n\n<!-- a\n", nil},
		{"text after a comment is content", "# T\n\n## A\n\n<!-- a --> b\n", nil},
	}
	for _, c := range cases {
		err := Validate(c.md, nil, "")
		var got []string
		var inv *InvalidError
		if errors.As(err, &inv) {
			got = inv.Problems
		} else if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: problems (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestValidateBadLinksAndBases(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, md, base, want string }{
		{"bad URL", "# T\n\n[s](http://%zz)\n", "", `link "http://%zz" is not a valid URL`},
		{"host only", "# T\n\n[s](//example.com/x)\n", "docs/p.md", ""},
		{"root-relative", "# T\n\n[s](/benchmarks/x.csv)\n", "docs/p.md", "points to benchmarks/x.csv"},
	}
	for _, c := range cases {
		err := Validate(c.md, map[string]bool{}, c.base)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want %q", c.name, err, c.want)
		}
	}
	if err := Validate("# T\n", nil, "https://github.com/o/r/blob/abc"); err == nil || !strings.Contains(err.Error(), "must end with /") {
		t.Errorf("a base URL without the final slash: %v", err)
	}
	if err := Validate("# T\n", nil, "http://%zz/"); err == nil || !strings.Contains(err.Error(), "neither a repo path nor a URL") {
		t.Errorf("an unparsable base: %v", err)
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	at := strings.Repeat("é", 120)
	if got := clip(at); got != at {
		t.Errorf("a 120-character line was clipped to %q", got)
	}
	over := strings.Repeat("é", 121)
	if got, want := clip(over), strings.Repeat("é", 117)+"..."; got != want {
		t.Errorf("clip(121 characters) = %q, want %q", got, want)
	}
}
