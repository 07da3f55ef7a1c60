package publish

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// The committed report page, rendered as GitHub renders Markdown, shows one image: the
// SVG chart committed beside it in the same commit (whole, as a golden file); the pull
// request body ranks in a short table, and no table of the page or the body mixes
// precisions in a column.
func TestPublishCommitsTheReportChart(t *testing.T) {
	t.Parallel()
	tg, sum, out := dryProfile(t, profile{date: "2026-09-30"}, false, func(o *Options) { o.TriggerCommentID = triggerID })
	page := tg.file(t, sum.Git.Commit, sum.Report)
	var html bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(page), &html); err != nil {
		t.Fatal(err)
	}
	imgs := regexp.MustCompile(`<img src="([^"]+)"`).FindAllStringSubmatch(html.String(), -1)
	want := strings.TrimSuffix(path.Base(sum.Report), ".md") + ".svg"
	if len(imgs) != 1 || imgs[0][1] != want {
		t.Fatalf("images of the page: %q, want %q beside it", imgs, want)
	}
	svgPath := path.Join(path.Dir(sum.Report), imgs[0][1])
	if !strings.Contains(strings.Join(sum.Files, "\n"), svgPath) {
		t.Errorf("the summary's file set %q lacks the chart %s", sum.Files, svgPath)
	}
	svg := tg.file(t, sum.Git.Commit, svgPath)
	for _, run := range []string{"Meta-Llama-3.1-8B-Instruct-4bit_greedy", "Qwen3-30B-A3B-4bit_greedy", "#2065", "GPU ms/token"} {
		if !strings.Contains(svg, ">"+run+"<") {
			t.Errorf("the chart lacks the label %q", run)
		}
	}
	golden.Check(t, "testdata/golden/page.svg", svg)
	body := readFile(t, out+"/"+DryPR)
	if !strings.Contains(body, "| rank | unit | net ms/token | net % of wall | headline run |") || strings.Contains(body, "| rank | unit | port | headline run | reached GPU share |") {
		t.Errorf("the pull request body does not rank in the short table:\n%s", body)
	}
	for name, md := range map[string]string{"page": page, "pull request body": body} {
		for _, p := range report.MixedPrecision(md) {
			t.Errorf("%s: %s", name, p)
		}
	}
}

// A night published over a checkout holding the nightly history: the baseline page
// shows the SVG chart committed beside it (every night of the history and tonight),
// names the model of the last accepted baseline that tonight's CSV lacks, and prints
// each column of figures with one precision.
func TestPublishBaselineChartAndMissingModel(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	const date, gone = "2026-10-20", "Gone-Model-4bit"
	hist := historyFiles(t, date)
	dir := t.TempDir()
	for i, f := range hist.Files {
		rows := slices.Clone(f.Rows)
		if i == len(hist.Files)-1 {
			r := rows[0]
			r.Model = gone
			rows = append(rows, r)
		}
		writeFile(t, filepath.Join(dir, f.Name.String()), string(benchcsv.Format(benchcsv.ROCmHeader, rows)))
	}
	out := t.TempDir()
	sum, err := PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: layNight(t, tg.base, night{date: date, llama: "35.41"}), RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}, HistoryDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	page := tg.file(t, sum.Git.Commit, sum.Page)
	want := "Missing tonight: " + gone + " was in the last accepted baseline (`rocm_strixhalo-gfx1151_2026-10-19.csv`) but tonight's mlxcel CSV has no row for it"
	if !strings.Contains(page, want) {
		t.Errorf("the page does not name the missing model; want %q in:\n%s", want, page)
	}
	var html bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(page), &html); err != nil {
		t.Fatal(err)
	}
	imgs := regexp.MustCompile(`<img src="([^"]+)"`).FindAllStringSubmatch(html.String(), -1)
	if len(imgs) != 1 || imgs[0][1] != "rocm-baseline-gfx1151-2026-10-20.svg" {
		t.Fatalf("images of the page: %q, want the chart beside it", imgs)
	}
	svg := tg.file(t, sum.Git.Commit, path.Join(path.Dir(sum.Page), imgs[0][1]))
	if !strings.Contains(svg, ">"+gone+"<") || !strings.Contains(svg, ">"+llama+"<") {
		t.Errorf("the chart lacks a panel of %s or %s", gone, llama)
	}
	// Llama's 12 nights and tonight's, on one mlxcel line of 13 points.
	if !regexp.MustCompile(`<path d="M[^"]*(L[^"]*){12}" fill="none" stroke="#0969da"`).MatchString(svg) {
		t.Error("no mlxcel line of 13 nights in the chart")
	}
	if !strings.Contains(svg, `stroke="#cf222e"`) {
		t.Error("Llama's reading below its band is not ringed")
	}
	for _, p := range report.MixedPrecision(page) {
		t.Errorf("baseline page: %s", p)
	}
	for _, p := range report.MixedPrecision(readFile(t, filepath.Join(out, DryBaselinePR))) {
		t.Errorf("baseline pull request body: %s", p)
	}
}

// TestPublishBaselineChartReadsTheCommitsHistory: without HistoryDir, the chart's
// history is the measured commit's benchmark CSVs, read from its git objects (as the
// publish job, which has no working tree, must): a symbolic link or a sub-folder in the
// folder is not followed.
func TestPublishBaselineChartReadsTheCommitsHistory(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	const date = "2026-10-20"
	work := filepath.Join(t.TempDir(), "work")
	gitT(t, filepath.Dir(work), "clone", "--quiet", tg.bare, work)
	folder := filepath.Join(work, filepath.FromSlash(testConfig().Results.Benchmarks))
	if err := os.MkdirAll(filepath.Join(folder, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	hist := historyFiles(t, date)
	outside := t.TempDir()
	for _, f := range hist.Files {
		body := string(benchcsv.Format(benchcsv.ROCmHeader, f.Rows))
		writeFile(t, filepath.Join(folder, f.Name.String()), body)
		writeFile(t, filepath.Join(outside, f.Name.String()), body)
	}
	// Were these followed, the chart would gain nights.
	first := hist.Files[0].Name
	early := benchcsv.Name{Backend: first.Backend, Host: first.Host, Date: "2026-09-01"}
	if err := os.Symlink(filepath.Join(outside, first.String()), filepath.Join(folder, early.String())); err != nil {
		t.Fatal(err)
	}
	nested := benchcsv.Name{Backend: first.Backend, Host: first.Host, Date: "2026-09-02"}
	writeFile(t, filepath.Join(folder, "old", nested.String()), string(benchcsv.Format(benchcsv.ROCmHeader, hist.Files[0].Rows)))
	gitT(t, work, "add", "-A")
	gitT(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "history")
	commit := gitT(t, work, "rev-parse", "HEAD")
	gitT(t, work, "push", "--quiet", "origin", "HEAD:refs/heads/history")
	gitT(t, tg.checkout, "fetch", "--quiet", "origin", "history")

	out := t.TempDir()
	sum, err := PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: layNight(t, commit, night{date: date, llama: "35.41"}), RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sum.Notes {
		if strings.Contains(n, "history") {
			t.Errorf("a note on the history: %s", n)
		}
	}
	svg := tg.file(t, sum.Git.Commit, chartPath(sum.Page))
	// Llama's 12 committed nights and tonight's: one mlxcel line of exactly 13 points.
	if !regexp.MustCompile(`<path d="M[^"L]*(L[^"L]*){12}" fill="none" stroke="#0969da"`).MatchString(svg) {
		t.Error("the chart has no mlxcel line of exactly 13 nights: the commit's history was not read, or a link or sub-folder was followed")
	}
}
