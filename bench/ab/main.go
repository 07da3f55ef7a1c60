// Command ab measures the power of runner/abstat on synthetic A/B pairs and prints it;
// bench/ab.sh runs it. Each pair draws the repeats of A and B of one metric (higher is
// better) around 100 with a noise of -noise percent: Gaussian, and on its own lines a
// heavy-tailed variant (Student's t with 3 degrees of freedom, scaled to the same
// interquartile range as the Gaussian). Half the pairs have no change, the other half a
// true change of -effect percent, half of them up and half down. Every pair is run
// through the adaptive plan (abstat.NewPlan with the cap -cap), drawing runs only when
// the plan asks for them, and, for reference, through fixed repeat counts.
//
// A change is detected when the verdict is faster or slower in the right direction; a
// false call is a no-change pair called faster or slower. The last line reads
// `ab: detect E% in X % of cases at N repeats/side, false calls Y %` for the Gaussian
// noise and the adaptive plan (N is its cap). With -min-detect and -max-false it exits
// 1 when X is below or Y above them.
//
// A line for a large change (-big) shows the runs the plan saves when a change is plain.
//
// Usage: ab [-pairs N] [-seed S] [-big PCT] [-cap N] [-noise PCT] [-effect PCT] [-min-detect PCT] [-max-false PCT]
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/lablup/perfbot/runner/abstat"
)

type config struct {
	pairs    int
	big      float64
	seed     uint64
	capRuns  int
	noise    float64
	effect   float64
	fixed    []int
	minDet   float64
	maxFalse float64
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

// tally counts the outcomes of one kind of pair.
type tally struct {
	pairs, called, right int
	runs                 int // repeats per side used, summed
}

func (t tally) pct(k int) float64 { return 100 * float64(k) / float64(max(t.pairs, 1)) }

// sampler hands out the repeats of one side, drawing them as they are asked for.
type sampler struct {
	rng   *rand.Rand
	level float64
	sigma float64
	kind  noiseKind
	vals  []float64
}

func (s *sampler) upto(n int) []float64 {
	for len(s.vals) < n {
		v := s.level * (1 + s.kind.draw(s.rng, s.sigma))
		if v <= 0.1 {
			// A t draw past -100 %: no reading is negative; draw again.
			continue
		}
		s.vals = append(s.vals, v)
	}
	return s.vals[:n]
}

// result is one row of the output.
type result struct {
	label      string
	det, fals  tally
	meanChange float64
}

func run(cfg config, kind noiseKind, plan *abstat.Plan, fixedN int) (det, fals tally, err error) {
	rng := rand.New(rand.NewPCG(cfg.seed, uint64(fixedN)<<8|uint64(len(kind.name))))
	o := abstat.DefaultOptions()
	for i := range cfg.pairs {
		change := 0.0
		if i%2 == 1 {
			change = cfg.effect / 100
			if i%4 == 3 {
				change = -change
			}
		}
		a := &sampler{rng: rng, level: 100, sigma: cfg.noise / 100, kind: kind}
		b := &sampler{rng: rng, level: 100 * (1 + change), sigma: cfg.noise / 100, kind: kind}
		var r abstat.Result
		var used int
		if plan != nil {
			na, nb := plan.Looks[0], plan.Looks[0]
			for {
				d, err := plan.Decide(a.upto(na), b.upto(nb), abstat.HigherIsBetter)
				if err != nil {
					return det, fals, err
				}
				if d.Done() {
					r, used = d.Result, min(na, nb)
					break
				}
				na, nb = na+d.AddA, nb+d.AddB
			}
		} else {
			r, err = abstat.Compare(a.upto(fixedN), b.upto(fixedN), abstat.HigherIsBetter, o)
			if err != nil {
				return det, fals, err
			}
			used = fixedN
		}
		t := &fals
		if change != 0 {
			t = &det
		}
		t.pairs++
		t.runs += used
		if r.Verdict.Called() {
			t.called++
			if (r.Verdict == abstat.Faster) == (change > 0) {
				t.right++
			}
		}
	}
	return det, fals, nil
}

func main() {
	cfg := config{}
	fs := flag.NewFlagSet("ab", flag.ExitOnError)
	fs.IntVar(&cfg.pairs, "pairs", 20000, "simulated pairs per line (half with a change)")
	fs.Uint64Var(&cfg.seed, "seed", 1, "random seed")
	fs.IntVar(&cfg.capRuns, "cap", 10, "the adaptive plan's cap of repeats per side")
	fs.Float64Var(&cfg.noise, "noise", 3, "noise, percent of the level (standard deviation)")
	fs.Float64Var(&cfg.effect, "effect", 5, "the true change, percent")
	fs.Float64Var(&cfg.big, "big", 20, "a large change, percent, to show the runs the adaptive plan saves (0: no such line)")
	fixed := fs.String("fixed", "3,5,10", "fixed repeat counts per side to report for reference")
	fs.Float64Var(&cfg.minDet, "min-detect", 0, "exit 1 when the detected share is below this percent")
	fs.Float64Var(&cfg.maxFalse, "max-false", 100, "exit 1 when the false-call share is above this percent")
	_ = fs.Parse(os.Args[1:])
	for _, f := range strings.Split(*fixed, ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err == nil && n > 0 {
			cfg.fixed = append(cfg.fixed, n)
		}
	}
	ok, err := report(os.Stdout, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ab:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// report runs every line and prints it; ok is false when the last line misses
// -min-detect or -max-false.
func report(w io.Writer, cfg config) (ok bool, err error) {
	if cfg.pairs < 4 {
		return false, fmt.Errorf("-pairs is %d: give at least 4", cfg.pairs)
	}
	plan, err := abstat.NewPlan(cfg.capRuns, abstat.DefaultOptions())
	if err != nil {
		return false, err
	}
	var levels []string
	for i, n := range plan.Looks {
		levels = append(levels, fmt.Sprintf("%d (%.4f)", n, plan.Alphas[i]))
	}
	fmt.Fprintf(w, "ab: %d pairs per line, seed %d, noise %v %%, change %v %%; plan looks (level): %s\n", cfg.pairs, cfg.seed, cfg.noise, cfg.effect, strings.Join(levels, ", "))
	var last [2]tally
	for i := len(kinds) - 1; i >= 0; i-- { // the Gaussian last: the last line is its
		kind := kinds[i]
		for _, n := range cfg.fixed {
			det, fals, err := run(cfg, kind, nil, n)
			if err != nil {
				return false, err
			}
			fmt.Fprintf(w, "ab: %s, fixed %d/side: detect %.1f %%, false calls %.1f %%\n", kind.name, n, det.pct(det.right), fals.pct(fals.called))
		}
		det, fals, err := run(cfg, kind, &plan, 0)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(w, "ab: %s, adaptive up to %d/side: detect %.1f %% (wrong direction %.2f %%), false calls %.1f %%; mean repeats/side %.1f with a change, %.1f without\n",
			kind.name, plan.Cap(), det.pct(det.right), det.pct(det.called-det.right), fals.pct(fals.called),
			float64(det.runs)/float64(det.pairs), float64(fals.runs)/float64(fals.pairs))
		last = [2]tally{det, fals}
	}
	if cfg.big > 0 {
		big := cfg
		big.effect = cfg.big
		det, _, err := run(big, kinds[0], &plan, 0)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(w, "ab: gaussian, adaptive up to %d/side, a %v %% change: detect %.1f %%, mean repeats/side %.1f\n", plan.Cap(), cfg.big, det.pct(det.right), float64(det.runs)/float64(det.pairs))
	}
	x, y := last[0].pct(last[0].right), last[1].pct(last[1].called)
	fmt.Fprintf(w, "ab: detect %v%% in %.1f %% of cases at %d repeats/side, false calls %.1f %%\n", cfg.effect, x, plan.Cap(), y)
	return x >= cfg.minDet && y <= cfg.maxFalse, nil
}
