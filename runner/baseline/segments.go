package baseline

import (
	"fmt"
	"slices"

	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/changepoint"
)

// NightPoints is the nightly history of model for the change-point analysis: one night
// per comparable nightly file dated before f, oldest first, then f's own run, each with
// its repeats and its mlxcel commit. runs are the runs the nights come from, in the same
// order. ok is false when f has no measured row of the model.
func NightPoints(h *History, f *benchcsv.File, model string) (nights []changepoint.Point, runs []Point, ok bool) {
	tonight, ok := PointOf(f, model)
	if !ok {
		return nil, nil, false
	}
	if h != nil {
		runs, _, _ = h.Nightly(model, tonight.Env, f.Name.Date, f.Name.String())
	}
	runs = append(runs, tonight)
	for _, r := range runs {
		nights = append(nights, changepoint.Point{Date: r.Date, Commit: r.Commit, Repeats: slices.Clone(r.Values)})
	}
	return nights, runs, true
}

// BySegments says a history of n nights (tonight's included) is long enough to be
// judged by its segments under p: two of the shortest segment. A shorter one is judged
// by the noise band.
func BySegments(n int, p changepoint.Params) bool { return n >= 2*p.MinSegment }

// Suspicion is a change the change-point analysis suspects in the newest nights of a
// model (JudgeBySegments): the nights from Since are off the current segment. The A/B
// that confirms it measures LastGood, the commit of the night GoodDate just before the
// nights it may have started on, against tonight's commit.
type Suspicion struct {
	Since    string  `json:"since"`
	LastGood string  `json:"last_good,omitempty"`
	GoodDate string  `json:"good_date"`
	Z        float64 `json:"z"`
	// ChangePct is the newest nights against the current segment before them.
	ChangePct float64 `json:"change_pct"`
}

// segmented is what JudgeBySegments kept of a model to judge its re-measure.
type segmented struct {
	nights []changepoint.Point
	params changepoint.Params
	up     bool
	since  int // the first suspected night
}

// JudgeBySegments judges again, by the change-point analysis, every measured model of r
// whose history (with tonight, from h and f) is long enough for segments (BySegments):
// the history is cut at the changes confirmed on earlier nights (confirmed, by model:
// their first nights), and the newest nights are judged against the current segment
// only, so a step confirmed once is not suspected again on the nights after it and a
// second step is judged against the level the first one left. A model whose newest
// nights are off the current segment is suspected (its Suspicion says since when and
// what to re-measure), any other is no significant change. A change the segmentation
// alone found at the start of the current segment is left to the publish, which reports
// it from the nights at the new level: it is not re-measured. The models with a shorter
// history keep the band's verdict.
func (r *Report) JudgeBySegments(h *History, f *benchcsv.File, p changepoint.Params, confirmed map[string][]string) error {
	if err := p.Validate(); err != nil {
		return err
	}
	for i := range r.Models {
		m := &r.Models[i]
		if m.New == nil {
			continue
		}
		nights, _, ok := NightPoints(h, f, m.Model)
		if !ok || !BySegments(len(nights), p) {
			continue
		}
		mp := p
		mp.Confirmed = slices.Clone(confirmed[m.Model])
		res, err := changepoint.Detect(nights, mp)
		if err != nil {
			// The band keeps the model (a night that is not a positive number).
			continue
		}
		cur := res.Current()
		tonight := fmt.Sprintf("decode %s tok/s%s; the current segment has %d night(s) from %s at %s tok/s",
			tokS(m.New.Value()), repeats(m.New), cur.Nights(), cur.First, tokS(cur.Level))
		m.ChangePct = pct(cur.Level, m.New.Value())
		j := res.Newest
		// A suspicion of the newest nights has a night before its range (RangeFrom is
		// at least MinRef into the segment): the last good one.
		if !j.Suspected() || j.FromSegmentation || j.RangeFrom == 0 {
			m.Verdict, m.Suspicion = NoChange, nil
			m.Text = "by its segments: " + j.Why + "; " + tonight
			if j.FromSegmentation {
				m.Text = fmt.Sprintf("by its segments: the segmentation found a change of %s from %s, not re-measured (the publish reports it from the nights at the new level); %s",
					signed(j.ChangePct), nights[j.Index].Date, tonight)
			}
			continue
		}
		m.Verdict = Suspected
		if j.Status == changepoint.SuspectedImprove {
			m.Verdict = SuspectedUp
		}
		m.Suspicion = &Suspicion{
			Since: nights[j.Index].Date, LastGood: j.LastGood, GoodDate: nights[j.RangeFrom-1].Date,
			Z: j.Z, ChangePct: j.ChangePct,
		}
		m.Text = "by its segments: " + j.Why + "; " + tonight
		if r.segs == nil {
			r.segs = map[string]segmented{}
		}
		r.segs[m.Model] = segmented{nights: nights, params: mp, up: m.Verdict == SuspectedUp, since: j.Index}
	}
	return nil
}

// remeasuredBySegments judges the re-measure p of a model the segments suspected: the
// history up to the suspected nights, with the re-measure in their place; the re-measure
// alone off the current segment in the same direction confirms it (the suspected
// nights themselves are not counted again).
func (r *Report) remeasuredBySegments(m *ModelResult, s segmented, p Point) {
	last := s.nights[len(s.nights)-1]
	again := changepoint.Point{Date: last.Date, Commit: last.Commit, Value: p.Value(), Repeats: slices.Clone(p.Values)}
	nights := append(slices.Clone(s.nights[:s.since]), again)
	m.Remeasure = &p
	m.Verdict = NotConfirmed
	res, err := changepoint.Detect(nights, s.params)
	if err != nil {
		m.Text = fmt.Sprintf("%s; the re-measure %s tok/s could not be judged: %v", m.Text, tokS(p.Value()), err)
		return
	}
	j := res.Newest
	confirmed := j.Suspected() && !j.FromSegmentation && j.Index == len(nights)-1 && (j.Status == changepoint.SuspectedImprove) == s.up
	if confirmed {
		m.Verdict = Regression
		if s.up {
			m.Verdict = Improvement
		}
	}
	// The reference is the current segment before the newest nights (the whole of it
	// when nothing is suspected): never empty, its level positive.
	m.Text = fmt.Sprintf("%s; re-measured at %s tok/s (%s against the current segment): %s", m.Text, tokS(p.Value()), signed(pct(j.Reference.Level, p.Value())), m.Verdict)
}
