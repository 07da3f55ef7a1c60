package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/results"
)

// A run whose window holds no dispatches has no per-layer figure (not "0.00"), even
// with its steps counted and its layers known.
func TestWindowRowWithoutDispatchesHasNoPerLayerFigure(t *testing.T) {
	t.Parallel()
	rows := WindowRows([]*results.Summary{{Name: "empty", GeneratedTokens: 8, NumHiddenLayers: 32}},
		map[string]KernelSteps{"empty": {Steps: 7, Whole: 40}})
	if len(rows) != 1 || rows[0].PerStep != "0.0" || rows[0].PerLayer != "—" {
		t.Errorf("window row of a run without dispatches: %+v; want per step 0.0 and per layer —", rows)
	}
}

// A plain rate of 0 (a plain run that made no tokens) is not used: the profiled rate
// is; a run with no rate at all shows no rate and no achieved bandwidth, not zeros.
func TestBandwidthRowsAtZeroRates(t *testing.T) {
	t.Parallel()
	zero, bytes := results.Num(0), results.Num(4e9)
	rows, _ := BandwidthRows("gfx1151", &Peak{GBps: 256, Source: "the spec"}, []*results.Summary{
		{Name: "plain-zero", ProfiledDecodeTokS: 10, PlainDecodeTokS: &zero, WeightBytesPerToken: &bytes},
		{Name: "no-rate", WeightBytesPerToken: &bytes},
	})
	if rows[0].TokS != "10.00 (profiled)" || rows[0].AchievedGBps != "40.0" || rows[0].PctOfPeak != "16" {
		t.Errorf("a plain rate of 0 was used: %+v", rows[0])
	}
	if rows[1].TokS != "—" || rows[1].AchievedGBps != "—" || rows[1].PctOfPeak != "—" || rows[1].WeightsGB != "4.00" {
		t.Errorf("a run without a rate: %+v; want — for the rate, the bandwidth and the share", rows[1])
	}
}

// A table cell with no models or a blank commit shows a dash; names are joined.
func TestEmptyCellsShowADash(t *testing.T) {
	t.Parallel()
	if got := names(nil); got != "—" {
		t.Errorf("names(nil) = %q", got)
	}
	if got := names([]string{"llama", "qwen3"}); got != "llama, qwen3" {
		t.Errorf("names = %q", got)
	}
	if got := orDash("  "); got != "—" {
		t.Errorf("orDash of blanks = %q", got)
	}
	if got := orDash("abc1234"); got != "abc1234" {
		t.Errorf("orDash = %q", got)
	}
}

// Numbers written as code (`1.5`) count for a column's precision like plain ones.
func TestMixedPrecisionReadsCodeSpans(t *testing.T) {
	t.Parallel()
	md := "| run | ms |\n| --- | ---: |\n| a | `1.5` |\n| b | `1.25` |\n"
	got := MixedPrecision(md)
	if len(got) != 1 || !strings.Contains(got[0], `"1.5"`) || !strings.Contains(got[0], `"1.25"`) {
		t.Errorf("MixedPrecision = %q, want column ms flagged with both cells", got)
	}
	if got := MixedPrecision(strings.ReplaceAll(md, "`1.25`", "`1.7`")); !slices.Equal(got, nil) {
		t.Errorf("one precision flagged: %q", got)
	}
}
