package baseline

import (
	"fmt"
	"math"
	"slices"

	"github.com/lablup/perfbot/internal/mathx"
)

// Rules are the knobs of the nightly comparison (docs/nightly.md explains the defaults).
type Rules struct {
	// Window is N: the band is made of the model's last N comparable nightly runs.
	Window int `json:"window"`
	// MinHistory is the fewest comparable runs a band is made of; below it the verdict
	// is "not enough history".
	MinHistory int `json:"min_history"`
	// K is the band's half-width in robust standard deviations.
	K float64 `json:"k"`
	// MinSigmaPct floors the robust standard deviation, in percent of the median: a
	// few identical readings (8.07, 8.07, 8.07) do not make a zero-width band.
	MinSigmaPct float64 `json:"min_sigma_pct"`
	// MinChangePct is the smallest change, in percent of the median, ever called
	// significant, however quiet the history.
	MinChangePct float64 `json:"min_change_pct"`
}

// DefaultRules are the defaults of `perfbot baseline compare` and `perfbot run bench`.
func DefaultRules() Rules {
	return Rules{Window: 20, MinHistory: 8, K: 3, MinSigmaPct: 0.75, MinChangePct: 5}
}

// Validate says what is wrong with the rules.
func (r Rules) Validate() error {
	switch {
	case r.Window < 2:
		return fmt.Errorf("the window (N) is %d: give at least 2 runs", r.Window)
	case r.MinHistory < 2 || r.MinHistory > r.Window:
		return fmt.Errorf("the minimum history is %d: give 2 to the window (%d)", r.MinHistory, r.Window)
	case !(r.K > 0) || r.K > 100:
		return fmt.Errorf("the band width k is %v: give a positive number of standard deviations", r.K)
	case r.MinSigmaPct < 0 || r.MinSigmaPct > 50 || r.MinChangePct < 0 || r.MinChangePct > 90:
		return fmt.Errorf("the noise floor (%v%%) or the minimum change (%v%%) is out of range", r.MinSigmaPct, r.MinChangePct)
	}
	return nil
}

// madScale and iqrScale make the MAD and the IQR consistent estimates of a normal
// standard deviation.
const (
	madScale = 1.4826
	iqrScale = 1.349
)

// Band is a model's noise band: the median of its last runs and K robust standard
// deviations either side.
type Band struct {
	Runs   int     `json:"runs"` // how many runs it is made of
	First  string  `json:"first"`
	Last   string  `json:"last"` // dates of the oldest and newest run in it
	Median float64 `json:"median"`
	MAD    float64 `json:"mad"`
	IQR    float64 `json:"iqr"`
	// Sigma is the larger of 1.4826 x MAD and IQR / 1.349 (both estimate a normal
	// standard deviation), or the floor when that is larger (Floored).
	Sigma   float64 `json:"sigma"`
	Floored bool    `json:"floored,omitempty"`
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
}

// BandOf makes the band of runs (oldest first; the last Window are used).
func BandOf(runs []Point, r Rules) Band {
	if len(runs) > r.Window {
		runs = runs[len(runs)-r.Window:]
	}
	vals := make([]float64, len(runs))
	for i, p := range runs {
		vals[i] = p.Value()
	}
	b := Band{Runs: len(runs)}
	if len(runs) == 0 {
		return b
	}
	b.First, b.Last = runs[0].Date, runs[len(runs)-1].Date
	b.Median = mathx.Median(vals)
	dev := make([]float64, len(vals))
	for i, v := range vals {
		dev[i] = math.Abs(v - b.Median)
	}
	b.MAD = mathx.Median(dev)
	b.IQR = quantile(vals, 0.75) - quantile(vals, 0.25)
	// The MAD ignores up to half the runs; a model that flips between two states (Mixtral
	// on this host) can have half its runs in one. The IQR sees a state a quarter of the
	// runs are in, so the wider of the two is the noise.
	b.Sigma = max(madScale*b.MAD, b.IQR/iqrScale)
	if floor := r.MinSigmaPct / 100 * b.Median; b.Sigma < floor {
		b.Sigma, b.Floored = floor, true
	}
	half := max(r.K*b.Sigma, r.MinChangePct/100*b.Median)
	b.Lo, b.Hi = b.Median-half, b.Median+half
	return b
}

// Below says v is under the band.
func (b Band) Below(v float64) bool { return v < b.Lo }

// Above says v is over the band.
func (b Band) Above(v float64) bool { return v > b.Hi }

// quantile is the q-quantile of v by linear interpolation between order statistics.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// pct is the change from a to b in percent of a.
func pct(a, b float64) float64 {
	if a == 0 {
		return 0
	}
	return (b - a) / a * 100
}
