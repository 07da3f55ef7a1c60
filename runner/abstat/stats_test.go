package abstat

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.10g, want %.10g (±%g)", what, got, want, tol)
	}
}

// The exact p values of small cases, counted by hand: with na and nb distinct values
// there are C(na+nb, na) equally likely arrangements; p is twice the share at least as
// extreme as the one seen.
func TestMannWhitneyExactSmallCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		a, b []float64
		u, p float64
	}{
		// 3 against 3, fully separated: 1 of 20 arrangements each way, p = 2/20. Never
		// below 0.1, so the U test cannot call anything at 3 repeats a side.
		{"3v3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 2.0 / 20},
		{"3v3 separated, other way", []float64{4, 5, 6}, []float64{1, 2, 3}, 9, 2.0 / 20},
		// 1 3 5 against 2 4 6: a beats b in (3,2) (5,2) (5,4), U = 3; arrangements with
		// U <= 3 are 1+1+2+3 = 7 of 20, p = 14/20.
		{"3v3 interleaved", []float64{1, 3, 5}, []float64{2, 4, 6}, 3, 14.0 / 20},
		// 4 against 4 separated: 2/70 = 0.0286, the smallest p at 4 a side.
		{"4v4 separated", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 2.0 / 70},
		// U = 2 at 4 against 4: U = 0, 1, 2 are 1, 1, 2 arrangements, p = 2*4/70.
		{"4v4 U=2", []float64{1, 2, 3, 6}, []float64{4, 5, 7, 8}, 2, 8.0 / 70},
		// 5 against 5, one swap: U = 1, arrangements 1 + 1 of 252, p = 4/252.
		{"5v5 U=1", []float64{1, 2, 3, 4, 6}, []float64{5, 7, 8, 9, 10}, 1, 4.0 / 252},
		// Ties: 1 2 2 against 2 3 4. Pooled midranks 1, 3, 3, 3, 5, 6; a's sum is 7
		// (U = 7 - 6 = 1). Of the 20 ways of taking three ranks, those summing to 7 or
		// less are {1,3,3} three times (choose two of the three 3s): 3/20, p = 6/20.
		{"ties", []float64{1, 2, 2}, []float64{2, 3, 4}, 1, 6.0 / 20},
	}
	for _, c := range cases {
		r := MannWhitney(c.a, c.b)
		near(t, c.name+" U", r.U, c.u, 1e-12)
		near(t, c.name+" p", r.P, c.p, 1e-12)
		if !r.Exact {
			t.Errorf("%s: not exact", c.name)
		}
	}
	if r := MannWhitney(nil, []float64{1}); r.P != 1 {
		t.Errorf("an empty side: p %v, want 1", r.P)
	}
}

// Beyond the exact sizes the normal approximation takes over; at 29 against 31 (the
// last exact size) the two agree to the third decimal.
func TestMannWhitneyNormalApproximation(t *testing.T) {
	t.Parallel()
	var a, b []float64
	for i := range 31 {
		a = append(a, float64(i)*1.013+0.37)
		b = append(b, float64(i)+3.5)
	}
	exact := MannWhitney(a[:29], b)
	if !exact.Exact {
		t.Fatal("29 against 31 should be exact")
	}
	ranks, _ := midranks(a[:29], b)
	approx := normalP(exact.U, 29, 31, ranks)
	near(t, "normal approximation of the exact p", approx, exact.P, 0.005)
	big := MannWhitney(a, b)
	if big.Exact {
		t.Error("31 against 31 should use the normal approximation")
	}
	if !(big.P > 0 && big.P < 1) {
		t.Errorf("p %v", big.P)
	}
}

// Welch's t on the worked example of its Wikipedia article ("Welch's t-test",
// example 1): t = -2.46, df = 24.99, p = 0.021. The values below were computed
// independently: mean 20.82 and variance 7.867428571 (A1), 22.986666667 and
// 3.812666667 (A2), and the p by integrating Student's density numerically.
func TestWelchWorkedExample(t *testing.T) {
	t.Parallel()
	a1 := []float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4}
	a2 := []float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4}
	r := Welch(a2, a1) // b - a = A1 - A2
	near(t, "t", r.T, -2.45535639828601, 1e-9)
	near(t, "df", r.DF, 24.98852929023142, 1e-9)
	near(t, "p", r.P, 0.021378001, 1e-6)
	lo, hi := r.Interval(0.05)
	// The interval is the difference ± t(0.975, df) x SE and excludes zero as p < 0.05.
	if !(hi < 0) || math.Abs((lo+hi)/2-r.Diff) > 1e-9 {
		t.Errorf("interval %v to %v around %v", lo, hi, r.Diff)
	}
	// Closed forms of the t distribution: df 1 is Cauchy, df 2 has
	// P(T > t) = (1 - t / sqrt(t^2 + 2)) / 2.
	near(t, "Cauchy tail", tTail(1, 1), 0.25, 1e-12)
	near(t, "df 2 tail", tTail(3, 2), (1-3/math.Sqrt(11))/2, 1e-12)
	near(t, "t quantile, df 4", tQuantile(0.975, 4), 2.776445105, 1e-8)
	near(t, "normal quantile", normQuantile(0.975), 1.959963985, 1e-8)
	if r := Welch([]float64{2, 2}, []float64{2, 2}); r.P != 1 || r.T != 0 {
		t.Errorf("no spread, same means: %+v", r)
	}
	if r := Welch([]float64{2, 2}, []float64{3, 3}); r.P != 0 || !math.IsInf(r.T, 1) {
		t.Errorf("no spread, different means: %+v", r)
	}
}

// Holm's procedure on the example of its Wikipedia article: four hypotheses with p
// values 0.01, 0.04, 0.03 and 0.005 at alpha 0.05. Sorted, 0.005 <= 0.05/4 and
// 0.01 <= 0.05/3 are rejected; 0.03 > 0.05/2 stops the procedure, so H3 and H2 are
// kept although 0.04 alone would pass. Adjusted: 4 x 0.005 = 0.02, 3 x 0.01 = 0.03,
// 2 x 0.03 = 0.06, and max(0.06, 1 x 0.04) = 0.06.
func TestHolmTextbook(t *testing.T) {
	t.Parallel()
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		near(t, "adjusted p", got[i], want[i], 1e-12)
	}
	if len(Holm(nil)) != 0 {
		t.Error("no p values")
	}
	near(t, "capped at 1", Holm([]float64{0.6, 0.7})[0], 1, 0)
}

// The Hodges-Lehmann interval inverts the U test: at 5 against 5 the critical U at
// alpha 0.05 is 2 (p = 0.0317; U = 3 gives 0.0556), so the interval runs from the 3rd
// to the 23rd of the 25 sorted differences, and it excludes zero exactly when p <= 0.05.
func TestHodgesLehmannMatchesTheTest(t *testing.T) {
	t.Parallel()
	if c := uCritical(5, 5, 0.025); c != 2 {
		t.Fatalf("critical U at 5v5 = %d, want 2", c)
	}
	a := []float64{1, 2, 3, 4, 5}
	for shift := 0.0; shift < 6; shift += 0.25 {
		b := []float64{1.1 + shift, 2.2 + shift, 3.3 + shift, 4.4 + shift, 5.5 + shift}
		_, lo, hi, ok := hodgesLehmann(a, b, 0.05)
		p := MannWhitney(a, b).P
		if !ok {
			t.Fatal("no interval at 5v5")
		}
		if excl := lo > 0 || hi < 0; excl != (p <= 0.05) {
			t.Errorf("shift %v: interval %v to %v but p = %v", shift, lo, hi, p)
		}
	}
	// 3 against 3 has no 95 % interval (the most extreme arrangement has 5 %).
	if _, _, _, ok := hodgesLehmann([]float64{1, 2, 3}, []float64{4, 5, 6}, 0.05); ok {
		t.Error("3v3 should have no 95 % interval")
	}
}
