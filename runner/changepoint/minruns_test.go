package changepoint

import (
	"context"
	"fmt"
	"testing"
)

// MinRuns at its edges, and never more than a noiseless bisection makes for the
// culprit in its worst place.
func TestMinRuns(t *testing.T) {
	t.Parallel()
	p := DefaultBisectParams() // 4 runs per end, 3 at a new commit
	for _, c := range []struct{ commits, want int }{
		{0, 0}, {1, 0}, {2, 8}, {3, 11}, {4, 14}, {5, 14}, {6, 17}, {9, 17}, {10, 20}, {33, 23}, {64, 26}, {65, 26}, {66, 29}, {1024, 38},
	} {
		if got := p.MinRuns(c.commits); got != c.want {
			t.Errorf("MinRuns(%d) = %d, want %d", c.commits, got, c.want)
		}
	}
	// A step of 50 % with almost no noise: Bisect needs about the least, never less.
	for _, n := range []int{2, 3, 5, 9, 17, 40} {
		most := 0
		for culprit := 1; culprit < n; culprit++ {
			commits := make([]string, n)
			for i := range commits {
				commits[i] = fmt.Sprint("c", i)
			}
			measure := func(_ context.Context, c string, k int) ([]float64, error) {
				var i int
				fmt.Sscanf(c, "c%d", &i)
				v := make([]float64, k)
				for j := range v {
					v[j] = 100 + 0.01*float64(j%2)
					if i >= culprit {
						v[j] = 150 + 0.01*float64(j%2)
					}
				}
				return v, nil
			}
			r, err := Bisect(context.Background(), commits, measure, p)
			if err != nil || r.Outcome != Found {
				t.Fatalf("%d commits, culprit %d: %v %v", n, culprit, r.Outcome, err)
			}
			most = max(most, r.Runs)
		}
		if most < p.MinRuns(n) {
			t.Errorf("%d commits: at most %d runs wherever the culprit is, fewer than MinRuns %d", n, most, p.MinRuns(n))
		}
	}
}
