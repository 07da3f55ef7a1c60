package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/results"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// hostile kernel names: each would break a table or inject markup if written raw.
var hostile = []string{
	"void k<a|b>(int*, float) | rm -rf",
	"*bold* _it_ `code` [link](x) <script>alert(1)</script>",
	"kernel with\nnewline | and\r\ncarriage",
	"``fence`` and trailing `",
	"\\| escaped pipe \\",
	"# heading-like",
	"1. list-like",
	"&amp; entity <!-- comment -->",
}

func fixtureSummary(t testing.TB, run string) *results.Summary {
	t.Helper()
	s, err := results.ReadSummary(testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", run+"_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hostileSummary(t testing.TB) *results.Summary {
	s := fixtureSummary(t, "Qwen3-30B-A3B-4bit_greedy")
	s.Name = "weird|model_greedy"
	for i := range s.TopKernels {
		s.TopKernels[i].Kernel = hostile[i%len(hostile)]
	}
	s.ModelType = "qwen3_moe|x"
	return s
}

func pageData(t testing.TB) PageData {
	runs := []*results.Summary{fixtureSummary(t, "Meta-Llama-3.1-8B-Instruct-4bit_greedy"), hostileSummary(t)}
	return PageData{
		GFX: "gfx1151", Date: "2026-09-30", Commit: strings.Repeat("a", 40),
		Models: []string{"llama", "qwen3"}, Sampling: []string{"greedy"},
		Env:    []Row{{"GPU", "Radeon 8060S Graphics"}, {"odd|label", "value with | pipe and <b>"}},
		Method: []Row{{"build", "cargo build --release"}, {"profiled run (first)", "rocprofv3 -- bench | tee x"}},
		Guard:  []GuardRow{{Section: "run|x profiled", Attempts: 2, Rejected: 1, Samples: 13, ContendedSamples: 1, IdleResets: 3, HolderResets: 2, CompilerResets: 1, Waited: "1m0s", Outcome: "clean, exit 0"}},
		Runs:   runs, FailedRuns: []RunState{{Name: "granite_greedy", Status: "failed", Detail: "oom | killed"}},
		Rules:   Rules{Name: "rules.yml", Classes: []string{"qmv"}, Roles: []string{"moe_expert_gemv"}, Units: []RulesUnit{{ID: "2065", EpicItem: 5, Port: "fused MoE", Roles: []string{"moe_expert_gemv"}, Fractions: []string{"moe_expert_gemv 0: reads | weights"}}}},
		UnitIDs: []string{"2063", "2065", "9999"}, RankingMD: "**Ranked port order: #2065**\n",
		Gemm: &Gemm{OverlayCommit: "75915908", Tests: []results.TestResult{{Name: results.GemmTestNames[0], Outcome: results.TestFailed, Detail: "panicked at | `x`"}}, Decision: "record"},
		Window: []WindowRow{{Run: "run|x", PerToken: "491.6", Layers: "32", Steps: "127", PerStep: "495 (495 to 687)", PerLayer: "15.47",
			Reading: "the window's edges hold 495 dispatches, one whole step: it cuts no step | ok"}},
		Bandwidth: []BandwidthRow{{Run: "run|x", WeightsGB: "4.22", TokS: "37.08 (plain)", AchievedGBps: "156.5", PeakGBps: "256", PctOfPeak: "61",
			Basis: "32 layers of attention | and an MLP"}},
		PeakNote:  "Peak of gfx1151: 256 GB/s, a <b>source</b>.",
		Files:     []Link{{Text: "a|b_summary.json", URL: "../../benchmarks/rocm_profiles/gfx1151_aaaaaaaa/a|b_summary.json"}},
		Reproduce: []string{"git checkout x", "echo ```"}, ReproduceBy: "/profile rocm",
	}
}

// Every document renders from its data and parses back clean, hostile names included.
func TestRenderEveryKindValidates(t *testing.T) {
	t.Parallel()
	committed := map[string]bool{
		"benchmarks/rocm_profiles/gfx1151_aaaaaaaa/a|b_summary.json": true,
		"docs/benchmark_results/page.md":                             true,
	}
	page := pageData(t)
	runs := page.Runs
	pr := &Link{Text: "#57", URL: "https://github.com/o/r/pull/57"}
	report := Link{Text: "page.md", URL: "https://github.com/o/r/blob/abc/docs/benchmark_results/page.md"}
	// The nightly's documents, with text a hostile CSV or model name could carry.
	verdicts := []VerdictRow{{Model: "m|<b>x</b>", Verdict: "regression", Decode: "31.5", Band: "33.76 to 37.40 (10 runs)", Change: "-10.4%", Text: "*below* | the band", Issue: pr},
		{Model: "`q", Verdict: "no significant change", Decode: "8", Band: "—", Change: "+0.1%", Text: "ok"}}
	night := NightEntry{Date: "2026-10-20", Commit: "abc", Measured: 2, MedianRatio: "1.05", Regressions: []string{"m|<b>x</b>"}, Improvements: []string{"`q"}, Problems: 1,
		Page: "https://github.com/o/r/blob/abc/docs/benchmark_results/page.md", PR: pr.URL}
	cases := []struct {
		kind Kind
		data any
		base string
	}{
		{Page, page, "docs/benchmark_results/page.md"},
		{PRBody, PRData{GFX: "gfx1151", Date: "2026-09-30", Commit: "abc", Models: []string{"a|b"}, Issue: 12, Report: report, Runs: runs,
			RankingMD: "x\n", VerifyMD: "### Verification\n\nok\n", Draft: true, DraftReasons: []string{"verification `make` failed | exit 2"}}, "https://github.com/o/r/blob/abc/"},
		{Epic, &EpicData{Current: HistoryEntry{Key: "k", Date: "2026-09-30", GFX: "gfx1151", Commit: "abc", Order: []string{"2065", "2063"}},
			Units:  []EpicUnit{{Rank: 1, ID: "2065", Port: "fused | MoE", Evidence: true, BestRun: "q|x", Note: "*n*"}, {Rank: 2, ID: "2063", Port: "p", Note: "n"}},
			Report: report, PR: pr, History: []HistoryEntry{{Key: "k", Date: "2026-09-30", Order: []string{"2065", "2063"}, Report: "https://github.com/o/r/blob/abc/docs/benchmark_results/page.md"}}}, "https://github.com/o/r/blob/abc/"},
		{Status, StatusData{State: "failed", Command: "/profile rocm", Links: []Link{report}, Steps: []Step{{Name: "pull request", Outcome: "not opened", Error: "needs `pull_requests: write` | 403"}}, Errors: []string{"x | y"}}, "https://github.com/o/r/blob/abc/"},
		{Status, StatusData{State: "running", Command: "/profile rocm", Model: 2, Models: 4}, ""},
		{StepSummary, SummaryData{GFX: "g", Date: "d", Commit: "c", Runs: runs, Order: "#1", RankingMD: "r\n", Report: report, PR: pr, Steps: []Step{{Name: "commit", Outcome: "abc on b"}}}, "https://github.com/o/r/blob/abc/"},
		{CheckRun, SummaryData{GFX: "g", Date: "d", Commit: "c", Runs: runs, Order: "#1", Report: report, Draft: true}, "https://github.com/o/r/blob/abc/"},
		{JobSummary, JobSummaryData{Job: "profile", GFX: "gfx1151", Date: "2026-09-30", Commit: "abc", Verdict: "partial", Folder: "gfx1151_abc|x",
			Runs: runs, FailedRuns: page.FailedRuns, RankingMD: "**Ranked port order: #2065**\n", Errors: []string{"x | y"}}, ""},
		{JobSummary, JobSummaryData{Job: "gemm-tests", Verdict: "record", Gemm: page.Gemm}, ""},
		{JobSummary, JobSummaryData{Job: "bench", Verdict: "regression", Lines: []Row{{"mlxcel sweep", "ok: a|b.csv"}, {"m_x", "decode 3 tok/s; *regression*"}}}, ""},
		{BaselinePR, BaselinePRData{GFX: "gfx1151", Date: "2026-10-20", Commit: "abc", Page: report, Files: []Link{report}, Verdicts: verdicts,
			MedianRatio: "1.05|x", Counts: "1 regression <b>", Problems: []string{"row 3 | bad", "`x"}, Tenants: []string{"<b>ollama</b> | 2 s"}}, "https://github.com/o/r/blob/abc/"},
		{Tracking, TrackingData{Current: night, Page: report, PR: pr, Verdicts: verdicts, History: []NightEntry{night, {Date: "2026-10-19", Commit: "def"}}}, "https://github.com/o/r/blob/abc/"},
		{RegressionIssue, RegressionData{Marker: "<!-- perfbot:regression h m -->", Model: "m|<b>x</b>", Host: "strix|halo", GFX: "gfx1151", Date: "2026-10-20",
			FirstSeen: "2026-10-19", Persisting: true, Latest: verdicts[0], Page: report, Row: report,
			Nights: []RegressionNight{{Date: "2026-10-20", Decode: 31.5, Median: 35.4, Verdict: "regression", Page: "https://github.com/o/r/blob/abc/docs/benchmark_results/page.md"}}}, "https://github.com/o/r/blob/abc/"},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			t.Parallel()
			md, err := Render(c.kind, c.data)
			if err != nil {
				t.Fatal(err)
			}
			if err := Validate(md, committed, c.base); err != nil {
				t.Errorf("%v\n%s", err, md)
			}
			var html bytes.Buffer
			if err := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe())).Convert([]byte(md), &html); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(html.String(), "<script>") || strings.Contains(html.String(), "<b>") {
				t.Errorf("hostile text became HTML:\n%s", html.String())
			}
		})
	}
}

// The number of table rows is the number of items: no kernel name adds or splits one.
func TestHostileKernelNamesKeepTheirRows(t *testing.T) {
	t.Parallel()
	md, err := Render(Page, pageData(t))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(md, "### weird")
	if start < 0 {
		t.Fatalf("no top kernel section for the hostile run:\n%s", md)
	}
	section := md[start:]
	section = section[:strings.Index(section, "\n## ")]
	rows := 0
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| #") && !strings.HasPrefix(l, "| -") {
			rows++
			if got := countCells(l); got != 5 {
				t.Errorf("row has %d cells: %s", got, l)
			}
		}
	}
	if rows != 10 {
		t.Errorf("the top kernel table has %d rows, want 10", rows)
	}
}

func TestValidateFindsBrokenDocuments(t *testing.T) {
	t.Parallel()
	committed := map[string]bool{"benchmarks/x/a_summary.json": true}
	cases := []struct {
		name, md, base, want string
	}{
		{"row with an extra cell", "# T\n\n| a | b |\n| --- | --- |\n| 1 | 2 | 3 |\n", "", "has 3 cells, its header 2"},
		{"row with a missing cell", "# T\n\n| a | b |\n| --- | --- |\n| 1 |\n", "", "has 1 cells, its header 2"},
		{"header and delimiter differ", "# T\n\n| a | b |\n| --- |\n| 1 | 2 |\n", "", "not part of a table"},
		{"table without rows", "# T\n\n| a | b |\n| --- | --- |\n", "", "no rows"},
		{"empty section", "# T\n\ntext\n\n## Empty\n\n## Full\n\ntext\n", "", `section "Empty" is empty`},
		{"empty last section", "# T\n\ntext\n\n## Last\n\n<!-- hidden -->\n", "", `section "Last" is empty`},
		{"missing results file", "# T\n\n[s](../../benchmarks/x/b_summary.json)\n", "docs/r/page.md", "not in the commit"},
		{"link leaving the repo", "# T\n\n[s](../../../etc/passwd)\n", "docs/r/page.md", "leaves the repository"},
		{"missing file by URL", "# T\n\n[s](https://github.com/o/r/blob/abc/benchmarks/x/c.csv)\n", "https://github.com/o/r/blob/abc/", "not in the commit"},
		{"relative link from a comment", "# T\n\n[s](benchmarks/x/nope.json)\n", "https://github.com/o/r/blob/abc/", "not in the commit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := Validate(c.md, committed, c.base)
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
				t.Errorf("Validate = %v, want an invalid-document error saying %q", err, c.want)
			}
		})
	}
	ok := []struct{ name, md, base string }{
		{"escaped pipes in code", "# T\n\n| a | b |\n| --- | --- |\n| `x\\|y` | 2 |\n", ""},
		{"section with subsections", "# T\n\n## A\n\n### A1\n\ntext\n", ""},
		{"committed relative link", "# T\n\n[s](../../benchmarks/x/a_summary.json)\n", "docs/r/page.md"},
		{"committed by URL", "# T\n\n[s](https://github.com/o/r/blob/abc/benchmarks/x/a_summary.json)\n", "https://github.com/o/r/blob/abc/"},
		{"external and anchor links", "# T\n\n[a](https://example.com/x) [b](#t) <https://github.com/o/r/pull/1>\n", "docs/r/page.md"},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if err := Validate(c.md, committed, c.base); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestTextAndCode(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, text string }{
		{"a|b", `a\|b`},
		{"2026-09-30", "2026-09-30"},
		{"-x", `\-x`},
		{"# h", `\# h`},
		{"1. x", `1\. x`},
		{"1.5 ms", `1\.5 ms`},
		{"v1.5", "v1.5"},
		{"a\nb", "a b"},
		{"<b>&", `\<b\>&amp;`},
		{"moe_gateup", `moe\_gateup`},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
	}
	for in, want := range map[string]string{"a`b": "``a`b``", "`x": "`` `x ``", "": "` `", "a|b": "`a|b`"} {
		if got := Code(in); got != want {
			t.Errorf("Code(%q) = %q, want %q", in, got, want)
		}
	}
	if got := CellCode("a|b"); got != "`a\\|b`" {
		t.Errorf("CellCode = %q", got)
	}
}

func TestEpicHistory(t *testing.T) {
	t.Parallel()
	entry := func(key string, order ...string) HistoryEntry {
		return HistoryEntry{Key: key, Date: key, Order: order}
	}
	var earlier []HistoryEntry
	for i := 6; i >= 1; i-- {
		earlier = append(earlier, entry(string(rune('0'+i)), "2067", "2065"))
	}
	kept, prev := MergeHistory(earlier, entry("7", "2065", "2067", "2064"))
	if len(kept) != HistoryLen || kept[0].Key != "7" || kept[HistoryLen-1].Key != "3" {
		t.Errorf("kept %v, want 7 then the four newest earlier ones", kept)
	}
	if prev == nil || prev.Key != "6" {
		t.Fatalf("previous = %v, want 6", prev)
	}
	// A rerun of the newest profile replaces its entry and compares with the one before.
	kept2, prev2 := MergeHistory(kept, entry("7", "2065", "2067", "2064"))
	if diff := cmp.Diff(kept, kept2); diff != "" || prev2.Key != "6" {
		t.Errorf("rerun changed the history (-want +got):\n%s (previous %v)", diff, prev2)
	}
	got := Changes(prev.Order, []string{"2065", "2067", "2064"})
	want := []string{
		"Order: #2065, #2067, #2064 (was #2067, #2065).",
		"#2065 moved up from place 2 to 1.",
		"#2067 moved down from place 1 to 2.",
		"#2064 is new in the ranking, at place 3.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if Changes([]string{"1"}, []string{"1"}) != nil {
		t.Error("no change should give nothing")
	}

	md, err := Render(Epic, EpicData{Current: kept[0], Units: []EpicUnit{{Rank: 1, ID: "2065", Port: "p", Note: "n"}}, Report: Link{Text: "r", URL: "r.md"}, History: kept, Previous: prev, Changes: got})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseHistory(md)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kept, back); diff != "" {
		t.Errorf("history read back (-want +got):\n%s", diff)
	}
	if _, err := ParseHistory("<!-- perfbot:port-ranking-history [{not json} -->"); err == nil {
		t.Error("a damaged history was accepted")
	}
	if h, err := ParseHistory("no history here"); err != nil || h != nil {
		t.Errorf("ParseHistory without history = %v, %v", h, err)
	}
}

func TestRenderRefusesWrongData(t *testing.T) {
	t.Parallel()
	if _, err := Render(Page, StatusData{}); err == nil {
		t.Error("a page rendered from status data")
	}
	if _, err := Render(Kind("nope"), PageData{}); err == nil {
		t.Error("an unknown kind rendered")
	}
}

func BenchmarkRenderAndValidatePage(b *testing.B) {
	d := pageData(b)
	committed := map[string]bool{"benchmarks/rocm_profiles/gfx1151_aaaaaaaa/a|b_summary.json": true}
	for b.Loop() {
		md, err := Render(Page, d)
		if err != nil {
			b.Fatal(err)
		}
		if err := Validate(md, committed, "docs/benchmark_results/page.md"); err != nil {
			b.Fatal(err)
		}
	}
}
