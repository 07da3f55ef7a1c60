package baseline

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/changepoint"
)

// stepNights makes nights 0..n-1 of two real models; the first model's level is times
// factor(night).
func stepNights(t *testing.T, seed uint64, n int, factor func(int) float64) ([]simModel, []*benchcsv.File) {
	t.Helper()
	models := realModels(t)[:2]
	rng := rand.New(rand.NewPCG(seed, seed))
	var files []*benchcsv.File
	for night := range n {
		files = append(files, nightFile(t, rng, dateOf(night), models, map[string]float64{models[0].name: factor(night)}, RealSpreadPct, realEnv, ""))
	}
	return models, files
}

// stepAt is a level of 1 before night k and factor from it on.
func stepAt(k int, factor float64) func(int) float64 {
	return func(n int) float64 {
		if n >= k {
			return factor
		}
		return 1
	}
}

func judged(t *testing.T, files []*benchcsv.File, confirmed map[string][]string) Report {
	t.Helper()
	tonight := files[len(files)-1]
	rep := CompareNightly(New(files...), tonight, DefaultRules())
	if err := rep.JudgeBySegments(New(files...), tonight, changepoint.DefaultParams(), confirmed); err != nil {
		t.Fatal(err)
	}
	return rep
}

// A -12 % step from night 20, confirmed then, and a second -12 % step tonight (night
// 30): with the cut at the first step, tonight is judged against the ten nights at the
// first step's level and suspected, the A/B to measure from night 29; the other model
// is no change. The 20-night band holds both levels by then.
func TestJudgeBySegmentsCatchesASecondStep(t *testing.T) {
	t.Parallel()
	models, files := stepNights(t, 11, 31, func(n int) float64 {
		switch {
		case n >= 30:
			return 0.88 * 0.88
		case n >= 20:
			return 0.88
		}
		return 1
	})
	rep := judged(t, files, map[string][]string{models[0].name: {dateOf(20)}})
	m0, m1 := rep.Models[0], rep.Models[1]
	if m0.Verdict != Suspected || m0.Suspicion == nil || m0.Suspicion.Since != dateOf(30) || m0.Suspicion.GoodDate != dateOf(29) ||
		m0.Suspicion.LastGood != "2fcdbe5f" || m0.Suspicion.ChangePct > -8 || m0.Suspicion.Z > -3 {
		t.Fatalf("%s: %s %+v: %s", m0.Model, m0.Verdict, m0.Suspicion, m0.Text)
	}
	if !strings.HasPrefix(m0.Text, "by its segments: the last 1 night(s) from "+dateOf(30)) || !strings.Contains(m0.Text, "the current segment has 11 night(s) from "+dateOf(20)) {
		t.Errorf("text: %s", m0.Text)
	}
	if m1.Verdict != NoChange || m1.Suspicion != nil || !strings.Contains(m1.Text, "by its segments: the newest nights are within the noise of the current segment (31 nights") {
		t.Errorf("%s: %s: %s", m1.Model, m1.Verdict, m1.Text)
	}
	if want := -12.0; m0.ChangePct > want+4 || m0.ChangePct < want-4 {
		t.Errorf("change %.1f %% against the current segment", m0.ChangePct)
	}

	// The re-measure at the second level confirms it; one back at the first level
	// (tonight was an odd night) does not, although tonight's own night stays low.
	again := func(factor float64) ModelResult {
		r := judged(t, files, map[string][]string{models[0].name: {dateOf(20)}})
		p := Point{Date: dateOf(30), Commit: "2fcdbe5f", Values: []float64{models[0].decode * factor}}
		if err := r.Remeasured(models[0].name, p); err != nil {
			t.Fatal(err)
		}
		return r.Models[0]
	}
	if m := again(0.88 * 0.88); m.Verdict != Regression || m.Remeasure == nil || !strings.Contains(m.Text, "against the current segment): regression") {
		t.Errorf("re-measured at the second level: %s: %s", m.Verdict, m.Text)
	}
	if m := again(0.88); m.Verdict != NotConfirmed || !strings.Contains(m.Text, "): not confirmed") {
		t.Errorf("re-measured at the first level: %s: %s", m.Verdict, m.Text)
	}
}

// The night after a confirmed step, still at the new level: cut at the step, two
// nights are too few to judge and nothing is suspected; without the cut the two nights
// would be a suspected tail again.
func TestJudgeBySegmentsCutAtAConfirmedChange(t *testing.T) {
	t.Parallel()
	models, files := stepNights(t, 12, 22, stepAt(20, 0.88))
	cut := judged(t, files, map[string][]string{models[0].name: {dateOf(20)}})
	if m := cut.Models[0]; m.Verdict != NoChange || m.Suspicion != nil || !strings.Contains(m.Text, "the current segment has 2 night(s)") {
		t.Errorf("cut: %s %+v: %s", m.Verdict, m.Suspicion, m.Text)
	}
	uncut := judged(t, files, map[string][]string{models[1].name: {dateOf(20)}})
	if m := uncut.Models[0]; m.Verdict != Suspected || m.Suspicion == nil || m.Suspicion.Since != dateOf(20) || m.Suspicion.GoodDate != dateOf(19) {
		t.Errorf("uncut: %s %+v: %s", m.Verdict, m.Suspicion, m.Text)
	}
}

// A history shorter than two segments keeps the band's verdict; so does a model
// without a reading tonight. Bad parameters are an error.
func TestJudgeBySegmentsLeavesShortHistoriesToTheBand(t *testing.T) {
	t.Parallel()
	_, files := stepNights(t, 13, 7, func(int) float64 { return 1 })
	rep := judged(t, files, nil)
	for _, m := range rep.Models {
		if m.Verdict != NotEnough || m.Suspicion != nil || strings.Contains(m.Text, "segments") {
			t.Errorf("%s with 6 nights of history: %s: %s", m.Model, m.Verdict, m.Text)
		}
	}
	_, files = stepNights(t, 13, 8, func(int) float64 { return 1 })
	for _, m := range judged(t, files, nil).Models {
		if !strings.HasPrefix(m.Text, "by its segments: ") {
			t.Errorf("%s with 7 nights of history (8 with tonight): %s: %s", m.Model, m.Verdict, m.Text)
		}
	}
	p := changepoint.DefaultParams()
	p.MinSegment = 0
	if err := rep.JudgeBySegments(New(files...), files[len(files)-1], p, nil); err == nil {
		t.Error("a minimum segment of 0 nights: no error")
	}
}

// A gain tonight is a suspected improvement of the segments; its re-measure at the new
// level confirms it as an improvement, one back at the old level does not.
func TestJudgeBySegmentsSuspectsAGain(t *testing.T) {
	t.Parallel()
	models, files := stepNights(t, 14, 21, stepAt(20, 1.12))
	for _, c := range []struct {
		factor float64
		want   Verdict
	}{{1.12, Improvement}, {1, NotConfirmed}} {
		rep := judged(t, files, nil)
		if m := rep.Models[0]; m.Verdict != SuspectedUp || m.Suspicion == nil || m.Suspicion.Since != dateOf(20) || m.Suspicion.ChangePct < 8 {
			t.Fatalf("%s: %s %+v: %s", m.Model, m.Verdict, m.Suspicion, m.Text)
		}
		if err := rep.Remeasured(models[0].name, Point{Date: dateOf(20), Values: []float64{models[0].decode * c.factor}}); err != nil {
			t.Fatal(err)
		}
		if m := rep.Models[0]; m.Verdict != c.want || !strings.HasSuffix(m.Text, "): "+string(c.want)) {
			t.Errorf("re-measured at %.2f of the old level: %s: %s", c.factor, m.Verdict, m.Text)
		}
	}
}

// A step of five nights nobody confirmed: the segmentation finds it, and the bench job
// leaves it to the publish, saying so, without a suspicion to re-measure.
func TestJudgeBySegmentsLeavesAFoundChangeToThePublish(t *testing.T) {
	t.Parallel()
	models, files := stepNights(t, 15, 25, stepAt(20, 0.85))
	m := judged(t, files, nil).Models[0]
	if m.Model != models[0].name || m.Verdict != NoChange || m.Suspicion != nil ||
		!strings.HasPrefix(m.Text, "by its segments: the segmentation found a change of -1") || !strings.Contains(m.Text, " from "+dateOf(20)+", not re-measured") {
		t.Errorf("%s: %s %+v: %s", m.Model, m.Verdict, m.Suspicion, m.Text)
	}
}
