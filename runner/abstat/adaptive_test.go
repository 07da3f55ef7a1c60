package abstat

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// With a cap of 10 the spending function alpha x (n/10)^3 allows 0.00135 by 3
// repeats (Welch's t, continuous: the level is that), 0.00625 by 5, where the U test's
// smallest p is 2/252 = 0.0079, so the look is left out, and 0.05 by 10, where the
// largest exact p within the 0.04865 left is the one of U <= 23: 2 x 3996 of the
// 184,756 arrangements, 0.0433.
func TestNewPlanLevels(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(10, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Looks) != 2 || p.Looks[0] != 3 || p.Looks[1] != 10 || p.Cap() != 10 {
		t.Fatalf("looks %v", p.Looks)
	}
	near(t, "level at 3", p.Alphas[0], 0.05*0.027, 1e-15)
	near(t, "level at 10", p.Alphas[1], 2*3996.0/184756, 1e-12)
	// A larger cap: 3, 5 (left out), 10, 20, 40; every level within what is left.
	p, err = NewPlan(40, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, a := range p.Alphas {
		sum += a
	}
	if sum > 0.05 || p.Cap() != 40 || p.Looks[len(p.Looks)-2] != 20 {
		t.Errorf("cap 40: looks %v levels %v (sum %v)", p.Looks, p.Alphas, sum)
	}
	for _, bad := range []int{2, 1001} {
		if _, err := NewPlan(bad, DefaultOptions()); err == nil {
			t.Errorf("cap %d: no error", bad)
		}
	}
	if _, err := (Plan{}).Decide([]float64{1, 2, 3}, []float64{1, 2, 3}, HigherIsBetter); err == nil {
		t.Error("an empty plan: no error")
	}
}

func TestPlanDecide(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(10, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// Two a side: run to the first look.
	d, _ := p.Decide([]float64{60, 61}, []float64{88}, HigherIsBetter)
	if d.Done() || d.AddA != 1 || d.AddB != 2 || d.Look != 0 {
		t.Errorf("before the first look: %+v", d)
	}
	// The SSM kernel's decode rows: called at the first look, at 3 repeats.
	d, _ = p.Decide([]float64{60.57, 60.39, 60.05}, []float64{88.36, 88.69, 88.43}, HigherIsBetter)
	if !d.Done() || d.Look != 1 || d.Result.Verdict != Faster || d.Result.Alpha != p.Alphas[0] {
		t.Errorf("a plain gain at 3: %+v", d)
	}
	// A few percent under 3 % noise at 3: add the 7 runs to the cap.
	a3, b3 := []float64{40.1, 38.9, 41.0}, []float64{41.2, 40.0, 42.3}
	d, _ = p.Decide(a3, b3, HigherIsBetter)
	if d.Done() || d.AddA != 7 || d.AddB != 7 || !strings.Contains(d.Why, "add runs") {
		t.Errorf("inconclusive at 3: %+v", d)
	}
	// At the cap it stops whatever the verdict.
	a10 := append(a3, 39.5, 40.6, 41.3, 38.7, 40.2, 39.9, 40.8)
	b10 := append(b3, 39.6, 41.0, 40.4, 41.9, 39.8, 40.7, 42.0)
	d, _ = p.Decide(a10, b10, HigherIsBetter)
	if !d.Done() || d.Look != 2 || !strings.Contains(d.Why, "cap of 10") {
		t.Errorf("at the cap: %+v", d)
	}
	// Ruled out early: identical tight readings stop at 3 as no change.
	d, _ = p.Decide([]float64{40, 40.01, 40.02}, []float64{40.01, 40, 40.02}, HigherIsBetter)
	if !d.Done() || d.Result.Verdict != NoChange || !strings.Contains(d.Why, "ruled out") {
		t.Errorf("same at 3: %+v", d)
	}
	if _, err := p.Decide([]float64{1, -2, 3}, []float64{1, 2, 3}, HigherIsBetter); err == nil {
		t.Error("a negative reading: no error")
	}
}

// The sequential looks must not raise the false-call rate above alpha: 4,000 pairs
// with no change, each run through the plan as a caller would (drawing only the runs
// asked for), are called a change in at most 5 % of cases (with room for the
// simulation's own error: 3 standard errors of 0.34 points). bench/ab.sh runs the
// larger version with the power figures.
func TestPlanKeepsFalseCallsWithinAlpha(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(10, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const pairs = 4000
	called, runs := 0, 0
	for range pairs {
		a, b := draw(rng, 3, 100, 3), draw(rng, 3, 100, 3)
		for {
			d, err := p.Decide(a, b, HigherIsBetter)
			if err != nil {
				t.Fatal(err)
			}
			if d.Done() {
				if d.Result.Verdict.Called() {
					called++
				}
				runs += len(a)
				break
			}
			a = append(a, draw(rng, d.AddA, 100, 3)...)
			b = append(b, draw(rng, d.AddB, 100, 3)...)
		}
	}
	if rate := float64(called) / pairs; rate > 0.05+3*0.0034 {
		t.Errorf("false calls %.2f %% of %d no-change pairs", 100*rate, pairs)
	}
	if runs <= 3*pairs {
		t.Errorf("%d runs: the plan never added any", runs)
	}
}
