package chart

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MinHalfSpanPct is the y range rule of the line charts: the range always covers at
// least ± this percentage around the median of the plotted values, so that the usual
// night-to-night wiggle of a few percent stays a wiggle and never fills the chart.
const MinHalfSpanPct = 10.0

// Axis is a value axis: its range and the tick values on it, Step apart.
type Axis struct {
	Lo, Hi float64
	Ticks  []float64
	Step   float64
}

// NiceStep is the 1-2-5 step (1, 2, 5, 10, 20, ...) at or above raw.
func NiceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// NiceAxis covers lo..hi with at least n (at least 4) intervals of a 1-2-5 step, the
// largest such step; the range is widened to whole steps, so the first and last ticks
// frame the chart.
func NiceAxis(lo, hi float64, n int) Axis {
	n = max(n, 4)
	if !(hi > lo) {
		pad := math.Max(math.Abs(hi)*0.05, 0.5)
		lo, hi = lo-pad, hi+pad
	}
	step := NiceStep((hi - lo) / float64(n))
	for math.Ceil(hi/step-1e-9)-math.Floor(lo/step+1e-9) < float64(n) {
		step = NiceStep(step * 0.39) // the next smaller 1-2-5 step
	}
	a := Axis{Lo: math.Floor(lo/step+1e-9) * step, Hi: math.Ceil(hi/step-1e-9) * step, Step: step}
	for i := 0; ; i++ {
		v := a.Lo + float64(i)*step
		if v > a.Hi+step*1e-6 {
			break
		}
		a.Ticks = append(a.Ticks, math.Round(v/step)*step)
	}
	return a
}

// ValueAxis is the y axis of a line chart of values (and band edges): it covers every
// value and at least ± MinHalfSpanPct around their median, and is never below zero
// when every value is positive.
func ValueAxis(values []float64) Axis {
	var vs []float64
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return NiceAxis(0, 1, 4)
	}
	slices.Sort(vs)
	med := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	half := math.Abs(med) * MinHalfSpanPct / 100
	lo, hi := math.Min(vs[0], med-half), math.Max(vs[len(vs)-1], med+half)
	if vs[0] >= 0 && lo < 0 {
		lo = 0
	}
	a := NiceAxis(lo, hi, 4)
	if vs[0] >= 0 && a.Lo < 0 {
		a = NiceAxis(0, hi, 4)
	}
	return a
}

// Decimals is how many decimals print a tick of step: one precision for the whole
// axis.
func Decimals(step float64) int {
	if step <= 0 || step >= 1 {
		return 0
	}
	d := int(math.Ceil(-math.Log10(step) - 1e-9))
	// A step of 0.25 or 0.5 at that power needs no more; 0.2 x 10^-k neither.
	return min(max(d, 0), 6)
}

// Label prints v with the decimals of the axis's step.
func (a Axis) Label(v float64) string {
	s := fmt.Sprintf("%.*f", Decimals(a.Step), v)
	if s == "-0" || strings.HasPrefix(s, "-0.") && strings.Trim(s[1:], "0.") == "" {
		s = s[1:]
	}
	return s
}

// DateTicks picks at most five whole days across t0..t1.
func DateTicks(t0, t1 time.Time) []time.Time {
	days := int(t1.Sub(t0).Hours()/24 + 0.5)
	step := max(1, (days+3)/4)
	var out []time.Time
	for d := 0; d <= days; d += step {
		out = append(out, t0.AddDate(0, 0, d))
	}
	return out
}

// TextWidth is a conservative width of s in SVG user units at a font size: wider than
// a sans-serif font draws it, so that a label measured by it is never clipped (an
// ASCII letter or digit counts 0.62 em, a capital or other ASCII sign 0.8 em,
// anything else a full em).
func TextWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == ' ', r == '.', r == ',', r == '-', r == '_', r == '/', r == ':':
			w += 0.62
		case r < utf8.RuneSelf:
			w += 0.8
		default:
			w += 1.0
		}
	}
	return w * size
}

// Clip shortens s to at most n characters, ending it with an ellipsis when cut.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 1)]) + "…"
}

// Esc makes untrusted text safe in SVG text and attribute values: the XML specials
// are escaped and characters XML does not allow (controls, invalid UTF-8) replaced.
func Esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '"':
			b.WriteString("&#34;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\n', r == '\r', r == '\t':
			b.WriteByte(' ')
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF, r == utf8.RuneError:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// f prints a coordinate.
func f(v float64) string { return fmt.Sprintf("%.1f", v) }
