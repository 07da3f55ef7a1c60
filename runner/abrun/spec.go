package abrun

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lablup/perfbot/runner/abstat"
)

// Side is one of the two commits of an A/B.
type Side int

const (
	A Side = iota // the base
	B             // the change
)

func (s Side) String() string {
	if s == B {
		return "B"
	}
	return "A"
}

// Metric is one reading of a run (decode tok/s, decode ms ...) and which way is better.
type Metric struct {
	Name      string
	Direction abstat.Direction
}

// Defaults of a Spec's zero fields.
const (
	DefaultStart   = 5 // repeats per side before the plan is asked
	DefaultMaxRedo = 3 // guard rejections of one run before the session fails
)

// Spec is what one session compares.
type Spec struct {
	// Models are measured one after the other, each with its own interleaved schedule.
	Models []string
	// Metrics are the readings of every run, in the order of Sample.Values; at least
	// one. A model stops adding runs when the plan is done with every metric.
	Metrics []Metric
	// Start is the repeats per side measured before the plan is first asked (0:
	// DefaultStart); Cap the most per side (the plan's last look).
	Start int
	Cap   int
	// MaxRedo is how many redos of one run the guard may refuse: the first attempt
	// and MaxRedo redos, all refused, fail the session (0: DefaultMaxRedo).
	MaxRedo int
	// Options are the statistics' knobs (zero: abstat.DefaultOptions).
	Options abstat.Options
}

// withDefaults fills the zero fields.
func (s Spec) withDefaults() Spec {
	if s.Start == 0 {
		s.Start = DefaultStart
	}
	if s.MaxRedo == 0 {
		s.MaxRedo = DefaultMaxRedo
	}
	if s.Options == (abstat.Options{}) {
		s.Options = abstat.DefaultOptions()
	}
	return s
}

// validate says what is wrong with a spec (with its defaults filled) and returns its plan.
func (s Spec) validate() (abstat.Plan, error) {
	if len(s.Models) == 0 {
		return abstat.Plan{}, errors.New("no models to compare")
	}
	seen := map[string]bool{}
	for i, m := range s.Models {
		if m == "" {
			return abstat.Plan{}, fmt.Errorf("model %d has no name", i+1)
		}
		if seen[m] {
			return abstat.Plan{}, fmt.Errorf("model %q is listed twice", m)
		}
		seen[m] = true
	}
	if len(s.Metrics) == 0 {
		return abstat.Plan{}, errors.New("no metrics to compare")
	}
	for i, m := range s.Metrics {
		if m.Name == "" {
			return abstat.Plan{}, fmt.Errorf("metric %d has no name", i+1)
		}
	}
	if s.MaxRedo < 0 || s.MaxRedo > 100 {
		return abstat.Plan{}, fmt.Errorf("%d redos of a rejected run: give 0 to 100", s.MaxRedo)
	}
	plan, err := abstat.NewPlan(s.Cap, s.Options)
	if err != nil {
		return abstat.Plan{}, err
	}
	if s.Start < abstat.MinRepeats || s.Start > s.Cap {
		return abstat.Plan{}, fmt.Errorf("start with %d repeats per side: give %d to the cap, %d", s.Start, abstat.MinRepeats, s.Cap)
	}
	return plan, nil
}

// Estimate is the worst case of a session: every model runs to the cap on both sides,
// runs measured runs of perRun each (redos of rejected runs not counted).
func Estimate(spec Spec, perRun time.Duration) (runs int, d time.Duration) {
	runs = len(spec.Models) * 2 * max(spec.Cap, 0)
	if perRun <= 0 || runs == 0 {
		return runs, 0
	}
	if perRun > time.Duration(math.MaxInt64)/time.Duration(runs) {
		return runs, time.Duration(math.MaxInt64)
	}
	return runs, time.Duration(runs) * perRun
}

// CheckBudget refuses a session whose estimate is over budget, saying both.
func CheckBudget(spec Spec, perRun, budget time.Duration) error {
	if perRun <= 0 {
		return fmt.Errorf("the measured time per run is %v: give a positive duration", perRun)
	}
	if budget <= 0 {
		return fmt.Errorf("the budget is %v: give a positive duration", budget)
	}
	runs, d := Estimate(spec, perRun)
	if d > budget {
		return fmt.Errorf("the compare is refused: it could take %v (%d models x 2 sides x up to %d repeats = %d runs of %v), over the budget of %v; compare fewer models or lower the cap",
			d, len(spec.Models), spec.Cap, runs, perRun, budget)
	}
	return nil
}
