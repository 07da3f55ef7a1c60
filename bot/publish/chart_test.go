package publish

import (
	"bytes"
	"context"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// The committed report page, rendered as GitHub renders Markdown, shows one image: the
// SVG chart committed beside it in the same commit (whole, as a golden file); the pull
// request body ranks in a short table, and no table of the page or the body mixes
// precisions in a column.
func TestPublishCommitsTheReportChart(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layResults(t, tg.base, profile{date: "2026-09-30"})
	out := t.TempDir()
	sum, err := Publish(context.Background(), Options{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), DryRunDir: out, TriggerCommentID: triggerID})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
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
