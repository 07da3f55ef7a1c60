package abstat

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// readings are a model's repeats of one column in a harness file.
func readings(t *testing.T, f *benchcsv.File, model string, col func(benchcsv.Row) float64) []float64 {
	t.Helper()
	var v []float64
	for _, r := range f.RowsOf(model) {
		if r.OK() {
			v = append(v, col(r))
		}
	}
	if len(v) == 0 {
		t.Fatalf("%s: no readings of %s", f.Name, model)
	}
	return v
}

func realFile(t *testing.T, name string) *benchcsv.File {
	t.Helper()
	f, err := benchcsv.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var (
	decodeTokS  = func(r benchcsv.Row) float64 { return r.DecodeTokS }
	decodeMs    = func(r benchcsv.Row) float64 { return r.DecodeMs }
	prefillTokS = func(r benchcsv.Row) float64 { return r.PrefillTokS }
)

// The maintainers' A/B of the SSM update kernel (off = A, on = B), 3 repeats a side.
// What a maintainer reads off the rows:
//
//   - granite-4.0-h-tiny decode: 60.57 60.39 60.05 -> 88.36 88.69 88.43 tok/s. Medians
//     60.39 -> 88.43 is +46.4 %; each side spreads 0.5 tok/s (under 1 %), so the gap
//     of 28 tok/s is some 60 spreads: faster, beyond doubt. decode_ms says the same
//     (2119.61 -> 1447.52 ms, -31.7 %; lower is better).
//   - Nemotron-3-Nano decode: 51.65 50.87 51.35 -> 74.87 72.87 74.37. Medians 51.35 ->
//     74.37, +44.8 %; the on side spreads 2 tok/s (2.7 %), still a tenth of the gap:
//     faster.
//   - prefill: the kernel is on the decode path, and the prefill rows say nothing
//     either way. granite reads 504.51 601.60 404.49 -> 589.34 379.44 608.01 tok/s, a
//     spread of 40 % on each side for a median change of +16.8 %; Nemotron 298.97
//     278.61 299.42 -> 296.19 288.90 285.24, -3.4 % with 7 % spread. Neither is a
//     change, and neither rules out one of a few percent either: too noisy to call.
//
// With 3 a side the U test cannot decide anything (its smallest p is 0.1), so Welch's t
// on the logarithms decides; the U p value of the decode rows (fully separated) is
// that floor, 0.1.
func TestRealSSMKernelAB(t *testing.T) {
	t.Parallel()
	off := realFile(t, "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-off.csv")
	on := realFile(t, "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv")
	const granite, nemotron = "granite-4.0-h-tiny-4bit", "NVIDIA-Nemotron-3-Nano-30B-A3B-4bit"
	cases := []struct {
		model, metric string
		col           func(benchcsv.Row) float64
		dir           Direction
		want          Verdict
		change        float64 // median change, percent
	}{
		{granite, "decode tok/s", decodeTokS, HigherIsBetter, Faster, 88.43/60.39*100 - 100},
		{granite, "decode ms", decodeMs, LowerIsBetter, Faster, 1447.52/2119.61*100 - 100},
		{granite, "prefill tok/s", prefillTokS, HigherIsBetter, TooNoisy, 589.34/504.51*100 - 100},
		{nemotron, "decode tok/s", decodeTokS, HigherIsBetter, Faster, 74.37/51.35*100 - 100},
		{nemotron, "decode ms", decodeMs, LowerIsBetter, Faster, 1721.18/2492.62*100 - 100},
		{nemotron, "prefill tok/s", prefillTokS, HigherIsBetter, TooNoisy, 288.90/298.97*100 - 100},
	}
	var rs []Result
	var dirs []Direction
	for _, c := range cases {
		a, b := readings(t, off, c.model, c.col), readings(t, on, c.model, c.col)
		r, err := Compare(a, b, c.dir, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		name := c.model + " " + c.metric
		if r.Verdict != c.want || r.Test != TestWelch || r.NA != 3 || r.NB != 3 {
			t.Errorf("%s: %s", name, r.Text())
		}
		near(t, name+" change", r.ChangePct, c.change, 1e-9)
		if c.want == Faster {
			if r.P > 0.001 || (r.LoPct > 0) != (c.dir == HigherIsBetter) {
				t.Errorf("%s: a plain gain should be far past the noise: %s", name, r.Text())
			}
			if u := MannWhitney(a, b); u.P != 0.1 {
				t.Errorf("%s: U p %v, want the 3v3 floor 0.1", name, u.P)
			}
		}
		rs, dirs = append(rs, r), append(dirs, c.dir)
	}
	// Six comparisons of one A/B: the decode calls survive Holm's correction.
	held, err := CorrectHolm(rs, dirs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range held {
		if r.Verdict != cases[i].want || r.AdjustedP < r.P || !strings.Contains(r.Text(), "after Holm") {
			t.Errorf("%s %s after Holm: %s", cases[i].model, cases[i].metric, r.Text())
		}
	}
}

// draw makes n readings around level with a relative normal noise of sigmaPct.
func draw(rng *rand.Rand, n int, level, sigmaPct float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = level * (1 + sigmaPct/100*rng.NormFloat64())
	}
	return v
}

func TestSyntheticPairs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	o := DefaultOptions()
	// A real 1.5 % gain measured tightly (0.3 % noise, 10 a side): called.
	a, b := draw(rng, 10, 40, 0.3), draw(rng, 10, 40*1.015, 0.3)
	r, err := Compare(a, b, HigherIsBetter, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Faster || r.Test != TestMannWhitney || r.LoPct < 0.5 || r.HiPct > 2.5 {
		t.Errorf("1.5 %% gain: %s", r.Text())
	}
	// The same readings as milliseconds (lower is better): B is slower.
	if r, _ := Compare(a, b, LowerIsBetter, o); r.Verdict != Slower {
		t.Errorf("1.5 %% more ms: %s", r.Text())
	}
	// No change, tightly measured: not called, and a change beyond ±2 % is ruled out.
	a = []float64{40.02, 39.95, 40.11, 39.88, 40.05, 39.97, 40.08, 39.93}
	b = []float64{40.06, 39.91, 40.00, 40.12, 39.94, 40.03, 39.98, 40.09}
	if r, _ := Compare(a, b, HigherIsBetter, o); r.Verdict != NoChange || r.LoPct < -2 || r.HiPct > 2 {
		t.Errorf("no change: %s", r.Text())
	}
	// A 3 % gain under 8 % noise at 5 a side: not called, and it says it cannot tell.
	a, b = []float64{40.1, 36.5, 43.9, 38.2, 41.7}, []float64{44.0, 37.1, 40.3, 45.2, 39.0}
	r, _ = Compare(a, b, HigherIsBetter, o)
	if r.Verdict != TooNoisy || r.Verdict.Called() || !strings.Contains(r.Text(), "too noisy to call") {
		t.Errorf("noisy pair: %s", r.Text())
	}
	// Two a side: no test at all.
	r, _ = Compare([]float64{40, 41}, []float64{50, 51}, HigherIsBetter, o)
	if r.Verdict != TooFew || r.Test != TestNone || r.ChangePct < 20 {
		t.Errorf("2v2: %s", r.Text())
	}
	// 4 against 6: the smaller side decides the test (Welch below 5).
	if r, _ := Compare(draw(rng, 4, 40, 1), draw(rng, 6, 44, 1), HigherIsBetter, o); r.Test != TestWelch || r.Verdict != Faster {
		t.Errorf("4v6: %s", r.Text())
	}
}

func TestCompareRejects(t *testing.T) {
	t.Parallel()
	o := DefaultOptions()
	for _, c := range []struct {
		a, b []float64
		o    Options
		msg  string
	}{
		{[]float64{1, 2, 3}, []float64{1, 0, 3}, o, "B value 2 is 0"},
		{[]float64{1, math.NaN(), 3}, []float64{1, 2, 3}, o, "A value 2 is NaN"},
		{[]float64{1, 2, math.Inf(1)}, []float64{1, 2, 3}, o, "A value 3 is +Inf"},
		{nil, []float64{1, 2, 3}, o, "A has no readings"},
		{[]float64{1, 2, 3}, []float64{1, 2, 3}, Options{Alpha: 0.6, SamePct: 2}, "alpha is 0.6"},
		{[]float64{1, 2, 3}, []float64{1, 2, 3}, Options{Alpha: 0.05, SamePct: -1}, "margin is -1"},
	} {
		if _, err := Compare(c.a, c.b, HigherIsBetter, c.o); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v vs %v: error %v, want %q", c.a, c.b, err, c.msg)
		}
	}
}

// Holm over several models: a call that only holds alone is withdrawn, with the reason.
func TestCorrectHolmWithdrawsAWeakCall(t *testing.T) {
	t.Parallel()
	o := DefaultOptions()
	// 5 against 5 with U = 2: p = 0.0317, a call alone.
	weak, _ := Compare([]float64{10, 11, 12, 15, 16}, []float64{14, 17, 18, 19, 20}, HigherIsBetter, o)
	if weak.Verdict != Faster {
		t.Fatalf("alone: %s", weak.Text())
	}
	strong, _ := Compare([]float64{10, 10.1, 10.2, 10.1, 10}, []float64{12, 12.1, 12.2, 12.1, 12.3}, HigherIsBetter, o)
	few, _ := Compare([]float64{1, 2}, []float64{3, 4}, HigherIsBetter, o)
	out, err := CorrectHolm([]Result{weak, strong, few}, []Direction{HigherIsBetter, HigherIsBetter, HigherIsBetter}, o)
	if err != nil {
		t.Fatal(err)
	}
	// Two tested: strong p = 2/252 -> 0.0159; weak 0.0317 x 1, kept at least 0.0159.
	near(t, "strong adjusted", out[1].AdjustedP, 2*2.0/252, 1e-12)
	near(t, "weak adjusted", out[0].AdjustedP, 8.0/252, 1e-12)
	if out[0].Verdict != Faster || out[1].Verdict != Faster || out[2].Verdict != TooFew || out[2].AdjustedP != 0 {
		t.Errorf("two tested: %v %v %v", out[0].Verdict, out[1].Verdict, out[2].Verdict)
	}
	// Three more comparisons with nothing in them: the weak one is 0.0317 x 4 > 0.05.
	nothing, _ := Compare([]float64{10, 11, 12, 13, 14}, []float64{10.5, 11.5, 12.5, 13.5, 14.5}, HigherIsBetter, o)
	out, _ = CorrectHolm([]Result{weak, strong, nothing, nothing, nothing}, make([]Direction, 5), o)
	if out[0].Verdict.Called() || !strings.Contains(out[0].Why, "after Holm's correction over 5 comparisons") {
		t.Errorf("weak among five: %s", out[0].Text())
	}
	if out[1].Verdict != Faster {
		t.Errorf("strong among five: %s", out[1].Text())
	}
	if _, err := CorrectHolm([]Result{weak}, nil, o); err == nil {
		t.Error("directions missing: no error")
	}
}
