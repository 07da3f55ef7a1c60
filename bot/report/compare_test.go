package report

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/portdiff"
)

const blobRoot = "https://github.com/lablup/mlxcel/blob/1111111111111111111111111111111111111111/"

// ssmMetrics are the maintainers' SSM kernel A/B of 2026-10-04 as runner/baseline
// decides it: every model and metric with Holm's correction.
func ssmMetrics(t *testing.T) ([]CompareMetric, int) {
	t.Helper()
	read := func(name string) *benchcsv.File {
		f, err := benchcsv.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	rep, err := baseline.CompareAB(read("rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-off.csv"),
		read("rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv"), nil, abstat.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var out []CompareMetric
	for _, m := range rep.Results {
		for _, r := range m.Metrics {
			out = append(out, CompareMetric{Model: m.Model, Metric: r.Metric, Result: r.Result})
		}
	}
	return out, rep.Tested
}

func compareInput(t *testing.T) CompareInput {
	metrics, tested := ssmMetrics(t)
	return CompareInput{
		Kind: "bench", Label: "ssm-kernel", A: strings.Repeat("a", 40), B: strings.Repeat("b", 40),
		Host: "strixhalo-gfx1151", Date: "2026-10-04", Alpha: 0.05, Tested: tested, Runs: 12, Complete: true, Metrics: metrics,
		Before:      Link{Text: "before.csv", URL: blobRoot + "benchmarks/x-before.csv"},
		After:       Link{Text: "after.csv", URL: blobRoot + "benchmarks/x-after.csv"},
		WorkflowRun: &Link{Text: "run 42", URL: "https://github.com/lablup/mlxcel/actions/runs/42"},
	}
}

var compareCommitted = map[string]bool{"benchmarks/x-before.csv": true, "benchmarks/x-after.csv": true}

// The comment of the real SSM kernel pair: decode faster for both models, prefill too
// noisy to call, Welch's t deciding on 3 repeats, Holm over 4.
func TestCompareCommentRealPair(t *testing.T) {
	md, err := Render(CompareComment, NewCompareData(compareInput(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(md, compareCommitted, blobRoot); err != nil {
		t.Fatalf("%v\n%s", err, md)
	}
	if mixed := MixedPrecision(md); len(mixed) > 0 {
		t.Errorf("mixed precision: %v", mixed)
	}
	for _, want := range []string{
		CompareMarker("bench"),
		"**2 faster, 2 too noisy to call**",
		"| granite-4.0-h-tiny-4bit | decode tok/s | 60.39 | 88.43 | +46.43 % (+45.32 % to +48.03 %) | **faster** | Welch's t, p = 2.1e-06, 8.4e-06 after Holm | 3 / 3 |",
		"| prefill tok/s |",
		"too noisy to call",
		"Holm's correction over the 4 tested comparisons",
		"; [run 42](https://github.com/lablup/mlxcel/actions/runs/42)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the comment lacks %q:\n%s", want, md)
		}
	}
	golden.Check(t, "testdata/golden/compare-comment-bench.md", md)

	check, err := Render(CompareCheck, NewCompareData(compareInput(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(check, compareCommitted, blobRoot); err != nil {
		t.Fatalf("%v\n%s", err, check)
	}
	if !strings.Contains(check, "Neutral: no failing threshold is configured") {
		t.Errorf("the check run summary does not say it is neutral:\n%s", check)
	}
}

// A threshold that fails is stated with the lines that reached it; one that did not
// is stated as not reached.
func TestCompareThresholdLines(t *testing.T) {
	in := compareInput(t)
	in.Threshold = "a comparison slower by 5 % or more fails it (compare.fail_slower_pct)"
	d := NewCompareData(in)
	for _, kind := range []Kind{CompareComment, CompareCheck} {
		md, err := Render(kind, d)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md, "no comparison reached it") {
			t.Errorf("%s: the threshold not reached is not said:\n%s", kind, md)
		}
	}
	in.Failing = []string{"granite: decode tok/s slower by 6.00 %"}
	d = NewCompareData(in)
	for _, kind := range []Kind{CompareComment, CompareCheck} {
		md, err := Render(kind, d)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md, "- granite: decode tok/s slower by 6.00 %") || strings.Contains(md, "no comparison reached it") {
			t.Errorf("%s: the failing lines are not listed:\n%s", kind, md)
		}
	}
}

// syntheticDiff is a port diff as runner/portdiff makes it: one kernel made faster,
// one removed, one added, with a hostile kernel name.
func syntheticDiff() *portdiff.Diff {
	ch := func(a, b float64) portdiff.Change { return portdiff.Change{A: a, B: b, Delta: b - a} }
	return &portdiff.Diff{
		A: "Qwen3-30B-A3B-4bit_greedy", B: "Qwen3-30B-A3B-4bit_greedy", Rules: "perfbot-default",
		WallMsPerToken: ch(20, 18), GPUMsPerToken: ch(15, 13.5), HostGapMsPerToken: ch(5, 4.5), DispatchesPerToken: ch(700, 650), DecodeTokS: ch(50, 55.56),
		Units: []portdiff.UnitDiff{
			{ID: "2067", Port: "fused MoE decode", GPUMsPerToken: ch(6, 4.5), HostGapMsPerToken: ch(1, 0.5), DispatchesPerToken: ch(200, 150), PredictedMsPerToken: 3.2, RecoveredMsPerToken: 2},
			{ID: "2065", Port: "unreached"},
		},
		Kernels: []portdiff.KernelDiff{
			{Kernel: "gather_mm<float>(int, x|y)", Class: "gemm", Units: []string{"2067"}, MsPerToken: ch(4, 2.5), CallsPerToken: ch(48, 48)},
			{Kernel: "rms_norm", Class: "norm", MsPerToken: ch(1, 1), CallsPerToken: ch(97, 97)},
		},
		Appeared: []portdiff.KernelDiff{{Kernel: "fused_moe_<script>", Class: "gemm", MsPerToken: ch(0, 0.3), CallsPerToken: ch(0, 48)}},
		Vanished: []portdiff.KernelDiff{{Kernel: "moe_gate_topk", Class: "moe", MsPerToken: ch(0.2, 0), CallsPerToken: ch(48, 0)}},
		Notes:    []string{"a summary carries no per-role host gap"},
	}
}

// A profile compare shows each run's port impact: units with what was predicted and
// recovered, the kernels that changed, appeared and vanished, escaped.
func TestCompareCommentPortImpact(t *testing.T) {
	in := compareInput(t)
	in.Kind = "profile"
	in.Diffs = []CompareDiff{{Run: "Qwen3-30B-A3B-4bit_greedy", Diff: syntheticDiff()}}
	in.Metrics[0].Model = "evil|model<b>"
	md, err := Render(CompareComment, NewCompareData(in))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(md, compareCommitted, blobRoot); err != nil {
		t.Fatalf("%v\n%s", err, md)
	}
	if mixed := MixedPrecision(md); len(mixed) > 0 {
		t.Errorf("mixed precision: %v", mixed)
	}
	for _, want := range []string{
		CompareMarker("profile"),
		"### Port impact: Qwen3-30B-A3B-4bit\\_greedy",
		"| #2067 | fused MoE decode | 6.0000 → 4.5000 (-1.5000) | 1.0000 → 0.5000 (-0.5000) | 200.0 → 150.0 (-50.0) | 3.2000 | +2.0000 |",
		"| `gather_mm<float>` | #2067 | 4.0000 → 2.5000 (-1.5000) |",
		"Kernels only in B (appeared): `fused_moe_<script>` (0.3000 ms/token).",
		"Kernels only in A (vanished): `moe_gate_topk`",
		"| change | -2.0000 (-10.00 %) | -1.5000 (-10.00 %) | -0.5000 (-10.00 %) | -50.0 (-7.14 %) | +5.56 (+11.12 %) |",
		"> a summary carries no per-role host gap",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the comment lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "#2065") || strings.Contains(md, "rms\\_norm") {
		t.Errorf("an unreached unit or an unchanged kernel is listed:\n%s", md)
	}
	if strings.Contains(md, "evil|model") || strings.Contains(md, "<b>") {
		t.Errorf("a hostile model name is not escaped:\n%s", md)
	}
	golden.Check(t, "testdata/golden/compare-comment-profile.md", md)
}

// The marker is one per kind and never carries anything but plain words.
func TestCompareMarker(t *testing.T) {
	if CompareMarker("bench") == CompareMarker("profile") {
		t.Error("bench and profile compares share a marker")
	}
	if got := CompareMarker("x --><script>"); got != "<!-- perfbot:compare-xscript -->" {
		t.Errorf("CompareMarker of a hostile kind = %q", got)
	}
	if got := CompareMarker(""); got != "<!-- perfbot:compare-bench -->" {
		t.Errorf("CompareMarker(\"\") = %q", got)
	}
}
