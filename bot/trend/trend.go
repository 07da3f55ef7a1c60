package trend

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/results"
)

// Options shape the page.
type Options struct {
	Title string // "" is "Nightly decode throughput"
	// LinkBase starts every link to a CSV: a URL ending in / (the history folder on
	// GitHub, e.g. https://github.com/o/r/blob/main/benchmarks/) or a relative path from
	// the page to the history folder.
	LinkBase string
	Rules    baseline.Rules
}

// Runtime names of the charts' series.
const (
	Mlxcel = "mlxcel"
	MlxLM  = "mlx-lm"
)

// Chart geometry in SVG user units; the chart scales to the page's width.
const (
	chartW, chartH                     = 420.0, 230.0
	padLeft, padRight, padTop, padDown = 46.0, 10.0, 10.0, 28.0
)

// point is one night of one runtime.
type point struct {
	date  time.Time
	value float64
	href  string
	title string
	lo    float64 // the noise band the night was judged against; 0 when none
	hi    float64
}

// series is one runtime's nights of one model on one host.
type series struct {
	runtime string
	backend string
	points  []point
}

// Chart is one model's chart as the template draws it.
type Chart struct {
	ID      string
	Model   string
	Latest  string
	Aria    string
	ViewBox string
	Bands   []string // polygons, "x,y x,y ..."
	Lines   []Line
	Dots    []Dot
	YTicks  []Tick
	XTicks  []Tick
	Plot    Rect
	HasBand bool
	HasLM   bool
}

// Line is a runtime's polyline.
type Line struct {
	Class string
	D     string
}

// Dot is one night, linked to its CSV row.
type Dot struct {
	Class string
	X, Y  string
	Href  string
	Title string
}

// Tick is an axis label at a position.
type Tick struct {
	Pos   string
	Label string
	Grid  bool
}

// Rect is the plot area.
type Rect struct{ X0, Y0, X1, Y1 string }

// Host is the charts of one machine.
type Host struct {
	Name    string
	Backend string
	Charts  []Chart
}

type pageData struct {
	Title   string
	Summary string
	Hosts   []Host
	Rule    string
}

//go:embed page.html.tmpl
var pageTmpl string

var tmpl = template.Must(template.New("trend").Parse(pageTmpl))

// Page renders the trend page of the nightly files of h.
func Page(h *baseline.History, o Options) ([]byte, error) {
	if o.Title == "" {
		o.Title = "Nightly decode throughput"
	}
	if o.Rules == (baseline.Rules{}) {
		o.Rules = baseline.DefaultRules()
	}
	d := pageData{Title: o.Title}
	nightly, first, last := 0, "", ""
	hosts := map[string]*Host{}
	var order []string
	for _, f := range h.Files {
		if !f.Name.Nightly() || f.Name.VLM {
			continue
		}
		nightly++
		if first == "" || f.Name.Date < first {
			first = f.Name.Date
		}
		last = max(last, f.Name.Date)
		if f.Name.Backend == benchcsv.Baseline {
			continue
		}
		if _, ok := hosts[f.Name.Host]; !ok {
			hosts[f.Name.Host] = &Host{Name: f.Name.Host, Backend: f.Name.Backend}
			order = append(order, f.Name.Host)
		}
	}
	slices.Sort(order)
	for _, name := range order {
		host := hosts[name]
		for _, model := range modelsOf(h, name) {
			c, err := chart(h, host, model, o)
			if err != nil {
				return nil, err
			}
			host.Charts = append(host.Charts, c)
		}
		d.Hosts = append(d.Hosts, *host)
	}
	if nightly == 0 {
		d.Summary = "No nightly CSV in the history folder yet."
	} else {
		d.Summary = fmt.Sprintf("%d nightly CSVs from %s to %s.", nightly, first, last)
	}
	r := o.Rules
	d.Rule = fmt.Sprintf("The shaded band is the noise band each mlxcel night was judged against: the median of the model's last %d comparable nightly runs before it, ± %g robust standard deviations, at least ± %g%%, once %d runs exist.",
		r.Window, r.K, r.MinChangePct, r.MinHistory)
	var b bytes.Buffer
	if err := tmpl.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("rendering the trend page: %w", err)
	}
	return b.Bytes(), nil
}

// Write renders the page of the history in dir to out/index.html.
func Write(historyDir, outDir string, o Options) (string, *baseline.History, error) {
	h, err := baseline.LoadDir(historyDir)
	if err != nil {
		return "", nil, err
	}
	if o.LinkBase == "" {
		rel, err := filepath.Rel(outDir, historyDir)
		if err != nil {
			abs, _ := filepath.Abs(historyDir)
			rel = abs
		}
		o.LinkBase = filepath.ToSlash(rel) + "/"
	}
	page, err := Page(h, o)
	if err != nil {
		return "", h, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", h, fmt.Errorf("creating the site folder: %w", err)
	}
	p := filepath.Join(outDir, "index.html")
	if err := results.WriteFileAtomic(p, page); err != nil {
		return "", h, fmt.Errorf("writing the trend page: %w", err)
	}
	return p, h, nil
}

// modelsOf lists the models of a host's nightly files, both runtimes, in name order.
func modelsOf(h *baseline.History, host string) []string {
	var out []string
	for _, f := range h.Files {
		if !f.Name.Nightly() || f.Name.VLM || f.Name.Host != host {
			continue
		}
		for _, m := range f.Models() {
			if _, ok := baseline.PointOf(f, m); ok && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return out
}

// seriesOf collects one runtime's nights of model on host; for mlxcel each night also
// gets the band of the runs before it.
func seriesOf(h *baseline.History, host, backend, runtime, model string, o Options) series {
	s := series{runtime: runtime, backend: backend}
	for _, f := range h.Files {
		n := f.Name
		if !n.Nightly() || n.VLM || n.Host != host || n.Backend != backend {
			continue
		}
		p, ok := baseline.PointOf(f, model)
		if !ok {
			continue
		}
		day, err := time.Parse(time.DateOnly, n.Date)
		if err != nil {
			continue
		}
		pt := point{date: day, value: p.Value(), href: o.LinkBase + n.String() + fmt.Sprintf("#L%d", p.Lines[0])}
		pt.title = fmt.Sprintf("%s %s: %.2f tok/s (%s, line %d)", runtime, n.Date, pt.value, n.String(), p.Lines[0])
		if len(p.Values) > 1 {
			pt.title = fmt.Sprintf("%s %s: %.2f tok/s, median of %d repeats (%s, line %d)", runtime, n.Date, pt.value, len(p.Values), n.String(), p.Lines[0])
		}
		if runtime == Mlxcel {
			if runs, _, _ := h.Nightly(model, p.Env, n.Date, n.String()); len(runs) >= o.Rules.MinHistory {
				b := baseline.BandOf(runs, o.Rules)
				pt.lo, pt.hi = b.Lo, b.Hi
			}
		}
		s.points = append(s.points, pt)
	}
	return s
}

func chart(h *baseline.History, host *Host, model string, o Options) (Chart, error) {
	mx := seriesOf(h, host.Name, host.Backend, Mlxcel, model, o)
	lm := seriesOf(h, host.Name, benchcsv.Baseline, MlxLM, model, o)
	c := Chart{ID: anchor(host.Name + "-" + model), Model: model, ViewBox: fmt.Sprintf("0 0 %g %g", chartW, chartH), HasLM: len(lm.points) > 0}
	all := append(slices.Clone(mx.points), lm.points...)
	if len(all) == 0 {
		return c, fmt.Errorf("no nights of %s on %s", model, host.Name)
	}
	t0, t1 := all[0].date, all[0].date
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range all {
		t0, t1 = minTime(t0, p.date), maxTime(t1, p.date)
		lo, hi = math.Min(lo, p.value), math.Max(hi, p.value)
		if p.hi > 0 {
			lo, hi = math.Min(lo, p.lo), math.Max(hi, p.hi)
		}
	}
	if !t1.After(t0) {
		t0, t1 = t0.AddDate(0, 0, -1), t1.AddDate(0, 0, 1)
	}
	ticks, yLo, yHi := niceTicks(lo, hi)
	x := func(t time.Time) float64 {
		return padLeft + (chartW-padLeft-padRight)*t.Sub(t0).Seconds()/t1.Sub(t0).Seconds()
	}
	y := func(v float64) float64 {
		return chartH - padDown - (chartH-padTop-padDown)*(v-yLo)/(yHi-yLo)
	}
	c.Plot = Rect{f(padLeft), f(padTop), f(chartW - padRight), f(chartH - padDown)}
	for _, v := range ticks {
		c.YTicks = append(c.YTicks, Tick{Pos: f(y(v)), Label: label(v), Grid: true})
	}
	for _, t := range dateTicks(t0, t1) {
		c.XTicks = append(c.XTicks, Tick{Pos: f(x(t)), Label: t.Format("01-02")})
	}
	// The band: one polygon per run of consecutive nights that have one.
	var upper, lower []string
	flush := func() {
		if len(upper) > 1 {
			slices.Reverse(lower)
			c.Bands = append(c.Bands, strings.Join(append(upper, lower...), " "))
		}
		upper, lower = nil, nil
	}
	for _, p := range mx.points {
		if p.hi <= 0 {
			flush()
			continue
		}
		upper = append(upper, f(x(p.date))+","+f(y(p.hi)))
		lower = append(lower, f(x(p.date))+","+f(y(p.lo)))
	}
	flush()
	c.HasBand = len(c.Bands) > 0
	for _, s := range []series{lm, mx} {
		if len(s.points) == 0 {
			continue
		}
		class := "mlxcel"
		if s.runtime == MlxLM {
			class = "mlxlm"
		}
		var d strings.Builder
		for i, p := range s.points {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%s,%s", cmd, f(x(p.date)), f(y(p.value)))
		}
		c.Lines = append(c.Lines, Line{Class: class, D: d.String()})
		for _, p := range s.points {
			c.Dots = append(c.Dots, Dot{Class: class, X: f(x(p.date)), Y: f(y(p.value)), Href: p.href, Title: p.title})
		}
	}
	c.Latest, c.Aria = latest(model, mx, lm)
	return c, nil
}

// latest says the last night of each runtime in words, and the chart's description.
func latest(model string, mx, lm series) (string, string) {
	var parts []string
	var nights int
	for _, s := range []series{mx, lm} {
		if len(s.points) == 0 {
			continue
		}
		p := s.points[len(s.points)-1]
		parts = append(parts, fmt.Sprintf("%s %.2f tok/s on %s", s.runtime, p.value, p.date.Format(time.DateOnly)))
		nights = max(nights, len(s.points))
	}
	if len(mx.points) > 0 && len(lm.points) > 0 {
		a, b := mx.points[len(mx.points)-1], lm.points[len(lm.points)-1]
		if a.date.Equal(b.date) && b.value > 0 {
			parts = append(parts, fmt.Sprintf("ratio %.2fx", a.value/b.value))
		}
	}
	text := strings.Join(parts, "; ")
	aria := fmt.Sprintf("Decode tok/s of %s over %d night(s): %s.", model, nights, text)
	return text, aria
}

func f(v float64) string { return fmt.Sprintf("%.1f", v) }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// niceTicks picks about four round tick values covering lo..hi, and the axis range.
func niceTicks(lo, hi float64) ([]float64, float64, float64) {
	if hi <= lo {
		pad := math.Max(math.Abs(hi)*0.05, 0.5)
		lo, hi = lo-pad, hi+pad
	}
	span := hi - lo
	lo, hi = lo-0.08*span, hi+0.08*span
	raw := (hi - lo) / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Ceil(lo/step) * step
	var out []float64
	for v := start; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out, lo, hi
}

func label(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// dateTicks picks at most four dates across t0..t1, whole days.
func dateTicks(t0, t1 time.Time) []time.Time {
	days := int(t1.Sub(t0).Hours()/24 + 0.5)
	step := max(1, (days+3)/4)
	var out []time.Time
	for d := 0; d <= days; d += step {
		out = append(out, t0.AddDate(0, 0, d))
	}
	return out
}

// anchor makes an element id of a host and model name.
func anchor(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
