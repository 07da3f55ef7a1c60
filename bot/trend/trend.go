package trend

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/chart"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/changepoint"
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
	// NoLinks draws the points without links (an SVG file shown as an image cannot
	// follow them); LinkBase "" with NoLinks false links relative to the page.
	NoLinks bool
	// Segments are the change-point rules the mlxcel series' segments and change
	// points are found with (runner/changepoint); the zero value is its defaults.
	Segments *changepoint.Params
}

// Runtime names of the charts' series.
const (
	Mlxcel = "mlxcel"
	MlxLM  = "mlx-lm"
)

// Chart geometry in SVG user units; the chart scales to the page's width.
const chartW, chartH = 420.0, 230.0

// Chart is one model's chart as the template draws it: the geometry is package
// chart's, shared with the SVG files of the baseline pages.
type Chart struct {
	ID     string
	Model  string
	Latest string
	Aria   string
	HasLM  bool
	chart.LinePlot
	// Series are the runtimes' nights the chart draws, mlxcel first.
	Series []chart.Series
}

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
	SegRule string
}

//go:embed page.html.tmpl
var pageTmpl string

var tmpl = template.Must(template.New("trend").Parse(pageTmpl))

// Page renders the trend page of the nightly files of h.
func Page(h *baseline.History, o Options) ([]byte, error) {
	d, err := layout(h, o)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("rendering the trend page: %w", err)
	}
	return b.Bytes(), nil
}

// layout lays out the charts of every host and model and says the rules, for the
// HTML page and the Markdown one.
func layout(h *baseline.History, o Options) (pageData, error) {
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
			c, err := modelChart(h, host, model, o)
			if err != nil {
				return d, err
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
	// The band's rule is the one the baseline pages print; each night's band is made
	// of the comparable runs before that night.
	d.Rule = "The shaded band is the noise band each mlxcel night was judged against, from the comparable nightly runs before it. " + r.Describe()
	sp := segmentParams(o)
	d.SegRule = fmt.Sprintf("A dotted line is a segment of stable performance and a vertical rule the night a new level started (red when worse): change points of the mlxcel nights, found by binary segmentation kept only where a z test and a rank test agree on a change of at least %g%% over at least %d nights a side.",
		sp.MinChangePct, sp.MinSegment)
	return d, nil
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
func seriesOf(h *baseline.History, host, backend, runtime, model string, o Options) chart.Series {
	s := chart.Series{Name: runtime, Class: "mlxcel", Color: chart.ColorMlxcel}
	var cps []changepoint.Point
	if runtime == MlxLM {
		s.Class, s.Color, s.Dashed = "mlxlm", chart.ColorMlxLM, true
	}
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
		pt := chart.Point{Date: day, Value: p.Value()}
		if !o.NoLinks {
			pt.Href = o.LinkBase + n.String() + fmt.Sprintf("#L%d", p.Lines[0])
		}
		pt.Title = fmt.Sprintf("%s %s: %.2f tok/s (%s, line %d)", runtime, n.Date, pt.Value, n.String(), p.Lines[0])
		if len(p.Values) > 1 {
			pt.Title = fmt.Sprintf("%s %s: %.2f tok/s, median of %d repeats (%s, line %d)", runtime, n.Date, pt.Value, len(p.Values), n.String(), p.Lines[0])
		}
		if runtime == Mlxcel {
			if runs, _, _ := h.Nightly(model, p.Env, n.Date, n.String()); len(runs) >= o.Rules.MinHistory {
				b := baseline.BandOf(runs, o.Rules)
				pt.Lo, pt.Hi = b.Lo, b.Hi
				if pt.Out() {
					pt.Title += fmt.Sprintf(", outside its band %.2f to %.2f", b.Lo, b.Hi)
				}
			}
		}
		s.Points = append(s.Points, pt)
		cps = append(cps, changepoint.Point{Date: n.Date, Value: pt.Value})
	}
	if runtime == Mlxcel {
		segmentsOf(&s, cps, segmentParams(o))
	}
	return s
}

func segmentParams(o Options) changepoint.Params {
	if o.Segments != nil {
		return *o.Segments
	}
	return changepoint.DefaultParams()
}

// segmentsOf adds the series' segments and change points. Too short a history, or
// one the detector refuses, simply has none: the points and the band still say it all.
func segmentsOf(s *chart.Series, cps []changepoint.Point, p changepoint.Params) {
	if len(cps) < 2*p.MinSegment {
		return
	}
	r, err := changepoint.Detect(cps, p)
	if err != nil || len(r.Changes) == 0 {
		return
	}
	for _, seg := range r.Segments {
		s.Levels = append(s.Levels, chart.Level{From: s.Points[seg.Start].Date, To: s.Points[seg.End-1].Date, Value: seg.Level})
	}
	for _, c := range r.Changes {
		title := fmt.Sprintf("%s %s: the level moved from %.2f to %.2f tok/s (%+.1f%%), %s", s.Name, c.Date, c.From, c.To, c.ChangePct, c.Kind)
		if c.RangeFrom != c.RangeTo {
			title += fmt.Sprintf(", started between %s and %s", cps[c.RangeFrom].Date, cps[c.RangeTo].Date)
		}
		s.Changes = append(s.Changes, chart.Change{Date: s.Points[c.Index].Date, Label: fmt.Sprintf("%+.1f%%", c.ChangePct),
			Title: title, Worse: c.Kind == changepoint.Regression})
	}
}

func modelChart(h *baseline.History, host *Host, model string, o Options) (Chart, error) {
	mx := seriesOf(h, host.Name, host.Backend, Mlxcel, model, o)
	lm := seriesOf(h, host.Name, benchcsv.Baseline, MlxLM, model, o)
	c := Chart{ID: anchor(host.Name + "-" + model), Model: model, HasLM: len(lm.Points) > 0}
	if len(mx.Points)+len(lm.Points) == 0 {
		return c, fmt.Errorf("no nights of %s on %s", model, host.Name)
	}
	plot, err := chart.Lines([]chart.Series{lm, mx}, chart.LineOptions{Width: chartW, Height: chartH, Unit: "decode tok/s"})
	if err != nil {
		return c, fmt.Errorf("charting %s on %s: %w", model, host.Name, err)
	}
	c.LinePlot, c.Series = plot, []chart.Series{mx, lm}
	c.Latest, c.Aria = latest(model, mx, lm)
	return c, nil
}

// latest says the last night of each runtime in words, and the chart's description.
func latest(model string, mx, lm chart.Series) (string, string) {
	var parts []string
	var nights int
	for _, s := range []chart.Series{mx, lm} {
		if len(s.Points) == 0 {
			continue
		}
		p := s.Points[len(s.Points)-1]
		parts = append(parts, fmt.Sprintf("%s %.2f tok/s on %s", s.Name, p.Value, p.Date.Format(time.DateOnly)))
		nights = max(nights, len(s.Points))
	}
	if len(mx.Points) > 0 && len(lm.Points) > 0 {
		a, b := mx.Points[len(mx.Points)-1], lm.Points[len(lm.Points)-1]
		if a.Date.Equal(b.Date) && b.Value > 0 {
			parts = append(parts, fmt.Sprintf("ratio %.2fx", a.Value/b.Value))
		}
	}
	text := strings.Join(parts, "; ")
	aria := fmt.Sprintf("Decode tok/s of %s over %d night(s): %s.", model, nights, text)
	return text, aria
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

// SVG writes one self-contained SVG document of the nightly decode tok/s of the given
// models on host (every model of the host when models is empty), one chart under the
// other, for a page that shows it as an image: the points carry no links, a night
// outside its noise band is ringed, and the legend says what each mark is.
func SVG(h *baseline.History, host string, models []string, o Options) ([]byte, error) {
	if o.Rules == (baseline.Rules{}) {
		o.Rules = baseline.DefaultRules()
	}
	o.NoLinks = true
	hst := &Host{Name: host}
	for _, f := range h.Files {
		if f.Name.Nightly() && !f.Name.VLM && f.Name.Host == host && f.Name.Backend != benchcsv.Baseline {
			hst.Backend = f.Name.Backend
		}
	}
	if hst.Backend == "" {
		return nil, fmt.Errorf("the history holds no nightly file of %s", host)
	}
	if len(models) == 0 {
		models = modelsOf(h, host)
	}
	var panels []chart.Panel
	for _, m := range models {
		c, err := modelChart(h, hst, m, o)
		if err != nil {
			continue
		}
		items := []chart.LegendItem{{Label: Mlxcel, Color: chart.ColorMlxcel, Kind: chart.LegendLine}}
		if c.HasLM {
			items = append(items, chart.LegendItem{Label: MlxLM, Color: chart.ColorMlxLM, Kind: chart.LegendDashed})
		}
		if c.HasBand {
			items = append(items, chart.LegendItem{Label: "noise band", Color: chart.ColorMlxcel, Kind: chart.LegendBand})
		}
		if c.Outliers > 0 {
			items = append(items, chart.LegendItem{Label: "outside its band", Color: "#cf222e", Kind: chart.LegendOut})
		}
		panels = append(panels, chart.Panel{Title: m, Plot: c.LinePlot, Legend: items})
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("no nightly reading of any model on %s", host)
	}
	return chart.WriteLines(fmt.Sprintf("Nightly decode tok/s on %s, %d model(s)", host, len(panels)), panels)
}
