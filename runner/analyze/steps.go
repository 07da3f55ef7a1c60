package analyze

import (
	"fmt"
	"slices"

	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
)

// Steps splits the decode window into decode steps at a marker: a kernel that runs
// once per step, that is as many times as the window holds steps (the generated tokens,
// or one fewer when the first comes out of the prefill). The count most kernels share
// among tokens-2 to tokens is the step count (results.StepCount), and the first kernel
// of that count in the window is the marker. The whole steps lie between two markers;
// what lies before the first and from the last one on (the edges) is one whole step when
// the window starts and ends on step boundaries. nil, with the reason, when no kernel
// runs once per step.
func Steps(names []string, ds []rocprof.Dispatch, tokens int) (*results.DecodeSteps, string) {
	calls := map[uint32]int{}
	var order []uint32
	for _, d := range ds {
		if calls[d.Name] == 0 {
			order = append(order, d.Name)
		}
		calls[d.Name]++
	}
	counts := make([]int64, len(order))
	for i, n := range order {
		counts[i] = int64(calls[n])
	}
	sc, _ := results.StepCount(counts, int64(tokens))
	steps := int(sc)
	if steps == 0 {
		return nil, fmt.Sprintf("no kernel runs once per step (%d to %d times in the window): the window was not split into steps", max(tokens-2, 2), tokens)
	}
	var marker uint32
	for _, n := range order {
		if calls[n] == steps {
			marker = n
			break
		}
	}
	var at []int
	for i, d := range ds {
		if d.Name == marker {
			at = append(at, i)
		}
	}
	per := make([]int, 0, len(at)-1)
	for i := 1; i < len(at); i++ {
		per = append(per, at[i]-at[i-1])
	}
	slices.Sort(per)
	med := float64(per[len(per)/2])
	if len(per)%2 == 0 {
		med = float64(per[len(per)/2-1]+per[len(per)/2]) / 2
	}
	return &results.DecodeSteps{
		Marker: cut(names[marker], 120), Steps: steps,
		Min: per[0], Median: results.Num(med), Max: per[len(per)-1],
		Edges: at[0] + len(ds) - at[len(at)-1],
	}, ""
}
