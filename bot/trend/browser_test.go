package trend

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium finds Debian's chromium. Without it the test may skip only outside CI: in
// CI (.ci/run installs it) a missing browser is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("chromium is not installed, and CI is set: the trend page must be checked in a real browser (apt-get install chromium): %v", err)
	}
	t.Skipf("chromium is not installed (apt-get install chromium); CI is not set, so the browser check is skipped: %v", err)
	return ""
}

// syncBuf collects the browser's stderr.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// consoleLine is how Chromium logs a page's console message with --enable-logging.
var consoleLine = regexp.MustCompile(`:CONSOLE\(\d+\)\]`)

// The trend page of a month of nights, opened in a real headless Chromium at a 390 px
// wide viewport: no console message or error, no request beyond the file itself, no
// script, one chart per model, nothing wider than the screen; a screenshot goes to the
// test's artifacts.
func TestTrendPageInChromium(t *testing.T) {
	bin := chromium(t)
	dir := history(t)
	out := filepath.Join(t.TempDir(), "site")
	page, h, err := Write(dir, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	models := len(modelsOf(h, "strixhalo-gfx1151"))
	stderr := &syncBuf{}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("enable-logging", "stderr"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.CombinedOutput(stderr),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	var mu sync.Mutex
	var problems, requests []string
	err = chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			problems = append(problems, fmt.Sprintf("console.%s", e.Type))
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, fmt.Sprintf("%s %s: %s", e.Entry.Source, e.Entry.Level, e.Entry.Text))
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		}
	})
	if err != nil {
		t.Fatalf("starting chromium: %v\nits output:\n%s", err, stderr.String())
	}
	run := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v\nchromium's output:\n%s", what, err, stderr.String())
		}
	}
	_, err = chromedp.Call(bctx, log.Enable, cdp.Empty{})
	run("enabling the log", err)
	_, err = chromedp.Call(bctx, network.Enable, network.EnableParams{})
	run("enabling the network events", err)
	run("loading the page", chromedp.Do(bctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible(chromedp.CSS("svg.chart")),
	))
	eval := func(js string) float64 {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[float64](js))
		run(js, err)
		return v
	}
	charts := int(eval(`document.querySelectorAll("svg.chart").length`))
	scripts := int(eval(`document.scripts.length`))
	linked := int(eval(`document.querySelectorAll("svg.chart a[href*='.csv#L']").length`))
	scrollWidth := eval(`Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)`)
	innerWidth := eval(`window.innerWidth`)
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	run("taking the screenshot", err)
	shot := filepath.Join(t.ArtifactDir(), "trend-390px.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot (%d bytes): %s", len(png), shot)

	if charts != models || models != 5 {
		t.Errorf("%d charts in the page, %d models in the history: want one chart per model", charts, models)
	}
	if linked != 5*31*2 {
		t.Errorf("%d points link to a CSV row, want %d", linked, 5*31*2)
	}
	if scripts != 0 {
		t.Errorf("%d scripts in the page", scripts)
	}
	if innerWidth != 390 || scrollWidth > 390 {
		t.Errorf("at a %g px viewport the page is %g px wide: it must fit 390 px without horizontal scrolling", innerWidth, scrollWidth)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page made console messages or errors: %q", problems)
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, "file://") {
			t.Errorf("the page requested %s: it must load nothing from the network", u)
		}
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if consoleLine.MatchString(line) {
			t.Errorf("chromium logged a console message: %s", line)
		}
	}
}
