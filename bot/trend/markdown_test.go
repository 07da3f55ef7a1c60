package trend

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/lablup/perfbot/runner/baseline"
)

// The GitHub form of the page: Markdown that shows the host's SVG file beside it and a
// table of each model's last night linked to its CSV row; the experiment and the
// single-model run stay out, as on the HTML page.
func TestMarkdownPageForGitHub(t *testing.T) {
	h, err := baseline.LoadDir(history(t))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Markdown(h, Options{LinkBase: "../../benchmarks/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.SVGs) != 1 {
		t.Fatalf("SVG files %d, want one for the one host", len(g.SVGs))
	}
	svg, ok := g.SVGs["strixhalo-gfx1151.svg"]
	if !ok || !bytes.Contains(svg, []byte("<svg")) || bytes.Contains(svg, []byte("<a ")) {
		t.Errorf("the host's SVG is missing, not an SVG, or has links an image cannot follow")
	}
	md := string(g.Markdown)
	var html bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert(g.Markdown, &html); err != nil {
		t.Fatal(err)
	}
	out := html.String()
	if !strings.Contains(out, `<img src="strixhalo-gfx1151.svg"`) {
		t.Errorf("the page does not show the host's chart:\n%s", out)
	}
	rows := regexp.MustCompile(`(?s)<tbody>(.*)</tbody>`).FindStringSubmatch(out)
	if rows == nil || strings.Count(rows[1], "<tr>") != len(modelsOf(h, "strixhalo-gfx1151")) {
		t.Fatalf("the table has not one row per model:\n%s", md)
	}
	want := regexp.MustCompile(`<a href="\.\./\.\./benchmarks/rocm_strixhalo-gfx1151_2026-10-30\.csv#L\d+">mlxcel [0-9.]+ tok/s on 2026-10-30</a>; <a href="\.\./\.\./benchmarks/pylm_strixhalo-gfx1151_2026-10-30\.csv#L\d+">mlx-lm`)
	if !want.MatchString(out) {
		t.Errorf("a model's last night is not linked to its CSV rows, mlxcel first:\n%s", md)
	}
	for _, leak := range []string{"ssm-kernel-on", "_single_"} {
		if strings.Contains(md, leak) {
			t.Errorf("the page links %s, which is no nightly file", leak)
		}
	}
	for _, rule := range []string{"noise band", "segment of stable performance"} {
		if !strings.Contains(md, rule) {
			t.Errorf("the page does not say %q", rule)
		}
	}
	// 31 nights of each runtime.
	if !strings.Contains(md, "62 nightly CSVs from 2026-09-30 to 2026-10-30.") {
		t.Errorf("the summary line is wrong:\n%s", md[:min(len(md), 300)])
	}

	// An empty history is an error, not an empty page.
	if _, err := Markdown(baseline.New(), Options{}); err == nil {
		t.Error("an empty history gave a page")
	}
}
