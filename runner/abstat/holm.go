package abstat

import (
	"fmt"
	"slices"
)

// Holm returns Holm's step-down adjusted p values: sorted ascending, the i-th smallest
// (from 0) is multiplied by m - i, kept at least as large as the one before, and capped
// at 1. Rejecting every hypothesis whose adjusted p is <= alpha keeps the chance of
// any false rejection within alpha, whatever the dependence between the tests.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		switch {
		case ps[x] < ps[y]:
			return -1
		case ps[x] > ps[y]:
			return 1
		}
		return 0
	})
	adj := make([]float64, m)
	run := 0.0
	for i, k := range idx {
		run = max(run, min(1, float64(m-i)*ps[k]))
		adj[k] = run
	}
	return adj
}

// CorrectHolm applies Holm's correction to a set of comparisons made at o.Alpha (the
// models or metrics of one A/B): each tested result gets its AdjustedP and is decided
// again on it, so a change is called only when it survives the correction. Results
// without a test (too few repeats) are not part of the family. The intervals are the
// per-comparison ones; a result that loses its call keeps its interval and says why.
func CorrectHolm(rs []Result, dirs []Direction, o Options) ([]Result, error) {
	if len(dirs) != len(rs) {
		return nil, fmt.Errorf("%d results but %d directions", len(rs), len(dirs))
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	out := slices.Clone(rs)
	var ps []float64
	var at []int
	for i, r := range out {
		if r.Test != TestNone {
			ps = append(ps, r.P)
			at = append(at, i)
		}
	}
	adj := Holm(ps)
	for j, i := range at {
		r := &out[i]
		r.AdjustedP = adj[j]
		was := r.Verdict
		r.decide(dirs[i], o, adj[j])
		if was.Called() && !r.Verdict.Called() {
			r.Why = fmt.Sprintf("p = %s alone, but %s after Holm's correction over %d comparisons > %v", fmtP(r.P), fmtP(adj[j]), len(ps), o.Alpha)
		} else if len(ps) > 1 {
			r.Why += fmt.Sprintf(" (Holm over %d comparisons)", len(ps))
		}
	}
	return out, nil
}
