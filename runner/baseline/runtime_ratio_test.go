package baseline

import (
	"math"
	"testing"

	"github.com/lablup/perfbot/runner/benchcsv"
)

// The runtime ratio of made files, worked by hand: mlxcel's median 40.2 against
// mlx-lm's 20.1 is 2x, its prefill 1000 against 400 is 2.5x; without an mlx-lm prefill
// there is no prefill ratio; an mlx-lm reading of 0 tok/s gives no ratio at all; and a
// threshold of 0 is the default one, under which a 1 % spread is stable. A spread
// exactly at the threshold is stable, a hair above it is not.
func TestRuntimeRatiosWorkedByHand(t *testing.T) {
	t.Parallel()
	date := "2026-10-01"
	mlxcelRows := []benchcsv.Row{
		rowOf("a", date, 40, 1000, realEnv), rowOf("a", date, 40.4, 1000, realEnv),
		rowOf("b", date, 30, 900, realEnv),
		rowOf("c", date, 10, 900, realEnv), rowOf("c", date, 11, 900, realEnv),
		rowOf("d", date, 10, 900, realEnv),
	}
	noPrefill := rowOf("b", date, 15, 500, realEnv)
	noPrefill.HasPrefill, noPrefill.PrefillMs, noPrefill.PrefillTokS = false, 0, 0
	zero := rowOf("d", date, 10, 500, realEnv)
	zero.DecodeTokS, zero.DecodeMs = 0, 0
	mlxlmRows := []benchcsv.Row{
		rowOf("a", date, 20, 400, realEnv), rowOf("a", date, 20.2, 400, realEnv),
		noPrefill,
		rowOf("c", date, 5, 450, realEnv),
		zero,
	}
	mlxcel := parsed(t, benchcsv.Name{Backend: "rocm", Host: "h", Date: date}, benchcsv.ROCmHeader, mlxcelRows)
	mlxlm := parsed(t, benchcsv.Name{Backend: benchcsv.Baseline, Host: "h", Date: date}, benchcsv.BaselineHeader, mlxlmRows)

	spreadC := Point{Values: []float64{10, 11}}.SpreadPct()
	near(t, "spread of 10 and 11", spreadC, 1/10.5*100)
	if s := (Point{Values: []float64{0, 0}}).SpreadPct(); s != 0 {
		t.Errorf("spread around a median of 0: %v", s)
	}
	if s := (Point{Values: []float64{7}}).SpreadPct(); s != 0 {
		t.Errorf("spread of one reading: %v", s)
	}

	pairs, med, n := CompareRuntimes(mlxcel, mlxlm, spreadC)
	got := map[string]RuntimePair{}
	for _, p := range pairs {
		got[p.Model] = p
	}
	a, b, c, d := got["a"], got["b"], got["c"], got["d"]
	near(t, "a decode ratio", a.DecodeRatio, 2)
	near(t, "a prefill ratio", a.PrefillRatio, 2.5)
	near(t, "b decode ratio", b.DecodeRatio, 2)
	if b.PrefillRatio != 0 {
		t.Errorf("b has no mlx-lm prefill, but a prefill ratio %v", b.PrefillRatio)
	}
	if c.DecodeRatio != 2.1 || len(c.Unstable) != 0 {
		t.Errorf("c, spread exactly at the threshold: %+v", c)
	}
	if d.DecodeRatio != 0 || d.PrefillRatio != 0 || n != 3 {
		t.Errorf("d, mlx-lm at 0 tok/s: %+v (%d ratios)", d, n)
	}
	near(t, "median ratio", med, 2)

	pairs, _, n = CompareRuntimes(mlxcel, mlxlm, math.Nextafter(spreadC, 0))
	if n != 2 || pairs[2].Model != "c" || len(pairs[2].Unstable) != 1 || pairs[2].Unstable[0] != "mlxcel" {
		t.Errorf("c just past the threshold: %+v", pairs[2])
	}
	if _, _, n := CompareRuntimes(mlxcel, mlxlm, 0); n != 3 {
		t.Errorf("the default threshold: %d ratios, want a, b and c (a spreads 1 %%, c %.1f %%)", n, spreadC)
	}
}
