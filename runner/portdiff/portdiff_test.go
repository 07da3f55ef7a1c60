package portdiff

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
)

const qwen = "Qwen3-30B-A3B-4bit_greedy"

func realRun(t *testing.T) (*results.Summary, []results.KernelRow) {
	t.Helper()
	dir := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
	s, err := results.ReadSummary(filepath.Join(dir, qwen+"_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := results.ReadKernelsFile(filepath.Join(dir, qwen+"_decode_kernels.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return s, ks
}

func write(t *testing.T, dir string, s *results.Summary, ks []results.KernelRow) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, s.Name+"_summary.json")
	if err := results.WriteSummary(p, s); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteKernelsFile(filepath.Join(dir, s.Name+"_decode_kernels.csv"), ks); err != nil {
		t.Fatal(err)
	}
	return p
}

func num(x float64, d int) results.Num { return results.Num(results.Round(x, d)) }

// The port of two of #2065's roles, made from the real Qwen3-30B-A3B profile. A is the
// real run with a host gap charged to three MoE roles (the repo analyzer's summaries
// carry none); B is A where the moe_activation and moe_gather_indices kernels are gone
// (the compiled sigmoid-multiply, 0.2176 ms/token, and arange, 0.1221 ms/token) with
// their host gap (0.05 and 0.08 ms/token) and dispatches, and a new fused kernel takes
// 0.05 ms/token, attributed to no role. Every other kernel keeps its time.
func portedPair(t *testing.T) (aPath, bPath string, removedMs, addedMs, removedGap float64) {
	t.Helper()
	s, ks := realRun(t)
	tokens := float64(s.GeneratedTokens)
	gaps := map[string]float64{"moe_activation": 0.05, "moe_gather_indices": 0.08, "moe_weighted_sum": 0.10}
	for _, role := range []string{"moe_activation", "moe_gather_indices", "moe_weighted_sum"} {
		s.RoleHostGapMsPerToken = append(s.RoleHostGapMsPerToken, results.KV{Key: role, Value: num(gaps[role], 4)})
	}
	root := t.TempDir()
	aPath = write(t, filepath.Join(root, "a"), s, ks)

	gone := []string{"moe_activation", "moe_gather_indices"}
	var keep []results.KernelRow
	var removedCalls float64
	for _, k := range ks {
		if len(k.Roles) == 1 && slices.Contains(gone, k.Roles[0]) {
			removedMs += float64(k.TotalNs) / 1e6 / tokens
			removedCalls += float64(k.Calls) / tokens
			continue
		}
		keep = append(keep, k)
	}
	addedMs = 0.05
	fused := results.KernelRow{Kernel: "void mlx::core::rocm::moe_gateup_kernel<hip_bfloat16, 64>(hip_bfloat16 const*, hip_bfloat16*)",
		Class: "gather_qmv", Calls: 6096, CallsPerToken: 47.62, TotalNs: int64(addedMs * 1e6 * tokens)}
	keep = append(keep, fused)
	removedGap = gaps["moe_activation"] + gaps["moe_gather_indices"]

	b := *s
	oldGPU := float64(s.DecodeGPUSumMs) / tokens
	newGPU := oldGPU - removedMs + addedMs
	b.DecodeGPUSumMs = num(newGPU*tokens, 3)
	b.DecodeGPUBusyMs = b.DecodeGPUSumMs
	b.GPUMsPerToken = num(newGPU, 4)
	b.HostGapMsPerToken = num(float64(s.HostGapMsPerToken)-removedGap, 4)
	b.DecodeWallMs = num(float64(s.DecodeWallMs)-(removedMs-addedMs+removedGap)*tokens, 3)
	b.DispatchesPerToken = num(float64(s.DispatchesPerToken)-removedCalls+47.62, 1)
	b.RoleSharePct, b.RoleDispatchesPerToken, b.RoleHostGapMsPerToken = nil, nil, nil
	for _, kv := range s.RoleSharePct {
		ms := float64(kv.Value) / 100 * oldGPU
		if slices.Contains(gone, kv.Key) {
			ms = 0
		}
		b.RoleSharePct = append(b.RoleSharePct, results.KV{Key: kv.Key, Value: num(100*ms/newGPU, 2)})
	}
	for _, kv := range s.RoleDispatchesPerToken {
		if slices.Contains(gone, kv.Key) {
			kv.Value = 0
		}
		b.RoleDispatchesPerToken = append(b.RoleDispatchesPerToken, kv)
	}
	for _, kv := range s.RoleHostGapMsPerToken {
		if slices.Contains(gone, kv.Key) {
			kv.Value = 0
		}
		b.RoleHostGapMsPerToken = append(b.RoleHostGapMsPerToken, kv)
	}
	bPath = write(t, filepath.Join(root, "b"), &b, keep)
	return aPath, bPath, removedMs, addedMs, removedGap
}

func unitOf(t *testing.T, d *Diff, id string) UnitDiff {
	t.Helper()
	for _, u := range d.Units {
		if u.ID == id {
			return u
		}
	}
	t.Fatalf("no unit %s", id)
	return UnitDiff{}
}

func TestDiffOfAPort(t *testing.T) {
	t.Parallel()
	aPath, bPath, removedMs, addedMs, removedGap := portedPair(t)
	a, err := ReadRun(aPath)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadRun(bPath)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Compare(a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 0.2176 + 0.1221 ms/token of kernels, 0.13 of host gap gone, 0.05 added.
	if math.Abs(removedMs-0.3397) > 0.0002 {
		t.Fatalf("removed %v ms/token: the fixture changed?", removedMs)
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.4f, want %.4f", what, got, want)
		}
	}
	near("wall delta", d.WallMsPerToken.Delta, -(removedMs - addedMs + removedGap), 0.0002)
	near("GPU delta", d.GPUMsPerToken.Delta, addedMs-removedMs, 0.0002)
	near("host gap delta", d.HostGapMsPerToken.Delta, -removedGap, 0.0001)
	if d.DispatchesPerToken.Delta >= 0 {
		t.Errorf("dispatches/token %+v: two kernels per layer went, one came", d.DispatchesPerToken)
	}
	// #2065 recovered its two roles' kernel time and host gap; the rounding of the
	// role shares (2 decimals of 13 ms) is the tolerance.
	moe := unitOf(t, d, "2065")
	near("#2065 GPU delta", moe.GPUMsPerToken.Delta, -removedMs, 0.003)
	near("#2065 host gap delta", moe.HostGapMsPerToken.Delta, -removedGap, 0.0001)
	near("#2065 recovered", moe.RecoveredMsPerToken, removedMs+removedGap, 0.003)
	if moe.DispatchesPerToken.Delta > -142 {
		t.Errorf("#2065 dispatches %+v: 47.62 + 142.88 per token went", moe.DispatchesPerToken)
	}
	// The prediction is A's ranking's own figure for the unit.
	rk, err := rank.Rank([]*results.Summary{a.Summary}, attrib.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rk.Units {
		if got := unitOf(t, d, u.ID).PredictedMsPerToken; got != u.Runs[0].RecoverableMsPerToken {
			t.Errorf("#%s predicted %v, the ranking says %v", u.ID, got, u.Runs[0].RecoverableMsPerToken)
		}
	}
	if moe.PredictedMsPerToken <= 0 {
		t.Errorf("#2065 predicted %v: the ranking reaches it in Qwen3", moe.PredictedMsPerToken)
	}
	// Units without a change: no recovered time beyond the share rounding.
	for _, id := range []string{"2063", "2064", "2067", "2068"} {
		near("#"+id+" recovered", unitOf(t, d, id).RecoveredMsPerToken, 0, 0.003)
	}
	// Kernels: one appeared, two vanished, the rest unchanged.
	if len(d.Appeared) != 1 || !strings.Contains(d.Appeared[0].Kernel, "moe_gateup_kernel") || d.Appeared[0].MsPerToken.B != 0.05 {
		t.Errorf("appeared %+v", d.Appeared)
	}
	if len(d.Vanished) != 2 || d.Vanished[0].MsPerToken.A != 0.2176 || d.Vanished[1].MsPerToken.A != 0.1221 ||
		!slices.Equal(d.Vanished[0].Units, []string{"2065"}) {
		t.Errorf("vanished %+v", d.Vanished)
	}
	for _, k := range d.Kernels {
		if k.MsPerToken.Delta != 0 {
			t.Errorf("%s changed: %+v", Short(k.Kernel), k.MsPerToken)
		}
	}
	md := d.Markdown()
	for _, want := range []string{"**Kernels only in B (appeared)** (1)", "`void mlx::core::rocm::moe_gateup_kernel<hip_bfloat16, 64>`",
		"**Kernels only in A (vanished)** (2)", "| #2065 | fused MoE decode", "No kernel of both runs changed"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if js, err := d.JSON(); err != nil || !strings.Contains(string(js), `"recovered_ms_per_token"`) {
		t.Errorf("JSON: %v", err)
	}
}

func TestPairsOfFolders(t *testing.T) {
	t.Parallel()
	aPath, bPath, _, _, _ := portedPair(t)
	dirA, dirB := filepath.Dir(aPath), filepath.Dir(bPath)
	// A second run only in A.
	s, ks := realRun(t)
	s.Name = "Meta-Llama-3.1-8B-Instruct-4bit_greedy"
	write(t, dirA, s, ks)
	pairs, onlyA, onlyB, err := Pairs(dirA, dirB)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 1 || pairs[0][0].Summary.Name != qwen || !slices.Equal(onlyA, []string{s.Name}) || len(onlyB) != 0 {
		t.Errorf("pairs %d, only A %v, only B %v", len(pairs), onlyA, onlyB)
	}
	// Nothing in common.
	other := t.TempDir()
	write(t, other, s, ks)
	if _, _, _, err := Pairs(other, dirB); err == nil || !strings.Contains(err.Error(), "no run is in both") {
		t.Errorf("no common run: %v", err)
	}
}

func TestReadRunRejects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, ks := realRun(t)
	p := write(t, dir, s, ks)
	if err := os.Remove(filepath.Join(dir, qwen+"_decode_kernels.csv")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRun(p); err == nil || !strings.Contains(err.Error(), "reading the decode kernels") {
		t.Errorf("no kernels CSV: %v", err)
	}
	if _, err := ReadRun(filepath.Join(dir, "x.json")); err == nil || !strings.Contains(err.Error(), "give a <run>_summary.json") {
		t.Errorf("not a summary: %v", err)
	}
	if _, _, _, err := Pairs(filepath.Join(dir, "missing"), dir); err == nil {
		t.Error("a missing folder: no error")
	}
	if _, _, _, err := Pairs(t.TempDir(), dir); err == nil || !strings.Contains(err.Error(), "no *_summary.json") {
		t.Errorf("an empty folder: %v", err)
	}
	// Two files holding one run.
	dup := t.TempDir()
	write(t, dup, s, ks)
	data, _ := os.ReadFile(filepath.Join(dup, qwen+"_summary.json"))
	os.WriteFile(filepath.Join(dup, "copy_summary.json"), data, 0o644)
	kd, _ := os.ReadFile(filepath.Join(dup, qwen+"_decode_kernels.csv"))
	os.WriteFile(filepath.Join(dup, "copy_decode_kernels.csv"), kd, 0o644)
	if _, _, _, err := Pairs(dup, dup); err == nil || !strings.Contains(err.Error(), "both hold run") {
		t.Errorf("a run twice: %v", err)
	}
}

// A hostile kernel name cannot break the Markdown table or start a new line.
func TestMarkdownQuotesKernelNames(t *testing.T) {
	t.Parallel()
	s, ks := realRun(t)
	hostile := ks[0]
	hostile.Kernel = "evil|kernel\n# heading <b>x</b>`tick`"
	a := Run{Summary: s, Kernels: ks}
	b := Run{Summary: s, Kernels: append(slices.Clone(ks[1:]), hostile)}
	d, err := Compare(a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown()
	for _, line := range strings.Split(md, "\n") {
		// Inside the code span, <b> stays literal text.
		if strings.HasPrefix(line, "# heading") || (strings.Contains(line, "<b>") && !strings.Contains(line, "`` evil")) {
			t.Errorf("raw kernel text in the Markdown: %q", line)
		}
		if strings.Contains(line, "evil") && strings.Count(line, "|")-strings.Count(line, `\|`) != 6 {
			t.Errorf("the name broke the table row: %q", line)
		}
	}
	if got := Short("void f<a, b<c>>(int, float)"); got != "void f<a, b<c>>" {
		t.Errorf("Short = %q", got)
	}
	if got := Short(strings.Repeat("x", 200)); len([]rune(got)) != 120 {
		t.Errorf("Short of 200 characters: %d", len([]rune(got)))
	}
}
