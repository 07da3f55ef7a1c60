package analyze

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
	"github.com/lablup/perfbot/runner/synth"
)

// Every synthetic model's decode window splits into the steps the synthesizer planted
// (one fewer than the generated tokens, the first comes out of the prefill, as in the
// real profile's 127 steps for 128 tokens), its edges make one whole step (the window
// cuts no step), and the one step that also grows the KV cache (two copies a layer) is
// the largest.
func TestStepsOfSynthRuns(t *testing.T) {
	t.Parallel()
	for _, model := range synth.Models() {
		res, truth := analyzeSynth(t, synth.Options{Model: model, Tokens: 6, Warmup: 2, Seed: 3})
		st := res.Summary.DecodeSteps
		if st == nil {
			t.Fatalf("%s: no steps; notes %q", model, res.Summary.Notes)
		}
		p := truth.DispatchesPerStep
		extra := truth.DecodeDispatches - truth.Steps*p
		if st.Steps != truth.Steps || st.Steps != 5 || st.Min != p || st.Median != results.Num(p) || st.Edges != p || st.Max != p+extra || extra <= 0 {
			t.Errorf("%s: %+v, want %d steps of %d dispatches", model, st, truth.Steps, p)
		}
		// The synthetic configs have the published models' sizes: the weights a step
		// reads are counted for the transformers, and said to be unknown for the hybrids.
		s := res.Summary
		want := map[string]string{"llama": "4221370368", "qwen3-moe": "1710931968"}[model]
		switch {
		case want != "" && (s.WeightBytesPerToken == nil || fmt.Sprintf("%.0f", float64(*s.WeightBytesPerToken)) != want || s.NumHiddenLayers == 0):
			t.Errorf("%s: weight bytes %v, layers %d, want %s", model, s.WeightBytesPerToken, s.NumHiddenLayers, want)
		case want == "" && (s.WeightBytesPerToken != nil || !strings.Contains(strings.Join(s.Notes, "\n"), "the bytes of weights a decode step reads are not known: model type")):
			t.Errorf("%s: weight bytes %v, notes %q", model, s.WeightBytesPerToken, s.Notes)
		}
	}
}

// A window that starts inside a step shows in its edges: fewer dispatches than a whole
// step. Without a kernel that runs once per step, there are no steps, and the reason.
func TestStepsShowACutWindow(t *testing.T) {
	t.Parallel()
	names := []string{"embed", "gemv", "norm", "argmax"}
	var ds []rocprof.Dispatch
	for step := 0; step < 5; step++ {
		for _, n := range []uint32{0, 1, 2, 1, 2, 1, 3} {
			ds = append(ds, rocprof.Dispatch{Name: n})
		}
	}
	whole, why := Steps(names, ds, 5)
	if whole == nil || whole.Steps != 5 || whole.Min != 7 || whole.Max != 7 || whole.Edges != 7 || whole.Marker != "embed" {
		t.Errorf("whole window: %+v %s", whole, why)
	}
	// The window starts at the third dispatch of a step: embed runs 4 times, argmax 5.
	cut, _ := Steps(names, ds[2:], 5)
	if cut == nil || cut.Steps != 5 || cut.Marker != "argmax" || cut.Edges != 5 || cut.Min != 7 {
		t.Errorf("cut window: %+v", cut)
	}
	if none, why := Steps(names, ds, 20); none != nil || why != "no kernel runs once per step (18 to 20 times in the window): the window was not split into steps" {
		t.Errorf("one step: %+v %q", none, why)
	}
}
