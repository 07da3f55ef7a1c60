package abstat

import (
	"math"
	"slices"
)

// Exact distributions are used up to these sizes; beyond them the normal approximation
// (with the tie correction and a continuity correction) is close enough.
const (
	exactMaxN       = 60      // na+nb for the tie-free distribution
	exactMaxSubsets = 1 << 20 // C(na+nb, na) for the enumeration with ties
)

// UTest is the outcome of a two-sided Mann-Whitney U test of a against b.
type UTest struct {
	// U is the statistic of a: the number of pairs (x from a, y from b) with x > y,
	// ties counting one half.
	U float64 `json:"u"`
	// P is the two-sided p value: twice the smaller tail, at most 1.
	P     float64 `json:"p"`
	Exact bool    `json:"exact"` // P comes from the exact distribution
	Ties  bool    `json:"ties,omitempty"`
}

// MannWhitney tests whether a and b come from the same distribution against a shift
// either way. With no ties and na+nb <= 60 the p value is exact (the distribution of U
// counted over all arrangements); with ties and at most 2^20 arrangements it is exact
// for the midrank statistic (every arrangement enumerated); otherwise it is the normal
// approximation. Both samples need at least one value.
func MannWhitney(a, b []float64) UTest {
	na, nb := len(a), len(b)
	r := UTest{}
	if na == 0 || nb == 0 {
		r.P = 1
		return r
	}
	ranks, ties := midranks(a, b)
	r.Ties = ties
	ra := 0.0
	for i := range na {
		ra += ranks[i]
	}
	r.U = ra - float64(na*(na+1))/2
	switch {
	case !ties && na+nb <= exactMaxN:
		dist := uDist(na, nb)
		u := int(math.Round(r.U))
		lo, hi := 0.0, 0.0
		total := 0.0
		for k, c := range dist {
			total += c
			if k <= u {
				lo += c
			}
			if k >= u {
				hi += c
			}
		}
		r.P, r.Exact = min(1, 2*min(lo, hi)/total), true
	case ties && binom(na+nb, na) <= exactMaxSubsets:
		r.P, r.Exact = tiedExactP(ranks, na, ra), true
	default:
		r.P = normalP(r.U, na, nb, ranks)
	}
	return r
}

// midranks ranks a then b together (1-based, ties sharing their mean rank).
func midranks(a, b []float64) (ranks []float64, ties bool) {
	n := len(a) + len(b)
	all := make([]float64, 0, n)
	all = append(all, a...)
	all = append(all, b...)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		switch {
		case all[x] < all[y]:
			return -1
		case all[x] > all[y]:
			return 1
		}
		return 0
	})
	ranks = make([]float64, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && all[idx[j+1]] == all[idx[i]] {
			j++
		}
		if j > i {
			ties = true
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = r
		}
		i = j + 1
	}
	return ranks, ties
}

// uDist is the number of arrangements of na and nb distinct values giving each U from
// 0 to na*nb: the coefficients of the Gaussian binomial [na+nb choose na](q), built as
// the product over i of (1 - q^(nb+i)) / (1 - q^i). The counts are exact in a float64
// while they stay below 2^53 (na+nb up to 56); beyond that they are rounded, far finer
// than a p value needs.
func uDist(na, nb int) []float64 {
	size := na*nb + 1
	c := make([]float64, size)
	c[0] = 1
	for i := 1; i <= na; i++ {
		// times (1 - q^(nb+i))
		for k := size - 1; k >= nb+i; k-- {
			c[k] -= c[k-nb-i]
		}
		// divided by (1 - q^i): c[k] += c[k-i]
		for k := i; k < size; k++ {
			c[k] += c[k-i]
		}
	}
	return c
}

// tiedExactP enumerates every way of choosing na of the pooled ranks for a and counts
// those whose rank sum is at least as far from its mean as ra (two-sided, by the
// smaller tail doubled).
func tiedExactP(ranks []float64, na int, ra float64) float64 {
	n := len(ranks)
	const eps = 1e-9
	lo, hi, total := 0.0, 0.0, 0.0
	var rec func(start, left int, sum float64)
	rec = func(start, left int, sum float64) {
		if left == 0 {
			total++
			if sum <= ra+eps {
				lo++
			}
			if sum >= ra-eps {
				hi++
			}
			return
		}
		for i := start; i <= n-left; i++ {
			rec(i+1, left-1, sum+ranks[i])
		}
	}
	rec(0, na, 0)
	return min(1, 2*min(lo, hi)/total)
}

// normalP is the two-sided normal approximation of U's p value with the tie correction
// of the variance and a continuity correction of one half.
func normalP(u float64, na, nb int, ranks []float64) float64 {
	n := float64(na + nb)
	fa, fb := float64(na), float64(nb)
	mu := fa * fb / 2
	// tie correction: sum over tie groups of t^3 - t
	counts := map[float64]float64{}
	for _, r := range ranks {
		counts[r]++
	}
	tc := 0.0
	for _, t := range counts {
		tc += t*t*t - t
	}
	v := fa * fb / 12 * ((n + 1) - tc/(n*(n-1)))
	if v <= 0 {
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / math.Sqrt(v)
	if z < 0 {
		return 1
	}
	return min(1, math.Erfc(z/math.Sqrt2))
}

// binom is C(n, k) as a float64.
func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}

// uCritical is the largest c with P(U <= c) <= tail under the exact tie-free
// distribution of na, nb (-1 when even U = 0 is more likely than tail).
func uCritical(na, nb int, tail float64) int {
	dist := uDist(na, nb)
	total := 0.0
	for _, c := range dist {
		total += c
	}
	cum := 0.0
	for k, c := range dist {
		cum += c
		if cum/total > tail*(1+1e-12) {
			return k - 1
		}
	}
	return len(dist) - 1
}

// hodgesLehmann is the median of the pairwise differences y - x (y from b, x from a)
// and the distribution-free interval around it that the U test at level alpha
// inverts: the (c+1)-th smallest and largest differences, with c the exact critical U
// (Bauer 1972; Hollander and Wolfe). ok is false when no interval at that level exists
// (too few values) or the sizes are beyond the exact distribution, where the normal
// approximation of c is used instead.
func hodgesLehmann(a, b []float64, alpha float64) (est, lo, hi float64, ok bool) {
	d := make([]float64, 0, len(a)*len(b))
	for _, y := range b {
		for _, x := range a {
			d = append(d, y-x)
		}
	}
	slices.Sort(d)
	est = medianSorted(d)
	na, nb := len(a), len(b)
	var c int
	if na+nb <= exactMaxN {
		c = uCritical(na, nb, alpha/2)
	} else {
		mu := float64(na*nb) / 2
		sd := math.Sqrt(float64(na*nb*(na+nb+1)) / 12)
		c = int(math.Floor(mu - normQuantile(1-alpha/2)*sd - 0.5))
	}
	if c < 0 {
		return est, d[0], d[len(d)-1], false
	}
	return est, d[c], d[len(d)-1-c], true
}
