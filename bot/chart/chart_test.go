package chart

import (
	"encoding/xml"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/golden"
)

func TestNiceStepIs125(t *testing.T) {
	t.Parallel()
	for raw, want := range map[float64]float64{0.7: 1, 1: 1, 1.1: 2, 2: 2, 2.01: 5, 4.9: 5, 5.1: 10, 13: 20, 0.031: 0.05, 260: 500} {
		if got := NiceStep(raw); math.Abs(got-want) > 1e-12 {
			t.Errorf("NiceStep(%g) = %g, want %g", raw, got, want)
		}
	}
}

func TestNiceAxisFramesTheRange(t *testing.T) {
	t.Parallel()
	a := NiceAxis(31.3, 38.9, 4)
	if a.Step != 2 || a.Lo != 30 || a.Hi != 40 || len(a.Ticks) != 6 {
		t.Errorf("axis of 31.3..38.9 = %+v, want 30..40 by 2", a)
	}
	for _, v := range a.Ticks {
		if got := a.Label(v); strings.Contains(got, ".") {
			t.Errorf("label %q of a whole step has decimals", got)
		}
	}
	b := NiceAxis(0.11, 0.29, 4)
	for _, v := range b.Ticks {
		if got := b.Label(v); !regexp.MustCompile(`^\d\.\d{2}$`).MatchString(got) {
			t.Errorf("label %q of a 0.05 step: want two decimals on every tick", got)
		}
	}
}

// A 2 % wiggle around 35 tok/s does not fill the chart: the range covers at least
// ± 10 % around the median, so the wiggle takes at most a fifth of the height.
func TestValueAxisKeepsAWiggleSmall(t *testing.T) {
	t.Parallel()
	vals := []float64{35.0, 35.35, 34.65, 35.2, 34.8}
	a := ValueAxis(vals)
	if a.Lo > 31.5 || a.Hi < 38.5 {
		t.Errorf("axis %g..%g does not cover ± 10 %% around 35", a.Lo, a.Hi)
	}
	if share := (35.35 - 34.65) / (a.Hi - a.Lo); share > 0.2 {
		t.Errorf("a 2 %% wiggle fills %.0f %% of the height", share*100)
	}
	if len(a.Ticks) < 4 {
		t.Errorf("%d ticks: too few to read a value", len(a.Ticks))
	}
	// A real drop is shown whole.
	if b := ValueAxis([]float64{35, 35, 12}); b.Lo > 12 || b.Hi < 35 {
		t.Errorf("axis %g..%g hides a value", b.Lo, b.Hi)
	}
	// Positive values never get a negative axis.
	if c := ValueAxis([]float64{0.2, 3}); c.Lo < 0 {
		t.Errorf("axis of positive values starts at %g", c.Lo)
	}
}

func TestEscAndTextWidth(t *testing.T) {
	t.Parallel()
	if got := Esc("<a href='x'>&\"\x00\x1b\n"); got != "&lt;a href=&#39;x&#39;&gt;&amp;&#34;\uFFFD\uFFFD " {
		t.Errorf("Esc = %q", got)
	}
	if TextWidth("WWW", 12) <= TextWidth("iii", 12) || TextWidth("模型", 12) < 24 {
		t.Error("TextWidth is not conservative for wide letters")
	}
	if got := Clip("abcdefgh", 4); got != "abc…" {
		t.Errorf("Clip = %q", got)
	}
}

func day(i int) time.Time { return time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i) }

func nights() []Series {
	mx := Series{Name: "mlxcel", Class: "mlxcel", Color: ColorMlxcel}
	lm := Series{Name: "mlx-lm", Class: "mlxlm", Color: ColorMlxLM, Dashed: true}
	for i := range 12 {
		v := 35 + 0.4*math.Sin(float64(i))
		p := Point{Date: day(i), Value: v, Title: "night"}
		if i >= 4 {
			p.Lo, p.Hi = 34.0, 36.0
		}
		if i == 11 {
			p.Value = 30.5 // below its band
		}
		mx.Points = append(mx.Points, p)
		lm.Points = append(lm.Points, Point{Date: day(i), Value: 33 + 0.3*math.Cos(float64(i))})
	}
	return []Series{lm, mx}
}

func TestLinesMarksAPointOutsideItsBand(t *testing.T) {
	t.Parallel()
	p, err := Lines(nights(), LineOptions{Unit: "decode tok/s"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Outliers != 1 || len(p.Bands) != 1 {
		t.Errorf("%d outliers and %d bands, want 1 and 1", p.Outliers, len(p.Bands))
	}
	out := 0
	for _, d := range p.Dots {
		if d.Out {
			out++
		}
	}
	if out != 1 {
		t.Errorf("%d dots marked out, want 1", out)
	}
	if _, err := Lines(nil, LineOptions{}); err == nil {
		t.Error("a chart without points was drawn")
	}
}

// hostile model and run names: each would inject markup or break the SVG if written raw.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><image href="https://evil.example/x.png"/>`,
	"Meta-Llama-3.1-8B-Instruct-4bit-with-a-very-long-name-that-goes-on-and-on-past-the-edge",
	"模型名称很长很长很长很长很长很长很长很长很长很长很长",
	"a & b ]]> \x00",
}

// wellFormed parses an SVG document and checks it is self-contained: no script, no
// foreignObject, no reference outside the document.
func wellFormed(t *testing.T, svg []byte) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("the SVG does not parse: %v\n%s", err, svg)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "script", "foreignObject", "image", "use", "a", "style":
				t.Errorf("the SVG holds a <%s> element", se.Name.Local)
			}
			for _, at := range se.Attr {
				if at.Name.Local == "href" || strings.HasPrefix(at.Name.Local, "on") || strings.Contains(at.Value, "url(") {
					t.Errorf("the SVG holds the attribute %s=%q", at.Name.Local, at.Value)
				}
			}
		}
	}
}

func TestWriteLinesGolden(t *testing.T) {
	t.Parallel()
	var panels []Panel
	for i, name := range []string{"Qwen3-30B-A3B-4bit", hostile[0], hostile[2]} {
		s := nights()
		if i == 1 {
			s = s[1:]
		}
		p, err := Lines(s, LineOptions{Unit: "decode tok/s"})
		if err != nil {
			t.Fatal(err)
		}
		panels = append(panels, Panel{Title: name, Plot: p, Legend: []LegendItem{
			{Label: "mlxcel", Color: ColorMlxcel}, {Label: "mlx-lm", Color: ColorMlxLM, Kind: LegendDashed},
			{Label: "noise band", Color: ColorMlxcel, Kind: LegendBand}, {Label: "outside its band", Color: colorOut, Kind: LegendOut}}})
	}
	svg, err := WriteLines("Nightly decode tok/s", panels)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
	again, _ := WriteLines("Nightly decode tok/s", panels)
	if string(again) != string(svg) {
		t.Error("the same panels gave different bytes")
	}
	if strings.Contains(string(svg), "<script>") {
		t.Error("a title was not escaped")
	}
	golden.Check(t, "testdata/golden/lines.svg", string(svg))
}

func barsInput() ([]Bar, BarsOptions) {
	bars := []Bar{
		{Label: "Meta-Llama-3.1-8B-Instruct-4bit_greedy", Total: 24.61, Segments: []Segment{{"#2063", 3.2}, {"#2065", 0}, {"#2067", 1.4}}},
		{Label: "Qwen3-30B-A3B-4bit_greedy", Total: 19.8, Segments: []Segment{{"#2063", 1.1}, {"#2065", 9.7}, {"#2067", 0.8}}},
		{Label: hostile[1], Total: 5, Segments: []Segment{{"#2065", 2}}},
		{Label: hostile[3], Total: 0.9, Segments: []Segment{{hostile[0], 0.2}}},
	}
	return bars, BarsOptions{Title: "GPU ms/token by port unit (reached, default reach)", Unit: "GPU ms/token", Keys: []string{"#2063", "#2065", "#2067", hostile[0]}, Rest: "not reached by a port"}
}

func TestWriteBarsGolden(t *testing.T) {
	t.Parallel()
	bars, o := barsInput()
	svg, err := WriteBars(bars, o)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
	if strings.Contains(string(svg), "evil.example/x.png\"/>") || strings.Contains(string(svg), "<image") {
		t.Error("a run name was not escaped")
	}
	golden.Check(t, "testdata/golden/bars.svg", string(svg))
	if _, err := WriteBars(nil, o); err == nil {
		t.Error("an empty bar chart was drawn")
	}
}

// Every range gets at least four intervals of a 1-2-5 step, and at most ten.
func TestNiceAxisIntervals(t *testing.T) {
	t.Parallel()
	for _, r := range [][2]float64{{30.5, 38.6}, {0, 1}, {0.001, 0.0013}, {12, 12}, {-3, 250}, {99.9, 100.1}, {1e6, 3e6}} {
		a := NiceAxis(r[0], r[1], 4)
		n := math.Round((a.Hi - a.Lo) / a.Step)
		if n < 4 || n > 10 || a.Lo > r[0] || a.Hi < r[1] {
			t.Errorf("NiceAxis(%g, %g) = %g..%g by %g: %g intervals", r[0], r[1], a.Lo, a.Hi, a.Step, n)
		}
		m := a.Step / math.Pow(10, math.Floor(math.Log10(a.Step)+1e-9))
		if math.Abs(m-1) > 1e-6 && math.Abs(m-2) > 1e-6 && math.Abs(m-5) > 1e-6 {
			t.Errorf("step %g is not 1, 2 or 5 times a power of ten", a.Step)
		}
	}
}

// Bars of nothing still get an axis from zero, with no tick left of it.
func TestWriteBarsOfZero(t *testing.T) {
	t.Parallel()
	svg, err := WriteBars([]Bar{{Label: "empty", Total: 0}}, BarsOptions{Title: "t", Unit: "GPU ms/token"})
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
	if strings.Contains(string(svg), ">-") || strings.Contains(string(svg), "NaN") || strings.Contains(string(svg), "Inf") {
		t.Errorf("a bar chart of zeros drew a negative or undefined tick:\n%s", svg)
	}
}

// Segments and change points: a level line spans its nights at its value, and a change
// label at either edge of the plot is anchored so it stays inside the viewBox.
func TestLevelsAndChangeMarks(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 10, d, 0, 0, 0, 0, time.UTC) }
	s := Series{Name: "mlxcel", Class: "mlxcel", Color: ColorMlxcel}
	for d := 1; d <= 20; d++ {
		v := 40.0
		if d > 10 {
			v = 36
		}
		s.Points = append(s.Points, Point{Date: day(d), Value: v})
	}
	s.Levels = []Level{{From: day(1), To: day(10), Value: 40}, {From: day(11), To: day(20), Value: 36}}
	s.Changes = []Change{
		{Date: day(1), Label: "+12.5%"},
		{Date: day(11), Label: "-10.0%", Worse: true},
		{Date: day(20), Label: "-99.9%"},
	}
	p, err := Lines([]Series{s}, LineOptions{Unit: "decode tok/s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Levels) != 2 || len(p.Marks) != 3 {
		t.Fatalf("%d levels and %d marks, want 2 and 3", len(p.Levels), len(p.Marks))
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if num(p.Levels[0].Y) >= num(p.Levels[1].Y) {
		t.Errorf("the higher level is drawn at y %s, not above the lower one at %s", p.Levels[0].Y, p.Levels[1].Y)
	}
	if p.Levels[0].X1 != p.Plot.X0 || p.Levels[1].X2 != p.Plot.X1 {
		t.Errorf("the levels span %s..%s and %s..%s, want the plot's %s..%s", p.Levels[0].X1, p.Levels[0].X2, p.Levels[1].X1, p.Levels[1].X2, p.Plot.X0, p.Plot.X1)
	}
	for i, want := range []string{"start", "middle", "end"} {
		if p.Marks[i].Anchor != want {
			t.Errorf("mark %d (%s) is anchored %q, want %q", i, p.Marks[i].Label, p.Marks[i].Anchor, want)
		}
		if p.Marks[i].Y0 != p.Plot.Y0 || p.Marks[i].Y1 != p.Plot.Y1 {
			t.Errorf("mark %d spans %s..%s, want the plot's height", i, p.Marks[i].Y0, p.Marks[i].Y1)
		}
	}
	if !p.Marks[1].Worse {
		t.Error("the regression's mark lost its Worse flag")
	}
	svg, err := WriteLines("levels", []Panel{{Title: "x", Plot: p}})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(svg), `stroke-dasharray="2 3"`); n != 2 {
		t.Errorf("the SVG draws %d level lines, want 2", n)
	}
	if !strings.Contains(string(svg), ">-10.0%</text>") {
		t.Error("the SVG does not label the change")
	}
}
