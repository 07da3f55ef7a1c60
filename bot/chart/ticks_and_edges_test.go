package chart

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Abs(x-y) < 1e-9 })
}

// A step that is no step (zero, negative, NaN, infinite) is 1; a raw step a billionth
// above a 1-2-5 step, a rounding error, is that step; one a millionth above is the
// next.
func TestNiceStepAtItsEdges(t *testing.T) {
	t.Parallel()
	for _, raw := range []float64{0, -3, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := NiceStep(raw); got != 1 {
			t.Errorf("NiceStep(%g) = %g, want 1", raw, got)
		}
	}
	for raw, want := range map[float64]float64{1.000000001: 1, 2.000000002: 2, 5.0000000049999995: 5, 1.000001: 2, 5.00001: 10, 0.0200000000199: 0.02, 7e-7: 1e-6} {
		if got := NiceStep(raw); math.Abs(got-want) > 1e-15 {
			t.Errorf("NiceStep(%.17g) = %g, want %g", raw, got, want)
		}
	}
}

// Worked by hand: 0..10 in four or more intervals is 0..10 by 2 (by 5 would be two),
// in six or more by 1; fewer than four intervals are never asked for; a range of one
// value is widened by 5 % of it either side (at least 0.5): 12 becomes 11.4..12.6, framed
// 11..13 by 0.5, and 0 becomes -0.5..0.5, framed -0.6..0.6 by 0.2. The ticks run from
// the first to the last, whole multiples of the step.
func TestNiceAxisTicksWorkedByHand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi     float64
		n          int
		step, from float64
		ticks      []float64
	}{
		{0, 10, 4, 2, 0, []float64{0, 2, 4, 6, 8, 10}},
		{0, 10, 1, 2, 0, []float64{0, 2, 4, 6, 8, 10}},
		{0, 10, 6, 1, 0, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{12, 12, 4, 0.5, 11, []float64{11, 11.5, 12, 12.5, 13}},
		{0, 0, 4, 0.2, -0.6, []float64{-0.6, -0.4, -0.2, 0, 0.2, 0.4, 0.6}},
		{31.3, 38.9, 4, 2, 30, []float64{30, 32, 34, 36, 38, 40}},
		{-7, -2, 4, 1, -7, []float64{-7, -6, -5, -4, -3, -2}},
	} {
		a := NiceAxis(tc.lo, tc.hi, tc.n)
		if math.Abs(a.Step-tc.step) > 1e-12 || math.Abs(a.Lo-tc.from) > 1e-9 || !sameFloats(a.Ticks, tc.ticks) || math.Abs(a.Hi-tc.ticks[len(tc.ticks)-1]) > 1e-9 {
			t.Errorf("NiceAxis(%g, %g, %d) = %+v, want from %g by %g: %v", tc.lo, tc.hi, tc.n, a, tc.from, tc.step, tc.ticks)
		}
	}
}

// The y range rule worked by hand: ±10 % around the median, the median of an even count
// being the mean of the middle two, values outside that kept whole, values that are
// not numbers left out, and no values at all drawn on 0..1.
func TestValueAxisWorkedByHand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		values []float64
		lo, hi float64
		step   float64
	}{
		// Median 100: 90..110, framed by 5.
		{"odd", []float64{100, 99, 101}, 90, 110, 5},
		// Median (100+120)/2 = 110: 99..121, a span of 22: four intervals of 10.
		{"even", []float64{100, 120}, 90, 130, 10},
		// Median 38: 34.2..41.8 does not hold 20; 20..41.8 framed 20..45 by 5.
		{"a drop", []float64{38, 38, 20}, 20, 45, 5},
		{"not numbers", []float64{math.NaN(), 100, math.Inf(1), 99, math.Inf(-1), 101}, 90, 110, 5},
		{"none", nil, 0, 1, 0.2},
		// Negative values keep their sign: median -100, -110..-90.
		{"negative", []float64{-100, -99, -101}, -110, -90, 5},
	} {
		a := ValueAxis(tc.values)
		if math.Abs(a.Lo-tc.lo) > 1e-9 || math.Abs(a.Hi-tc.hi) > 1e-9 || math.Abs(a.Step-tc.step) > 1e-12 {
			t.Errorf("%s: ValueAxis(%v) = %g..%g by %g, want %g..%g by %g", tc.name, tc.values, a.Lo, a.Hi, a.Step, tc.lo, tc.hi, tc.step)
		}
	}
}

// One precision per axis: whole steps print no decimals, 0.5 and 0.2 one, 0.05 and
// 0.01 two, and never more than six; a tick that rounds to zero prints without a sign.
func TestTickLabels(t *testing.T) {
	t.Parallel()
	for step, want := range map[float64]int{0: 0, -1: 0, 1: 0, 2: 0, 1000: 0, 0.5: 1, 0.2: 1, 0.1: 1, 0.05: 2, 0.01: 2, 0.002: 3, 1e-9: 6} {
		if got := Decimals(step); got != want {
			t.Errorf("Decimals(%g) = %d, want %d", step, got, want)
		}
	}
	for _, tc := range []struct {
		step, v float64
		want    string
	}{
		{1, -0.4, "0"}, {0.1, -0.04, "0.0"}, {0.01, -0.001, "0.00"}, {1, -1, "-1"}, {0.1, -0.2, "-0.2"}, {0.5, 2.5, "2.5"}, {2, 40, "40"},
	} {
		if got := (Axis{Step: tc.step}).Label(tc.v); got != tc.want {
			t.Errorf("label of %g by %g = %q, want %q", tc.v, tc.step, got, tc.want)
		}
	}
}

// At most five whole days, the first on the first night: every day up to four days,
// then every second, fourth or eighth day; a span a little short of whole days counts
// as the nearest whole day.
func TestDateTicksAtTheirEdges(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		span time.Duration
		days []int
	}{
		{0, []int{0}},
		{4 * 24 * time.Hour, []int{0, 1, 2, 3, 4}},
		{4*24*time.Hour - time.Hour, []int{0, 1, 2, 3, 4}},
		{5 * 24 * time.Hour, []int{0, 2, 4}},
		{16 * 24 * time.Hour, []int{0, 4, 8, 12, 16}},
		{30 * 24 * time.Hour, []int{0, 8, 16, 24}},
	} {
		var got []int
		for _, d := range DateTicks(t0, t0.Add(tc.span)) {
			got = append(got, int(d.Sub(t0).Hours()/24))
		}
		if !slices.Equal(got, tc.days) {
			t.Errorf("%v: days %v, want %v", tc.span, got, tc.days)
		}
	}
}

// The measure of a label: 0.62 em for lower-case letters, digits and the narrow
// signs, 0.8 for capitals and the other ASCII signs (DEL included), a full em beyond
// ASCII; and Clip keeps a text of exactly n characters, cuts one more, and counts
// characters, not bytes.
func TestTextMeasureAndClip(t *testing.T) {
	t.Parallel()
	for s, em := range map[string]float64{
		"az09 .,-_/:": 11 * 0.62, "AZ!~": 4 * 0.8, "\x7f": 0.8, "\u0080": 1, "é模": 2, "`{": 1.6, "": 0,
	} {
		if got := TextWidth(s, 10); math.Abs(got-em*10) > 1e-9 {
			t.Errorf("TextWidth(%q, 10) = %g, want %g", s, got, em*10)
		}
	}
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abcd", 4, "abcd"}, {"abcde", 4, "abc…"}, {"模型模型", 4, "模型模型"}, {"模型模型模", 4, "模型模…"}, {"abc", 1, "a…"},
	} {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	if got := Esc("\x1f \x7f\ufffe\uffff\ufffd"); got != "\ufffd \x7f\ufffd\ufffd\ufffd" {
		t.Errorf("Esc = %q", got)
	}
}

// A point exactly on its band's edge is inside it; a night without a band is never
// out; the default size is taken when either side is not given; the top margin has
// room for the unit only when there is one; a band is drawn only
// over two or more consecutive nights that have one; a series without points draws
// nothing.
func TestLinesAtTheirEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p   Point
		out bool
	}{
		{Point{Value: 10, Lo: 10, Hi: 12}, false}, {Point{Value: 12, Lo: 10, Hi: 12}, false},
		{Point{Value: 9.99, Lo: 10, Hi: 12}, true}, {Point{Value: 12.01, Lo: 10, Hi: 12}, true},
		{Point{Value: 50}, false},
	} {
		if tc.p.Out() != tc.out {
			t.Errorf("%+v: out %v, want %v", tc.p, tc.p.Out(), tc.out)
		}
	}
	one := []Series{{Name: "s", Points: []Point{{Date: day(0), Value: 35}, {Date: day(1), Value: 36}}}}
	for _, tc := range []struct {
		o    LineOptions
		want string
	}{
		{LineOptions{}, "0 0 420 230"}, {LineOptions{Width: 600}, "0 0 420 230"}, {LineOptions{Height: 300}, "0 0 420 230"},
		{LineOptions{Width: 600, Height: 300}, "0 0 600 300"},
	} {
		p, err := Lines(one, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if p.ViewBox != tc.want || p.HasBand || len(p.Bands) != 0 {
			t.Errorf("%+v: viewBox %q (want %q), band %v", tc.o, p.ViewBox, tc.want, p.HasBand)
		}
	}
	// The top margin holds the unit's line (6 + 12 + 8 = 26); without a unit, half a
	// line (6 + 6 = 12).
	for unit, top := range map[string]string{"tok/s": "26.0", "": "12.0"} {
		p, err := Lines(one, LineOptions{Unit: unit})
		if err != nil {
			t.Fatal(err)
		}
		if p.Plot.Y0 != top || p.Plot.Y1 != "202.0" {
			t.Errorf("unit %q: plot from %s to %s, want %s to 202.0 (230 - (6 + 12 + 10))", unit, p.Plot.Y0, p.Plot.Y1, top)
		}
	}
	// Band, none, band, band: the lone first night draws no polygon, the last two one.
	banded := Series{Name: "b", Points: []Point{
		{Date: day(0), Value: 35, Lo: 34, Hi: 36}, {Date: day(1), Value: 35},
		{Date: day(2), Value: 35, Lo: 34, Hi: 36}, {Date: day(3), Value: 35, Lo: 34, Hi: 36},
	}}
	p, err := Lines([]Series{{Name: "empty"}, banded}, LineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Bands) != 1 || !p.HasBand {
		t.Errorf("%d band polygons, want 1: %v", len(p.Bands), p.Bands)
	}
	if len(p.Lines) != 1 || len(p.Dots) != 4 || p.Lines[0].D == "" {
		t.Errorf("%d lines and %d dots, want the banded series' 1 and 4: %+v", len(p.Lines), len(p.Dots), p.Lines)
	}
}

// A label is clipped only as far as it must: one exactly as wide as the room is kept
// whole, one with no room at all keeps one character and the ellipsis, and a label of
// one character is never made longer.
func TestLabelFit(t *testing.T) {
	t.Parallel()
	if got := fit("abcd", TextWidth("abcd", 12), 12); got != "abcd" {
		t.Errorf("a label exactly as wide as its room: %q", got)
	}
	// "abc…" is 3 x 7.44 + 12 = 34.32 wide.
	if got := fit("abcde", 34.32, 12); got != "abc…" {
		t.Errorf("one character too many: %q", got)
	}
	if got := fit("abcdef", 1, 12); got != "a…" {
		t.Errorf("no room: %q", got)
	}
	if got := fit("W", 1, 12); got != "W" {
		t.Errorf("one character with no room: %q, never longer than the label", got)
	}
}

// The legend, worked by hand at a font size of 12: an item is 22 + the label's width
// + 14 wide; a label gets the row's width less the edges (6 each) and 26, so in 100
// units "abcdefghijklmnopqrstuvwxyz" keeps "abcdef…" (6 x 7.44 + 12 = 56.64 of 62);
// a first item never wraps, however wide; two items of "模模" (two full ems: 60 each)
// share a row exactly 6 + 2 x 60 + 6 wide, and wrap in one a hundredth narrower.
func TestLegendLayout(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	long := []LegendItem{{Label: "abcdefghijklmnopqrstuvwxyz", Color: "#000"}}
	if rows := legend(&b, long, 6, 20, 100); rows != 1 || !strings.Contains(b.String(), ">abcdef…</text>") {
		t.Errorf("%d rows:\n%s", rows, b.String())
	}
	two := []LegendItem{{Label: "模模"}, {Label: "模模"}}
	exact := 6 + 2*(22+2*12+14) + 6.0
	if rows := legendRows(two, 6, exact); rows != 1 {
		t.Errorf("two items in a row exactly their width: %d rows", rows)
	}
	if rows := legendRows(two, 6, exact-0.01); rows != 2 {
		t.Errorf("two items in a row a hair narrower: %d rows", rows)
	}
	if rows := legendRows(append(two, LegendItem{Label: "模模"}), 6, exact); rows != 2 {
		t.Errorf("three items: %d rows", rows)
	}
	if rows := legendRows(nil, 6, exact); rows != 0 {
		t.Errorf("no items: %d rows", rows)
	}
}

// The bar chart's edges, worked by hand at 760 wide: the axis of a lone 0.96 runs to
// 1.0 by 0.2, and its last tick sits where the room for the total ("0.96", 29.76 wide,
// and 6 more) begins: 760 - 6 - 35.76 = 718.24; a bar whose segments add up to its
// total exactly has no rest segment; a title too long for the chart keeps what fits in
// 200 - 12 = 188 at an em of 15.4 (18 letters of 9.548 and the ellipsis).
func TestBarsAtTheirEdges(t *testing.T) {
	t.Parallel()
	svg, err := WriteBars([]Bar{{Label: "m", Total: 0.96, Segments: []Segment{{"k", 0.96}}}}, BarsOptions{Title: "t", Keys: []string{"k"}, Rest: "the rest"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	if !strings.Contains(s, `<line x1="718.2" y1=`) || !strings.Contains(s, `>1.0</text>`) || strings.Contains(s, "the rest: ") {
		t.Errorf("a lone 0.96:\n%s", s)
	}
	long := strings.Repeat("abcdefghijklmnopqrstuvwxyz", 3)
	svg, err = WriteBars([]Bar{{Label: "m", Total: 1}}, BarsOptions{Title: long, Width: 200})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), ">abcdefghijklmnopqr…</text>") {
		t.Errorf("the title in 188 units:\n%s", svg)
	}
}
