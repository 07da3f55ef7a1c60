package abstat

import (
	"errors"
	"fmt"
	"math"

	"github.com/lablup/perfbot/internal/mathx"
)

// Direction says which way of a metric is better.
type Direction int

const (
	HigherIsBetter Direction = iota // tok/s
	LowerIsBetter                   // ms per token
)

func (d Direction) String() string {
	if d == LowerIsBetter {
		return "lower is better"
	}
	return "higher is better"
}

// Verdict is what a comparison says about B against A.
type Verdict string

const (
	Faster   Verdict = "faster" // B is better, significantly
	Slower   Verdict = "slower" // B is worse, significantly
	NoChange Verdict = "no significant change"
	// TooNoisy: not significant, and the interval still reaches past ±SamePct, so a
	// change that matters is not ruled out either.
	TooNoisy Verdict = "too noisy to call"
	TooFew   Verdict = "too few repeats" // fewer than MinRepeats on a side
)

// Called says the verdict is a change (faster or slower).
func (v Verdict) Called() bool { return v == Faster || v == Slower }

// Tests that decide.
const (
	TestMannWhitney = "mann-whitney" // both sides have UMinRepeats or more
	TestWelch       = "welch"        // the smaller side has MinRepeats to UMinRepeats-1
	TestNone        = "none"
)

const (
	// MinRepeats is the fewest repeats per side any test is run on.
	MinRepeats = 3
	// UMinRepeats is the fewest per side for the U test: 3 against 3 cannot go below
	// p = 0.1 (2 of the 20 arrangements are as extreme), 4 against 4 not below 0.029.
	UMinRepeats = 5
)

// Options are the knobs of a comparison.
type Options struct {
	// Alpha is the two-sided significance level; the interval is at 1 - Alpha.
	Alpha float64 `json:"alpha"`
	// SamePct is the margin of "no significant change": a comparison that is not
	// significant says so only when its whole interval lies within ±SamePct percent;
	// otherwise it is too noisy to call.
	SamePct float64 `json:"same_pct"`
}

// DefaultOptions: alpha 0.05, and ±2 % as "the same".
func DefaultOptions() Options { return Options{Alpha: 0.05, SamePct: 2} }

// Validate says what is wrong with the options.
func (o Options) Validate() error {
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		return fmt.Errorf("alpha is %v: give a level between 0 and 0.5", o.Alpha)
	}
	if !(o.SamePct >= 0 && o.SamePct <= 50) {
		return fmt.Errorf("the no-change margin is %v %%: give 0 to 50", o.SamePct)
	}
	return nil
}

// Result is the comparison of B with A for one metric.
type Result struct {
	Direction string  `json:"direction"`
	NA        int     `json:"n_a"`
	NB        int     `json:"n_b"`
	MedianA   float64 `json:"median_a"`
	MedianB   float64 `json:"median_b"`
	// ChangePct is MedianB / MedianA - 1, in percent (positive: B's value is higher,
	// whichever way is better).
	ChangePct float64 `json:"change_pct"`
	// EstimatePct is the deciding method's estimate of the ratio B/A - 1 in percent:
	// the Hodges-Lehmann shift of the logarithms (U test) or the difference of their
	// means (Welch); LoPct and HiPct its interval at Level.
	EstimatePct float64 `json:"estimate_pct"`
	LoPct       float64 `json:"lo_pct"`
	HiPct       float64 `json:"hi_pct"`
	Level       float64 `json:"level"`
	Test        string  `json:"test"`
	P           float64 `json:"p"`
	// AdjustedP is P after Holm's correction over a set of comparisons (0 when no
	// correction was applied).
	AdjustedP float64 `json:"adjusted_p,omitempty"`
	Alpha     float64 `json:"alpha"`
	Verdict   Verdict `json:"verdict"`
	Why       string  `json:"why"`
}

// Compare compares b with a (repeats of one metric) under o. Values must be finite and
// positive (the tests work on their logarithms so that the interval is one of the
// ratio B/A).
func Compare(a, b []float64, dir Direction, o Options) (Result, error) {
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	if err := check("A", a); err != nil {
		return Result{}, err
	}
	if err := check("B", b); err != nil {
		return Result{}, err
	}
	r := Result{Direction: dir.String(), NA: len(a), NB: len(b), Alpha: o.Alpha, Level: 1 - o.Alpha, Test: TestNone, P: 1}
	r.MedianA, r.MedianB = mathx.Median(a), mathx.Median(b)
	r.ChangePct = (r.MedianB/r.MedianA - 1) * 100
	n := min(len(a), len(b))
	if n < MinRepeats {
		r.Verdict = TooFew
		r.Level = 0
		r.Why = fmt.Sprintf("%d against %d repeats: a test needs %d per side", len(a), len(b), MinRepeats)
		return r, nil
	}
	la, lb := logs(a), logs(b)
	var est, lo, hi float64
	if n >= UMinRepeats {
		u := MannWhitney(la, lb)
		r.Test, r.P = TestMannWhitney, u.P
		est, lo, hi, _ = hodgesLehmann(la, lb, o.Alpha)
	} else {
		t := Welch(la, lb)
		r.Test, r.P = TestWelch, t.P
		est = t.Diff
		lo, hi = t.Interval(o.Alpha)
	}
	r.EstimatePct, r.LoPct, r.HiPct = pctOfLog(est), pctOfLog(lo), pctOfLog(hi)
	r.decide(dir, o, r.P)
	return r, nil
}

// decide sets the verdict from p (the test's, or Holm's adjusted one) and the interval.
func (r *Result) decide(dir Direction, o Options, p float64) {
	up := r.LoPct > 0
	down := r.HiPct < 0
	switch {
	case p <= o.Alpha && (up || down):
		r.Verdict = Faster
		if up == (dir == LowerIsBetter) {
			r.Verdict = Slower
		}
		r.Why = fmt.Sprintf("p = %s <= %v and the whole interval is %s zero", fmtP(p), o.Alpha, map[bool]string{true: "above", false: "below"}[up])
	case p <= o.Alpha:
		// Only with ties: the midrank p and the interval can disagree at the edge.
		r.Verdict = NoChange
		if r.LoPct < -o.SamePct || r.HiPct > o.SamePct {
			r.Verdict = TooNoisy
		}
		r.Why = fmt.Sprintf("p = %s but the interval (with tied values) includes zero", fmtP(p))
	case r.LoPct >= -o.SamePct && r.HiPct <= o.SamePct:
		r.Verdict = NoChange
		r.Why = fmt.Sprintf("p = %s > %v and the whole interval is within ±%v %%", fmtP(p), o.Alpha, o.SamePct)
	default:
		r.Verdict = TooNoisy
		r.Why = fmt.Sprintf("p = %s > %v, but the interval reaches past ±%v %%: more repeats or a quieter host are needed", fmtP(p), o.Alpha, o.SamePct)
	}
}

// Text is the result in one line, generated from the numbers it was decided on.
func (r Result) Text() string {
	s := fmt.Sprintf("B %s vs A %s (medians of %d and %d, %s): %s", num(r.MedianB), num(r.MedianA), r.NB, r.NA, r.Direction, signed(r.ChangePct))
	if r.Test == TestNone {
		return s + ": " + string(r.Verdict) + " (" + r.Why + ")"
	}
	test := "Mann-Whitney U"
	if r.Test == TestWelch {
		test = "Welch's t"
	}
	s += fmt.Sprintf(" (%s %% interval %s to %s, %s", trim(r.Level*100), signed(r.LoPct), signed(r.HiPct), test)
	if r.AdjustedP > 0 {
		s += fmt.Sprintf(", p = %s, %s after Holm", fmtP(r.P), fmtP(r.AdjustedP))
	} else {
		s += fmt.Sprintf(", p = %s", fmtP(r.P))
	}
	return s + "): " + string(r.Verdict) + " (" + r.Why + ")"
}

func check(side string, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
			return fmt.Errorf("%s value %d is %v: give finite positive readings", side, i+1, x)
		}
	}
	if len(v) == 0 {
		return errors.New(side + " has no readings")
	}
	return nil
}

func logs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Log(x)
	}
	return out
}

func pctOfLog(d float64) float64 { return math.Expm1(d) * 100 }

func medianSorted(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func signed(p float64) string {
	if math.Abs(p) < 0.005 {
		p = 0
	}
	return fmt.Sprintf("%+.2f %%", p)
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }

func trim(v float64) string { return fmt.Sprintf("%.4g", v) }

func fmtP(p float64) string {
	if p < 0.0001 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.4f", p)
}
