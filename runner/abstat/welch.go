package abstat

import "math"

// TTest is the outcome of Welch's two-sample t test of b against a.
type TTest struct {
	// Diff is Mean(b) - Mean(a); SE its standard error, DF the Welch-Satterthwaite
	// degrees of freedom.
	Diff float64 `json:"diff"`
	SE   float64 `json:"se"`
	T    float64 `json:"t"`
	DF   float64 `json:"df"`
	P    float64 `json:"p"` // two-sided
}

// Welch is Welch's unequal-variances t test; both samples need two values or more. Two
// samples with no spread at all give t = 0 and p = 1 when their means are equal and
// p = 0 otherwise.
func Welch(a, b []float64) TTest {
	na, nb := float64(len(a)), float64(len(b))
	qa, qb := SampleVar(a)/na, SampleVar(b)/nb
	r := TTest{Diff: Mean(b) - Mean(a), SE: math.Sqrt(qa + qb)}
	if r.SE == 0 {
		r.P, r.DF = 1, na+nb-2
		if r.Diff != 0 {
			r.T, r.P = math.Copysign(math.Inf(1), r.Diff), 0
		}
		return r
	}
	r.T = r.Diff / r.SE
	r.DF = (qa + qb) * (qa + qb) / (qa*qa/(na-1) + qb*qb/(nb-1))
	r.P = 2 * tTail(math.Abs(r.T), r.DF)
	return r
}

// Interval is the two-sided 1-alpha confidence interval of the difference of means.
func (r TTest) Interval(alpha float64) (lo, hi float64) {
	if r.SE == 0 {
		return r.Diff, r.Diff
	}
	h := tQuantile(1-alpha/2, r.DF) * r.SE
	return r.Diff - h, r.Diff + h
}

// tTail is P(T > t) for Student's t with df degrees of freedom (t >= 0):
// I_{df/(df+t^2)}(df/2, 1/2) / 2.
func tTail(t, df float64) float64 {
	if math.IsInf(t, 1) {
		return 0
	}
	return betaInc(df/2, 0.5, df/(df+t*t)) / 2
}

// tQuantile is the p-quantile of Student's t (p > 0.5), by bisection on tTail.
func tQuantile(p, df float64) float64 {
	lo, hi := 0.0, 1.0
	for tTail(hi, df) > 1-p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tTail(mid, df) > 1-p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// normQuantile is the p-quantile of the standard normal, by bisection on Erfc.
func normQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if 0.5*math.Erfc(-mid/math.Sqrt2) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// betaInc is the regularized incomplete beta function I_x(a, b), by the continued
// fraction of Numerical Recipes (Lentz's method), using the symmetry
// I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges slowly.
func betaInc(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 3e-16 {
			break
		}
	}
	return h
}

// Mean is the arithmetic mean of v (NaN for none).
func Mean(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// SampleVar is the unbiased sample variance (0 for fewer than two values).
func SampleVar(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := Mean(v)
	t := 0.0
	for _, x := range v {
		t += (x - m) * (x - m)
	}
	return t / float64(len(v)-1)
}
