package analyze

import (
	"testing"

	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
)

// stepWindow lays out a decode window from its steps, each a list of kernel indexes,
// and the dispatches after the last marker (tail).
func stepWindow(steps [][]uint32, tail ...uint32) []rocprof.Dispatch {
	var ds []rocprof.Dispatch
	for _, s := range steps {
		for _, n := range s {
			ds = append(ds, rocprof.Dispatch{Name: n})
		}
	}
	for _, n := range tail {
		ds = append(ds, rocprof.Dispatch{Name: n})
	}
	return ds
}

// repeat gives n copies of one step.
func repeat(step []uint32, n int) [][]uint32 {
	out := make([][]uint32, n)
	for i := range out {
		out[i] = step
	}
	return out
}

var stepNames = []string{"embed", "gemv", "norm", "argmax", "copy", "rope"}

// The step count is a call count from tokens-2 to tokens, and at least two: a window of
// exactly tokens-2 steps is split, one of tokens-3 is not; a window of two steps (three
// generated tokens, or two) is split, one of a single step is not.
func TestStepCountRangeAtItsEdges(t *testing.T) {
	t.Parallel()
	// embed, norm and argmax run once a step, gemv four times: a step of seven.
	step := []uint32{0, 1, 2, 1, 1, 1, 3}
	cases := []struct {
		name   string
		steps  int
		tokens int
		want   int // 0: not split
		why    string
	}{
		{"tokens-2 steps", 5, 7, 5, ""},
		{"tokens-3 steps", 5, 8, 0, "no kernel runs once per step (6 to 8 times in the window): the window was not split into steps"},
		{"tokens steps", 5, 5, 5, ""},
		{"two steps of three tokens", 2, 3, 2, ""},
		{"two steps of two tokens", 2, 2, 2, ""},
		{"two steps of four tokens", 2, 4, 2, ""},
		{"one step", 1, 2, 0, "no kernel runs once per step (2 to 2 times in the window): the window was not split into steps"},
		{"one step of three tokens", 1, 3, 0, "no kernel runs once per step (2 to 3 times in the window): the window was not split into steps"},
	}
	for _, c := range cases {
		st, why := Steps(stepNames, stepWindow(repeat(step, c.steps)), c.tokens)
		switch {
		case c.want == 0 && (st != nil || why != c.why):
			t.Errorf("%s: %+v %q, want %q", c.name, st, why, c.why)
		case c.want != 0 && (st == nil || why != ""):
			t.Errorf("%s: not split: %q", c.name, why)
		case c.want != 0 && (st.Steps != c.want || st.Marker != "embed" || st.Min != 7 || st.Median != 7 || st.Max != 7 || st.Edges != 7):
			t.Errorf("%s: %+v, want %d steps of 7 dispatches marked by embed", c.name, st, c.want)
		}
	}
}

// The step count is the one most kernels share, however many times each of them runs:
// three kernels that run 4 times outvote two that run 6 times. When as many kernels run
// each count, the larger count is the step count.
func TestStepCountIsTheOneMostKernelsShare(t *testing.T) {
	t.Parallel()
	// embed, norm and argmax run once a step (4 steps of 7 dispatches), gemv twice;
	// copy and rope once a step and twice more after the last step: 6 times each.
	ds := stepWindow(repeat([]uint32{0, 4, 1, 1, 5, 2, 3}, 4), 4, 5, 4, 5)
	st, why := Steps(stepNames, ds, 6)
	if st == nil || st.Steps != 4 || st.Marker != "embed" || st.Min != 7 || st.Median != 7 || st.Max != 7 || st.Edges != 7+4 {
		t.Errorf("three kernels at 4, two at 6: %+v %q, want 4 steps of 7 dispatches marked by embed, edges 11", st, why)
	}
	// Two kernels run 3 times (embed, argmax), two 5 times (copy, rope), gemv 6 times
	// and norm twice: 5 wins, and copy, the first kernel in the window that runs 5
	// times, marks the steps.
	ds = stepWindow(repeat([]uint32{0, 4, 1, 1, 5, 3}, 3), 4, 5, 2, 4, 5, 2)
	st, why = Steps(stepNames, ds, 5)
	if st == nil || st.Steps != 5 || st.Marker != "copy" || st.Min != 3 || st.Median != results.Num(5.5) || st.Max != 6 || st.Edges != 1+3 {
		t.Errorf("a tie of two kernels at 3 and two at 5: %+v %q, want 5 steps marked by copy", st, why)
	}
}

// The median of the whole steps' dispatches is the middle one of an odd number of
// steps and the mean of the two middle ones of an even number.
func TestStepsMedianOfOddAndEvenStepCounts(t *testing.T) {
	t.Parallel()
	step := func(n int) []uint32 { // embed and n-1 gemvs
		s := []uint32{0}
		for range n - 1 {
			s = append(s, 1)
		}
		return s
	}
	// Three whole steps of 3, 6 and 4 dispatches, then a last one of 4.
	st, why := Steps(stepNames, stepWindow([][]uint32{step(3), step(6), step(4), step(4)}), 4)
	if st == nil || st.Steps != 4 || st.Min != 3 || st.Median != 4 || st.Max != 6 || st.Edges != 4 {
		t.Errorf("odd: %+v %q, want min 3, median 4, max 6", st, why)
	}
	// Four whole steps of 6, 3, 6 and 4 dispatches: the middle ones are 4 and 6.
	st, why = Steps(stepNames, stepWindow([][]uint32{step(6), step(3), step(6), step(4), step(4)}), 5)
	if st == nil || st.Steps != 5 || st.Min != 3 || st.Median != results.Num(5) || st.Max != 6 || st.Edges != 4 {
		t.Errorf("even: %+v %q, want min 3, median 5, max 6", st, why)
	}
	// Four whole steps of 3, 4, 6 and 5: the middle ones are 4 and 5.
	st, why = Steps(stepNames, stepWindow([][]uint32{step(3), step(4), step(6), step(5), step(4)}), 5)
	if st == nil || st.Median != results.Num(4.5) {
		t.Errorf("even, a half: %+v %q, want median 4.5", st, why)
	}
}
