package abstat

import (
	"fmt"
	"math"
)

// Plan is the adaptive-repeats rule: the comparison is looked at when each side has
// Looks[k] repeats, at the significance level Alphas[k]; it stops at the first look
// that calls a change, or that rules one out (no significant change within ±SamePct),
// or at the last look (the cap), and otherwise asks for the runs that reach the next
// look.
//
// Looking again and stopping when something turns significant would raise the chance
// of a false call with every look; the plan spends Options.Alpha across its looks
// instead (alpha spending with the power function t^3 of the share t = n/cap of the
// cap, Kim and DeMets 1987, close to O'Brien-Fleming's boundaries): by look k at most
// alpha x (n_k/cap)^3 is spent. The level of a U look is the largest exact p value the
// test can reach within what is left (the U test is discrete: at 10 against 10 its
// p values near 0.05 are 0.0355 and 0.0433), and a look that could not call anything
// at all (5 against 5 cannot go below 0.0079) is left out, its share carried to the
// next. The levels add up to at most Alpha, so the chance of any false call over all
// looks is at most Alpha (a union bound, whatever the correlation between looks);
// bench/ab.sh measures it.
type Plan struct {
	Looks   []int     `json:"looks"`
	Alphas  []float64 `json:"alphas"`
	Options Options   `json:"options"`
}

// NewPlan makes the plan for a cap of repeats per side: looks at 3 and 5 repeats, then
// doubling (10, 20, 40, ...) until the cap, which is always the last look; looks whose
// level would be below anything their test can reach are left out (with a cap of 10:
// looks at 3, level 0.00135, Welch's t, and 10, level 0.0433, the U test).
func NewPlan(capRuns int, o Options) (Plan, error) {
	if err := o.Validate(); err != nil {
		return Plan{}, err
	}
	if capRuns < MinRepeats || capRuns > 1000 {
		return Plan{}, fmt.Errorf("the cap is %d repeats per side: give %d to 1000", capRuns, MinRepeats)
	}
	p := Plan{Options: o}
	var sizes []int
	for n := MinRepeats; n < capRuns; {
		sizes = append(sizes, n)
		if n == MinRepeats {
			n = UMinRepeats
		} else {
			n *= 2
		}
	}
	sizes = append(sizes, capRuns)
	spent := 0.0
	for _, n := range sizes {
		budget := o.Alpha*math.Pow(float64(n)/float64(capRuns), spendPower) - spent
		level := budget
		if n >= UMinRepeats && 2*n <= exactMaxN {
			level = uLevel(n, n, budget)
		}
		if level <= 0 {
			continue
		}
		p.Looks = append(p.Looks, n)
		p.Alphas = append(p.Alphas, level)
		spent += level
	}
	if len(p.Looks) == 0 || p.Cap() != capRuns {
		return Plan{}, fmt.Errorf("alpha %v leaves the U test no level it can reach at %d repeats per side", o.Alpha, capRuns)
	}
	return p, nil
}

// spendPower is the exponent of the alpha-spending function.
const spendPower = 3

// uLevel is the largest two-sided exact p value of the tie-free U test of na against
// nb that is at most budget (0 when even the most extreme arrangement is above it).
func uLevel(na, nb int, budget float64) float64 {
	c := uCritical(na, nb, budget/2)
	if c < 0 {
		return 0
	}
	dist := uDist(na, nb)
	total, cum := 0.0, 0.0
	for k, v := range dist {
		total += v
		if k <= c {
			cum += v
		}
	}
	return 2 * cum / total
}

// Cap is the last look's repeats per side.
func (p Plan) Cap() int { return p.Looks[len(p.Looks)-1] }

// Decision is what the plan says about the samples at hand.
type Decision struct {
	// AddA and AddB are the runs to add to each side before calling Decide again; both
	// zero when the comparison is over (Result is final).
	AddA int `json:"add_a"`
	AddB int `json:"add_b"`
	// Look is the look (from 1) whose level Result was decided at; 0 when the samples
	// have not reached the first look (Result is then the plain comparison at
	// Options.Alpha, for information only).
	Look   int    `json:"look"`
	Result Result `json:"result"`
	Why    string `json:"why"`
}

// Done says the comparison is over.
func (d Decision) Done() bool { return d.AddA == 0 && d.AddB == 0 }

// Decide looks at a and b at the largest look the smaller side has reached. Callers
// add exactly the runs it asks for: repeats beyond a look are not looked at with a new
// level until the next look is reached, so running extra does not buy extra looks.
func (p Plan) Decide(a, b []float64, dir Direction) (Decision, error) {
	if len(p.Looks) == 0 || len(p.Looks) != len(p.Alphas) {
		return Decision{}, fmt.Errorf("the plan has %d looks and %d levels: make it with NewPlan", len(p.Looks), len(p.Alphas))
	}
	n := min(len(a), len(b))
	k := 0
	for k < len(p.Looks) && p.Looks[k] <= n {
		k++
	}
	o := p.Options
	if k > 0 {
		o.Alpha = p.Alphas[k-1]
	}
	r, err := Compare(a, b, dir, o)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Look: k, Result: r}
	switch {
	case k == 0:
		d.Why = fmt.Sprintf("%d repeats per side: the first look is at %d", n, p.Looks[0])
	case r.Verdict.Called():
		d.Why = fmt.Sprintf("look %d of %d at %d repeats (level %s): %s", k, len(p.Looks), p.Looks[k-1], fmtP(o.Alpha), r.Verdict)
		return d, nil
	case r.Verdict == NoChange:
		d.Why = fmt.Sprintf("look %d of %d at %d repeats (level %s): a change beyond ±%v %% is ruled out", k, len(p.Looks), p.Looks[k-1], fmtP(o.Alpha), o.SamePct)
		return d, nil
	case k == len(p.Looks):
		d.Why = fmt.Sprintf("the cap of %d repeats per side is reached: %s", p.Cap(), r.Verdict)
		return d, nil
	default:
		d.Why = fmt.Sprintf("look %d of %d at %d repeats (level %s): %s, add runs", k, len(p.Looks), p.Looks[k-1], fmtP(o.Alpha), r.Verdict)
	}
	next := p.Looks[k]
	d.AddA, d.AddB = max(0, next-len(a)), max(0, next-len(b))
	return d, nil
}
