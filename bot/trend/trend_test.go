package trend

import (
	"html"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// history writes a month of nightly files into a folder: the real 2026-09-30 baseline
// of both runtimes, then 30 generated nights of each at the same levels with 1.2%
// noise (fixed seed) where Llama drops 10% from the 20th night on, plus an experiment
// and a single-model run that must stay off the charts.
func history(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	var real []*benchcsv.File
	for _, name := range []string{"rocm_strixhalo-gfx1151_2026-09-30.csv", "pylm_strixhalo-gfx1151_2026-09-30.csv",
		"rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv"} {
		src := testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := benchcsv.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		real = append(real, f)
	}
	rng := rand.New(rand.NewPCG(21, 21))
	day, _ := time.Parse(time.DateOnly, "2026-09-30")
	for k := 1; k <= 30; k++ {
		d := day.AddDate(0, 0, k).Format(time.DateOnly)
		for _, f := range real[:2] {
			var rows []benchcsv.Row
			for _, r := range f.Rows {
				level := r.DecodeTokS
				if r.Model == "Meta-Llama-3.1-8B-Instruct-4bit" && k >= 20 && f.Name.Backend == "rocm" {
					level *= 0.9
				}
				r.DecodeTokS = math.Round(level*(1+0.012*rng.NormFloat64())*100) / 100
				r.Date = d
				rows = append(rows, r)
			}
			n := f.Name
			n.Date = d
			if err := os.WriteFile(filepath.Join(dir, n.String()), benchcsv.Format(f.Header, rows), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func render(t testing.TB, dir string) string {
	t.Helper()
	h, err := baseline.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	page, err := Page(h, Options{LinkBase: "https://github.com/lablup/mlxcel/blob/main/benchmarks/"})
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

var hrefRE = regexp.MustCompile(`<a href="https://github.com/lablup/mlxcel/blob/main/benchmarks/([^"#]+)#L(\d+)"><title>([^<]*)</title><circle class="(mlxcel|mlxlm)"`)

// One chart per model, one linked point per night and runtime, each link at the row of
// that model in that file; experiments and single-model runs are left out; the band
// appears once a model has its minimum history; nothing is loaded or run.
func TestPageChartsAndLinks(t *testing.T) {
	t.Parallel()
	dir := history(t)
	page := render(t, dir)
	if n := strings.Count(page, `<svg class="chart"`); n != 5 {
		t.Errorf("%d charts, want one per model of the nightly files (5)", n)
	}
	if strings.Contains(page, "granite") || strings.Contains(page, "Nemotron") {
		t.Errorf("a model of the ssm-kernel-on experiment made it onto the page")
	}
	links := hrefRE.FindAllStringSubmatch(page, -1)
	if want := 5 * 31 * 2; len(links) != want {
		t.Errorf("%d linked points, want %d (5 models x 31 nights x 2 runtimes)", len(links), want)
	}
	files := map[string]*benchcsv.File{}
	for _, l := range links {
		f, ok := files[l[1]]
		if !ok {
			var err error
			if f, err = benchcsv.ReadFile(filepath.Join(dir, l[1])); err != nil {
				t.Fatal(err)
			}
			files[l[1]] = f
		}
		line, _ := strconv.Atoi(l[2])
		found := false
		for _, r := range f.Rows {
			if r.Line == line && strings.Contains(l[3], strconv.FormatFloat(r.DecodeTokS, 'f', 2, 64)+" tok/s") {
				found = true
			}
		}
		if !found {
			t.Errorf("the point %q links to line %d of %s, which is not its row", l[3], line, l[1])
		}
	}
	// 31 nights: the band starts once 8 runs came before a night, and is one polygon.
	if n := strings.Count(page, `<polygon class="band"`); n != 5 {
		t.Errorf("%d band polygons, want one per model", n)
	}
	// The band's rule is said in the words the baseline pages use.
	if rule := html.EscapeString(baseline.DefaultRules().Describe()); !strings.Contains(page, rule) {
		t.Errorf("the page does not state the noise band's rule %q", rule)
	}
	for _, bad := range []string{"<script", "http://", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q: it must load nothing", bad)
		}
	}
	if n := len(regexp.MustCompile(`mlxcel \d+\.\d\d tok/s on 2026-10-30; mlx-lm \d+\.\d\d tok/s on 2026-10-30; ratio \d\.\d\dx`).FindAllString(page, -1)); n != 10 {
		t.Errorf("%d latest readings in words, want 10 (the text and the chart's description of 5 charts)", n)
	}
}

// Untrusted text from a CSV (a model name) is escaped, never markup.
func TestPageEscapesModelNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	row := `<script>alert(1)</script>,models/x/,512,128,100.00,5.00,1000.00,12.50,2026-10-01,HW,0.7.0,release,128,"Hello, how are you today?",512,aaaaaaaa,bbbbbbbb,cccccccc,7.15.26333`
	body := strings.Join(benchcsv.ROCmHeader, ",") + "\n" + row + "\n"
	if err := os.WriteFile(filepath.Join(dir, "rocm_strixhalo-gfx1151_2026-10-01.csv"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	page := render(t, dir)
	if strings.Contains(page, "<script>") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the model name was not escaped:\n%s", page)
	}
	if n := strings.Count(page, `<svg class="chart"`); n != 1 {
		t.Errorf("%d charts", n)
	}
}

func TestWriteEmptyHistory(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "site")
	p, h, err := Write(t.TempDir(), out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || len(h.Files) != 0 || !strings.Contains(string(b), "No nightly CSV in the history folder yet.") {
		t.Errorf("%v %s", err, b)
	}
}

var (
	articleRE = regexp.MustCompile(`(?s)<article class="model" id="[^"]*">\s*<h3>([^<]+)</h3>(.*?)</article>`)
	changeRE  = regexp.MustCompile(`<line class="change( worse)?"[^>]*><title>([^<]*)</title></line>`)
)

// The mlxcel series is cut into segments of stable performance: Llama's 10 % drop from
// the 20th generated night shows as one worse change at that night (or within the
// nights the detector says it may have started on) with a level line either side; the
// models that did not move get no change and no level line.
func TestPageMarksChangePoints(t *testing.T) {
	t.Parallel()
	page := render(t, history(t))
	arts := articleRE.FindAllStringSubmatch(page, -1)
	if len(arts) != 5 {
		t.Fatalf("%d model sections, want 5", len(arts))
	}
	for _, a := range arts {
		model, body := a[1], a[2]
		changes := changeRE.FindAllStringSubmatch(body, -1)
		levels := strings.Count(body, `<line class="level mlxcel"`)
		if model != "Meta-Llama-3.1-8B-Instruct-4bit" {
			if len(changes) != 0 || levels != 0 {
				t.Errorf("%s did not move but has %d changes and %d level lines", model, len(changes), levels)
			}
			continue
		}
		if len(changes) != 1 || changes[0][1] != " worse" {
			t.Fatalf("Llama: changes %q, want one regression", changes)
		}
		title := changes[0][2]
		m := regexp.MustCompile(`mlxcel (\d{4}-\d\d-\d\d): the level moved from ([\d.]+) to ([\d.]+) tok/s \(([-+][\d.]+)%\), regression`).FindStringSubmatch(title)
		if m == nil {
			t.Fatalf("Llama's change reads %q", title)
		}
		if m[1] < "2026-10-18" || m[1] > "2026-10-21" {
			t.Errorf("the change is dated %s, want about 2026-10-20 (the first night at the new level)", m[1])
		}
		if pct, _ := strconv.ParseFloat(m[4], 64); pct > -8 || pct < -12 {
			t.Errorf("the change is %v %%, want about -10 %%", pct)
		}
		if levels != 2 {
			t.Errorf("Llama has %d level lines, want 2 (before and after the drop)", levels)
		}
		if !strings.Contains(body, `">-`) {
			t.Errorf("the change's label (its percentage) is not drawn")
		}
	}
	if !strings.Contains(page, "vertical rule the night a new level started") {
		t.Error("the page does not say what the segments and rules mean")
	}
}
