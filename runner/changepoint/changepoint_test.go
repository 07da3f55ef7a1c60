package changepoint

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// history makes nights at the given levels (one per night), each the median of 3
// readings with a Gaussian noise of sigma (a fraction), dated from 2026-01-01.
func history(rng *rand.Rand, levels []float64, sigma float64) []Point {
	pts := make([]Point, len(levels))
	for i, l := range levels {
		r := make([]float64, 3)
		for j := range r {
			r[j] = l * (1 + sigma*rng.NormFloat64())
		}
		pts[i] = Point{Date: day(i), Commit: fmt.Sprintf("c%03d", i), Repeats: r}
	}
	return pts
}

func day(i int) string {
	return time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// levels is n nights at l.
func levels(n int, l float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = l
	}
	return out
}

func cat(parts ...[]float64) []float64 { return slices.Concat(parts...) }

func detect(t *testing.T, pts []Point, p Params) Result {
	t.Helper()
	r, err := Detect(pts, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// confirmOnline runs Detect night by night from night `from`, confirming every
// suspicion whose range holds a true change (as the A/B of its ends would), and returns
// the params with the confirmations and the nights they were made on.
func confirmOnline(t *testing.T, pts []Point, lv []float64, from int, p Params) (Params, map[int]int) {
	t.Helper()
	at := map[int]int{}
	for n := from; n <= len(pts); n++ {
		r := detect(t, pts[:n], p)
		j := r.Newest
		if j.Suspected() && lv[j.RangeFrom-1] != lv[j.RangeTo] {
			p.Confirmed = append(p.Confirmed, pts[j.Index].Date)
			at[j.Index] = n - 1
		}
	}
	return p, at
}

func TestStepFoundAtItsNight(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	lv := cat(levels(20, 100), levels(8, 90))
	pts := history(rng, lv, 0.02)
	// Online: the newest nights are suspected within a few nights, with a range holding
	// night 20.
	found := -1
	for n := 21; n <= len(pts); n++ {
		j := detect(t, pts[:n], DefaultParams()).Newest
		if j.Suspected() {
			if j.Status != SuspectedRegression || j.RangeFrom > 20 || j.RangeTo < 20 || j.ChangePct > -5 {
				t.Fatalf("night %d: %+v", n-1, j)
			}
			if j.LastGood != pts[j.RangeFrom-1].Commit || j.FirstBad != pts[j.RangeTo].Commit {
				t.Errorf("commit range %s..%s for nights %d..%d", j.LastGood, j.FirstBad, j.RangeFrom, j.RangeTo)
			}
			found = n - 1
			break
		}
	}
	if found < 0 || found > 22 {
		t.Fatalf("a 10 %% drop at 2 %% noise suspected on night %d", found)
	}
	// Retrospectively, with no confirmation, the segmentation puts the change at night 20.
	r := detect(t, pts, DefaultParams())
	if len(r.Changes) != 1 {
		t.Fatalf("changes: %+v", r.Changes)
	}
	c := r.Changes[0]
	if c.Index != 20 || c.Kind != Regression || c.State != Open || c.Confirmed || c.LastGood != "c019" || c.FirstBad != "c020" {
		t.Errorf("change: %+v", c)
	}
	if c.ChangePct > -8 || c.ChangePct < -12 {
		t.Errorf("change %.2f %%, planted -10 %%", c.ChangePct)
	}
	if !r.Newest.Suspected() || !r.Newest.FromSegmentation || r.Newest.Index != 20 {
		t.Errorf("an unconfirmed current segment is not the suspicion: %+v", r.Newest)
	}
	// Confirmed, the change is no longer a suspicion.
	p := DefaultParams()
	p.Confirmed = []string{pts[20].Date}
	r = detect(t, pts, p)
	if len(r.Changes) != 1 || !r.Changes[0].Confirmed || r.Newest.Suspected() {
		t.Errorf("confirmed: %+v, newest %+v", r.Changes, r.Newest)
	}
}

func TestStepNotAbsorbedAndReportedOnce(t *testing.T) {
	t.Parallel()
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 2))
		lv := cat(levels(20, 100), levels(18, 94))
		pts := history(rng, lv, 0.03)
		p, at := confirmOnline(t, pts, lv, 21, DefaultParams())
		if len(at) != 1 {
			t.Fatalf("seed %d: confirmations %v", seed, at)
		}
		var night int
		for _, n := range at {
			night = n
		}
		// Ten nights and more after the confirmation at the new level: no suspicion
		// reaches back to the old level (a suspicion within the new level is noise the
		// A/B rejects, as confirmOnline does), the current segment holds no night of the
		// old level, the change is still the one open regression.
		for n := night + 2; n <= len(pts); n++ {
			r := detect(t, pts[:n], p)
			if j := r.Newest; j.Suspected() && j.RangeFrom-1 < 20 {
				t.Fatalf("seed %d, night %d: %s", seed, n-1, j.Why)
			}
			if cur := r.Current(); cur.Start < 19 || cur.Level > 97 {
				t.Fatalf("seed %d, night %d: current segment %+v holds the old level", seed, n-1, cur)
			}
			confirmed := 0
			for _, c := range r.Open() {
				if c.Confirmed {
					confirmed++
				} else if c.RangeFrom-1 < 20 {
					t.Fatalf("seed %d: an unconfirmed change reaches back to the old level: %+v", seed, c)
				}
			}
			if confirmed != 1 {
				t.Fatalf("seed %d: open regressions %+v", seed, r.Open())
			}
		}
		if len(pts)-1-night < 10 {
			t.Fatalf("seed %d: confirmed on night %d, fewer than ten nights after", seed, night)
		}
	}
}

func TestSecondStepCaught(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	lv := cat(levels(20, 100), levels(12, 94), levels(10, 88))
	pts := history(rng, lv, 0.02)
	p, at := confirmOnline(t, pts, lv, 21, DefaultParams())
	var firsts []int
	for i := range at {
		firsts = append(firsts, i)
	}
	slices.Sort(firsts)
	if len(firsts) != 2 || firsts[0] < 19 || firsts[0] > 21 || firsts[1] < 31 || firsts[1] > 33 || at[firsts[1]] > 36 {
		t.Fatalf("confirmed changes (first night: night confirmed) %v", at)
	}
	r := detect(t, pts, p)
	if len(r.Changes) != 2 || len(r.Open()) != 2 {
		t.Fatalf("changes %+v", r.Changes)
	}
	if c := r.Changes[1]; c.ChangePct > -4 || c.From > 97 {
		t.Errorf("second change judged against the first level: %+v", c)
	}
}

func TestReturnClosesRegression(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	lv := cat(levels(20, 100), levels(10, 93), levels(10, 100))
	pts := history(rng, lv, 0.02)
	// Retrospectively (a dip that came back, found by the pair of splits) and online.
	for _, name := range []string{"retrospective", "online"} {
		p := DefaultParams()
		if name == "online" {
			p, _ = confirmOnline(t, pts, lv, 21, p)
		}
		r := detect(t, pts, p)
		if len(r.Changes) != 2 {
			t.Fatalf("%s: changes %+v", name, r.Changes)
		}
		reg, imp := r.Changes[0], r.Changes[1]
		if reg.Kind != Regression || reg.State != Closed || reg.ClosedAt != imp.Index || imp.Kind != Improvement || imp.State != "" {
			t.Errorf("%s: %+v", name, r.Changes)
		}
		if len(r.Open()) != 0 {
			t.Errorf("%s: open %+v", name, r.Open())
		}
	}
	// Half way back is not back.
	lv = cat(levels(20, 100), levels(10, 92), levels(10, 96))
	pts = history(rng, lv, 0.005)
	p, _ := confirmOnline(t, pts, lv, 21, DefaultParams())
	r := detect(t, pts, p)
	if len(r.Changes) != 2 || r.Changes[0].State != Open {
		t.Errorf("half way back: %+v", r.Changes)
	}
	// A maintainer accepted it.
	p.Accepted = []string{r.Changes[0].Date}
	if r = detect(t, pts, p); r.Changes[0].State != Accepted || len(r.Open()) != 0 {
		t.Errorf("accepted: %+v", r.Changes)
	}
}

func TestNoChangeInNoise(t *testing.T) {
	t.Parallel()
	suspicions, nights := 0, 0
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 5))
		pts := history(rng, levels(80, 100), 0.03)
		r := detect(t, pts, DefaultParams())
		if len(r.Changes) != 0 || len(r.Segments) != 1 {
			t.Errorf("seed %d: changes in pure noise %+v", seed, r.Changes)
		}
		if r.SigmaPct < 1.2 || r.SigmaPct > 2.8 {
			t.Errorf("seed %d: noise of a night %.2f %%, about 2 %% expected (median of 3 at 3 %%)", seed, r.SigmaPct)
		}
		for n := 21; n <= len(pts); n++ {
			nights++
			if detect(t, pts[:n], DefaultParams()).Newest.Suspected() {
				suspicions++
			}
		}
	}
	// Suspicions are re-measured, not reported: a few in a hundred nights is the design
	// (bench/changepoint.sh measures what the A/B leaves); many would be a broken test.
	if rate := float64(suspicions) / float64(nights); rate > 0.08 {
		t.Errorf("%d suspicions in %d noise nights", suspicions, nights)
	}
}

func TestCreep(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 6))
	// A slow decline: 0.1 % a night for 80 nights, no single step of 5 %.
	var lv []float64
	for i := range 100 {
		lv = append(lv, 100*(1-0.001*float64(max(0, i-20))))
	}
	pts := history(rng, lv, 0.01)
	r := detect(t, pts, DefaultParams())
	for _, c := range r.Changes {
		if c.ChangePct < -5 {
			t.Errorf("a step of %.2f %% in a slow decline", c.ChangePct)
		}
	}
	if !r.Creep.Creeping || r.Creep.GapPct < 5 || r.Creep.Best.Level < 98 {
		t.Errorf("creep %+v (segments %+v)", r.Creep, r.Segments)
	}
	// The best segment must be within the last 90 days: a better level long ago is not
	// the reference.
	lv = cat(levels(40, 110), levels(100, 100))
	pts = history(rng, lv, 0.01)
	p := DefaultParams()
	p.Confirmed = []string{pts[40].Date}
	r = detect(t, pts, p)
	if r.Creep.Creeping || r.Creep.Best.Level > 102 {
		t.Errorf("a level 100 days ago counted as creep: %+v", r.Creep)
	}
	p.CreepDays = 120
	if r = detect(t, pts, p); !r.Creep.Creeping || r.Creep.GapPct < 8 {
		t.Errorf("with 120 days: %+v", r.Creep)
	}
}

func TestLowerIsBetter(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	pts := history(rng, cat(levels(20, 10), levels(10, 11)), 0.01)
	p := DefaultParams()
	p.Direction = abstat.LowerIsBetter
	r := detect(t, pts, p)
	if len(r.Changes) != 1 || r.Changes[0].Kind != Regression || r.Changes[0].State != Open {
		t.Errorf("ms per token up 10 %%: %+v", r.Changes)
	}
}

func TestDetectErrors(t *testing.T) {
	t.Parallel()
	if _, err := Detect(nil, DefaultParams()); err == nil {
		t.Error("no nights: no error")
	}
	if _, err := Detect([]Point{{Date: "d", Value: 1}, {Date: "e", Value: -2}}, DefaultParams()); err == nil {
		t.Error("a negative value: no error")
	}
	if _, err := Detect([]Point{{Date: "d", Repeats: []float64{1, 0}}}, DefaultParams()); err == nil {
		t.Error("a zero repeat: no error")
	}
	p := DefaultParams()
	p.MinSegment = 1
	if _, err := Detect([]Point{{Date: "d", Value: 1}}, p); err == nil {
		t.Error("a segment of one night: no error")
	}
	r, err := Detect([]Point{{Date: "d", Value: 1}, {Date: "e", Value: 1.1}}, DefaultParams())
	if err != nil || r.Newest.Status != TooFewNights || len(r.Segments) != 1 {
		t.Errorf("two nights: %+v %v", r.Newest, err)
	}
}

// TestRealLevels builds histories at the levels of the real 2026-09-30 gfx1151 baseline
// (every model with a stable reading) at the 1.2 % night-to-night noise docs/nightly.md
// derives for this host, and plants a 5 % drop in each.
func TestRealLevels(t *testing.T) {
	t.Parallel()
	f, err := benchcsv.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", "rocm_strixhalo-gfx1151_2026-09-30.csv"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, model := range f.Models() {
		var ok []benchcsv.Row
		for _, r := range f.RowsOf(model) {
			if r.OK() {
				ok = append(ok, r)
			}
		}
		if len(ok) != 1 {
			continue // no reading, or Mixtral's unstable repeats
		}
		n++
		rng := rand.New(rand.NewPCG(8, uint64(i)))
		l, commit := ok[0].DecodeTokS, ok[0].MlxcelCommit
		lv := cat(levels(25, l), levels(10, l*0.95))
		pts := history(rng, lv, 0.012*1.73) // a night is the median of 3
		for k := range pts {
			pts[k].Commit = commit
		}
		r := detect(t, pts, DefaultParams())
		if len(r.Changes) != 1 || r.Changes[0].Index < 24 || r.Changes[0].Index > 26 || r.Changes[0].Kind != Regression {
			t.Errorf("%s at %.2f tok/s: %+v", model, l, r.Changes)
		}
		if len(r.Changes) == 1 && r.Changes[0].LastGood != commit {
			t.Errorf("%s: commit %q", model, r.Changes[0].LastGood)
		}
	}
	if n < 5 {
		t.Fatalf("%d models with a stable reading in the real file", n)
	}
}

func TestBisectFindsCulprit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	commits := make([]string, 32)
	for i := range commits {
		commits[i] = fmt.Sprintf("c%02d", i)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	right, found := 0, 0
	const runs = 60
	for k := range runs {
		culprit := 1 + k%31
		measured := map[string]int{}
		m := func(_ context.Context, c string, n int) ([]float64, error) {
			measured[c] += n
			i := slices.Index(commits, c)
			l := 100.0
			if i >= culprit {
				l = 90
			}
			out := make([]float64, n)
			for j := range out {
				out[j] = l * (1 + 0.03*rng.NormFloat64())
			}
			return out, nil
		}
		r, err := Bisect(ctx, commits, m, DefaultBisectParams())
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, v := range measured {
			total += v
		}
		if r.Runs != total || r.Runs > DefaultBisectParams().Budget {
			t.Fatalf("runs %d, measured %d, budget %d", r.Runs, total, DefaultBisectParams().Budget)
		}
		if r.FirstBad == commits[culprit] && r.LastGood == commits[culprit-1] {
			right++
		}
		if r.Outcome == Found {
			found++
			if r.Confidence < 0.9 {
				t.Errorf("found with confidence %.3f", r.Confidence)
			}
		}
	}
	// A 10 % step at 3 % noise is plain: every bisection but a rare one is right.
	if right < runs-2 || found < runs-5 {
		t.Errorf("right %d, found %d of %d", right, found, runs)
	}
}

func TestBisectBudgetAndEdges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	commits := make([]string, 64)
	for i := range commits {
		commits[i] = fmt.Sprintf("c%02d", i)
	}
	rng := rand.New(rand.NewPCG(10, 10))
	noisy := func(step float64) (Measure, *int) {
		calls := 0
		return func(_ context.Context, c string, n int) ([]float64, error) {
			calls += n
			l := 100.0
			if slices.Index(commits, c) >= 40 {
				l = 100 * (1 - step)
			}
			out := make([]float64, n)
			for j := range out {
				out[j] = l * (1 + 0.03*rng.NormFloat64())
			}
			return out, nil
		}, &calls
	}
	// A tight budget: never exceeded, the outcome says so, the range still holds 40.
	p := DefaultBisectParams()
	p.Budget = 25
	m, calls := noisy(0.05)
	r, err := Bisect(ctx, commits, m, p)
	if err != nil {
		t.Fatal(err)
	}
	if *calls > 25 || r.Runs != *calls || r.FirstBad == "" || r.Outcome == Found && r.Confidence < 0.99 || r.Outcome == Undecided && r.Confidence >= 0.99 {
		t.Errorf("budget 25: %d runs measured, result %+v", *calls, r)
	}
	// No step: not reproduced, no midpoint measured.
	m, _ = noisy(0)
	r, err = Bisect(ctx, commits, m, DefaultBisectParams())
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != NotReproduced || len(r.Steps) != 0 || r.FirstBad != "" {
		t.Errorf("no step: %+v", r)
	}
	// Given readings of the ends are used and not counted.
	p = DefaultBisectParams()
	m, calls = noisy(0.10)
	p.Good = []float64{100, 101, 99, 100.5, 99.5, 100}
	p.Bad = []float64{90, 91, 89, 90.5, 89.5, 90}
	r, err = Bisect(ctx, commits, m, p)
	if err != nil || r.FirstBad != "c40" || r.Runs != *calls {
		t.Errorf("with the ends given: %+v %v", r, err)
	}
	for _, s := range r.Steps {
		if (s.Index == 0 || s.Index == 63) && len(s.Runs) != 6 {
			t.Errorf("an end measured again: %+v", s)
		}
		if want := s.Index >= 40; (s.Side == "bad") != want || (s.PBad > 0.5) != want {
			t.Errorf("commit %d on the %s side, P(bad) %.3f", s.Index, s.Side, s.PBad)
		}
	}
	// A measure error stops it and keeps what was measured.
	boom := errors.New("guard gave up")
	n := 0
	r, err = Bisect(ctx, commits, func(_ context.Context, c string, k int) ([]float64, error) {
		if n += k; n > 12 {
			return nil, boom
		}
		return []float64{100, 100, 100, 100, 100, 100}[:k], nil
	}, DefaultBisectParams())
	if !errors.Is(err, boom) || r.Runs != 12 {
		t.Errorf("measure error: %v, runs %d", err, r.Runs)
	}
	if _, err := Bisect(ctx, []string{"a"}, m, DefaultBisectParams()); err == nil {
		t.Error("one commit: no error")
	}
	p = DefaultBisectParams()
	p.Good = []float64{-1}
	if _, err := Bisect(ctx, commits, m, p); err == nil {
		t.Error("a negative given reading: no error")
	}
}

// A cancelled context stops the bisection before its next measurement: the runs so far
// are kept, the error is the cancellation's, and a context cancelled before the start
// measures nothing. An uncancelled context changes nothing: the same readings give the
// same result.
func TestBisectCancelled(t *testing.T) {
	t.Parallel()
	commits := make([]string, 16)
	for i := range commits {
		commits[i] = fmt.Sprintf("c%02d", i)
	}
	measure := func(stopAt int, cancel context.CancelFunc) (Measure, *int) {
		rng := rand.New(rand.NewPCG(3, 3))
		calls := 0
		return func(_ context.Context, c string, n int) ([]float64, error) {
			calls++
			if calls == stopAt {
				cancel()
			}
			l := 100.0
			if slices.Index(commits, c) >= 6 {
				l = 93
			}
			out := make([]float64, n)
			for j := range out {
				out[j] = l * (1 + 0.01*rng.NormFloat64())
			}
			return out, nil
		}, &calls
	}
	m, _ := measure(-1, nil)
	full, err := Bisect(context.Background(), commits, m, DefaultBisectParams())
	if err != nil || full.FirstBad != "c06" {
		t.Fatalf("uncancelled: %+v %v", full, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m, calls := measure(3, cancel)
	r, err := Bisect(ctx, commits, m, DefaultBisectParams())
	if !errors.Is(err, context.Canceled) || *calls != 3 || r.Outcome != Undecided {
		t.Fatalf("cancelled at the third measurement: %d calls, %+v, %v", *calls, r, err)
	}
	if r.Runs == 0 || r.Runs >= full.Runs || len(r.Steps) == 0 || math.IsNaN(r.Confidence) {
		t.Errorf("the partial result: %+v", r)
	}
	// The steps so far are the uncancelled bisection's first ones.
	for i, s := range r.Steps {
		for _, f := range full.Steps {
			if f.Commit == s.Commit && !slices.Equal(f.Runs[:len(s.Runs)], s.Runs) {
				t.Errorf("step %d of %s: %v, uncancelled %v", i, s.Commit, s.Runs, f.Runs)
			}
		}
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	m, calls = measure(-1, nil)
	r, err = Bisect(ctx, commits, m, DefaultBisectParams())
	if !errors.Is(err, context.Canceled) || *calls != 0 || r.Runs != 0 || r.Outcome != Undecided || math.IsNaN(r.Confidence) {
		t.Errorf("cancelled before the start: %d calls, %+v, %v", *calls, r, err)
	}
}

// The noise of a night from a few weeks of nights: over 200 histories of 25 nights at
// 1.5 % Gaussian noise, the estimate is within 10 % of it on average and below two
// thirds of it in at most 5 % of them (3.0 % over 100,000 such histories; the median of
// the successive differences, used before, fell that low in 7.1 %); a step and an odd
// night leave it near the noise of the rest.
func TestNoiseOfAFewWeeks(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 21))
	const n, sigma = 200, 0.015
	sum, low := 0.0, 0
	for range n {
		pts := make([]Point, 25)
		for i := range pts {
			pts[i] = Point{Date: day(i), Value: 100 * (1 + sigma*rng.NormFloat64())}
		}
		r := detect(t, pts, DefaultParams())
		sum += r.SigmaPct
		if r.SigmaPct < 100*sigma*2/3 {
			low++
		}
	}
	if mean := sum / n; mean < 1.5*0.9 || mean > 1.5*1.1 {
		t.Errorf("mean noise estimate %.3f %%, want 1.5 %% within 10 %%", mean)
	}
	if low*100 > 5*n {
		t.Errorf("%d of %d estimates below two thirds of the noise", low, n)
	}
	// 100 histories of 40 nights with a -15 % step after 20 and a +40 % night.
	sum = 0
	for range 100 {
		lv := cat(levels(20, 100), levels(20, 85))
		pts := make([]Point, len(lv))
		for i, l := range lv {
			pts[i] = Point{Date: day(i), Value: l * (1 + sigma*rng.NormFloat64())}
		}
		pts[7].Value *= 1.4
		sum += detect(t, pts, DefaultParams()).SigmaPct
	}
	if mean := sum / 100; mean < 1.5*0.85 || mean > 1.5*1.15 {
		t.Errorf("with a -15 %% step and a +40 %% night: mean noise %.3f %%, want 1.5 %% within 15 %%", mean)
	}
}
