package baseline

import (
	"fmt"
	"strings"

	"github.com/lablup/perfbot/runner/abstat"

	"github.com/lablup/perfbot/runner/benchcsv"
)

// Verdict is the outcome of a comparison for one model.
type Verdict string

// Verdicts of the nightly comparison and of an A/B comparison.
const (
	Regression   Verdict = "regression"            // below the band, and so was its re-measure
	Improvement  Verdict = "improvement"           // above the band, and so was its re-measure
	NoChange     Verdict = "no significant change" // inside the band (nightly); abstat's no significant change (A/B)
	NotEnough    Verdict = "not enough history"    // fewer comparable runs than the minimum: no band, no guess
	Suspected    Verdict = "suspected regression"  // below the band once: waits for its re-measure
	SuspectedUp  Verdict = "suspected improvement" // above the band once: waits for its re-measure
	NotConfirmed Verdict = "not confirmed"         // outside the band once, the re-measure was not
	NoResult     Verdict = "no result"             // the new run has no measurement of the model
	NotCompared  Verdict = "not compared"          // the environments differ
	// The A/B verdicts are runner/abstat's.
	Faster   = Verdict(abstat.Faster)
	Slower   = Verdict(abstat.Slower)
	TooNoisy = Verdict(abstat.TooNoisy)
	TooFew   = Verdict(abstat.TooFew)
)

// ModelResult is the nightly verdict for one model.
type ModelResult struct {
	Model   string  `json:"model"`
	Verdict Verdict `json:"verdict"`
	// Status is the new row's SKIP:/FAIL: token when it has no measurement.
	Status string `json:"status,omitempty"`
	New    *Point `json:"new,omitempty"`
	// Baseline is the last accepted nightly run of the model in the same environment.
	Baseline *Point `json:"baseline,omitempty"`
	Band     *Band  `json:"band,omitempty"`
	// History is how many comparable nightly runs were found; Other how many of the
	// same backend and host were left out for another environment (OtherWhy: how the
	// first differed).
	History  int    `json:"history"`
	Other    int    `json:"other_env,omitempty"`
	OtherWhy string `json:"other_env_why,omitempty"`
	// ChangePct is the new value against the band's median (against the baseline when
	// there is no band); BaselinePct against the baseline.
	ChangePct   float64 `json:"change_pct"`
	BaselinePct float64 `json:"baseline_pct"`
	Remeasure   *Point  `json:"remeasure,omitempty"`
	// Suspicion is set when the change-point analysis judged the model
	// (JudgeBySegments) and suspects its newest nights.
	Suspicion *Suspicion `json:"suspicion,omitempty"`
	Text      string     `json:"text"`
}

// Report is a nightly run compared with its history.
type Report struct {
	File string `json:"file"`
	Date string `json:"date"`
	// Baseline is the last accepted nightly file of the same backend and host: the
	// newest one of the history before this run.
	Baseline   string        `json:"baseline,omitempty"`
	Rules      Rules         `json:"rules"`
	Models     []ModelResult `json:"models"`
	Superseded []Superseded  `json:"superseded,omitempty"`
	Unread     []string      `json:"unread,omitempty"`
	// segs are the models JudgeBySegments suspected, for their re-measure.
	segs map[string]segmented
}

// Suspects are the models waiting for a re-measure: outside the band once.
func (r *Report) Suspects() []string {
	var out []string
	for _, m := range r.Models {
		if m.Verdict == Suspected || m.Verdict == SuspectedUp {
			out = append(out, m.Model)
		}
	}
	return out
}

// Count returns how many models have verdict v.
func (r *Report) Count(v Verdict) int {
	n := 0
	for _, m := range r.Models {
		if m.Verdict == v {
			n++
		}
	}
	return n
}

// CompareNightly compares a new run (a file of a full sweep) with the nightly history:
// per model, the band of its last Window comparable runs before the new run's date and
// the last accepted baseline. The new file itself is left out of the history by name,
// so it may already be in the folder.
func CompareNightly(h *History, f *benchcsv.File, r Rules) Report {
	rep := Report{File: f.Name.String(), Date: f.Name.Date, Rules: r, Unread: h.Unread}
	if last := h.latestBefore(f.Name.Pair(), f.Name.Date, rep.File); last != nil {
		rep.Baseline = last.Name.String()
	}
	for _, model := range f.Models() {
		rep.Models = append(rep.Models, compareModel(h, f, model, r))
	}
	base := map[string]Point{}
	for _, m := range rep.Models {
		if m.Baseline != nil {
			base[m.Model] = *m.Baseline
		}
	}
	rep.Superseded = h.superseded(f.Name.Pair(), base, f.Name.Date, rep.File)
	return rep
}

func (h *History) latestBefore(pair, date, skip string) *benchcsv.File {
	var last *benchcsv.File
	for _, f := range h.Files {
		if f.Name.Nightly() && f.Name.Pair() == pair && f.Name.Date < date && f.Name.String() != skip {
			last = f
		}
	}
	return last
}

func compareModel(h *History, f *benchcsv.File, model string, r Rules) ModelResult {
	m := ModelResult{Model: model}
	p, ok := PointOf(f, model)
	if !ok {
		m.Verdict = NoResult
		if rows := f.RowsOf(model); len(rows) > 0 {
			m.Status = rows[0].Status
		}
		m.Text = m.describe(r)
		return m
	}
	m.New = &p
	runs, other, why := h.Nightly(model, p.Env, f.Name.Date, f.Name.String())
	m.History, m.Other, m.OtherWhy = len(runs), other, why
	if len(runs) > 0 {
		b := runs[len(runs)-1]
		m.Baseline = &b
		m.BaselinePct = pct(b.Value(), p.Value())
		m.ChangePct = m.BaselinePct
	}
	if len(runs) < r.MinHistory {
		m.Verdict = NotEnough
		m.Text = m.describe(r)
		return m
	}
	band := BandOf(runs, r)
	m.Band = &band
	m.ChangePct = pct(band.Median, p.Value())
	switch v := p.Value(); {
	case band.Below(v):
		m.Verdict = Suspected
	case band.Above(v):
		m.Verdict = SuspectedUp
	default:
		m.Verdict = NoChange
	}
	m.Text = m.describe(r)
	return m
}

// Remeasured records the re-measure of a suspect (the harness's single-model run): on
// the same side of the band again confirms the regression or improvement, anything else
// does not; a suspicion of the segments (JudgeBySegments) is confirmed when the history
// with the re-measure in tonight's place is suspected again in the same direction. It is
// an error to re-measure a model that is not suspected.
func (r *Report) Remeasured(model string, p Point) error {
	for i := range r.Models {
		m := &r.Models[i]
		if m.Model != model {
			continue
		}
		if s, ok := r.segs[model]; ok && m.Suspicion != nil && (m.Verdict == Suspected || m.Verdict == SuspectedUp) {
			r.remeasuredBySegments(m, s, p)
			return nil
		}
		if (m.Verdict != Suspected && m.Verdict != SuspectedUp) || m.Band == nil {
			return fmt.Errorf("%s is not a suspected change (%s): nothing to re-measure", model, m.Verdict)
		}
		m.Remeasure = &p
		switch {
		case m.Verdict == Suspected && m.Band.Below(p.Value()):
			m.Verdict = Regression
		case m.Verdict == SuspectedUp && m.Band.Above(p.Value()):
			m.Verdict = Improvement
		default:
			m.Verdict = NotConfirmed
		}
		m.Text = m.describe(r.Rules)
		return nil
	}
	return fmt.Errorf("%s is not a model of %s", model, r.File)
}

// describe writes the verdict's text from the numbers it was decided on.
func (m ModelResult) describe(r Rules) string {
	if m.Verdict == NoResult {
		if m.Status == "" {
			return "no measured row"
		}
		return "no result: " + m.Status + " (" + benchcsv.StatusText(m.Status) + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "decode %s tok/s%s", tokS(m.New.Value()), repeats(m.New))
	if m.Band == nil {
		fmt.Fprintf(&b, "; %s: %d of the %d comparable nightly runs a noise band needs", NotEnough, m.History, r.MinHistory)
		if m.Other > 0 {
			fmt.Fprintf(&b, " (%d more in another environment, not compared: %s)", m.Other, m.OtherWhy)
		}
		if m.Baseline != nil {
			fmt.Fprintf(&b, "; %s against the last baseline %s of %s", signed(m.BaselinePct), tokS(m.Baseline.Value()), m.Baseline.Date)
		}
		return b.String()
	}
	band := m.Band
	fmt.Fprintf(&b, ", %s against the median %s of its last %d comparable runs (noise band %s to %s", signed(m.ChangePct), tokS(band.Median), band.Runs, tokS(band.Lo), tokS(band.Hi))
	if m.Baseline != nil {
		fmt.Fprintf(&b, "; last baseline %s of %s", tokS(m.Baseline.Value()), m.Baseline.Date)
	}
	b.WriteString("): ")
	switch m.Verdict {
	case NoChange:
		b.WriteString("inside the band, no significant change")
	case Suspected:
		b.WriteString("below the band, a suspected regression waiting for its re-measure")
	case SuspectedUp:
		b.WriteString("above the band, a suspected improvement waiting for its re-measure")
	case Regression:
		fmt.Fprintf(&b, "below the band, and the re-measure (%s tok/s) is below it too: a regression", tokS(m.Remeasure.Value()))
	case Improvement:
		fmt.Fprintf(&b, "above the band, and the re-measure (%s tok/s) is above it too: an improvement", tokS(m.Remeasure.Value()))
	case NotConfirmed:
		side := "below"
		if m.New.Value() > m.Band.Hi {
			side = "above"
		}
		fmt.Fprintf(&b, "%s the band, but the re-measure (%s tok/s) is not: not confirmed, taken as noise", side, tokS(m.Remeasure.Value()))
	}
	return b.String()
}

func tokS(v float64) string { return fmt.Sprintf("%.2f", v) }

func signed(p float64) string {
	if p >= 0 {
		return fmt.Sprintf("+%.1f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}

func repeats(p *Point) string {
	if len(p.Values) > 1 {
		return fmt.Sprintf(" (median of %d repeats)", len(p.Values))
	}
	return ""
}
