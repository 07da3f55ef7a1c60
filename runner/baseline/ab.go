package baseline

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// Noise sources of an A/B interval.
const (
	NoiseRepeats = "repeats" // the files' own repeats of the model
	NoiseHistory = "history" // the model's nightly noise band (single runs with history)
	NoiseNone    = "none"
)

// ABResult is the A/B verdict for one model: B against A.
type ABResult struct {
	Model   string  `json:"model"`
	Verdict Verdict `json:"verdict"`
	A       *Point  `json:"a,omitempty"`
	B       *Point  `json:"b,omitempty"`
	// DiffPct is B's mean decode tok/s against A's, in percent of A's; LoPct and HiPct
	// its 95% interval (zero when there is no noise estimate).
	DiffPct float64 `json:"diff_pct"`
	LoPct   float64 `json:"lo_pct"`
	HiPct   float64 `json:"hi_pct"`
	Noise   string  `json:"noise"`
	// NoiseRuns is how many readings the noise estimate stands on.
	NoiseRuns int    `json:"noise_runs,omitempty"`
	Why       string `json:"why,omitempty"` // why it was not compared
	Text      string `json:"text"`
}

// ABReport compares two files of one commit (a configuration A/B) model by model.
type ABReport struct {
	A          string       `json:"a"`
	B          string       `json:"b"`
	Rules      Rules        `json:"rules"`
	Results    []ABResult   `json:"models"`
	Superseded []Superseded `json:"superseded,omitempty"`
}

// CompareAB compares b with a per model. Repeats of a model in a file are the noise
// estimate; a model read once on both sides takes its nightly band from h (which may
// be nil) as the noise estimate, else it is labelled a single run. Models of different
// environments are never compared.
func CompareAB(a, b *benchcsv.File, h *History, r Rules) ABReport {
	rep := ABReport{A: a.Name.String(), B: b.Name.String(), Rules: r}
	models := a.Models()
	for _, m := range b.Models() {
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	base := map[string]Point{}
	for _, model := range models {
		res := compareAB(a, b, h, model, r)
		if res.A != nil && res.Verdict != NotCompared {
			base[model] = *res.A
		}
		rep.Results = append(rep.Results, res)
	}
	if h != nil {
		until := b.Name.Date
		rep.Superseded = h.superseded(a.Name.Pair(), base, until, rep.B)
	}
	return rep
}

func compareAB(a, b *benchcsv.File, h *History, model string, r Rules) ABResult {
	res := ABResult{Model: model, Noise: NoiseNone}
	pa, okA := PointOf(a, model)
	pb, okB := PointOf(b, model)
	if okA {
		res.A = &pa
	}
	if okB {
		res.B = &pb
	}
	if !okA || !okB {
		res.Verdict = NoResult
		res.Text = res.describe()
		return res
	}
	if d := pa.Env.Diff(pb.Env); len(d) > 0 {
		res.Verdict, res.Why = NotCompared, "the environments differ: "+strings.Join(d, ", ")
		res.Text = res.describe()
		return res
	}
	ma, mb := abstat.Mean(pa.Values), abstat.Mean(pb.Values)
	res.DiffPct = pct(ma, mb)
	na, nb := float64(len(pa.Values)), float64(len(pb.Values))
	floor := r.MinSigmaPct / 100 * ma
	var se, df float64
	switch {
	case na >= 2 && nb >= 2:
		va, vb := max(abstat.SampleVar(pa.Values), floor*floor), max(abstat.SampleVar(pb.Values), floor*floor)
		qa, qb := va/na, vb/nb
		se = math.Sqrt(qa + qb)
		df = (qa + qb) * (qa + qb) / (qa*qa/(na-1) + qb*qb/(nb-1))
		res.Noise, res.NoiseRuns = NoiseRepeats, len(pa.Values)+len(pb.Values)
	case na >= 2 || nb >= 2:
		// One side repeated: its spread is the noise of both.
		rep := pa.Values
		if nb >= 2 {
			rep = pb.Values
		}
		s := math.Max(math.Sqrt(abstat.SampleVar(rep)), floor)
		se = s * math.Sqrt(1/na+1/nb)
		df = float64(len(rep) - 1)
		res.Noise, res.NoiseRuns = NoiseRepeats, len(rep)
	case h != nil:
		runs, _, _ := h.Nightly(model, pa.Env, "", "")
		if len(runs) >= r.MinHistory {
			band := BandOf(runs, r)
			se = band.Sigma * math.Sqrt(2)
			df = float64(band.Runs - 1)
			res.Noise, res.NoiseRuns = NoiseHistory, band.Runs
		}
	}
	if res.Noise == NoiseNone {
		res.Verdict = SingleRun
		res.Text = res.describe()
		return res
	}
	half := tQuantile(df) * se
	res.LoPct, res.HiPct = pct(ma, mb-half), pct(ma, mb+half)
	switch {
	case res.LoPct > 0:
		res.Verdict = Gain
	case res.HiPct < 0:
		res.Verdict = Regression
	default:
		res.Verdict = NoChange
	}
	res.Text = res.describe()
	return res
}

func (res ABResult) describe() string {
	switch res.Verdict {
	case NoResult:
		side := "B"
		if res.A == nil && res.B == nil {
			return "no measured row in either file"
		}
		if res.A == nil {
			side = "A"
		}
		return "no measured row in " + side + ": not compared"
	case NotCompared:
		return "not compared: " + res.Why
	}
	s := fmt.Sprintf("B %s tok/s (%s) vs A %s tok/s (%s): %s", tokS(abstat.Mean(res.B.Values)), readings(res.B), tokS(abstat.Mean(res.A.Values)), readings(res.A), signed(res.DiffPct))
	switch res.Verdict {
	case SingleRun:
		return s + "; single runs and no history: no noise estimate, so no verdict beyond the difference"
	}
	from := fmt.Sprintf("the %d repeats", res.NoiseRuns)
	if res.Noise == NoiseHistory {
		from = fmt.Sprintf("the nightly band of %d runs (single runs)", res.NoiseRuns)
	}
	s += fmt.Sprintf(" (95%% interval %s to %s, noise from %s): ", signed(res.LoPct), signed(res.HiPct), from)
	switch res.Verdict {
	case Gain:
		return s + "the whole interval is above zero, a gain"
	case Regression:
		return s + "the whole interval is below zero, a regression"
	}
	return s + "the interval includes zero, no significant change"
}

func readings(p *Point) string {
	if len(p.Values) == 1 {
		return "single run"
	}
	return fmt.Sprintf("mean of %d", len(p.Values))
}
