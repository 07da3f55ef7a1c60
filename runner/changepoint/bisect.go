package changepoint

import (
	"fmt"
	"math"
	"slices"

	"github.com/lablup/perfbot/internal/mathx"
	"github.com/lablup/perfbot/runner/abstat"
)

// Measure runs commit n times and returns its readings (one metric, one model). On the
// host each call is a guarded GPU run; an error stops the bisection.
type Measure func(commit string, n int) ([]float64, error)

// BisectParams are the knobs of Bisect.
type BisectParams struct {
	// ErrorRate is the chance of a wrong side Wald's test allows at each midpoint: a
	// midpoint is decided when the log likelihood ratio passes log((1-e)/e).
	ErrorRate float64 `json:"error_rate"`
	// EndRuns are the first repeats of each end when Good or Bad is not given; Start the
	// first repeats at a midpoint, Step the repeats added while undecided, MaxPerCommit
	// the most at one commit, Budget the most in all (the ends included).
	EndRuns      int `json:"end_runs"`
	Start        int `json:"start"`
	Step         int `json:"step"`
	MaxPerCommit int `json:"max_per_commit"`
	// ReserveRuns is what a midpoint leaves of the budget for each midpoint after it.
	ReserveRuns int `json:"reserve_runs"`
	Budget      int `json:"budget"`
	// EndAlpha is the level at which Welch's test must find the ends different before
	// any midpoint is measured.
	EndAlpha float64 `json:"end_alpha"`
	// MinSigmaPct floors the noise of one run, in percent.
	MinSigmaPct float64 `json:"min_sigma_pct"`
	// Good and Bad are readings of the ends already taken (the A/B re-measure's); they
	// count toward neither the budget nor Runs.
	Good []float64 `json:"good,omitempty"`
	Bad  []float64 `json:"bad,omitempty"`
}

// DefaultBisectParams: 1 % error per midpoint, 3 then 2 at a time up to 16 per commit, 5
// kept for each later midpoint, 6 per end, 60 runs in all.
func DefaultBisectParams() BisectParams {
	return BisectParams{ErrorRate: 0.01, EndRuns: 6, Start: 3, Step: 2, MaxPerCommit: 16, ReserveRuns: 5, Budget: 60, EndAlpha: 0.05, MinSigmaPct: 0.5}
}

// Validate says what is wrong with the parameters.
func (p BisectParams) Validate() error {
	switch {
	case !(p.ErrorRate > 0 && p.ErrorRate < 0.5):
		return fmt.Errorf("the error rate is %v: give 0 to 0.5", p.ErrorRate)
	case p.Start < 2 || p.Step < 1 || p.EndRuns < abstat.MinRepeats || p.MaxPerCommit < max(p.Start, p.EndRuns):
		return fmt.Errorf("the repeats (start %d, step %d, ends %d, cap %d) are out of range: start >= 2, ends >= %d, the cap at least both", p.Start, p.Step, p.EndRuns, p.MaxPerCommit, abstat.MinRepeats)
	case p.Budget < 1 || p.Budget > 100000 || p.ReserveRuns < 0:
		return fmt.Errorf("the budget is %d runs: give 1 to 100000", p.Budget)
	case !(p.EndAlpha > 0 && p.EndAlpha < 0.5) || !(p.MinSigmaPct > 0 && p.MinSigmaPct < 50):
		return fmt.Errorf("the ends' level (%v) or the noise floor (%v %%) is out of range", p.EndAlpha, p.MinSigmaPct)
	}
	for _, v := range append(append([]float64(nil), p.Good...), p.Bad...) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("a given reading of an end is %v: give finite positive values", v)
		}
	}
	return nil
}

// Outcome is how a bisection ended.
type Outcome string

const (
	Found         Outcome = "found"          // every midpoint decided by the test
	Undecided     Outcome = "undecided"      // a midpoint was decided by the cap, or the budget ran out
	NotReproduced Outcome = "not reproduced" // the ends do not differ
)

// BisectStep is one measured commit.
type BisectStep struct {
	Index  int       `json:"index"`
	Commit string    `json:"commit"`
	Runs   []float64 `json:"runs"`
	// Side is "good" or "bad"; LLR the log likelihood ratio of good against bad when it
	// was decided; Decided is false when the cap or the budget decided it by the sign.
	Side    string  `json:"side"`
	LLR     float64 `json:"llr"`
	Decided bool    `json:"decided"`
	// PGood and PBad are Welch's p values of its runs against each side's runs.
	PGood float64 `json:"p_good"`
	PBad  float64 `json:"p_bad"`
}

// BisectResult is the outcome of Bisect.
type BisectResult struct {
	Outcome Outcome `json:"outcome"`
	// Lo and Hi are the indexes of the last commit known good and the first known bad;
	// FirstBad is commits[Hi] when Lo+1 == Hi (Found or Undecided), else "".
	Lo       int    `json:"lo"`
	Hi       int    `json:"hi"`
	FirstBad string `json:"first_bad,omitempty"`
	LastGood string `json:"last_good,omitempty"`
	// Runs is the single-model runs measured (readings passed in are not counted).
	Runs int `json:"runs"`
	// EndsP is Welch's p value of the ends; ChangePct the bad end against the good one.
	EndsP     float64 `json:"ends_p"`
	ChangePct float64 `json:"change_pct"`
	// Confidence is the product over the midpoints of the chosen side's probability by
	// its likelihood ratio (equal prior odds).
	Confidence float64      `json:"confidence"`
	Steps      []BisectStep `json:"steps"`
	Why        string       `json:"why"`
}

// Bisect finds the first bad commit of commits (oldest first): commits[0] is the last
// known good and the last one the first known bad, and one step between them is
// assumed. On a measure error the result so far is returned with the error.
func Bisect(commits []string, measure Measure, p BisectParams) (BisectResult, error) {
	if err := p.Validate(); err != nil {
		return BisectResult{}, err
	}
	if len(commits) < 2 {
		return BisectResult{}, fmt.Errorf("%d commits: give the last good, the first bad and any between", len(commits))
	}
	if measure == nil {
		return BisectResult{}, fmt.Errorf("no measure function")
	}
	b := &bisector{p: p, measure: measure, commits: commits}
	lo, hi := 0, len(commits)-1
	r := BisectResult{Lo: lo, Hi: hi, Confidence: 1}
	done := func(o Outcome, why string) (BisectResult, error) {
		r.Outcome, r.Why, r.Runs, r.Lo, r.Hi = o, why, b.runs, lo, hi
		if o != NotReproduced && hi == lo+1 {
			r.FirstBad, r.LastGood = commits[hi], commits[lo]
		}
		return r, nil
	}
	fail := func(err error) (BisectResult, error) {
		r.Runs, r.Lo, r.Hi = b.runs, lo, hi
		r.Outcome, r.Why = Undecided, err.Error()
		return r, err
	}
	// The ends.
	b.good, b.bad = logs(p.Good), logs(p.Bad)
	b.groups = [][]float64{b.good, b.bad}
	for _, side := range []*[]float64{&b.good, &b.bad} {
		if need := p.EndRuns - len(*side); need > 0 {
			c := commits[lo]
			if side == &b.bad {
				c = commits[hi]
			}
			v, err := b.run(c, need)
			if err != nil {
				return fail(err)
			}
			*side = append(*side, v...)
		}
	}
	for {
		t := abstat.Welch(b.good, b.bad)
		r.EndsP, r.ChangePct = t.P, pctOfLog(t.Diff)
		if t.P <= p.EndAlpha {
			break
		}
		if len(b.good) >= p.MaxPerCommit && len(b.bad) >= p.MaxPerCommit || b.runs+2*p.Step > p.Budget {
			return done(NotReproduced, fmt.Sprintf("the ends differ by %+.2f %% with p = %.3g > %v after %d and %d runs: the change is not reproduced", r.ChangePct, t.P, p.EndAlpha, len(b.good), len(b.bad)))
		}
		g, err := b.run(commits[lo], p.Step)
		if err != nil {
			return fail(err)
		}
		bd, err := b.run(commits[hi], p.Step)
		if err != nil {
			return fail(err)
		}
		b.good, b.bad = append(b.good, g...), append(b.bad, bd...)
	}
	b.groups = [][]float64{b.good, b.bad}
	undecided := 0
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if b.runs+p.Start > p.Budget {
			return done(Undecided, fmt.Sprintf("the budget of %d runs is spent with %d commits left between %s and %s", p.Budget, hi-lo-1, commits[lo], commits[hi]))
		}
		m, err := b.run(commits[mid], p.Start)
		if err != nil {
			return fail(err)
		}
		st := BisectStep{Index: mid, Commit: commits[mid]}
		a := math.Log((1 - p.ErrorRate) / p.ErrorRate)
		// Each midpoint still to come after this one (about log2 of the commits left)
		// keeps ReserveRuns of the budget.
		left := int(math.Ceil(math.Log2(float64(hi - lo))))
		allowance := p.Budget - p.Start - (left-1)*p.ReserveRuns
		for {
			st.LLR = b.llr(m)
			if math.Abs(st.LLR) >= a {
				st.Decided = true
				break
			}
			if b.runs+p.Step > min(p.Budget, allowance+p.Start) {
				break
			}
			// The levels the midpoint is judged against are estimates too: while the
			// midpoint has as many runs as the smaller side, that side gets them.
			if small := min(len(b.good), len(b.bad)); len(m) >= small && small+p.Step <= 2*p.MaxPerCommit {
				end, side := commits[lo], &b.good
				if len(b.bad) < len(b.good) {
					end, side = commits[hi], &b.bad
				}
				more, err := b.run(end, p.Step)
				if err != nil {
					return fail(err)
				}
				*side = append(*side, more...)
				b.groups = append(b.groups, more)
				continue
			}
			if len(m)+p.Step > p.MaxPerCommit {
				break
			}
			more, err := b.run(commits[mid], p.Step)
			if err != nil {
				return fail(err)
			}
			m = append(m, more...)
		}
		st.PGood, st.PBad = abstat.Welch(b.good, m).P, abstat.Welch(b.bad, m).P
		st.Runs = exps(m)
		r.Confidence *= 1 / (1 + math.Exp(-math.Abs(st.LLR)))
		if !st.Decided {
			undecided++
		}
		b.groups = append(b.groups, m)
		if st.LLR >= 0 {
			st.Side, lo = "good", mid
			b.good = append(b.good, m...)
		} else {
			st.Side, hi = "bad", mid
			b.bad = append(b.bad, m...)
		}
		r.Steps = append(r.Steps, st)
	}
	if undecided > 0 {
		return done(Undecided, fmt.Sprintf("%s is the first bad commit, but %d midpoint(s) were decided by the cap or the budget, not the test (confidence %.3f)", commits[hi], undecided, r.Confidence))
	}
	return done(Found, fmt.Sprintf("%s is the first bad commit (%d runs, confidence %.3f)", commits[hi], b.runs, r.Confidence))
}

type bisector struct {
	p         BisectParams
	measure   Measure
	commits   []string
	runs      int
	good, bad []float64   // logarithms of the runs on each side
	groups    [][]float64 // the runs of each measured commit, for the pooled noise
}

// run measures commit n times and checks the readings.
func (b *bisector) run(commit string, n int) ([]float64, error) {
	v, err := b.measure(commit, n)
	b.runs += len(v)
	if err != nil {
		return nil, fmt.Errorf("measuring %s: %w", commit, err)
	}
	if len(v) != n {
		return nil, fmt.Errorf("measuring %s: %d readings for %d runs", commit, len(v), n)
	}
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
			return nil, fmt.Errorf("measuring %s: the reading %v is not a finite positive value", commit, x)
		}
	}
	return logs(v), nil
}

// llr is the log likelihood ratio of "m is at the good level" against "at the bad
// level": the mean of m against each side's mean, with the standard error of both from
// the noise pooled over every measured commit.
func (b *bisector) llr(m []float64) float64 {
	// Heavy tails: every run is clipped to its commit's median +- clipSigmas robust
	// standard deviations (1.4826 x the median absolute deviation of every run from its
	// commit's median) before the means and the variance are taken.
	groups := append(slices.Clone(b.groups), m)
	var dev []float64
	for _, g := range groups {
		md := mathx.Median(g)
		for _, x := range g {
			dev = append(dev, math.Abs(x-md))
		}
	}
	lim := clipSigmas * 1.4826 * mathx.Median(dev)
	clip := func(g []float64) []float64 {
		md := mathx.Median(g)
		out := make([]float64, len(g))
		for i, x := range g {
			out[i] = min(max(x, md-lim), md+lim)
		}
		return out
	}
	if lim > 0 {
		for i, g := range groups {
			groups[i] = clip(g)
		}
	}
	ss, df := 0.0, 0
	for _, g := range groups {
		if len(g) > 1 {
			ss += abstat.SampleVar(g) * float64(len(g)-1)
			df += len(g) - 1
		}
	}
	good, bad := b.good, b.bad
	if lim > 0 {
		m, good, bad = groups[len(groups)-1], clip(good), clip(bad)
	}
	s2 := math.Pow(math.Log1p(b.p.MinSigmaPct/100), 2)
	if df > 0 {
		s2 = max(s2, ss/float64(df))
	}
	n := float64(len(m))
	vg := s2 * (1/n + 1/float64(len(good)))
	vb := s2 * (1/n + 1/float64(len(bad)))
	mm := abstat.Mean(m)
	dg, db := mm-abstat.Mean(good), mm-abstat.Mean(bad)
	return (db*db/vb-dg*dg/vg)/2 + 0.5*math.Log(vb/vg)
}

// clipSigmas is where a run is clipped, in robust standard deviations from its commit's
// median.
const clipSigmas = 3.0

func logs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Log(x)
	}
	return out
}

func exps(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Exp(x)
	}
	return out
}
