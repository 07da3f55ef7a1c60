package abrun

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/lablup/perfbot/runner/abstat"
)

// Sample is what one measured run gave.
type Sample struct {
	// Values are the readings, one per Spec.Metrics entry, finite and positive.
	Values []float64
	// Rejected says the guard refused the attempt (the host was busy, hot, throttled
	// ...): its values are not used and the run is redone at the same position.
	Rejected bool
	// Reason is the guard's word for a rejection.
	Reason string
}

// Measurer executes one run: side's build on model, the i-th repeat (from 0) of that
// side for the model. An error ends the session (what was measured is kept); a guard
// rejection is a Sample with Rejected set, not an error.
type Measurer interface {
	Measure(ctx context.Context, side Side, model string, i int) (Sample, error)
}

// MeasureFunc adapts a function to Measurer.
type MeasureFunc func(ctx context.Context, side Side, model string, i int) (Sample, error)

func (f MeasureFunc) Measure(ctx context.Context, side Side, model string, i int) (Sample, error) {
	return f(ctx, side, model, i)
}

// Run is one accepted run in measurement order.
type Run struct {
	Side Side `json:"side"`
	// I is the repeat's index within its side (from 0).
	I      int       `json:"i"`
	Values []float64 `json:"values"`
	// Rejected is how many attempts at this position the guard refused before this one.
	Rejected int `json:"rejected,omitempty"`
}

// ModelOutcome is one model's part of a session.
type ModelOutcome struct {
	Model string `json:"model"`
	// Runs are the accepted runs, in the order they were measured.
	Runs []Run `json:"runs"`
	// Decisions are the plan's final decision per metric (the look it stopped at, the
	// result at that look's level, before Holm); Results the same results after Holm's
	// correction over every model and metric of the session: P is the test's own,
	// AdjustedP is on Options.Alpha's scale (see holm) and the verdict is decided on it.
	// Both are empty until the model is done.
	Decisions []abstat.Decision `json:"decisions,omitempty"`
	Results   []abstat.Result   `json:"results,omitempty"`
	Done      bool              `json:"done"`
}

// Values are side's readings of metric m (an index into Spec.Metrics), in
// measurement order.
func (o ModelOutcome) Values(side Side, m int) []float64 {
	var v []float64
	for _, r := range o.Runs {
		if r.Side == side && m < len(r.Values) {
			v = append(v, r.Values[m])
		}
	}
	return v
}

// Count is the number of accepted runs of side.
func (o ModelOutcome) Count(side Side) int {
	n := 0
	for _, r := range o.Runs {
		if r.Side == side {
			n++
		}
	}
	return n
}

// Outcome is what a session measured and decided.
type Outcome struct {
	Models []ModelOutcome `json:"models"`
	// Runs is the number of accepted runs, Rejected the attempts the guard refused.
	Runs     int `json:"runs"`
	Rejected int `json:"rejected"`
	// Complete says every model is done and Holm's correction was applied; a session
	// that stopped early (cancelled, a failed run) keeps what it measured with
	// Complete false, and the results of the models it finished uncorrected.
	Complete bool `json:"complete"`
}

// Progress is a session's state for a status update.
type Progress struct {
	// Done is the accepted runs so far; Planned the runs the session now expects (the
	// models done as they ended, the current one to its next look, the rest at Start
	// per side); it grows when the plan adds runs, up to Estimate's worst case.
	Done    int `json:"done"`
	Planned int `json:"planned"`
	// Model is the model being measured.
	Model  string          `json:"model"`
	Models []ModelProgress `json:"models"`
}

// ModelProgress is one model's interim state.
type ModelProgress struct {
	Model string `json:"model"`
	NA    int    `json:"n_a"`
	NB    int    `json:"n_b"`
	// Verdicts per metric: the last look's (final when Done), or the plain comparison
	// at Options.Alpha for information before the first look; empty before any run.
	Verdicts []abstat.Verdict `json:"verdicts,omitempty"`
	Done     bool             `json:"done"`
}

// ProgressFunc receives progress; it must not block for long.
type ProgressFunc func(Progress)

// DefaultEvery is the least time between two progress reports.
const DefaultEvery = time.Minute

// Session runs the decisions of an A/B on the GPU host. The zero value is usable:
// no budget check, progress at most once a minute on the wall clock.
type Session struct {
	// PerRun is the measured time of one run and Budget the most a session may take;
	// when both are set, Run refuses a spec whose Estimate is over Budget.
	PerRun time.Duration
	Budget time.Duration
	// Now is the clock of the progress reports (nil: time.Now); Every the least time
	// between two reports (0: DefaultEvery).
	Now   func() time.Time
	Every time.Duration
}

// Check validates spec and, when the session has a budget, refuses one whose worst
// case is over it.
func (s Session) Check(spec Spec) error {
	spec = spec.withDefaults()
	if _, err := spec.validate(); err != nil {
		return err
	}
	if s.Budget > 0 || s.PerRun > 0 {
		return CheckBudget(spec, s.PerRun, s.Budget)
	}
	return nil
}

// metricState is the plan's progress on one metric of a model.
type metricState struct {
	next int // the look size (repeats per side) to decide at next
	dec  abstat.Decision
	have bool // dec is set
	done bool
}

// Run measures spec's models with m and decides each comparison. It returns what was
// measured even when it fails or ctx is cancelled (the error says why it stopped).
func (s Session) Run(ctx context.Context, spec Spec, m Measurer, progress ProgressFunc) (Outcome, error) {
	spec = spec.withDefaults()
	plan, err := spec.validate()
	if err != nil {
		return Outcome{}, err
	}
	if s.Budget > 0 || s.PerRun > 0 {
		if err := CheckBudget(spec, s.PerRun, s.Budget); err != nil {
			return Outcome{}, err
		}
	}
	r := &runner{s: s, spec: spec, plan: plan, m: m, progress: progress}
	r.out.Models = make([]ModelOutcome, len(spec.Models))
	r.states = make([][]metricState, len(spec.Models))
	for i, name := range spec.Models {
		r.out.Models[i].Model = name
	}
	for i := range spec.Models {
		if err := r.model(ctx, i); err != nil {
			return r.out, err
		}
	}
	if err := r.holm(); err != nil {
		return r.out, err
	}
	r.out.Complete = true
	return r.out, nil
}

type runner struct {
	s        Session
	spec     Spec
	plan     abstat.Plan
	m        Measurer
	progress ProgressFunc
	out      Outcome
	states   [][]metricState
	cur      int // the model being measured
	target   int // its repeats per side to reach before deciding again
	last     time.Time
	reported bool
}

// model measures one model to the end of its plan.
func (r *runner) model(ctx context.Context, mi int) error {
	r.cur = mi
	st := make([]metricState, len(r.spec.Metrics))
	for k := range st {
		st[k].next = r.plan.Looks[0]
	}
	r.states[mi] = st
	mo := &r.out.Models[mi]
	r.target = r.spec.Start
	for {
		n := min(mo.Count(A), mo.Count(B))
		for n < r.target {
			// Pair n in ABBA blocks: even pairs run A first, odd ones B first.
			first, second := A, B
			if n%2 == 1 {
				first, second = B, A
			}
			for _, side := range []Side{first, second} {
				if mo.Count(side) > n {
					continue // measured before a stop; never happens in order, kept safe
				}
				if err := r.measure(ctx, mo, side, n); err != nil {
					return err
				}
			}
			n++
		}
		next, err := r.decide(mi)
		if err != nil {
			return fmt.Errorf("%s: %w", mo.Model, err)
		}
		if next == 0 {
			mo.Done = true
			for _, s := range st {
				mo.Decisions = append(mo.Decisions, s.dec)
				mo.Results = append(mo.Results, s.dec.Result)
			}
			r.report()
			return nil
		}
		r.target = next
	}
}

// decide asks the plan about every open metric at every look the model's repeats have
// reached, in order (the looks are at fixed sizes: readings beyond a look wait for the
// next one), and returns the repeats per side to reach before asking again, 0 when the
// plan is done with every metric.
func (r *runner) decide(mi int) (int, error) {
	mo := &r.out.Models[mi]
	st := r.states[mi]
	n := min(mo.Count(A), mo.Count(B))
	target := 0
	for k := range st {
		s := &st[k]
		a, b := mo.Values(A, k), mo.Values(B, k)
		for !s.done && s.next <= n {
			d, err := r.plan.Decide(a[:s.next], b[:s.next], r.spec.Metrics[k].Direction)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", r.spec.Metrics[k].Name, err)
			}
			s.dec, s.have = d, true
			if d.Done() {
				s.done = true
				break
			}
			s.next += max(d.AddA, d.AddB)
		}
		if !s.done {
			target = max(target, s.next)
		}
	}
	return target, nil
}

// measure runs side's n-th repeat of the model, redoing it in place while the guard
// rejects it, up to MaxRedo times.
func (r *runner) measure(ctx context.Context, mo *ModelOutcome, side Side, n int) error {
	rejected := 0
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped after %d runs: %w", r.out.Runs, err)
		}
		smp, err := r.m.Measure(ctx, side, mo.Model, n)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("stopped after %d runs: %w (%v)", r.out.Runs, cerr, err)
			}
			return fmt.Errorf("%s: run %d of %s: %w", mo.Model, n+1, side, err)
		}
		if smp.Rejected {
			rejected++
			r.out.Rejected++
			if rejected > r.spec.MaxRedo {
				reason := smp.Reason
				if reason == "" {
					reason = "no reason given"
				}
				return fmt.Errorf("%s: run %d of %s was rejected by the guard %d times in a row (last: %s); giving up after %d redos",
					mo.Model, n+1, side, rejected, reason, r.spec.MaxRedo)
			}
			continue
		}
		if len(smp.Values) != len(r.spec.Metrics) {
			return fmt.Errorf("%s: run %d of %s gave %d readings for %d metrics", mo.Model, n+1, side, len(smp.Values), len(r.spec.Metrics))
		}
		for k, v := range smp.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				return fmt.Errorf("%s: run %d of %s: %s is %v, not a finite positive reading", mo.Model, n+1, side, r.spec.Metrics[k].Name, v)
			}
		}
		mo.Runs = append(mo.Runs, Run{Side: side, I: n, Values: slices.Clone(smp.Values), Rejected: rejected})
		r.out.Runs++
		r.report()
		return nil
	}
}

// report sends progress when Every has passed since the last report (or none was sent).
func (r *runner) report() {
	if r.progress == nil {
		return
	}
	now := time.Now
	if r.s.Now != nil {
		now = r.s.Now
	}
	every := r.s.Every
	if every <= 0 {
		every = DefaultEvery
	}
	t := now()
	if r.reported && t.Sub(r.last) < every {
		return
	}
	r.last, r.reported = t, true
	r.progress(r.snapshot())
}

// snapshot is the session's progress now.
func (r *runner) snapshot() Progress {
	p := Progress{Done: r.out.Runs, Model: r.spec.Models[r.cur]}
	for i, mo := range r.out.Models {
		mp := ModelProgress{Model: mo.Model, NA: mo.Count(A), NB: mo.Count(B), Done: mo.Done}
		switch {
		case mo.Done || i < r.cur:
			p.Planned += len(mo.Runs)
		case i == r.cur:
			p.Planned += max(len(mo.Runs), 2*r.target)
		default:
			p.Planned += 2 * r.spec.Start
		}
		if i <= r.cur && r.states[i] != nil {
			for k, s := range r.states[i] {
				switch {
				case s.have:
					mp.Verdicts = append(mp.Verdicts, s.dec.Result.Verdict)
				case mp.NA > 0 && mp.NB > 0:
					res, err := abstat.Compare(mo.Values(A, k), mo.Values(B, k), r.spec.Metrics[k].Direction, r.spec.Options)
					if err == nil {
						mp.Verdicts = append(mp.Verdicts, res.Verdict)
					}
				}
			}
		}
		p.Models = append(p.Models, mp)
	}
	return p
}

// holm applies Holm's correction over every model and metric. Each result was decided
// at its look's level, not at Options.Alpha; its p value is put on Alpha's scale first
// (p x Alpha / level, at most 1), so that a single comparison keeps its verdict and
// the family's chance of any false call stays within Alpha (each comparison's chance
// over all its looks is within its share, as the plan spends it).
func (r *runner) holm() error {
	var rs []abstat.Result
	var dirs []abstat.Direction
	alpha := r.spec.Options.Alpha
	for _, mo := range r.out.Models {
		for k, res := range mo.Results {
			if res.Test != abstat.TestNone && res.Alpha > 0 {
				res.P = min(1, res.P*alpha/res.Alpha)
			}
			rs = append(rs, res)
			dirs = append(dirs, r.spec.Metrics[k].Direction)
		}
	}
	adj, err := abstat.CorrectHolm(rs, dirs, r.spec.Options)
	if err != nil {
		return err
	}
	j := 0
	for i := range r.out.Models {
		mo := &r.out.Models[i]
		for k := range mo.Results {
			res := adj[j]
			orig := mo.Results[k]
			j++
			res.P = orig.P
			if orig.Verdict.Called() && !res.Verdict.Called() {
				res.Why = fmt.Sprintf("p = %.4g at level %.4g alone, but %.4g after Holm's correction over %d comparisons > %v",
					orig.P, orig.Alpha, res.AdjustedP, tested(rs), alpha)
			}
			mo.Results[k] = res
		}
	}
	return nil
}

func tested(rs []abstat.Result) int {
	n := 0
	for _, r := range rs {
		if r.Test != abstat.TestNone {
			n++
		}
	}
	return n
}
