package trend

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lablup/perfbot/bot/chart"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// outsideJS lists the text elements of the document's root <svg> whose drawn box
// leaves the viewBox (the SVG is shown at its own size, so client pixels are user
// units), with the box, and how many text elements there are.
const outsideJS = `(() => {
  const svg = document.documentElement;
  const vb = svg.viewBox.baseVal, r = svg.getBoundingClientRect();
  const sx = r.width / vb.width, sy = r.height / vb.height;
  const out = [];
  const texts = svg.querySelectorAll("text");
  for (const t of texts) {
    const b = t.getBoundingClientRect();
    const x0 = (b.left - r.left) / sx, x1 = (b.right - r.left) / sx;
    const y0 = (b.top - r.top) / sy, y1 = (b.bottom - r.top) / sy;
    if (b.width > 0 && (x0 < -0.5 || y0 < -0.5 || x1 > vb.width + 0.5 || y1 > vb.height + 0.5)) {
      out.push(t.textContent + " [" + [x0, y0, x1, y1].map(v => v.toFixed(1)).join(",") + "] in " + vb.width + "x" + vb.height);
    }
  }
  return JSON.stringify({texts: texts.length, scripts: document.querySelectorAll("script").length, out: out});
})()`

// hostileHistory is three nights of a model with a hostile, very long name.
func hostileHistory(t *testing.T) *baseline.History {
	t.Helper()
	dir := t.TempDir()
	name := `<script>alert(1)</script>-"quoted"-&-Meta-Llama-3.1-70B-Instruct-with-an-absurdly-long-model-name-4bit`
	for i, v := range []string{"100.00", "101.50", "140.25"} {
		d := fmt.Sprintf("2026-10-0%d", i+1)
		row := `"` + strings.ReplaceAll(name, `"`, `""`) + `",models/x/,512,128,1000.00,5.00,1000.00,` + v + `,` + d + `,HW,0.7.0,release,128,"Hello, how are you today?",512,aaaaaaaa,bbbbbbbb,cccccccc,7.15.26333`
		body := strings.Join(benchcsv.ROCmHeader, ",") + "\n" + row + "\n"
		if err := os.WriteFile(filepath.Join(dir, "rocm_strixhalo-gfx1151_"+d+".csv"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := baseline.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The SVG files the Markdown pages show, opened alone in a real headless Chromium:
// every label (tick values, dates, the unit, titles, legends, long and hostile names)
// is drawn inside the viewBox, and nothing runs.
func TestSVGChartsInChromium(t *testing.T) {
	bin := chromium(t)
	h, err := baseline.LoadDir(history(t))
	if err != nil {
		t.Fatal(err)
	}
	month, err := SVG(h, "strixhalo-gfx1151", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	odd, err := SVG(hostileHistory(t), "strixhalo-gfx1151", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bars, err := chart.WriteBars([]chart.Bar{
		{Label: "Meta-Llama-3.1-8B-Instruct-4bit_greedy", Total: 24.61, Segments: []chart.Segment{{Key: "#2063", Value: 3.2}, {Key: "#2067", Value: 1.4}}},
		{Label: `"><script>alert(1)</script>` + strings.Repeat("-long-run-name", 8), Total: 99.99, Segments: []chart.Segment{{Key: "#2065", Value: 60}}},
	}, chart.BarsOptions{Title: "GPU ms/token by port unit", Unit: "GPU ms/token", Keys: []string{"#2063", "#2065", "#2067"}, Rest: "not reached by a port"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.ArtifactDir()
	files := map[string][]byte{"month.svg": month, "hostile.svg": odd, "bars.svg": bars}

	stderr := &syncBuf{}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin), chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.CombinedOutput(stderr))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	for _, name := range []string{"month.svg", "hostile.svg", "bars.svg"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		err := chromedp.Do(bctx, chromedp.EmulateViewport(1200, 4000), chromedp.Navigate("file://"+p),
			chromedp.WaitVisible(chromedp.CSS("svg")))
		var res string
		if err == nil {
			res, err = chromedp.Run(bctx, chromedp.Evaluate[string](outsideJS))
		}
		if err != nil {
			t.Fatalf("opening %s in chromium: %v\n%s", name, err, stderr.String())
		}
		var got struct {
			Texts, Scripts int
			Out            []string
		}
		if err := jsonUnmarshal(res, &got); err != nil {
			t.Fatal(err)
		}
		if got.Texts < 10 {
			t.Errorf("%s: %d text elements, the chart did not draw", name, got.Texts)
		}
		if got.Scripts != 0 {
			t.Errorf("%s: %d script elements: a label was not escaped", name, got.Scripts)
		}
		for _, o := range got.Out {
			t.Errorf("%s: a label leaves the viewBox: %s", name, o)
		}
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
