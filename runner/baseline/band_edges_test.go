package baseline

import (
	"math"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/benchcsv"
)

func runsAt(vals ...float64) []Point {
	out := make([]Point, len(vals))
	for i, v := range vals {
		out[i] = Point{Values: []float64{v}, Date: dateOf(i)}
	}
	return out
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// The band's robust spread, worked by hand: for 10 to 17 the median is 13.5, the MAD
// 2 and the IQR 15.25 - 11.75 = 3.5 (quartiles interpolated between order statistics),
// so the MAD's 1.4826 x 2 is the noise; a history split between two states (five runs
// at 10, three at 20) has a MAD of 0 and an IQR of 10, which is the noise then
// (Mixtral's case); identical runs take the floor of 0.75 % of the median; a single
// run is a band of its value.
func TestBandSpreadWorkedByHand(t *testing.T) {
	t.Parallel()
	r := DefaultRules()
	b := BandOf(runsAt(10, 11, 12, 13, 14, 15, 16, 17), r)
	near(t, "median", b.Median, 13.5)
	near(t, "MAD", b.MAD, 2)
	near(t, "IQR", b.IQR, 3.5)
	near(t, "sigma", b.Sigma, 1.4826*2)
	near(t, "lo", b.Lo, 13.5-3*1.4826*2)
	if b.Floored || b.Runs != 8 || b.First != dateOf(0) || b.Last != dateOf(7) {
		t.Errorf("%+v", b)
	}

	split := BandOf(runsAt(10, 20, 10, 20, 10, 20, 10, 10), r)
	near(t, "split MAD", split.MAD, 0)
	near(t, "split IQR", split.IQR, 10)
	near(t, "split sigma", split.Sigma, 10/1.349)

	flat := BandOf(runsAt(40, 40, 40, 40, 40, 40, 40, 40), r)
	near(t, "flat sigma", flat.Sigma, 0.3)
	if !flat.Floored {
		t.Errorf("identical runs: not floored: %+v", flat)
	}
	// 3 x 0.3 = 0.9 is below the 5 % least change: the band is ±2.
	near(t, "flat lo", flat.Lo, 38)
	near(t, "flat hi", flat.Hi, 42)

	one := BandOf(runsAt(7.5), r)
	if one.Median != 7.5 || one.IQR != 0 || one.MAD != 0 || !one.Floored {
		t.Errorf("one run: %+v", one)
	}
}

// A new value exactly on the band's edge is inside it: no suspect; the least step
// beyond is outside.
func TestBandEdgesAreInside(t *testing.T) {
	t.Parallel()
	b := BandOf(runsAt(10, 11, 12, 13, 14, 15, 16, 17), DefaultRules())
	if b.Below(b.Lo) || b.Above(b.Hi) {
		t.Errorf("the edges %v and %v are outside the band", b.Lo, b.Hi)
	}
	if !b.Below(math.Nextafter(b.Lo, 0)) || !b.Above(math.Nextafter(b.Hi, math.Inf(1))) {
		t.Errorf("the values just past %v and %v are inside the band", b.Lo, b.Hi)
	}
}

// nightsOf is a history of one model read at each value, a night apart from 2026-10-01,
// and the file of the night after them at v.
func nightsOf(t *testing.T, model string, v float64, history ...float64) (*History, *benchcsv.File) {
	t.Helper()
	var files []*benchcsv.File
	night := func(i int, d float64, suffix string) *benchcsv.File {
		n := benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: dateOf(i), Suffix: suffix}
		return parsed(t, n, benchcsv.ROCmHeader, []benchcsv.Row{rowOf(model, dateOf(i), d, 500, realEnv)})
	}
	for i, d := range history {
		files = append(files, night(i, d, ""))
	}
	return New(files...), night(len(history), v, "")
}

// The nightly texts: a change of exactly zero reads +0.0 %, one of 1 in 40 +2.5 %, the
// last baseline is named
// beside the band, and an outlier whose re-measure is back inside says on which side of
// the band it was.
func TestNightlyTextsOfTheBand(t *testing.T) {
	t.Parallel()
	const m = "m"
	flat := []float64{40, 40, 40, 40, 40, 40, 40, 40}
	h, f := nightsOf(t, m, 40, flat...)
	rep := CompareNightly(h, f, DefaultRules())
	want := "decode 40.00 tok/s, +0.0% against the median 40.00 of its last 8 comparable runs (noise band 38.00 to 42.00; last baseline 40.00 of " + dateOf(7) + "): inside the band, no significant change"
	if got := rep.Models[0].Text; got != want {
		t.Errorf("no change:\n got %s\nwant %s", got, want)
	}
	// 41 against a median of 40 is +2.5 %, and so against the last baseline of 40.
	h, f = nightsOf(t, m, 41, flat...)
	up := CompareNightly(h, f, DefaultRules()).Models[0]
	if up.ChangePct != 2.5 || up.BaselinePct != 2.5 || !strings.HasPrefix(up.Text, "decode 41.00 tok/s, +2.5% against the median 40.00") {
		t.Errorf("41 against 40: %+v", up)
	}
	if signed(-0.04) != "-0.0%" || signed(0) != "+0.0%" || signed(1.25) != "+1.2%" {
		t.Errorf("signed: %s %s %s", signed(-0.04), signed(0), signed(1.25))
	}
	back := Point{Values: []float64{40}, Date: dateOf(8)}
	for _, tc := range []struct {
		v    float64
		side string
	}{{45, "above"}, {35, "below"}} {
		h, f := nightsOf(t, m, tc.v, flat...)
		rep := CompareNightly(h, f, DefaultRules())
		if err := rep.Remeasured(m, back); err != nil {
			t.Fatal(err)
		}
		r := rep.Models[0]
		if r.Verdict != NotConfirmed || !strings.HasSuffix(r.Text, tc.side+" the band, but the re-measure (40.00 tok/s) is not: not confirmed, taken as noise") {
			t.Errorf("%v then 40: %s: %s", tc.v, r.Verdict, r.Text)
		}
	}
}

// Which earlier runs count: Nightly with no date gives every night, with a date only
// the nights before it (not the night itself); runs of another environment are
// counted apart and named by the first of them; the last accepted baseline of an
// experiment is the nightly run before its day, not one of the same day.
func TestWhichEarlierRunsCount(t *testing.T) {
	t.Parallel()
	const m = "m"
	name := func(date, suffix string) benchcsv.Name {
		return benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: date, Suffix: suffix}
	}
	file := func(date, suffix string, env simEnv) *benchcsv.File {
		return parsed(t, name(date, suffix), benchcsv.ROCmHeader, []benchcsv.Row{rowOf(m, date, 40, 500, env)})
	}
	hip := simEnv{hip: "7.2.53211", overlay: realEnv.overlay}
	overlay := simEnv{hip: realEnv.hip, overlay: "deadbeef"}
	h := New(file(dateOf(0), "", realEnv), file(dateOf(1), "", hip), file(dateOf(2), "", overlay), file(dateOf(3), "", realEnv), file(dateOf(4), "", realEnv))
	env := EnvOf(name(dateOf(0), ""), rowOf(m, dateOf(0), 40, 500, realEnv))
	runs, other, why := h.Nightly(m, env, "", "")
	if len(runs) != 3 || other != 2 || why != "hip_version 7.15.26333 vs 7.2.53211" {
		t.Errorf("every night: %d runs, %d other (%s)", len(runs), other, why)
	}
	runs, _, _ = h.Nightly(m, env, dateOf(3), "")
	if len(runs) != 1 || runs[0].Date != dateOf(0) {
		t.Errorf("before %s: %+v", dateOf(3), runs)
	}
	exp := file(dateOf(4), "probe", realEnv)
	if rep := CompareNightly(h, exp, DefaultRules()); rep.Baseline != name(dateOf(3), "").String() {
		t.Errorf("an experiment of %s: baseline %q", dateOf(4), rep.Baseline)
	}
}

// The superseded warning counts a reading dated after the baseline's day and before
// the judged run's day: not one of either day. Of two newer readings of one day, the
// one last in the history's order (date, then name) is named.
func TestSupersededByTheDays(t *testing.T) {
	t.Parallel()
	const m = "m"
	file := func(date, suffix string, v float64) *benchcsv.File {
		n := benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: date, Suffix: suffix}
		return parsed(t, n, benchcsv.ROCmHeader, []benchcsv.Row{rowOf(m, date, v, 500, realEnv)})
	}
	base := file(dateOf(0), "", 40)
	p, _ := PointOf(base, m)
	h := New(base, file(dateOf(0), "same-day", 41), file(dateOf(2), "a", 42), file(dateOf(2), "b", 43), file(dateOf(3), "judged-day", 44))
	ss := h.superseded(base.Name.Pair(), map[string]Point{m: p}, dateOf(3), "")
	if len(ss) != 1 || ss[0].Newer != "rocm_strixhalo-gfx1151_"+dateOf(2)+"_b.csv" || ss[0].Now != 43 {
		t.Errorf("%+v", ss)
	}
	if ss := New(base, file(dateOf(0), "same-day", 41)).superseded(base.Name.Pair(), map[string]Point{m: p}, "", ""); len(ss) != 0 {
		t.Errorf("a reading of the baseline's own day: %+v", ss)
	}
}

// Rows are comparable when their environment is: an mlxcel version is no part of it
// (the commit is what a run measures), the baseline runtime's version is; a prompt
// length measured by a tokenizer is put in a bucket of a tenth of it, so 512 and 513
// are one shape and 600 another.
func TestWhatMakesRowsComparable(t *testing.T) {
	t.Parallel()
	rocm := benchcsv.Name{Backend: "rocm", Host: "h", Date: "2026-10-01"}
	pylm := benchcsv.Name{Backend: benchcsv.Baseline, Host: "h", Date: "2026-10-01"}
	a, b := rowOf("m", "2026-10-01", 40, 500, realEnv), rowOf("m", "2026-10-01", 40, 500, realEnv)
	b.Version = "0.8.0"
	if d := EnvOf(rocm, a).Diff(EnvOf(rocm, b)); len(d) != 0 {
		t.Errorf("mlxcel 0.7.0 vs 0.8.0: %v", d)
	}
	if d := EnvOf(pylm, a).Diff(EnvOf(pylm, b)); strings.Join(d, ";") != "runtime 0.7.0 vs 0.8.0" {
		t.Errorf("mlx-lm 0.7.0 vs 0.8.0: %v", d)
	}
	for n, want := range map[int]string{-1: "?", 0: "?", 9: "9", 105: "110", 512: "510", 513: "510", 600: "600"} {
		if got := roundPrompt(n); got != want {
			t.Errorf("roundPrompt(%d) = %s, want %s", n, got, want)
		}
	}
	a.PromptTargetLen, a.PromptTokens = "", 513
	if got := shapeOf(a); got != `pp~510/tg128 "Hello, how are you today?"` {
		t.Errorf("shape without a target: %s", got)
	}
	b.PromptTargetLen = "512"
	if got := shapeOf(b); got != `pp512/tg128 "Hello, how are you today?"` {
		t.Errorf("shape with a target: %s", got)
	}
}
