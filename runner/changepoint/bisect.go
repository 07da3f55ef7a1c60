package changepoint

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/lablup/perfbot/internal/mathx"
	"github.com/lablup/perfbot/runner/abstat"
)

// Measure runs commit n times and returns its readings (one metric, one model). On the
// host each call is a guarded GPU run; an error stops the bisection. It should stop
// promptly when ctx is cancelled.
type Measure func(ctx context.Context, commit string, n int) ([]float64, error)

// BisectParams are the knobs of Bisect.
type BisectParams struct {
	// ErrorRate: the bisection stops when one commit is the first bad one with a
	// posterior probability of at least 1 - ErrorRate.
	ErrorRate float64 `json:"error_rate"`
	// EndRuns are the first repeats of each end when Good or Bad does not have them;
	// Start the first repeats of a commit between, Step the repeats added to a commit
	// measured before, MaxPerCommit the most at one commit, Budget the most in all (the
	// ends included).
	EndRuns      int `json:"end_runs"`
	Start        int `json:"start"`
	Step         int `json:"step"`
	MaxPerCommit int `json:"max_per_commit"`
	Budget       int `json:"budget"`
	// EndAlpha is the level at which Welch's test must find the ends different before
	// any commit between them is measured.
	EndAlpha float64 `json:"end_alpha"`
	// MinSigmaPct is a floor on the noise of one run, in percent (a prior: a few
	// identical readings do not make a certainty).
	MinSigmaPct float64 `json:"min_sigma_pct"`
	// Likelihood is the model of one run around its side's level: LikelihoodRobust (the
	// default, also when empty) or LikelihoodNormal.
	Likelihood string `json:"likelihood,omitempty"`
	// Good and Bad are readings of the ends already taken (the A/B re-measure's); they
	// count toward neither the budget nor Runs.
	Good []float64 `json:"good,omitempty"`
	Bad  []float64 `json:"bad,omitempty"`
}

// DefaultBisectParams: stop at a 99 % posterior, 4 runs per end, 3 at a new commit and 2
// more at a time, at most 24 per commit and 80 in all (a 5 % step at 3 % noise over 32
// commits takes 45 to 55 on average: bench/changepoint.sh), the robust likelihood.
func DefaultBisectParams() BisectParams {
	return BisectParams{ErrorRate: 0.01, EndRuns: 4, Start: 3, Step: 2, MaxPerCommit: 24, Budget: 80, EndAlpha: 0.05, MinSigmaPct: 0.5}
}

// The likelihoods of BisectParams.Likelihood.
const (
	// LikelihoodRobust: each run is Student's t with TDF degrees of freedom or normal
	// (even odds, the runs decide) around its side's level, the levels and the scale
	// integrated out on a grid: an odd run of heavy-tailed GPU noise weighs little,
	// and normal noise loses nothing.
	LikelihoodRobust = "robust"
	// LikelihoodNormal: each run is normal around its side's level, the levels and the
	// noise integrated out in closed form, odd runs clipped at 4 robust deviations from
	// their commit's median.
	LikelihoodNormal = "normal"
)

// Validate says what is wrong with the parameters.
func (p BisectParams) Validate() error {
	switch {
	case !(p.ErrorRate > 0 && p.ErrorRate < 0.5):
		return fmt.Errorf("the error rate is %v: give 0 to 0.5", p.ErrorRate)
	case p.Start < 1 || p.Step < 1 || p.EndRuns < abstat.MinRepeats || p.MaxPerCommit < max(p.Start, p.EndRuns):
		return fmt.Errorf("the repeats (start %d, step %d, ends %d, cap %d) are out of range: ends >= %d, the cap at least the start and the ends", p.Start, p.Step, p.EndRuns, p.MaxPerCommit, abstat.MinRepeats)
	case p.Budget < 1 || p.Budget > 100000:
		return fmt.Errorf("the budget is %d runs: give 1 to 100000", p.Budget)
	case !(p.EndAlpha > 0 && p.EndAlpha < 0.5) || !(p.MinSigmaPct > 0 && p.MinSigmaPct < 50):
		return fmt.Errorf("the ends' level (%v) or the noise floor (%v %%) is out of range", p.EndAlpha, p.MinSigmaPct)
	case p.Likelihood != "" && p.Likelihood != LikelihoodRobust && p.Likelihood != LikelihoodNormal:
		return fmt.Errorf("the likelihood is %q: give %q or %q", p.Likelihood, LikelihoodRobust, LikelihoodNormal)
	}
	for _, v := range slices.Concat(p.Good, p.Bad) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("a given reading of an end is %v: give finite positive values", v)
		}
	}
	return nil
}

// Outcome is how a bisection ended.
type Outcome string

const (
	Found         Outcome = "found"          // one commit reached the posterior of 1 - ErrorRate
	Undecided     Outcome = "undecided"      // the budget or the caps ran out first: the most likely commit is named
	NotReproduced Outcome = "not reproduced" // the ends do not differ
)

// BisectStep is one measured commit.
type BisectStep struct {
	Index  int       `json:"index"`
	Commit string    `json:"commit"`
	Runs   []float64 `json:"runs"`
	// PBad is the posterior probability that the commit is at the bad level (the first
	// bad commit is at or before it); Side is "good" or "bad" by the most likely first
	// bad commit.
	PBad float64 `json:"p_bad"`
	Side string  `json:"side"`
	// WelchGood and WelchBad are Welch's p values of its runs against the runs of every
	// other commit of each side (0 when a side has no other runs or it has fewer than 2).
	WelchGood float64 `json:"welch_good"`
	WelchBad  float64 `json:"welch_bad"`
}

// BisectResult is the outcome of Bisect.
type BisectResult struct {
	Outcome Outcome `json:"outcome"`
	// Hi is the index of the most likely first bad commit and Lo = Hi - 1; FirstBad and
	// LastGood their commits (empty when not reproduced).
	Lo       int    `json:"lo"`
	Hi       int    `json:"hi"`
	FirstBad string `json:"first_bad,omitempty"`
	LastGood string `json:"last_good,omitempty"`
	// Runs is the single-model runs measured (readings passed in are not counted).
	Runs int `json:"runs"`
	// EndsP is Welch's p value of the ends; ChangePct the bad end against the good one.
	EndsP     float64 `json:"ends_p"`
	ChangePct float64 `json:"change_pct"`
	// Confidence is the posterior probability of FirstBad.
	Confidence float64      `json:"confidence"`
	Steps      []BisectStep `json:"steps"`
	Why        string       `json:"why"`
}

// Bisect finds the first bad commit of commits (oldest first): commits[0] is the last
// known good and the last one the first known bad, and one step between them is
// assumed. On a measure error, or when ctx is cancelled (checked before every
// measurement: a cancelled bisection starts none), the result so far is returned with
// the error (Undecided, the most likely commit so far named). The context changes
// nothing else: the same readings give the same steps and result.
func Bisect(ctx context.Context, commits []string, measure Measure, p BisectParams) (BisectResult, error) {
	if err := p.Validate(); err != nil {
		return BisectResult{}, err
	}
	if len(commits) < 2 {
		return BisectResult{}, fmt.Errorf("%d commits: give the last good, the first bad and any between", len(commits))
	}
	if measure == nil {
		return BisectResult{}, fmt.Errorf("no measure function")
	}
	n := len(commits)
	b := &bisector{ctx: ctx, p: p, measure: measure, commits: commits, runs: map[int][]float64{}}
	b.runs[0], b.runs[n-1] = logs(p.Good), logs(p.Bad)
	r := BisectResult{}
	finish := func(o Outcome, why string) BisectResult {
		r.Outcome, r.Runs = o, b.used
		if o != NotReproduced {
			post := b.posterior()
			c := 1
			for k := range post {
				if post[k] > post[c] {
					c = k
				}
			}
			r.Hi, r.Lo, r.Confidence = c, c-1, post[c]
			r.FirstBad, r.LastGood = commits[c], commits[c-1]
			cdf := 0.0
			for k := range n {
				if k > 0 {
					cdf += post[k]
				}
				if len(b.runs[k]) == 0 {
					continue
				}
				st := BisectStep{Index: k, Commit: commits[k], Runs: exps(b.runs[k]), PBad: min(1, cdf), Side: "good"}
				if k >= c {
					st.Side = "bad"
				}
				var good, bad []float64
				for _, j := range slices.Sorted(maps.Keys(b.runs)) { // in order: the same sums every time
					v := b.runs[j]
					switch {
					case j == k:
					case j < c:
						good = append(good, v...)
					default:
						bad = append(bad, v...)
					}
				}
				if len(b.runs[k]) > 1 && len(good) > 1 {
					st.WelchGood = abstat.Welch(good, b.runs[k]).P
				}
				if len(b.runs[k]) > 1 && len(bad) > 1 {
					st.WelchBad = abstat.Welch(bad, b.runs[k]).P
				}
				r.Steps = append(r.Steps, st)
			}
			why = fmt.Sprintf("%s is the first bad commit with a posterior of %.3f after %d runs: %s", commits[c], r.Confidence, b.used, why)
		}
		r.Why = why
		return r
	}
	fail := func(err error) (BisectResult, error) {
		return finish(Undecided, err.Error()), err
	}
	// The ends.
	for _, k := range []int{0, n - 1} {
		if need := p.EndRuns - len(b.runs[k]); need > 0 {
			if err := b.run(k, need); err != nil {
				return fail(err)
			}
		}
	}
	for {
		t := abstat.Welch(b.runs[0], b.runs[n-1])
		u := abstat.MannWhitney(b.runs[0], b.runs[n-1])
		r.EndsP, r.ChangePct = min(t.P, u.P), pctOfLog(t.Diff)
		if r.EndsP <= p.EndAlpha {
			break
		}
		if len(b.runs[0]) >= p.MaxPerCommit || len(b.runs[n-1]) >= p.MaxPerCommit || b.used+2*p.Step > p.Budget {
			return finish(NotReproduced, fmt.Sprintf("the ends differ by %+.2f %% with p = %.3g > %v (Welch and Mann-Whitney) after %d and %d runs: the change is not reproduced", r.ChangePct, r.EndsP, p.EndAlpha, len(b.runs[0]), len(b.runs[n-1]))), nil
		}
		for _, k := range []int{0, n - 1} {
			if err := b.run(k, p.Step); err != nil {
				return fail(err)
			}
		}
	}
	for {
		post := b.posterior()
		if slices.Max(post) >= 1-p.ErrorRate {
			return finish(Found, "the posterior passed "+fmt.Sprint(1-p.ErrorRate)), nil
		}
		// Measure the commit whose chance of being bad is nearest one half (the median
		// of the posterior: probabilistic bisection), among those below the cap.
		next, gap := -1, 2.0
		cdf := 0.0
		for k := 1; k < n-1; k++ {
			cdf += post[k]
			if g := math.Abs(cdf - 0.5); g < gap && len(b.runs[k]) < p.MaxPerCommit {
				next, gap = k, g
			}
		}
		if next < 0 {
			return finish(Undecided, "every commit between the ends has its cap of runs"), nil
		}
		add := p.Step
		if len(b.runs[next]) == 0 {
			add = p.Start
		}
		add = min(add, p.Budget-b.used, p.MaxPerCommit-len(b.runs[next]))
		if add <= 0 {
			return finish(Undecided, fmt.Sprintf("the budget of %d runs is spent", p.Budget)), nil
		}
		if err := b.run(next, add); err != nil {
			return fail(err)
		}
	}
}

type bisector struct {
	ctx     context.Context
	p       BisectParams
	measure Measure
	commits []string
	used    int
	runs    map[int][]float64 // logarithms of the runs of each measured commit
}

// run measures commit k n more times and checks the readings.
func (b *bisector) run(k, n int) error {
	c := b.commits[k]
	if err := context.Cause(b.ctx); err != nil {
		return fmt.Errorf("stopped before measuring %s: %w", c, err)
	}
	v, err := b.measure(b.ctx, c, n)
	b.used += len(v)
	if err != nil {
		return fmt.Errorf("measuring %s: %w", c, err)
	}
	if len(v) != n {
		return fmt.Errorf("measuring %s: %d readings for %d runs", c, len(v), n)
	}
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
			return fmt.Errorf("measuring %s: the reading %v is not a finite positive value", c, x)
		}
	}
	b.runs[k] = append(b.runs[k], logs(v)...)
	return nil
}

// posterior is, for every c from 1 to len(commits)-1, the probability that commits[c]
// is the first bad one given every run so far (a uniform prior over c, the likelihood
// of BisectParams.Likelihood). post[0] is 0.
func (b *bisector) posterior() []float64 {
	if b.p.Likelihood == LikelihoodNormal {
		return b.posteriorNormal()
	}
	return b.posteriorRobust()
}

// posteriorNormal is the posterior of LikelihoodNormal: every run normal around the
// good level before c and the bad level from c on, with one unknown noise; the levels
// and the noise integrated out (flat priors on the levels, 1/sigma on the noise), which
// gives the marginal likelihood nG^-1/2 nB^-1/2 SS^-(n-2)/2, SS the sum of squares
// around each side's mean, after clipping (cleaned).
func (b *bisector) posteriorNormal() []float64 {
	n := len(b.commits)
	idx := make([]int, 0, len(b.runs))
	for k, v := range b.runs {
		if len(v) > 0 {
			idx = append(idx, k)
		}
	}
	slices.Sort(idx)
	runs := cleaned(b.runs, idx)
	var all []float64
	for _, k := range idx {
		all = append(all, runs[k]...)
	}
	total := float64(len(all))
	s0 := math.Log1p(b.p.MinSigmaPct / 100)
	logL := make([]float64, n)
	best := math.Inf(-1)
	for c := 1; c < n; c++ {
		var g, bd []float64
		for _, k := range idx {
			if k < c {
				g = append(g, runs[k]...)
			} else {
				bd = append(bd, runs[k]...)
			}
		}
		if len(g) == 0 || len(bd) == 0 {
			logL[c] = math.Inf(-1)
			continue
		}
		ss := sumSq(g) + sumSq(bd) + total*s0*s0
		logL[c] = -0.5*math.Log(float64(len(g))) - 0.5*math.Log(float64(len(bd))) - (total-2)/2*math.Log(ss)
		best = max(best, logL[c])
	}
	post := make([]float64, n)
	if math.IsInf(best, -1) {
		// No split has runs on both sides yet (a bisection stopped before both ends
		// were measured): the prior, uniform.
		for c := 1; c < n; c++ {
			post[c] = 1 / float64(n-1)
		}
		return post
	}
	sum := 0.0
	for c := 1; c < n; c++ {
		post[c] = math.Exp(logL[c] - best)
		sum += post[c]
	}
	for c := range post {
		post[c] /= sum
	}
	return post
}

// clipSigmas is where cleaned clips a run, in robust standard deviations from its
// commit's median.
const clipSigmas = 4.0

// cleaned clips every run at its commit's median +- clipSigmas robust standard
// deviations (1.4826 x the median absolute deviation of every run from its commit's
// median, over the commits with 3 runs or more): one odd run of heavy-tailed GPU noise
// does not decide where the step is; normal noise is hardly ever clipped.
func cleaned(runs map[int][]float64, idx []int) map[int][]float64 {
	var dev []float64
	med := map[int]float64{}
	for _, k := range idx {
		med[k] = mathx.Median(runs[k])
		if len(runs[k]) >= 3 {
			for _, x := range runs[k] {
				dev = append(dev, math.Abs(x-med[k]))
			}
		}
	}
	lim := clipSigmas * 1.4826 * mathx.Median(dev)
	if lim <= 0 {
		return runs
	}
	out := make(map[int][]float64, len(idx))
	for _, k := range idx {
		v := make([]float64, len(runs[k]))
		for i, x := range runs[k] {
			v[i] = max(med[k]-lim, min(med[k]+lim, x))
		}
		out[k] = v
	}
	return out
}

// sumSq is the sum of squares of v around its mean.
func sumSq(v []float64) float64 {
	return abstat.SampleVar(v) * float64(len(v)-1)
}

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

// TDF is the degrees of freedom of the heavy-tailed model of one run under
// LikelihoodRobust.
const TDF = 3

// posteriorRobust is the posterior of LikelihoodRobust. Every run (a logarithm) is,
// with even odds for all runs at once, Student's t with TDF degrees of freedom or
// normal, with one unknown scale s, around the good level before c and the bad level
// from c on; flat priors on the levels, 1/s on the scale, all integrated out
// numerically. The likelihood of c only changes between measured commits, so it is
// computed once per gap: for every measured commit k, model and grid point (s, mu),
// A_k(model, s, mu) is the log density of its runs; the good side of a gap sums the
// A_k before it, the bad side those after it, and
//
//	L(gap) = sum over (model, s) of [sum over mu of exp(good)] [sum over mu of exp(bad)]
//
// (uniform grids of mu and of log s: the spacings are the same for every gap and drop
// out). The grids follow the runs (grids): s around the robust noise of the runs about
// their commits' medians, never below MinSigmaPct, in steps finer than its posterior's
// width; mu over the commits' medians widened by three noises, in steps about half the
// posterior's width of a level. The cost is about runs x grid points logarithms.
func (b *bisector) posteriorRobust() []float64 {
	n := len(b.commits)
	post := make([]float64, n)
	idx := make([]int, 0, len(b.runs))
	total := 0
	for k, v := range b.runs {
		if len(v) > 0 {
			idx = append(idx, k)
			total += len(v)
		}
	}
	slices.Sort(idx)
	if len(idx) < 2 {
		// No split has runs on both sides yet (a bisection stopped before both ends
		// were measured): the prior, uniform.
		for c := 1; c < n; c++ {
			post[c] = 1 / float64(n-1)
		}
		return post
	}
	ss, mus := b.grids(idx, total)
	nS, nM := len(ss), len(mus)
	// The rows of the grid are (model, s): the t model's nS rows, then the normal's.
	nR := 2 * nS
	const nu = float64(TDF)
	tConst := lgamma((nu+1)/2) - lgamma(nu/2) - 0.5*math.Log(nu*math.Pi)
	nConst := -0.5 * math.Log(2*math.Pi)
	// a[i] is A_idx[i], row-major.
	a := make([][]float64, len(idx))
	for i, k := range idx {
		runs := b.runs[k]
		cnt := float64(len(runs))
		mean := abstat.Mean(runs)
		ss2 := sumSq(runs)
		ak := make([]float64, nR*nM)
		for si, s := range ss {
			inv := 1 / s
			tRow := ak[si*nM : (si+1)*nM]
			base := cnt * (tConst - math.Log(s))
			for mi, mu := range mus {
				sum := 0.0
				for _, y := range runs {
					z := (y - mu) * inv
					sum += math.Log1p(z * z / nu)
				}
				tRow[mi] = base - (nu+1)/2*sum
			}
			nRow := ak[(nS+si)*nM : (nS+si+1)*nM]
			base = cnt * (nConst - math.Log(s))
			for mi, mu := range mus {
				d := mean - mu
				nRow[mi] = base - 0.5*(ss2+cnt*d*d)*inv*inv
			}
		}
		a[i] = ak
	}
	// good[j], bad[j]: the sides of the gap before idx[j+1].
	m := len(idx)
	good := make([][]float64, m-1)
	bad := make([][]float64, m-1)
	acc := make([]float64, nR*nM)
	for j := 0; j < m-1; j++ {
		for x, v := range a[j] {
			acc[x] += v
		}
		good[j] = slices.Clone(acc)
	}
	clear(acc)
	for j := m - 1; j >= 1; j-- {
		for x, v := range a[j] {
			acc[x] += v
		}
		bad[j-1] = slices.Clone(acc)
	}
	logL := make([]float64, m-1)
	perRow := make([]float64, nR)
	for j := range logL {
		for r := range nR {
			perRow[r] = logSumExp(good[j][r*nM:(r+1)*nM]) + logSumExp(bad[j][r*nM:(r+1)*nM])
		}
		logL[j] = logSumExp(perRow)
	}
	best := slices.Max(logL)
	sum := 0.0
	for j := range logL {
		w := math.Exp(logL[j] - best)
		for c := idx[j] + 1; c <= idx[j+1]; c++ {
			post[c] = w
			sum += w
		}
	}
	for c := range post {
		post[c] /= sum
	}
	return post
}

// grids are the grids of the scale and of the level of posteriorRobust for the runs of the
// commits idx, total runs in all.
func (b *bisector) grids(idx []int, total int) (ss, mus []float64) {
	floor := math.Log1p(b.p.MinSigmaPct / 100)
	var dev, meds []float64
	for _, k := range idx {
		med := mathx.Median(b.runs[k])
		meds = append(meds, med)
		if len(b.runs[k]) >= 2 {
			for _, y := range b.runs[k] {
				dev = append(dev, math.Abs(y-med))
			}
		}
	}
	sigma := floor
	if len(dev) > 0 {
		sigma = max(floor, 1.4826*mathx.Median(dev))
	}
	// The posterior of log s is about w = 1/sqrt(2 total) wide, and the t scale of
	// runs within ±0.4 of log sigma (normal runs: lower; heavier tails: higher): log s
	// from log sigma - 0.4 - 5w to log sigma + 0.4 + 5w (at most a factor of 3 either
	// way), never below the floor, in steps of 1.2 w (at most 64 of them).
	w := 1 / math.Sqrt(2*float64(total))
	f := math.Exp(min(math.Log(3), 0.4+5*w))
	lo, hi := max(floor, sigma/f), max(floor, sigma*f)
	dl := min(0.3, 1.2*w)
	nS := min(64, max(2, int(math.Ceil(math.Log(hi/lo)/dl))+1))
	ss = make([]float64, nS)
	for i := range ss {
		ss[i] = lo * math.Exp(float64(i)*math.Log(hi/lo)/float64(nS-1))
	}
	if hi == lo {
		ss = ss[:1]
	}
	mlo, mhi := slices.Min(meds)-3*sigma, slices.Max(meds)+3*sigma
	h := 0.6 * sigma / math.Sqrt(float64(total))
	nM := min(4096, max(2, int(math.Ceil((mhi-mlo)/h))+1))
	mus = make([]float64, nM)
	for i := range mus {
		mus[i] = mlo + float64(i)*(mhi-mlo)/float64(nM-1)
	}
	return ss, mus
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// logSumExp is log(sum of exp(v)).
func logSumExp(v []float64) float64 {
	m := slices.Max(v)
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, x := range v {
		if d := x - m; d > -40 {
			s += math.Exp(d)
		}
	}
	return m + math.Log(s)
}
