package baseline

import (
	"math"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/benchcsv"
)

func round1(x float64) float64 {
	if x < 0 {
		return -float64(int64(-x*10+0.5)) / 10
	}
	return float64(int64(x*10+0.5)) / 10
}

func abReport(t *testing.T, a, b *benchcsv.File) ABReport {
	t.Helper()
	rep, err := CompareAB(a, b, nil, abstat.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func metric(t *testing.T, r ABResult, name string) ABMetric {
	t.Helper()
	for _, m := range r.Metrics {
		if m.Metric == name {
			return m
		}
	}
	t.Fatalf("%s: no %s in %+v", r.Model, name, r.Metrics)
	return ABMetric{}
}

// The SSM update kernel A/B of 2026-10-04 (off = A, on = B), three repeats a side, read
// as a maintainer reads the rows:
//
//   - decode tok/s, granite 60.57 60.39 60.05 -> 88.36 88.69 88.43: medians 60.39 ->
//     88.43, +46.4 %, each side spread under 1 %: faster beyond doubt. Nemotron 51.65
//     50.87 51.35 -> 74.87 72.87 74.37: 51.35 -> 74.37, +44.8 %, the on side's spread
//     of 2 tok/s a tenth of the gap: faster.
//   - prefill tok/s (the kernel is on the decode path): granite 504.51 601.60 404.49 ->
//     589.34 379.44 608.01, +16.8 % of the medians in a 40 % spread; Nemotron 298.97
//     278.61 299.42 -> 296.19 288.90 285.24, -3.4 % in a 7 % spread. Neither is a change
//     and neither rules one out: too noisy to call.
//
// Three repeats cannot give the U test a p below 0.1, so Welch's t decides, and the
// text says so; the four tested comparisons are corrected together.
func TestABSSMKernelVerdicts(t *testing.T) {
	t.Parallel()
	off, on := realFile(t, "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-off.csv"), realFile(t, "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv")
	rep := abReport(t, off, on)
	if rep.Tested != 4 || len(rep.Results) != 2 {
		t.Fatalf("%d tested comparisons of %d models, want 4 of 2", rep.Tested, len(rep.Results))
	}
	for _, tc := range []struct {
		model                 string
		medA, medB            float64
		change, prefillChange float64 // percent, to one decimal
	}{
		{"granite-4.0-h-tiny-4bit", 60.39, 88.43, 46.4, 16.8},
		{"NVIDIA-Nemotron-3-Nano-30B-A3B-4bit", 51.35, 74.37, 44.8, -3.4},
	} {
		r := result(t, rep.Results, tc.model)
		if r.Verdict != Faster || len(r.Metrics) != 2 {
			t.Errorf("%s: %s (%d metrics)", tc.model, r.Verdict, len(r.Metrics))
		}
		d := metric(t, r, MetricDecode)
		if d.Test != abstat.TestWelch || d.MedianA != tc.medA || d.MedianB != tc.medB || round1(d.ChangePct) != tc.change {
			t.Errorf("%s decode: %s", tc.model, d.Text)
		}
		if d.Verdict != abstat.Faster || d.LoPct < 35 || d.AdjustedP < d.P || d.AdjustedP > 0.001 {
			t.Errorf("%s decode: a plain gain, far past the noise and the correction: %s", tc.model, d.Text)
		}
		for _, want := range []string{"Welch's t", "after Holm", ": faster", "(Holm over 4 comparisons)"} {
			if !strings.Contains(d.Text, want) || !strings.Contains(r.Text, want) {
				t.Errorf("%s decode text lacks %q: %s", tc.model, want, r.Text)
			}
		}
		p := metric(t, r, MetricPrefill)
		if p.Verdict != abstat.TooNoisy || p.Test != abstat.TestWelch || round1(p.ChangePct) != tc.prefillChange || p.LoPct > -2 || p.HiPct < 2 {
			t.Errorf("%s prefill: %s", tc.model, p.Text)
		}
		if !strings.Contains(p.Text, "too noisy to call") || !strings.Contains(p.Text, "more repeats or a quieter host are needed") {
			t.Errorf("%s prefill text: %s", tc.model, p.Text)
		}
	}
	// Backwards the kernel is the slowdown it would be.
	back := abReport(t, on, off)
	if r := result(t, back.Results, "granite-4.0-h-tiny-4bit"); r.Verdict != Slower || !strings.Contains(r.Text, ": slower") {
		t.Errorf("on against off: %s", r.Text)
	}
	// The same file against itself: p = 1 and an interval around zero; granite's
	// repeats (within 0.4 %) rule out a change of 2 %, Nemotron's (2.7 % apart) do not.
	self := abReport(t, on, on)
	for model, want := range map[string]Verdict{"granite-4.0-h-tiny-4bit": NoChange, "NVIDIA-Nemotron-3-Nano-30B-A3B-4bit": TooNoisy} {
		r := result(t, self.Results, model)
		d := metric(t, r, MetricDecode)
		if r.Verdict != want || d.ChangePct != 0 || d.P != 1 || d.LoPct > 0 || d.HiPct < 0 {
			t.Errorf("on against itself: %s", r.Text)
		}
	}
}

// abFile is a harness file of date and suffix with, per model, its decode tok/s repeats
// and as many prefill tok/s readings (a row's decode_ms and prefill_ms follow from them
// as the harness writes them).
func abFile(t *testing.T, suffix string, models []string, decode, prefill map[string][]float64) *benchcsv.File {
	t.Helper()
	var rows []benchcsv.Row
	for _, m := range models {
		for i, d := range decode[m] {
			rows = append(rows, rowOf(m, "2026-11-02", d, prefill[m][i], realEnv))
		}
	}
	return parsed(t, benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: "2026-11-02", Suffix: suffix}, benchcsv.ROCmHeader, rows)
}

// rowOf is a measured row of model in the real format, decode_ms and prefill_ms
// following from the tok/s as the harness writes them.
func rowOf(model, date string, decode, prefill float64, env simEnv) benchcsv.Row {
	return benchcsv.Row{
		Model: model, ModelPath: "models/mlx/" + model + "/", PromptTokens: 512, GeneratedTokens: 128,
		PrefillMs: round2(512 / prefill * 1000), PrefillTokS: prefill, DecodeMs: round2(128 / decode * 1000), DecodeTokS: decode,
		HasPrefill: true, HasDecode: true, Date: date, Hardware: "AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB",
		Version: "0.7.0", BuildType: "release", MaxTokens: "128", Prompt: "Hello, how are you today?", PromptTargetLen: "512",
		MlxcelCommit: "2fcdbe5f", MlxCommit: "81ba1c6a", OverlayCommit: env.overlay, HIPVersion: env.hip,
	}
}

func scaled(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Round(x*f*100) / 100
	}
	return out
}

// Made pairs of one model, six repeats a side (the U test decides) unless said:
//
//   - a real 1.5 % decode gain with repeats within ±0.2 %: every B above every A, p =
//     2/924 = 0.0022 (0.0043 after Holm over the two metrics), the Hodges-Lehmann
//     interval inside +1.2 % to +1.8 %: faster;
//   - the same readings on both sides in another order: the interval within ±2 %, no
//     significant change;
//   - three repeats a side spread ±6 % around a 1 % gain: Welch's t, and an interval
//     far past ±2 %: too noisy to call, said as such;
//   - one run on a side: too few repeats, said as such.
func TestABMadePairs(t *testing.T) {
	t.Parallel()
	const m = "m"
	models := []string{m}
	a := []float64{40.00, 40.06, 39.95, 40.03, 39.98, 40.08}
	pre := []float64{500, 502, 498, 501, 499, 500}
	base := abFile(t, "a", models, map[string][]float64{m: a}, map[string][]float64{m: pre})
	prefill := map[string][]float64{m: {501, 499, 500, 498, 502, 500}}

	gain := abReport(t, base, abFile(t, "b", models, map[string][]float64{m: scaled(a, 1.015)}, prefill))
	r := result(t, gain.Results, m)
	d := metric(t, r, MetricDecode)
	if r.Verdict != Faster || d.Test != abstat.TestMannWhitney || d.NA != 6 || d.NB != 6 || d.LoPct < 1.2 || d.HiPct > 1.8 || round1(d.ChangePct) != 1.5 {
		t.Errorf("1.5 %% gain: %s", r.Text)
	}
	if math.Abs(d.P-2.0/924) > 1e-9 || math.Abs(d.AdjustedP-4.0/924) > 1e-9 || !strings.Contains(r.Text, "Mann-Whitney U") {
		t.Errorf("1.5 %% gain: p %v, adjusted %v: %s", d.P, d.AdjustedP, r.Text)
	}
	if p := metric(t, r, MetricPrefill); p.Verdict != abstat.NoChange {
		t.Errorf("unchanged prefill: %s", p.Text)
	}

	same := abReport(t, base, abFile(t, "b", models, map[string][]float64{m: {40.08, 39.95, 40.00, 39.98, 40.06, 40.03}}, prefill))
	if r := result(t, same.Results, m); r.Verdict != NoChange || !strings.Contains(r.Text, "the whole interval is within ±2 %") {
		t.Errorf("no change: %s", r.Text)
	}

	noisyA := abFile(t, "a", models, map[string][]float64{m: {37.6, 40.0, 42.4}}, map[string][]float64{m: {500, 500, 500}})
	noisyB := abFile(t, "b", models, map[string][]float64{m: {38.0, 40.4, 42.8}}, map[string][]float64{m: {500, 500, 500}})
	r = result(t, abReport(t, noisyA, noisyB).Results, m)
	if d := metric(t, r, MetricDecode); r.Verdict != TooNoisy || d.Test != abstat.TestWelch || d.LoPct > -2 || d.HiPct < 2 {
		t.Errorf("noisy: %s", r.Text)
	}
	if !strings.Contains(r.Text, "Welch's t") || !strings.Contains(r.Text, "too noisy to call") {
		t.Errorf("noisy text: %s", r.Text)
	}

	once := abFile(t, "b", models, map[string][]float64{m: {41}}, map[string][]float64{m: {500}})
	r = result(t, abReport(t, base, once).Results, m)
	if d := metric(t, r, MetricDecode); r.Verdict != TooFew || d.Test != abstat.TestNone || !strings.Contains(r.Text, "6 against 1 repeats: a test needs 3 per side") {
		t.Errorf("one run: %s", r.Text)
	}
}

// Holm's correction over several models at once: a decode gain called on its own
// (p = 2/252 = 0.0079 with five repeats a side, 0.0159 after Holm over its two
// metrics) is not called among five models whose ten comparisons all reach that p
// (0.079 after Holm), and its text says why.
func TestABHolmOverSeveralModels(t *testing.T) {
	t.Parallel()
	models := []string{"m1", "m2", "m3", "m4", "m5"}
	a := []float64{40.00, 40.06, 39.95, 40.03, 39.98}
	pre := []float64{500, 502, 498, 501, 499}
	decA, decB, preA, preB := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	for _, m := range models {
		decA[m], decB[m] = a, scaled(a, 1.015)
		preA[m], preB[m] = pre, scaled(pre, 1.015)
	}
	rep := abReport(t, abFile(t, "a", models, decA, preA), abFile(t, "b", models, decB, preB))
	if rep.Tested != 10 {
		t.Fatalf("%d tested, want 10", rep.Tested)
	}
	for _, r := range rep.Results {
		d := metric(t, r, MetricDecode)
		if d.Verdict.Called() || r.Verdict == Faster || d.AdjustedP <= 0.05 || !strings.Contains(d.Why, "alone, but") || !strings.Contains(d.Why, "after Holm's correction over 10 comparisons") {
			t.Errorf("%s: %s", r.Model, r.Text)
		}
	}
	one := abReport(t, abFile(t, "a", models[:1], decA, preA), abFile(t, "b", models[:1], decB, preB))
	if r := result(t, one.Results, "m1"); r.Verdict != Faster {
		t.Errorf("one model alone: %s", r.Text)
	}
}

// The first baseline (one run a model) against the 2026-10-07 run (three repeats): too
// few repeats for any test, said as such; a model on one side only, and the mlx-lm
// file, are never compared.
func TestABSingleRowsAndOtherRuntimes(t *testing.T) {
	t.Parallel()
	first, fused := realFile(t, "rocm_strixhalo-gfx1151_2026-09-30.csv"), realFile(t, "rocm_strixhalo-gfx1151_2026-10-07_fused-default-on.csv")
	rep := abReport(t, first, fused)
	llama := result(t, rep.Results, "Meta-Llama-3.1-8B-Instruct-4bit")
	if d := metric(t, llama, MetricDecode); llama.Verdict != TooFew || d.MedianA != 35.41 || d.NA != 1 || d.NB != 3 || !strings.Contains(llama.Text, "1 against 3 repeats: a test needs 3 per side") {
		t.Errorf("llama: %s", llama.Text)
	}
	if rep.Tested != 0 {
		t.Errorf("%d tested comparisons, want none", rep.Tested)
	}
	if q := result(t, rep.Results, "Qwen2.5-7B-Instruct-4bit"); q.Verdict != NoResult || q.Text != "no measured row in A: not compared" || q.Metrics != nil {
		t.Errorf("qwen2.5: %+v", q)
	}
	back := abReport(t, fused, first)
	if q := result(t, back.Results, "Qwen2.5-7B-Instruct-4bit"); q.Verdict != NoResult || q.Text != "no measured row in B: not compared" {
		t.Errorf("qwen2.5 backwards: %+v", q)
	}
	pylm := realFile(t, "pylm_strixhalo-gfx1151_2026-09-30.csv")
	for _, r := range abReport(t, pylm, first).Results {
		if r.Verdict != NotCompared || !strings.Contains(r.Why, "backend pylm vs rocm") || r.Text != "not compared: "+r.Why || r.Metrics != nil {
			t.Errorf("mlx-lm against mlxcel: %+v", r)
		}
	}
	if _, err := CompareAB(first, fused, nil, abstat.Options{Alpha: 0.7}); err == nil || !strings.Contains(err.Error(), "alpha is 0.7") {
		t.Errorf("bad options: %v", err)
	}
}
