package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/runner/results"
)

// The host's own reading of the mlxcel checkout is shown only when it says
// something other than the measured commit.
func TestEnvRows(t *testing.T) {
	t.Parallel()
	base, folder := strings.Repeat("ab", 20), "gfx1151_abababab"
	gpu := Row{Label: "GPU", Value: "Radeon 8060S Graphics"}
	for _, tc := range []struct {
		name string
		host string
		want []Row
	}{
		{"the same commit, abbreviated", "abababab", []Row{gpu}},
		{"the same commit, whole", base, []Row{gpu}},
		{"another commit", "cdcdcdcd", []Row{{Label: "mlxcel checkout on the host", Value: "cdcdcdcd"}, gpu}},
		{"an empty reading", "", []Row{{Label: "mlxcel checkout on the host", Value: ""}, gpu}},
	} {
		host := []Row{{Label: "mlxcel commit", Value: tc.host}, gpu}
		want := append([]Row{{Label: "mlxcel commit", Value: base}, {Label: "results", Value: folder}}, tc.want...)
		if diff := cmp.Diff(want, envRows(folder, host, true, base)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	want := []Row{{Label: "mlxcel commit", Value: base}, {Label: "results", Value: folder}, {Label: "host facts", Value: "hostinfo.json is missing from the results"}}
	if diff := cmp.Diff(want, envRows(folder, nil, false, base)); diff != "" {
		t.Errorf("no hostinfo.json (-want +got):\n%s", diff)
	}
}

// The comment that reruns a profile names only what was chosen.
func TestReproduceComment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		models, sampling []string
		commit, want     string
	}{
		{nil, nil, "", "/profile rocm"},
		{nil, nil, "abababab", "/profile rocm ref=abababab"},
		{[]string{"llama"}, nil, "abababab", "/profile rocm models=llama ref=abababab"},
		{nil, []string{"greedy", "t0.7"}, "", "/profile rocm sampling=greedy,t0.7"},
	} {
		comment, lines := reproduce(nil, "benchmarks/rocm_profiles", "gfx1151_abababab", tc.models, tc.sampling, tc.commit)
		if comment != tc.want {
			t.Errorf("%q %q %q: comment %q, want %q", tc.models, tc.sampling, tc.commit, comment, tc.want)
		}
		if want := "perfbot rank benchmarks/rocm_profiles/gfx1151_abababab"; lines[len(lines)-1] != want {
			t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
		}
	}
}

// Without decode_steps in the summary, the window checks are made of the steps the
// caller counted from the decode kernels, or say why there are none.
func TestWindowRowsFromKernelSteps(t *testing.T) {
	t.Parallel()
	runs := []*results.Summary{
		{Name: "counted", GeneratedTokens: 8, DecodeDispatches: 3500, DispatchesPerToken: 437.5, NumHiddenLayers: 32},
		{Name: "odd", GeneratedTokens: 8, DecodeDispatches: 3500, DispatchesPerToken: 437.5},
		{Name: "unknown", GeneratedTokens: 8, DecodeDispatches: 3500, DispatchesPerToken: 437.5},
	}
	rows := WindowRows(runs, map[string]KernelSteps{
		"counted": {Steps: 7, Whole: 40},
		"odd":     {Steps: 8, Whole: 40, Odd: 2},
		"unknown": {Why: "no kernel runs once per step (6 to 8 times): the steps are not known"},
	})
	want := []WindowRow{
		{Run: "counted", PerToken: "437.5", Layers: "32", Steps: "7", PerStep: "500.0", PerLayer: "15.62",
			Reading: "the steps are counted from the decode kernels: 40 kernels run 7 times; every kernel runs a whole number of times per step; dispatches/token divides by the 8 generated tokens, the window holds 7 steps (the first token comes out of the prefill)"},
		{Run: "odd", PerToken: "437.5", Layers: "unknown", Steps: "8", PerStep: "437.5", PerLayer: "—",
			Reading: "the steps are counted from the decode kernels: 40 kernels run 8 times; 2 kernel(s) do not run a whole number of times per step (work done in some steps only, such as growing the KV cache, or a window that cuts a step)"},
		{Run: "unknown", PerToken: "437.5", Layers: "unknown", Steps: "—", PerStep: "—", PerLayer: "—",
			Reading: "no kernel runs once per step (6 to 8 times): the steps are not known"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("window rows (-want +got):\n%s", diff)
	}
}

// The roofline view uses the plain run's rate when there is one, and gives no share of
// a peak perfbot does not know.
func TestBandwidthRows(t *testing.T) {
	t.Parallel()
	plain, bytes := results.Num(20), results.Num(4e9)
	runs := []*results.Summary{
		{Name: "r", ProfiledDecodeTokS: 10, PlainDecodeTokS: &plain, WeightBytesPerToken: &bytes, WeightBytesBasis: "counted"},
		{Name: "old", ProfiledDecodeTokS: 10},
	}
	rows, note := BandwidthRows("gfx1151", &Peak{GBps: 256, Source: "the spec"}, runs)
	if note != "Peak of gfx1151: 256 GB/s, the spec." {
		t.Errorf("peak note %q", note)
	}
	want := []BandwidthRow{
		{Run: "r", WeightsGB: "4.00", TokS: "20.00 (plain)", AchievedGBps: "80.0", PeakGBps: "256", PctOfPeak: "31", Basis: "counted"},
		{Run: "old", WeightsGB: "unknown", TokS: "10.00 (profiled)", AchievedGBps: "—", PeakGBps: "256", PctOfPeak: "—",
			Basis: "not known: the summary does not carry weight_bytes_per_token (an analysis without the model's config.json, or from before perfbot counted the weights)"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("bandwidth rows (-want +got):\n%s", diff)
	}
	rows, note = BandwidthRows("gfx1201", nil, runs[:1])
	if note != "The peak memory bandwidth of gfx1201 is unknown to perfbot, so there is no share of it." || rows[0].PeakGBps != "unknown" || rows[0].PctOfPeak != "—" {
		t.Errorf("unknown peak: %q %+v", note, rows)
	}
}
