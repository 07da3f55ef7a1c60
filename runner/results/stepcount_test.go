package results

import "testing"

// The step count is the count most kernels share from tokens-2 to tokens (and at least
// 2), each edge of the range included, the larger on a tie whatever the order the
// kernels come in.
func TestStepCountAtItsEdges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		counts  []int64
		tokens  int64
		steps   int64
		kernels int
	}{
		{"tokens", []int64{64, 64, 64, 1, 128}, 64, 64, 3},
		{"tokens-1", []int64{63, 63, 7}, 64, 63, 2},
		{"tokens-2", []int64{62, 62, 61}, 64, 62, 2},
		{"tokens-3 is out", []int64{61, 61, 61}, 64, 0, 0},
		{"tokens+1 is out", []int64{65, 65}, 64, 0, 0},
		{"two at least", []int64{2, 2, 1}, 3, 2, 2},
		{"one is no step count", []int64{1, 1, 1}, 3, 0, 0},
		{"the most shared", []int64{63, 64, 63, 64, 63}, 64, 63, 3},
		{"a tie goes to the larger", []int64{63, 64, 63, 64}, 64, 64, 2},
		{"a tie goes to the larger in any order", []int64{64, 63, 64, 63}, 64, 64, 2},
		{"no kernels", nil, 64, 0, 0},
	} {
		// The map behind the count has no order: a tie decided by it would change
		// between calls.
		for range 32 {
			if steps, kernels := StepCount(tc.counts, tc.tokens); steps != tc.steps || kernels != tc.kernels {
				t.Fatalf("%s: %d steps shared by %d kernels, want %d by %d", tc.name, steps, kernels, tc.steps, tc.kernels)
			}
		}
	}
}
