package publish

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/results"
)

// layConfirm writes the interleaved A/B that re-measured model below the nightly
// folder dir (confirm-<model>, a bench compare session): A = shaA, B = shaB, eight
// runs a side, B's decode readings ratio times A's.
func layConfirm(t *testing.T, dir, model, shaA, shaB string, ratio float64) string {
	t.Helper()
	name := results.ConfirmDirPrefix + model
	var a, b []float64
	c := results.Compare{Kind: results.CompareBench, ShaA: shaA, ShaB: shaB, Label: "confirm", Backend: "rocm", Host: "strixhalo-gfx1151", GFX: "gfx1151",
		Date: "2026-10-26", Started: time.Date(2026, 10, 26, 4, 0, 0, 0, time.UTC), Finished: time.Date(2026, 10, 26, 5, 0, 0, 0, time.UTC),
		State: results.SessionComplete, Start: 4, Cap: 8, Options: abstat.DefaultOptions(),
		Metrics: []results.CompareMetric{{Name: baseline.MetricDecode, Direction: abstat.HigherIsBetter.String()}}}
	for i := range 8 {
		va := 50 * (1 + 0.004*float64(i%4))
		vb := va * ratio * (1 + 0.001*float64(i%3))
		a, b = append(a, va), append(b, vb)
		c.Runs = append(c.Runs, results.CompareRun{Model: model, Side: results.SideA, I: i, Values: []float64{va}},
			results.CompareRun{Model: model, Side: results.SideB, I: i, Values: []float64{vb}})
	}
	c.Planned = len(c.Runs)
	c.Models = []results.CompareModel{{Model: model, Done: true, NA: 8, NB: 8, Results: []results.CompareResult{{Metric: baseline.MetricDecode, Result: abResult(t, a, b)}}}}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return name
}

// qwenStep publishes nights 14 to 26 of a history in which Qwen3-30B drops by 15 %
// from night 25 (the night dated cpDate(25)), as dry runs; on night 25, night adds what
// the GPU job left for the suspect (nil: the single re-run alone). It returns the dry
// run's folder and each night's summary.
func qwenStep(t *testing.T, night func(dir string, man *results.Nightly)) (out string, tg *target, sums map[int]BaselineSummary) {
	t.Helper()
	c := newCPNights(t, 11, func(model string, k int) float64 {
		if model == qwen30 && k >= 25 {
			return 0.85
		}
		return 1
	})
	c.night = func(k int, dir string, man *results.Nightly) {
		if k != 25 {
			return
		}
		if !slices.ContainsFunc(man.Remeasures, func(r results.Remeasure) bool { return r.Model == qwen30 }) {
			t.Fatalf("night 25 did not re-measure %s: %+v", qwen30, man.Remeasures)
		}
		if night != nil {
			night(dir, man)
		}
	}
	tg = newTarget(t)
	out = t.TempDir()
	for k := 0; k < 14; k++ {
		c.lay(k, tg.base)
	}
	return out, tg, c.publish(tg, out, 14, 26)
}

// setConfirm names the A/B folder in the suspect's re-measure.
func setConfirm(man *results.Nightly, model, folder string) {
	for i := range man.Remeasures {
		if man.Remeasures[i].Model == model {
			man.Remeasures[i].Confirm = folder
		}
	}
}

// The A/B of the last good commit against the first bad one says slower: the
// suspicion of night 25 is confirmed that night and its issue says how ("A/B of ...
// (8 runs) against ... (8 runs): -14.9 %, p = ..."), as the baseline page does; the
// nightly's bisection of the change is its comment on the issue (the first bad commit,
// the culprit's port impact), and the issue's table names it. The next night, which
// holds neither, still says both, and leaves the comment as it was.
func TestRegressionConfirmedByAB(t *testing.T) {
	t.Parallel()
	commits := []string{cpCommit(24), fakeSHA(1), fakeSHA(2), cpCommit(25)}
	out, tg, sums := qwenStep(t, func(dir string, man *results.Nightly) {
		setConfirm(man, qwen30, layConfirm(t, dir, qwen30, cpCommit(24), cpCommit(25), 0.85))
		bdir := results.BisectDirPrefix + qwen30
		layBisect(t, filepath.Join(dir, bdir), bisectDoc(qwen30, commits, results.BisectFound), true)
		man.Bisects = []results.NightBisect{{Model: qwen30, Good: commits[0], Bad: commits[3], Dir: bdir}}
	})
	key := regressionFileName(qwen30) + "_" + cpDate(25)
	// The issue as night 26 left it: night 26 holds no A/B and no bisection, and the
	// issue keeps what night 25 found.
	issue := readFile(t, filepath.Join(out, dryRegression+key+".md"))
	confirm := "A/B of " + cpCommit(24)[:8] + " (8 runs) against " + cpCommit(25)[:8] + " (8 runs): -14.9 %, p = 0.0002 (Mann-Whitney U), slower"
	wantIn(t, issue, "| confirmation | "+confirm+" |",
		"| bisection | Found: the first bad commit is "+fakeSHA(2)[:8]+" (confidence 97.3 %) (2026-10-26, 4 commits, 16 single-model runs of a budget of 60; 1 attempts refused by the guard were redone); the bisection comment on this issue has the details |")
	comment := readFile(t, filepath.Join(out, dryRegression+key+dryBisect))
	wantIn(t, comment, report.BisectMarker(qwen30, commits[0], commits[3]), "| first bad commit | `"+fakeSHA(2)[:8]+"` |",
		"| pull request | unknown: a dry run does not ask GitHub |", "### Port impact:", "Kernels only in B (appeared): `planted_slow_kernel`")
	page := tg.file(t, sums[25].Git.Commit, sums[25].Page)
	wantIn(t, page, "- "+qwen30+": confirmation: "+confirm)
	var wrote []string
	for _, o := range sums[25].Regressions {
		wrote = append(wrote, o.Detail+" "+o.Action)
	}
	if !slices.Contains(wrote, qwen30+" created") || !slices.Contains(wrote, "bisection comment of "+qwen30+" created") {
		t.Errorf("night 25 wrote %v", wrote)
	}
	for _, o := range sums[26].Regressions {
		if strings.HasPrefix(o.Detail, "bisection comment") {
			t.Errorf("night 26 wrote the bisection comment again: %+v", o)
		}
	}
	wantIn(t, issue, "| how it was found | confirmed on an earlier night (this issue) |")
}

// The A/B says no significant change: night 25's suspicion is not confirmed, no issue
// is opened that night, and the page says why.
func TestRegressionNotConfirmedByAB(t *testing.T) {
	t.Parallel()
	_, tg, sums := qwenStep(t, func(dir string, man *results.Nightly) {
		setConfirm(man, qwen30, layConfirm(t, dir, qwen30, cpCommit(24), cpCommit(25), 1.0))
	})
	for _, o := range sums[25].Regressions {
		if o.Detail == qwen30 {
			t.Errorf("night 25 wrote an issue of %s: %+v", qwen30, o)
		}
	}
	page := tg.file(t, sums[25].Git.Commit, sums[25].Page)
	wantIn(t, page, "confirmation: A/B of "+cpCommit(24)[:8]+" (8 runs) against "+cpCommit(25)[:8]+" (8 runs): ", ": not a significant change in the suspected direction")
}

// Without an A/B (the last good commit was not known) the single re-run confirms as
// before, and the issue says it was a single re-run.
func TestRegressionConfirmedBySingleRerun(t *testing.T) {
	t.Parallel()
	out, _, _ := qwenStep(t, nil)
	issue := readFile(t, filepath.Join(out, dryRegression+regressionFileName(qwen30)+"_"+cpDate(25)+".md"))
	wantIn(t, issue, "| confirmation | a single re-run of "+qwen30+" at tonight's commit on "+cpDate(25)+", not an A/B (the last good commit was not known): ")
}
