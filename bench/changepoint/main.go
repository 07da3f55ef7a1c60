// Command changepoint measures runner/changepoint on synthetic nightly histories and
// bisections and prints the figures; bench/changepoint.sh runs it.
//
// Detection: each history has -warm nights at level 100, then a step of -step percent
// (half down, half up) that lasts; every night has -repeats readings with a noise of
// -noise percent (Gaussian, and a heavy-tailed variant: Student's t with 3 degrees of
// freedom scaled to the Gaussian's interquartile range), its value their median. From
// the first night at the new level, every night runs changepoint.Detect on the history
// so far; a suspected change is confirmed by a simulated interleaved A/B of the commit
// before its first night against its first night (runner/abstat's adaptive plan, cap
// -ab-cap repeats a side, the call in the suspected direction), and a confirmed change
// is passed to the next nights' Detect as Params.Confirmed, as the nightly would. The
// step is found on the night its change is confirmed at the right night; N counts the
// nights at the new level measured by then (1: found on the first one). A history not
// found within -horizon nights counts as never found.
//
// False alarms: histories with no change, -warm nights then -nights judged nights, the
// same loop; every confirmed change is a false alarm.
//
// Bisection: -bisects bisections per noise kind over -commits commits, the first the
// last good and the last the first bad, a step of -step percent at a culprit drawn
// uniformly among the others; each run a reading with -noise percent noise of the kind.
// Each commit of a bisection has its own stream of readings, so the likelihood of
// Bisect's default (Student's t) and, with -compare (the default), the normal one are
// compared on the same readings; the normal one's lines are for comparison only.
//
// The last two lines read
//
//	changepoint: 5% step found in median N nights (90% within M), false alarms F per 100 nights
//	bisect: culprit right in X% of K runs, mean R single-model runs
//
// (both over both noise kinds: K is twice -bisects; each noise kind has its own lines
// above); with the -max-*/-min-* flags it exits 1 when a figure misses, the bisection's
// when either noise kind's misses.
//
// -budget and -max-per-commit replace the bisection's defaults (to measure other
// settings).
//
// Usage: changepoint [-histories N] [-null N] [-nights N] [-seed S] [-noise PCT] [-step PCT] [-bisects K] [-compare=false] [-budget N] [-max-per-commit N] ...
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/changepoint"
)

type config struct {
	histories, null, nights, warm, horizon, repeats int
	bisects, commits, abCap                         int
	seed                                            uint64
	noise, step                                     float64
	maxMedian, maxP90                               int
	maxFalse, minRight, maxRuns                     float64
	compare                                         bool
	budget, perCommit                               int
}

// noiseKind draws one relative error (a fraction of the level).
type noiseKind struct {
	name string
	draw func(r *rand.Rand, sigma float64) float64
}

// t3IQR is the interquartile range of Student's t with 3 degrees of freedom; a normal's
// is 1.349 standard deviations.
const t3IQR = 2 * 0.7648923

var kinds = []noiseKind{
	{"gaussian", func(r *rand.Rand, s float64) float64 { return s * r.NormFloat64() }},
	{"heavy-tailed (t, 3 df)", func(r *rand.Rand, s float64) float64 {
		z := r.NormFloat64()
		chi := 0.0
		for range 3 {
			g := r.NormFloat64()
			chi += g * g
		}
		return s * 1.349 / t3IQR * z / math.Sqrt(chi/3)
	}},
}

// reading is one run at level.
func reading(r *rand.Rand, k noiseKind, level, sigma float64) float64 {
	for {
		if v := level * (1 + k.draw(r, sigma)); v > 0.1*level {
			return v
		}
	}
}

func readings(r *rand.Rand, k noiseKind, level, sigma float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = reading(r, k, level, sigma)
	}
	return out
}

func date(i int) string { return fmt.Sprintf("2026-%02d-%02d", 1+i/28, 1+i%28) }

// sim is one simulated history: its true levels and the nights measured so far.
type sim struct {
	cfg    config
	rng    *rand.Rand
	kind   noiseKind
	levels []float64
	pts    []changepoint.Point
	params changepoint.Params
	plan   abstat.Plan
	// counters
	abs, abRuns, confirmed int
}

func (s *sim) night(i int) {
	s.pts = append(s.pts, changepoint.Point{Date: date(i), Commit: fmt.Sprintf("c%03d", i), Repeats: readings(s.rng, s.kind, s.levels[i], s.cfg.noise/100, s.cfg.repeats)})
}

// judge runs Detect on the nights so far and confirms a suspicion with an A/B of the
// commit before its range against the last commit of its range; it returns the range
// of a change confirmed tonight, or -1, -1.
func (s *sim) judge() (int, int, error) {
	res, err := changepoint.Detect(s.pts, s.params)
	if err != nil {
		return -1, -1, err
	}
	j := res.Newest
	if !j.Suspected() {
		return -1, -1, nil
	}
	s.abs++
	good, bad := s.levels[j.RangeFrom-1], s.levels[j.RangeTo]
	var a, b []float64
	na, nb := s.plan.Looks[0], s.plan.Looks[0]
	for {
		for len(a) < na {
			a = append(a, reading(s.rng, s.kind, good, s.cfg.noise/100))
		}
		for len(b) < nb {
			b = append(b, reading(s.rng, s.kind, bad, s.cfg.noise/100))
		}
		d, err := s.plan.Decide(a, b, abstat.HigherIsBetter)
		if err != nil {
			return -1, -1, err
		}
		if d.Done() {
			s.abRuns += len(a) + len(b)
			want := abstat.Faster
			if j.ChangePct < 0 {
				want = abstat.Slower
			}
			if d.Result.Verdict != want {
				return -1, -1, nil
			}
			s.confirmed++
			s.params.Confirmed = append(s.params.Confirmed, s.pts[j.Index].Date)
			return j.RangeFrom, j.RangeTo, nil
		}
		na, nb = na+d.AddA, nb+d.AddB
	}
}

// detection is the outcome of the step histories of one noise kind.
type detection struct {
	nights      []int // nights to find each history's step; horizon+1 when never found
	wrong       int   // changes confirmed with a range that does not hold the step
	width       int   // nights in the ranges of the steps found, summed
	abs, abRuns int
}

func detect(cfg config, kind noiseKind, ki int, plan abstat.Plan) (detection, error) {
	rng := rand.New(rand.NewPCG(cfg.seed, uint64(ki)<<32|1))
	var out detection
	for h := range cfg.histories {
		step := cfg.step / 100
		if h%2 == 1 {
			step = -step
		}
		n := cfg.warm + cfg.horizon
		s := &sim{cfg: cfg, rng: rng, kind: kind, levels: make([]float64, n), params: changepoint.DefaultParams(), plan: plan}
		for i := range n {
			s.levels[i] = 100
			if i >= cfg.warm {
				s.levels[i] = 100 * (1 + step)
			}
		}
		for i := range cfg.warm {
			s.night(i)
		}
		found := cfg.horizon + 1
		for i := cfg.warm; i < n; i++ {
			s.night(i)
			lo, hi, err := s.judge()
			if err != nil {
				return out, err
			}
			if lo >= 0 && lo <= cfg.warm && cfg.warm <= hi {
				found = i - cfg.warm + 1
				out.width += hi - lo + 1
				break
			}
			if lo >= 0 {
				out.wrong++
			}
		}
		out.nights = append(out.nights, found)
		out.abs += s.abs
		out.abRuns += s.abRuns
	}
	return out, nil
}

// falseAlarms runs the no-change histories of one noise kind.
func falseAlarms(cfg config, kind noiseKind, ki int, plan abstat.Plan) (alarms, abs, abRuns int, err error) {
	rng := rand.New(rand.NewPCG(cfg.seed, uint64(ki)<<32|2))
	for range cfg.null {
		n := cfg.warm + cfg.nights
		s := &sim{cfg: cfg, rng: rng, kind: kind, levels: make([]float64, n), params: changepoint.DefaultParams(), plan: plan}
		for i := range n {
			s.levels[i] = 100
		}
		for i := range cfg.warm {
			s.night(i)
		}
		for i := cfg.warm; i < n; i++ {
			s.night(i)
			if _, _, err := s.judge(); err != nil {
				return 0, 0, 0, err
			}
		}
		alarms += s.confirmed
		abs += s.abs
		abRuns += s.abRuns
	}
	return alarms, abs, abRuns, nil
}

// bisected is the outcome of the bisections of one noise kind and likelihood.
type bisected struct {
	right, runs, undecided, notReproduced, n int
}

func (b bisected) rightPct() float64 { return 100 * float64(b.right) / float64(b.n) }
func (b bisected) meanRuns() float64 { return float64(b.runs) / float64(b.n) }

// bisection runs the bisections of one noise kind with the given likelihood. The
// culprits and the readings depend on the seed, the noise kind and the bisection only:
// the k-th reading of a commit is the same whatever the likelihood, so that two
// likelihoods are compared on the same readings.
func bisection(cfg config, kind noiseKind, ki int, likelihood string) (bisected, error) {
	rng := rand.New(rand.NewPCG(cfg.seed, uint64(ki)<<32|3))
	commits := make([]string, cfg.commits)
	for i := range commits {
		commits[i] = fmt.Sprintf("c%02d", i)
	}
	p := changepoint.DefaultBisectParams()
	p.Likelihood = likelihood
	if cfg.budget > 0 {
		p.Budget = cfg.budget
	}
	if cfg.perCommit > 0 {
		p.MaxPerCommit = cfg.perCommit
	}
	out := bisected{n: cfg.bisects}
	for bi := range cfg.bisects {
		culprit := 1 + rng.IntN(cfg.commits-1)
		streams := map[int]*rand.Rand{}
		measure := func(_ context.Context, c string, n int) ([]float64, error) {
			i := slices.Index(commits, c)
			if streams[i] == nil {
				streams[i] = rand.New(rand.NewPCG(cfg.seed^uint64(bi)<<20^uint64(i), uint64(ki)<<32|4))
			}
			level := 100.0
			if i >= culprit {
				level = 100 * (1 - cfg.step/100)
			}
			return readings(streams[i], kind, level, cfg.noise/100, n), nil
		}
		r, err := changepoint.Bisect(context.Background(), commits, measure, p)
		if err != nil {
			return out, err
		}
		if r.FirstBad == commits[culprit] {
			out.right++
		}
		switch r.Outcome {
		case changepoint.Undecided:
			out.undecided++
		case changepoint.NotReproduced:
			out.notReproduced++
		}
		out.runs += r.Runs
	}
	return out, nil
}

// quantileNights is the q-quantile (nearest rank) of nights.
func quantileNights(v []int, q float64) int {
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func nightsText(n, horizon int) string {
	if n > horizon {
		return fmt.Sprintf("more than %d", horizon)
	}
	return fmt.Sprint(n)
}

// report runs everything and prints it; ok is false when a figure misses its flag.
func report(w io.Writer, cfg config) (ok bool, err error) {
	if cfg.histories < 2 || cfg.null < 1 || cfg.nights < 1 || cfg.bisects < 1 || cfg.commits < 2 || cfg.warm < 3 || cfg.horizon < 1 || cfg.repeats < 1 {
		return false, fmt.Errorf("give at least 2 histories, 1 null history, 1 night, 1 bisection, 2 commits, 3 warm-up nights, a horizon of 1 and 1 repeat")
	}
	plan, err := abstat.NewPlan(cfg.abCap, abstat.DefaultOptions())
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "changepoint: seed %d, noise %v %%, %d repeats a night, step %v %% after %d nights; %d step histories and %d no-change histories of %d nights per noise kind; A/B cap %d a side\n",
		cfg.seed, cfg.noise, cfg.repeats, cfg.step, cfg.warm, cfg.histories, cfg.null, cfg.nights, cfg.abCap)
	var all []int
	ok = true
	alarmsAll, nightsAll := 0, 0
	rightAll, runsAll, bisAll := 0, 0, 0
	for ki, kind := range kinds {
		d, err := detect(cfg, kind, ki, plan)
		if err != nil {
			return false, err
		}
		all = append(all, d.nights...)
		missed := 0
		for _, n := range d.nights {
			if n > cfg.horizon {
				missed++
			}
		}
		fmt.Fprintf(w, "changepoint: %s: step found in median %s nights (90%% within %s), not within %d nights %.1f %%, confirmed at a wrong night %d; %.2f A/Bs per history, %.1f runs each\n",
			kind.name, nightsText(quantileNights(d.nights, 0.5), cfg.horizon), nightsText(quantileNights(d.nights, 0.9), cfg.horizon), cfg.horizon,
			100*float64(missed)/float64(len(d.nights)), d.wrong, float64(d.abs)/float64(cfg.histories), float64(d.abRuns)/float64(max(d.abs, 1)))
		alarms, abs, abRuns, err := falseAlarms(cfg, kind, ki, plan)
		if err != nil {
			return false, err
		}
		judged := cfg.null * cfg.nights
		alarmsAll += alarms
		nightsAll += judged
		fmt.Fprintf(w, "changepoint: %s: no change: %.2f suspicions (A/Bs) and %.2f confirmed false alarms per 100 nights, %.1f A/B runs each\n",
			kind.name, 100*float64(abs)/float64(judged), 100*float64(alarms)/float64(judged), float64(abRuns)/float64(max(abs, 1)))
		if cfg.compare {
			// The normal likelihood on the same readings, for comparison only.
			b, err := bisection(cfg, kind, ki, changepoint.LikelihoodNormal)
			if err != nil {
				return false, err
			}
			fmt.Fprintf(w, "bisect: %s, normal likelihood: culprit right in %.1f%% of %d runs, mean %.1f single-model runs, %.1f %% undecided, %.1f %% not reproduced\n",
				kind.name, b.rightPct(), b.n, b.meanRuns(), 100*float64(b.undecided)/float64(b.n), 100*float64(b.notReproduced)/float64(b.n))
		}
		b, err := bisection(cfg, kind, ki, changepoint.LikelihoodRobust)
		if err != nil {
			return false, err
		}
		rightAll += b.right
		runsAll += b.runs
		bisAll += b.n
		ok = ok && b.rightPct() >= cfg.minRight && b.meanRuns() <= cfg.maxRuns
		fmt.Fprintf(w, "bisect: %s: culprit right in %.1f%% of %d runs, mean %.1f single-model runs, %.1f %% undecided, %.1f %% not reproduced\n",
			kind.name, b.rightPct(), b.n, b.meanRuns(), 100*float64(b.undecided)/float64(b.n), 100*float64(b.notReproduced)/float64(b.n))
	}
	med, p90 := quantileNights(all, 0.5), quantileNights(all, 0.9)
	f := 100 * float64(alarmsAll) / float64(nightsAll)
	x := 100 * float64(rightAll) / float64(bisAll)
	r := float64(runsAll) / float64(bisAll)
	fmt.Fprintf(w, "changepoint: %v%% step found in median %s nights (90%% within %s), false alarms %.2f per 100 nights\n",
		cfg.step, nightsText(med, cfg.horizon), nightsText(p90, cfg.horizon), f)
	fmt.Fprintf(w, "bisect: culprit right in %.1f%% of %d runs, mean %.1f single-model runs\n", x, bisAll, r)
	ok = ok && med <= cfg.maxMedian && p90 <= cfg.maxP90 && f <= cfg.maxFalse && x >= cfg.minRight && r <= cfg.maxRuns
	return ok, nil
}

func main() {
	cfg := config{}
	fs := flag.NewFlagSet("changepoint", flag.ExitOnError)
	fs.IntVar(&cfg.histories, "histories", 2000, "step histories per noise kind")
	fs.IntVar(&cfg.null, "null", 300, "no-change histories per noise kind")
	fs.IntVar(&cfg.nights, "nights", 100, "judged nights of each no-change history")
	fs.IntVar(&cfg.warm, "warm", 20, "nights before the step (and before the judged nights)")
	fs.IntVar(&cfg.horizon, "horizon", 15, "nights after the step a history is followed for")
	fs.IntVar(&cfg.repeats, "repeats", 3, "readings a night")
	fs.IntVar(&cfg.bisects, "bisects", 2000, "bisections per noise kind")
	fs.IntVar(&cfg.commits, "commits", 32, "commits of a bisection, both ends included")
	fs.IntVar(&cfg.abCap, "ab-cap", 20, "the confirming A/B's cap of repeats a side")
	fs.Uint64Var(&cfg.seed, "seed", 1, "random seed")
	fs.Float64Var(&cfg.noise, "noise", 3, "noise of one reading, percent of the level")
	fs.Float64Var(&cfg.step, "step", 5, "the step, percent")
	fs.IntVar(&cfg.maxMedian, "max-median", 1<<30, "exit 1 when the median nights to find a step are above this")
	fs.IntVar(&cfg.maxP90, "max-p90", 1<<30, "exit 1 when the 90th percentile of the nights is above this")
	fs.Float64Var(&cfg.maxFalse, "max-false", math.Inf(1), "exit 1 when the false alarms per 100 nights are above this")
	fs.Float64Var(&cfg.minRight, "min-right", 0, "exit 1 when the bisection's right share (percent) of either noise kind is below this")
	fs.Float64Var(&cfg.maxRuns, "max-runs", math.Inf(1), "exit 1 when the bisection's mean runs of either noise kind are above this")
	fs.IntVar(&cfg.budget, "budget", 0, "the bisection's budget of runs (0: changepoint.DefaultBisectParams')")
	fs.IntVar(&cfg.perCommit, "max-per-commit", 0, "the bisection's cap of runs at one commit (0: changepoint.DefaultBisectParams')")
	fs.BoolVar(&cfg.compare, "compare", true, "also bisect with the normal likelihood on the same readings (a line per noise kind, not in the summary)")
	_ = fs.Parse(os.Args[1:])
	ok, err := report(os.Stdout, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "changepoint:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}
