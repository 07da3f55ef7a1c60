package abrun

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/abstat"
)

// event is one call of the fake measurer.
type event struct {
	side  Side
	model string
	i     int
}

func (e event) String() string { return fmt.Sprintf("%s:%s%d", e.model, e.side, e.i) }

// fake is a Measurer that records every call and answers with value(side, model, i,
// attempt); reject says an attempt is refused by the guard.
type fake struct {
	calls    []event
	attempts map[event]int
	value    func(side Side, model string, i int) []float64
	reject   func(e event, attempt int) bool
	after    func(n int) // called after each call with the number of calls so far
}

func (f *fake) Measure(ctx context.Context, side Side, model string, i int) (Sample, error) {
	e := event{side, model, i}
	f.calls = append(f.calls, e)
	if f.attempts == nil {
		f.attempts = map[event]int{}
	}
	f.attempts[e]++
	defer func() {
		if f.after != nil {
			f.after(len(f.calls))
		}
	}()
	if f.reject != nil && f.reject(e, f.attempts[e]) {
		return Sample{Rejected: true, Reason: "the GPU is busy"}, nil
	}
	return Sample{Values: f.value(side, model, i)}, nil
}

// noisy returns readings around base (B: base x (1 + change)) with relative noise sd,
// from a fixed seed per model and side.
func noisy(base, change, sd float64) func(Side, string, int) []float64 {
	rngs := map[string]*rand.Rand{}
	return func(side Side, model string, i int) []float64 {
		key := model + side.String()
		r, ok := rngs[key]
		if !ok {
			seed := uint64(len(model))*7 + uint64(side)
			r = rand.New(rand.NewPCG(seed, 99))
			rngs[key] = r
		}
		v := base * (1 + r.NormFloat64()*sd)
		if side == B {
			v *= 1 + change
		}
		return []float64{v}
	}
}

var tokS = []Metric{{Name: "decode tok/s", Direction: abstat.HigherIsBetter}}

func order(calls []event) string {
	var s []string
	for _, c := range calls {
		s = append(s, c.String())
	}
	return strings.Join(s, " ")
}

// TestInterleavingOrder: each model in ABBA blocks, pair n of the model's repeats
// together, the models one after the other; a large change stops at the start repeats.
func TestInterleavingOrder(t *testing.T) {
	f := &fake{value: noisy(60, 0.45, 0.005)}
	out, err := Session{}.Run(context.Background(), Spec{Models: []string{"g", "n"}, Metrics: tokS, Start: 5, Cap: 10}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "g:A0 g:B0 g:B1 g:A1 g:A2 g:B2 g:B3 g:A3 g:A4 g:B4 " +
		"n:A0 n:B0 n:B1 n:A1 n:A2 n:B2 n:B3 n:A3 n:A4 n:B4"
	if got := order(f.calls); got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
	if !out.Complete || out.Runs != 20 {
		t.Errorf("complete %v, %d runs", out.Complete, out.Runs)
	}
	for _, mo := range out.Models {
		// The outcome keeps the measurement order too.
		var got []string
		for _, r := range mo.Runs {
			got = append(got, fmt.Sprintf("%s%d", r.Side, r.I))
		}
		if strings.Join(got, " ") != "A0 B0 B1 A1 A2 B2 B3 A3 A4 B4" {
			t.Errorf("%s runs %v", mo.Model, got)
		}
		// Called at the first look (3 a side, Welch's t at 0.00135): all 5 kept.
		d := mo.Decisions[0]
		if !mo.Done || d.Look != 1 || d.Result.NA != 3 || mo.Results[0].Verdict != abstat.Faster || len(mo.Values(A, 0)) != 5 {
			t.Errorf("%s: done %v, decision %+v, result %s", mo.Model, mo.Done, d, mo.Results[0].Text())
		}
	}
}

// TestNoChangeRunsToTheCap: a no-change pair in 3 % noise is too noisy at the first look
// and runs to the cap; in 0.1 % noise the first look rules a change out and it stops at
// the start repeats.
func TestNoChangeRunsToTheCap(t *testing.T) {
	for _, c := range []struct {
		sd      float64
		cap     int
		runs    int
		look    int
		verdict abstat.Verdict
	}{
		{0.03, 10, 10, 2, ""},
		{0.03, 20, 20, 0, ""},
		{0.001, 10, 5, 1, abstat.NoChange},
	} {
		f := &fake{value: noisy(100, 0, c.sd)}
		out, err := Session{}.Run(context.Background(), Spec{Models: []string{"m"}, Metrics: tokS, Cap: c.cap}, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		mo := out.Models[0]
		if mo.Count(A) != c.runs || mo.Count(B) != c.runs || len(f.calls) != 2*c.runs {
			t.Errorf("sd %v cap %d: %d and %d runs (%d calls), want %d a side", c.sd, c.cap, mo.Count(A), mo.Count(B), len(f.calls), c.runs)
		}
		r := mo.Results[0]
		if c.verdict != "" && r.Verdict != c.verdict || r.Verdict.Called() {
			t.Errorf("sd %v cap %d: %s", c.sd, c.cap, r.Text())
		}
		if c.look > 0 && mo.Decisions[0].Look != c.look {
			t.Errorf("sd %v cap %d: decided at look %d, want %d", c.sd, c.cap, mo.Decisions[0].Look, c.look)
		}
		if c.runs == c.cap && mo.Decisions[0].Result.NA != c.cap {
			t.Errorf("sd %v cap %d: the last decision is on %d repeats", c.sd, c.cap, mo.Decisions[0].Result.NA)
		}
	}
}

// TestRejectedRunRedoneInPlace: a run the guard refuses is asked again at the same
// position before anything else runs; too many refusals fail the session naming the
// run, keeping what was measured.
func TestRejectedRunRedoneInPlace(t *testing.T) {
	f := &fake{
		value:  noisy(60, 0.45, 0.005),
		reject: func(e event, attempt int) bool { return e == event{B, "g", 1} && attempt <= 2 },
	}
	out, err := Session{}.Run(context.Background(), Spec{Models: []string{"g"}, Metrics: tokS, Cap: 10}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "g:A0 g:B0 g:B1 g:B1 g:B1 g:A1 g:A2 g:B2 g:B3 g:A3 g:A4 g:B4"
	if got := order(f.calls); got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
	if out.Rejected != 2 || out.Runs != 10 || out.Models[0].Runs[2].Rejected != 2 || out.Models[0].Runs[2].Side != B {
		t.Errorf("rejected %d, runs %d, %+v", out.Rejected, out.Runs, out.Models[0].Runs[2])
	}

	f = &fake{
		value:  noisy(60, 0.45, 0.005),
		reject: func(e event, attempt int) bool { return e == event{A, "n", 2} },
	}
	out, err = Session{}.Run(context.Background(), Spec{Models: []string{"g", "n"}, Metrics: tokS, Cap: 10, MaxRedo: 2}, f, nil)
	if err == nil || !strings.Contains(err.Error(), "n: run 3 of A was rejected by the guard 3 times") || !strings.Contains(err.Error(), "the GPU is busy") {
		t.Fatalf("error %v", err)
	}
	if f.attempts[event{A, "n", 2}] != 3 || out.Complete || !out.Models[0].Done || out.Models[1].Count(A) != 2 || out.Models[1].Count(B) != 2 {
		t.Errorf("attempts %d, outcome %+v", f.attempts[event{A, "n", 2}], out)
	}
}

// TestCapRespected: however inconclusive, no side gets more than the cap, and the
// models after it still run.
func TestCapRespected(t *testing.T) {
	f := &fake{value: noisy(100, 0.02, 0.2)}
	out, err := Session{}.Run(context.Background(), Spec{Models: []string{"a", "bb"}, Metrics: tokS, Start: 3, Cap: 7}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mo := range out.Models {
		if mo.Count(A) > 7 || mo.Count(B) > 7 || !mo.Done {
			t.Errorf("%s: %d and %d runs", mo.Model, mo.Count(A), mo.Count(B))
		}
	}
	for _, c := range f.calls {
		if c.i >= 7 {
			t.Errorf("run %v beyond the cap", c)
		}
	}
	if out.Models[0].Count(A) != 7 {
		t.Errorf("20 %% noise stopped before the cap: %s", out.Models[0].Results[0].Text())
	}
}

// TestHolmAcrossModels: a change called alone at the cap's level loses its call when a
// second model with the same readings doubles the family; both carry the adjusted p.
func TestHolmAcrossModels(t *testing.T) {
	// A: 100, 101, ... B: 103.5, 104.5, ...: U = 21 at 10 against 10, p about 0.03.
	lin := func(side Side, model string, i int) []float64 {
		v := 100 + float64(i)
		if side == B {
			v += 3.5
		}
		return []float64{v}
	}
	one, err := Session{}.Run(context.Background(), Spec{Models: []string{"x"}, Metrics: tokS, Cap: 10}, &fake{value: lin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := one.Models[0].Results[0]
	d := one.Models[0].Decisions[0]
	if r.Verdict != abstat.Faster || d.Look != 2 || d.Result.Verdict != abstat.Faster {
		t.Fatalf("one model: %s (decided at look %d)", r.Text(), d.Look)
	}
	// One comparison: Holm keeps it; its adjusted p is p on alpha's scale.
	if want := d.Result.P * 0.05 / d.Result.Alpha; math.Abs(r.AdjustedP-want) > 1e-12 || r.P != d.Result.P {
		t.Errorf("one model: adjusted %v, want %v; p %v", r.AdjustedP, want, r.P)
	}
	two, err := Session{}.Run(context.Background(), Spec{Models: []string{"x", "y"}, Metrics: tokS, Cap: 10}, &fake{value: lin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mo := range two.Models {
		r := mo.Results[0]
		if r.Verdict.Called() || mo.Decisions[0].Result.Verdict != abstat.Faster || !strings.Contains(r.Why, "after Holm's correction over 2 comparisons") {
			t.Errorf("%s: %s", mo.Model, r.Text())
		}
		if want := min(1, 2*d.Result.P*0.05/d.Result.Alpha); math.Abs(r.AdjustedP-want) > 1e-12 {
			t.Errorf("%s: adjusted %v, want %v", mo.Model, r.AdjustedP, want)
		}
	}
}

// TestCancelKeepsWhatWasMeasured: a cancellation between runs stops the session at
// once with every accepted run in the outcome.
func TestCancelKeepsWhatWasMeasured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fake{value: noisy(100, 0, 0.03)}
	f.after = func(n int) {
		if n == 13 {
			cancel()
		}
	}
	out, err := Session{}.Run(ctx, Spec{Models: []string{"a", "bb"}, Metrics: tokS, Cap: 10}, f, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped after 13 runs") {
		t.Fatalf("error %v", err)
	}
	if len(f.calls) != 13 || out.Runs != 13 || out.Complete || len(out.Models[0].Runs) != 13 || out.Models[0].Done {
		t.Errorf("%d calls, outcome %+v", len(f.calls), out)
	}
	// 13 runs of ABBA blocks: pairs 0-5 and A of pair 6.
	if a, b := out.Models[0].Values(A, 0), out.Models[0].Values(B, 0); len(a) != 7 || len(b) != 6 {
		t.Errorf("A readings %v, B readings %v", a, b)
	}
}

// TestMeasureErrorAndBadReadings: a failing run and a reading that is not a finite
// positive number end the session naming the run.
func TestMeasureErrorAndBadReadings(t *testing.T) {
	boom := MeasureFunc(func(ctx context.Context, side Side, model string, i int) (Sample, error) {
		if side == B && i == 1 {
			return Sample{}, errors.New("the harness crashed")
		}
		return Sample{Values: []float64{50}}, nil
	})
	out, err := Session{}.Run(context.Background(), Spec{Models: []string{"m"}, Metrics: tokS, Cap: 10}, boom, nil)
	if err == nil || err.Error() != "m: run 2 of B: the harness crashed" || out.Runs != 2 {
		t.Errorf("%v, %d runs", err, out.Runs)
	}
	nan := MeasureFunc(func(ctx context.Context, side Side, model string, i int) (Sample, error) {
		return Sample{Values: []float64{math.NaN()}}, nil
	})
	if _, err := (Session{}).Run(context.Background(), Spec{Models: []string{"m"}, Metrics: tokS, Cap: 10}, nan, nil); err == nil || !strings.Contains(err.Error(), "decode tok/s is NaN") {
		t.Errorf("NaN: %v", err)
	}
}

// TestSpecRefused: bad specs are refused before any run.
func TestSpecRefused(t *testing.T) {
	f := &fake{value: noisy(1, 0, 0.1)}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Metrics: tokS, Cap: 10}, "no models"},
		{Spec{Models: []string{"a", "a"}, Metrics: tokS, Cap: 10}, `"a" is listed twice`},
		{Spec{Models: []string{"a"}, Cap: 10}, "no metrics"},
		{Spec{Models: []string{"a"}, Metrics: tokS, Cap: 2}, "the cap is 2"},
		{Spec{Models: []string{"a"}, Metrics: tokS, Cap: 10, Start: 11}, "start with 11"},
	} {
		if _, err := (Session{}).Run(context.Background(), c.spec, f, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("%d runs measured", len(f.calls))
	}
}

// TestBudget: the estimate is the worst case, every model at the cap on both sides, and
// a session over the budget is refused before any run, with both in the message.
func TestBudget(t *testing.T) {
	spec := Spec{Models: []string{"a", "b", "c"}, Metrics: tokS, Cap: 10}
	runs, d := Estimate(spec, 2*time.Minute)
	if runs != 60 || d != 2*time.Hour {
		t.Errorf("estimate %d runs, %v", runs, d)
	}
	f := &fake{value: noisy(1, 0, 0.1)}
	_, err := Session{PerRun: 2 * time.Minute, Budget: 90 * time.Minute}.Run(context.Background(), spec, f, nil)
	want := "the compare is refused: it could take 2h0m0s (3 models x 2 sides x up to 10 repeats = 60 runs of 2m0s), over the budget of 1h30m0s"
	if err == nil || !strings.HasPrefix(err.Error(), want) || len(f.calls) != 0 {
		t.Errorf("%v (%d runs), want %q", err, len(f.calls), want)
	}
	if err := CheckBudget(spec, 2*time.Minute, 2*time.Hour); err != nil {
		t.Errorf("at the budget: %v", err)
	}
	if err := CheckBudget(spec, 0, time.Hour); err == nil {
		t.Error("no time per run: no error")
	}
}

// fakeClock advances only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

// TestProgressRateLimited: reports come at most once per Every of the injected clock,
// and carry the runs done and planned, the current model and its interim verdicts.
func TestProgressRateLimited(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var got []Progress
	var at []time.Time
	f := &fake{value: noisy(100, 0, 0.03)}
	// Each run takes 25 s of the fake clock.
	f.after = func(int) { clk.t = clk.t.Add(25 * time.Second) }
	s := Session{Now: clk.Now}
	out, err := s.Run(context.Background(), Spec{Models: []string{"a", "bb"}, Metrics: tokS, Cap: 10}, f, func(p Progress) {
		got = append(got, p)
		at = append(at, clk.t)
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Runs != 40 {
		t.Fatalf("%d runs", out.Runs)
	}
	// 40 runs of 25 s: a report after the first run, then one every third run.
	if len(got) < 10 || len(got) > 15 {
		t.Errorf("%d reports for 40 runs of 25 s", len(got))
	}
	for i := 1; i < len(at); i++ {
		if at[i].Sub(at[i-1]) < time.Minute {
			t.Errorf("reports %d and %d %v apart", i-1, i, at[i].Sub(at[i-1]))
		}
	}
	first := got[0]
	if first.Done != 1 || first.Planned != 20 || first.Model != "a" || len(first.Models) != 2 {
		t.Errorf("first report %+v", first)
	}
	var grew, second bool
	for _, p := range got {
		if p.Planned == 30 && p.Model == "a" {
			grew = true // the plan asked for 10 a side on a
		}
		if p.Model == "bb" && p.Models[0].Done && len(p.Models[0].Verdicts) == 1 && p.Models[0].NA == 10 {
			second = true
		}
		if p.Done > p.Planned {
			t.Errorf("done %d of planned %d", p.Done, p.Planned)
		}
	}
	if !grew || !second {
		t.Errorf("reports: the plan never grew (%v) or the second model never showed the first's verdict (%v): %+v", grew, second, got)
	}
	// With Every of a second, every run reports.
	clk2 := &fakeClock{t: clk.t}
	n := 0
	f = &fake{value: noisy(100, 0.45, 0.005), after: func(int) { clk2.t = clk2.t.Add(time.Second) }}
	if _, err := (Session{Now: clk2.Now, Every: time.Second}).Run(context.Background(), Spec{Models: []string{"a"}, Metrics: tokS, Cap: 10}, f, func(Progress) { n++ }); err != nil {
		t.Fatal(err)
	}
	if n != len(f.calls) {
		t.Errorf("%d reports for %d runs", n, len(f.calls))
	}
}

// TestSeveralMetrics: a model runs until the plan is done with every metric; a metric
// called at the first look keeps that look's result, the other runs to the cap, and
// Holm's family counts both.
func TestSeveralMetrics(t *testing.T) {
	metrics := []Metric{{Name: "decode tok/s", Direction: abstat.HigherIsBetter}, {Name: "prefill tok/s", Direction: abstat.HigherIsBetter}}
	decode := noisy(60, 0.45, 0.005)
	prefill := noisy(1000, 0, 0.05)
	f := &fake{value: func(side Side, model string, i int) []float64 {
		return []float64{decode(side, model, i)[0], prefill(side, model+"p", i)[0]}
	}}
	out, err := Session{}.Run(context.Background(), Spec{Models: []string{"g"}, Metrics: metrics, Cap: 10}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	mo := out.Models[0]
	if mo.Count(A) != 10 || mo.Count(B) != 10 {
		t.Errorf("%d and %d runs, want the cap", mo.Count(A), mo.Count(B))
	}
	if d := mo.Decisions[0]; d.Look != 1 || d.Result.NA != 3 || mo.Results[0].Verdict != abstat.Faster {
		t.Errorf("decode: look %d on %d, %s", d.Look, d.Result.NA, mo.Results[0].Text())
	}
	if d := mo.Decisions[1]; d.Look != 2 || d.Result.NA != 10 || mo.Results[1].Verdict.Called() {
		t.Errorf("prefill: look %d on %d, %s", d.Look, d.Result.NA, mo.Results[1].Text())
	}
	if !strings.Contains(mo.Results[0].Why, "Holm over 2 comparisons") {
		t.Errorf("decode: %s", mo.Results[0].Why)
	}
	if len(mo.Values(B, 1)) != 10 || mo.Values(B, 1)[0] == mo.Values(B, 0)[0] {
		t.Errorf("prefill readings %v", mo.Values(B, 1))
	}
}

// TestCancelDuringARun: a run that ends because the session was cancelled is not
// counted, and the error says the session was stopped.
func TestCancelDuringARun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	m := MeasureFunc(func(ctx context.Context, side Side, model string, i int) (Sample, error) {
		n++
		if n == 4 {
			cancel()
			return Sample{}, fmt.Errorf("the harness was killed: %w", ctx.Err())
		}
		return Sample{Values: []float64{50 + float64(n)}}, nil
	})
	out, err := Session{}.Run(ctx, Spec{Models: []string{"m"}, Metrics: tokS, Cap: 10}, m, nil)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "stopped after 3 runs") || out.Runs != 3 || len(out.Models[0].Runs) != 3 {
		t.Errorf("%v, outcome %+v", err, out)
	}
}
