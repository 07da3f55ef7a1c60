package abstat

import (
	"encoding/binary"
	"math"
	"testing"
)

// For every cap, the plan's looks rise to the cap and its levels add up to at most
// alpha: the bound on false calls over all looks holds by construction.
func TestEveryPlanSpendsAtMostAlpha(t *testing.T) {
	t.Parallel()
	for _, alpha := range []float64{0.01, 0.05, 0.1} {
		for capRuns := MinRepeats; capRuns <= 80; capRuns++ {
			p, err := NewPlan(capRuns, Options{Alpha: alpha, SamePct: 2})
			if err != nil {
				if alpha < 0.05 && capRuns < UMinRepeats+2 {
					continue // a strict alpha may leave a tiny cap no reachable level
				}
				t.Fatalf("alpha %v cap %d: %v", alpha, capRuns, err)
			}
			sum := 0.0
			for i, a := range p.Alphas {
				if a <= 0 || (i > 0 && p.Looks[i] <= p.Looks[i-1]) {
					t.Errorf("alpha %v cap %d: looks %v levels %v", alpha, capRuns, p.Looks, p.Alphas)
				}
				sum += a
			}
			if sum > alpha*(1+1e-12) || p.Cap() != capRuns {
				t.Errorf("alpha %v cap %d: levels %v add up to %v", alpha, capRuns, p.Alphas, sum)
			}
		}
	}
}

// Compare never panics on positive readings, keeps p in [0, 1] and the interval in
// order, and calls a change only on a side of zero its interval is on.
func FuzzCompare(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, uint8(3), false)
	f.Add([]byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, uint8(5), true)
	f.Fuzz(func(t *testing.T, data []byte, split uint8, lower bool) {
		var v []float64
		for len(data) >= 2 && len(v) < 40 {
			v = append(v, 1+float64(binary.LittleEndian.Uint16(data)))
			data = data[2:]
		}
		k := int(split) % (len(v) + 1)
		a, b := v[:k], v[k:]
		dir := HigherIsBetter
		if lower {
			dir = LowerIsBetter
		}
		r, err := Compare(a, b, dir, DefaultOptions())
		if len(a) == 0 || len(b) == 0 {
			if err == nil {
				t.Fatal("an empty side: no error")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !(r.P >= 0 && r.P <= 1) || math.IsNaN(r.LoPct) || r.LoPct > r.HiPct+1e-9 {
			t.Fatalf("%v vs %v: %+v", a, b, r)
		}
		up := (r.Verdict == Faster) == (dir == HigherIsBetter)
		if r.Verdict.Called() && ((up && !(r.LoPct > 0)) || (!up && !(r.HiPct < 0))) {
			t.Fatalf("%v vs %v: called %s with interval %v to %v", a, b, r.Verdict, r.LoPct, r.HiPct)
		}
	})
}
