package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

func TestMixedPrecisionFindsAMixedColumn(t *testing.T) {
	t.Parallel()
	md := "| run | ms/token | n |\n| --- | ---: | ---: |\n| a | 1.685 | 3 |\n| b | 3.4252 | — |\n| c | 42.5 | 4 |\n| d | 1.000 | 5 |\n"
	got := MixedPrecision(md)
	if len(got) != 1 || !strings.Contains(got[0], `"ms/token"`) || !strings.Contains(got[0], "3.4252") {
		t.Errorf("MixedPrecision = %q, want the ms/token column only", got)
	}
	if got := MixedPrecision("| a | b |\n| --- | --- |\n| 1.50 | `x` |\n| 2.25 | — |\n"); got != nil {
		t.Errorf("a column of one precision was flagged: %q", got)
	}
}

// Every table of the report page, the pull request body and the summaries prints each
// column of figures with one precision, whatever the summaries hold.
func TestTablesHoldOnePrecision(t *testing.T) {
	t.Parallel()
	page := pageData(t)
	pr := PRData{GFX: "gfx1151", Date: "2026-09-30", Commit: "abc", Models: []string{"a"}, Sampling: []string{"greedy"},
		Report: Link{Text: "p", URL: "p.md"}, Runs: page.Runs, Units: []EpicUnit{
			{Rank: 1, ID: "2065", Evidence: true, BestRun: "q", RecoverableMsPerToken: 0.6261, RecoverablePctOfWall: 3.69},
			{Rank: 2, ID: "2067", Evidence: true, BestRun: "q", RecoverableMsPerToken: 1.5, RecoverablePctOfWall: 12},
		}, RankingLink: Link{Text: "full table", URL: "p.md#ranked-port-order"}}
	sum := SummaryData{GFX: "g", Date: "d", Commit: "c", Runs: page.Runs, Report: Link{Text: "p", URL: "p.md"}}
	for _, c := range []struct {
		kind Kind
		data any
	}{{Page, page}, {PRBody, pr}, {StepSummary, sum}, {CheckRun, sum}} {
		md, err := Render(c.kind, c.data)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range MixedPrecision(md) {
			t.Errorf("%s: %s", c.kind, p)
		}
	}
}

// The pull request body shows the few ranking columns a reviewer decides on and links
// the full table in the report page.
func TestPRBodyRankingIsShort(t *testing.T) {
	t.Parallel()
	md, err := Render(PRBody, PRData{GFX: "g", Date: "d", Commit: "c", Report: Link{Text: "p", URL: "p.md"},
		RankingMD:   "| rank | unit | port | headline run | a | b | c | d | e | f | g | h |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n| 1 | x | y | z | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 |\n",
		Units:       []EpicUnit{{Rank: 1, ID: "2065", Port: "p", Evidence: true, BestRun: "r", RecoverableMsPerToken: 0.5, RecoverablePctOfWall: 2}},
		RankingLink: Link{Text: "full ranking table", URL: "https://github.com/o/r/blob/abc/p.md#ranked-port-order"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md, "| a | b |") {
		t.Error("the body still holds the full ranking table")
	}
	if !strings.Contains(md, "| rank | unit | net ms/token | net % of wall | headline run |") || !strings.Contains(md, "[full ranking table](https://github.com/o/r/blob/abc/p.md#ranked-port-order)") {
		t.Errorf("the short table or the link to the full one is missing:\n%s", md)
	}
}

// The epic comment in the three orders it meets: the first publish, a second one, and a
// rerun of the second. The current ranking is never listed as an earlier one, and the
// first one says so without an earlier list.
func TestEpicCommentOrders(t *testing.T) {
	t.Parallel()
	first := HistoryEntry{Key: "gfx1151_aaaa@2026-10-01", Date: "2026-10-01", GFX: "gfx1151", Commit: "aaaa", Order: []string{"2067", "2065"}}
	second := HistoryEntry{Key: "gfx1151_bbbb@2026-10-02", Date: "2026-10-02", GFX: "gfx1151", Commit: "bbbb", Order: []string{"2065", "2067"}}
	render := func(earlierBody string, cur HistoryEntry) string {
		t.Helper()
		hist, err := ParseHistory(earlierBody)
		if err != nil {
			t.Fatal(err)
		}
		kept, prev := MergeHistory(hist, cur)
		d := EpicData{Current: cur, Units: []EpicUnit{{Rank: 1, ID: cur.Order[0], Port: "p"}}, Report: Link{Text: "r", URL: "r.md"}, History: kept, Previous: prev}
		if prev != nil {
			d.Changes = Changes(prev.Order, cur.Order)
		}
		md, err := Render(Epic, d)
		if err != nil {
			t.Fatal(err)
		}
		return md
	}
	earlierRows := regexp.MustCompile(`(?m)^\| 2026-10-0\d \|`)

	one := render("", first)
	if !strings.Contains(one, "This is the first ranking") || strings.Contains(one, "Earlier rankings") || len(earlierRows.FindAllString(one, -1)) != 0 {
		t.Errorf("first publish:\n%s", one)
	}
	if h, _ := ParseHistory(one); len(h) != 1 || h[0].Key != first.Key {
		t.Errorf("the first comment keeps %v, want the first ranking", h)
	}
	// A rerun of the first profile is still the first ranking.
	if again := render(one, first); again != one {
		t.Errorf("a rerun of the first profile changed the comment:\n%s", again)
	}

	two := render(one, second)
	if strings.Contains(two, "first ranking") || !strings.Contains(two, "Earlier rankings (last 1)") || !strings.Contains(two, "moved up from place 2 to 1") {
		t.Errorf("second publish:\n%s", two)
	}
	if rows := earlierRows.FindAllString(two, -1); len(rows) != 1 || rows[0] != "| 2026-10-01 |" {
		t.Errorf("the earlier rankings of the second publish are %q, want the first only", rows)
	}

	rerun := render(two, second)
	if rerun != two {
		t.Errorf("a rerun of the second profile changed the comment (-second +rerun):\n%s\n---\n%s", two, rerun)
	}
}

// The report page's chart, rendered as GitHub renders Markdown: an <img> whose source
// is the SVG committed beside the page, with its description as the alt text.
func TestPageShowsItsChart(t *testing.T) {
	t.Parallel()
	d := pageData(t)
	d.Chart = &Link{Text: "GPU ms/token of each run split by port unit", URL: "rocm-decode-profile-gfx1151-2026-09-30.svg"}
	md, err := Render(Page, d)
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(md), &html); err != nil {
		t.Fatal(err)
	}
	imgs := regexp.MustCompile(`<img src="([^"]*)" alt="([^"]*)"`).FindAllStringSubmatch(html.String(), -1)
	if len(imgs) != 1 || imgs[0][1] != "rocm-decode-profile-gfx1151-2026-09-30.svg" || imgs[0][2] != d.Chart.Text {
		t.Errorf("images of the page: %q, want the chart beside it", imgs)
	}
	if err := Validate(md, map[string]bool{"docs/benchmark_results/rocm-decode-profile-gfx1151-2026-09-30.svg": true, "docs/benchmark_results/page.md": true}, "docs/benchmark_results/page.md"); err != nil && strings.Contains(err.Error(), ".svg") {
		t.Errorf("the chart's link does not check: %v", err)
	}
	// Without a chart there is no image.
	d.Chart = nil
	md, _ = Render(Page, d)
	if strings.Contains(md, "![") {
		t.Error("a page without a chart shows an image")
	}
}
