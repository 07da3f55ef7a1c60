package changepoint

import "math/bits"

// MinRuns is the fewest single-model runs Bisect can count on to name the first bad
// commit of a range of commits (both ends included) when the culprit may be anywhere
// (for the worst place of it), with no readings of the ends given: EndRuns at each end, then Start at each commit it measures between them, and
// it must measure at least ceil(log2(commits-1)) of them to single out one of the
// commits-1 candidates when every measured commit splits the candidates left in two.
// It is what a range costs at the least; noise makes it more, the Budget caps it. 0
// when commits is under 2.
func (p BisectParams) MinRuns(commits int) int {
	if commits < 2 {
		return 0
	}
	return 2*p.EndRuns + ceilLog2(commits-1)*p.Start
}

// ceilLog2 is the smallest k with 2^k >= n, for n >= 1.
func ceilLog2(n int) int {
	return bits.Len(uint(n - 1))
}
