package rank

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/results"
)

// withReplacement is the shipped rules with the unit's replacement line set to repl
// ("" drops it).
func withReplacement(t *testing.T, unit, repl string) *attrib.Rules {
	t.Helper()
	base := string(attrib.DefaultRulesYAML())
	i := strings.Index(base, "  - id: \""+unit+"\"\n")
	if i < 0 {
		t.Fatalf("no unit %s in the default rules", unit)
	}
	j := strings.Index(base[i:], "    replacement: ")
	k := strings.Index(base[i:], "    reach:\n")
	if k < 0 {
		t.Fatalf("unit %s has no reach", unit)
	}
	var out string
	if j >= 0 && j < k {
		end := i + j + strings.Index(base[i+j:], "\n") + 1
		out = base[:i+j] + base[end:]
	} else {
		out = base
	}
	if repl != "" {
		k = i + strings.Index(out[i:], "    reach:\n")
		out = out[:k] + "    replacement: " + repl + "\n" + out[k:]
	}
	rules, err := attrib.Parse([]byte(out), "rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// A replacement given as a fraction costs that part of the kernel time the port
// removes; the net figure orders the units. On kernel time alone the MoE port recovers
// 3.67 % of Qwen3's wall and the samplers 2.79 % of Llama top-p's: at a replacement
// of half the removed time the MoE port's net falls to 1.84 % and the samplers move
// above it.
func TestNetOfAFractionReplacementReorders(t *testing.T) {
	t.Parallel()
	runs := publishedRuns(false)
	rk, err := Rank(runs, withReplacement(t, "2065", "{fraction: 0.5, reason: half the time stays in the fused kernel}"))
	if err != nil {
		t.Fatal(err)
	}
	if got := rk.OrderLine(); got != "#2067, #2064, #2065, #2068, #2063" {
		t.Errorf("order %s, want the samplers above the MoE port", got)
	}
	moe := unitByID(t, rk, "2065")
	gross := (1.63 + 2.13 + 0.91) / 100 * 13.36
	if moe.Best.Run != "Qwen3-30B-A3B-4bit_greedy" || math.Abs(moe.Best.RecoverableMsPerToken-gross) > 1e-4 ||
		moe.Best.ReplacementMsPerToken == nil || math.Abs(*moe.Best.ReplacementMsPerToken-gross/2) > 1e-4 ||
		math.Abs(moe.Best.NetMsPerToken-gross/2) > 1e-4 || math.Abs(moe.Best.NetPctOfWall-100*gross/2/(13.36+3.63)) > 0.006 {
		t.Errorf("2065 at %s: gross %v, replacement %v, net %v (%v %% of wall); want %.4f, %.4f, %.4f",
			moe.Best.Run, moe.Best.RecoverableMsPerToken, moe.Best.ReplacementMsPerToken, moe.Best.NetMsPerToken, moe.Best.NetPctOfWall, gross, gross/2, gross/2)
	}
	if !strings.Contains(moe.Replacement, "0.5 of the kernel time the port removes (half the time stays in the fused kernel)") {
		t.Errorf("2065 replacement %q", moe.Replacement)
	}
	md := rk.Markdown()
	for _, want := range []string{
		"| 3 | #2065 (item 5) | fused MoE decode (moe_gateup, moe_down) | `Qwen3-30B-A3B-4bit_greedy` | 46.79 % | 0.6239 | 0.3120 | 0.3119 | 1.84 % |",
		"- #2065: 0.5 of the kernel time the port removes (half the time stays in the fused kernel)\n",
		"- #2068: unknown: the rules give no replacement\n",
		"- the replacement's cost is unknown for #2063, #2064, #2067, #2068: their net recoverable time is the gross",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// A unit without a replacement: net = gross, and its replacement cell says unknown.
	sam := unitByID(t, rk, "2064")
	if sam.Best.ReplacementMsPerToken != nil || sam.Best.NetMsPerToken != sam.Best.RecoverableMsPerToken || sam.Best.NetPctOfWall != sam.Best.RecoverablePctOfWall {
		t.Errorf("2064 without a replacement: %+v", sam.Best)
	}
	if row := rowOf(md, "#2064"); !strings.Contains(row, " | unknown | ") {
		t.Errorf("2064 row does not say the replacement is unknown: %s", row)
	}
}

// A replacement given as a kernel costs what that kernel takes per token where it
// already runs, less the reached kernel time the recoverable fractions keep (the
// expert GEMVs, which the fused kernel still runs); the decode_kernels rows give it
// exactly, else the summary's top_kernels.
func TestNetOfAKernelReplacement(t *testing.T) {
	t.Parallel()
	rules := withReplacement(t, "2065", "{kernel: 'moe_gateup|moe_down'}")
	qwenG := summary(qwen, results.Greedy, true)
	// Another model's run where the fused kernels already run: 6.0 ms/token in all.
	fused := summary(llama, results.Greedy, true)
	fused.Name = "Fused-MoE-4bit_greedy"
	rows := []results.KernelRow{
		{Kernel: "void mlx::core::rocm::moe_gateup_kernel<__half>()", TotalNs: 4_000_000 * 128},
		{Kernel: "void mlx::core::rocm::MOE_DOWN_kernel<__half>()", TotalNs: 2_000_000 * 128},
		{Kernel: "void mlx::core::rocm::qmv_wide_kernel<__half>()", TotalNs: 9_000_000 * 128},
	}
	kept := 42.12 / 100 * 13.36
	gross := (1.63+2.13+0.91)/100*13.36 + 3.63*523.9/1540
	want := gross - (6.0 - kept)

	rk, err := RankWith([]*results.Summary{qwenG, fused}, rules, Options{Kernels: map[string][]results.KernelRow{fused.Name: rows}})
	if err != nil {
		t.Fatal(err)
	}
	moe := unitByID(t, rk, "2065")
	if moe.Best.ReplacementMsPerToken == nil || math.Abs(*moe.Best.ReplacementMsPerToken-(6.0-kept)) > 1e-4 || math.Abs(moe.Best.NetMsPerToken-want) > 1e-4 {
		t.Errorf("2065: replacement %v, net %v; want %.4f and %.4f", moe.Best.ReplacementMsPerToken, moe.Best.NetMsPerToken, 6.0-kept, want)
	}
	if want := "`moe_gateup|moe_down` takes 6.0000 ms/token where it runs (`Fused-MoE-4bit_greedy`)"; !strings.HasPrefix(moe.Replacement, want) {
		t.Errorf("2065 replacement %q, want it to start %q", moe.Replacement, want)
	}

	// The same from top_kernels (shares of the decode GPU sum), when there are no rows.
	fused.TopKernels = []results.TopKernel{{Kernel: "moe_down_kernel", SharePct: 30}}
	rk, err = Rank([]*results.Summary{qwenG, fused}, rules)
	if err != nil {
		t.Fatal(err)
	}
	m := 0.30 * llama.gpuMs
	if got := unitByID(t, rk, "2065").Best.ReplacementMsPerToken; got == nil || math.Abs(*got-(m-kept)) > 1e-4 {
		t.Errorf("2065 from top_kernels: replacement %v, want %.4f", got, m-kept)
	}

	// A fused kernel cheaper than what the port keeps costs nothing more; where it runs
	// nowhere the cost is unknown and the net is the gross.
	fused.TopKernels = []results.TopKernel{{Kernel: "moe_down_kernel", SharePct: 1}}
	rk, _ = Rank([]*results.Summary{qwenG, fused}, rules)
	if got := unitByID(t, rk, "2065").Best; got.ReplacementMsPerToken == nil || *got.ReplacementMsPerToken != 0 || got.NetMsPerToken != got.RecoverableMsPerToken {
		t.Errorf("2065 with a cheap fused kernel: %+v", got)
	}
	fused.TopKernels = nil
	rk, _ = Rank([]*results.Summary{qwenG, fused}, rules)
	if u := unitByID(t, rk, "2065"); u.Best.ReplacementMsPerToken != nil || u.Best.NetMsPerToken != u.Best.RecoverableMsPerToken ||
		u.Replacement != "unknown: `moe_gateup|moe_down` runs in none of these runs" {
		t.Errorf("2065 with the fused kernel nowhere: %q %+v", u.Replacement, u.Best)
	}
}

// perfbot rank reads the runs' decode_kernels.csv: on the real folder a replacement
// kernel that matches the GEMV kernels is measured from their exact nanoseconds, in
// both runs.
func TestDirMeasuresReplacementKernelsInDecodeKernels(t *testing.T) {
	t.Parallel()
	dir := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
	rk, err := Dir(dir, withReplacement(t, "2065", "{kernel: 'qmv_wide_kernel'}"))
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, run := range []string{"Meta-Llama-3.1-8B-Instruct-4bit_greedy", "Qwen3-30B-A3B-4bit_greedy"} {
		rows, err := results.ReadKernelsFile(filepath.Join(dir, run+"_decode_kernels.csv"))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if strings.Contains(r.Kernel, "qmv_wide_kernel") {
				sum += float64(r.TotalNs) / 1e6 / 128
			}
		}
	}
	mean := sum / 2
	moe := unitByID(t, rk, "2065")
	want := fmt.Sprintf("`qmv_wide_kernel` takes %.4f ms/token where it runs (`Meta-Llama-3.1-8B-Instruct-4bit_greedy`, `Qwen3-30B-A3B-4bit_greedy`)", mean)
	if !strings.HasPrefix(moe.Replacement, want) {
		t.Errorf("2065 replacement %q, want it to start %q", moe.Replacement, want)
	}
	// The GEMVs cost far more than the MoE port removes: the net is below zero, and
	// still the figure of the one run the port reaches.
	kept := 42.12 / 100 * 1709.857 / 128
	if got := moe.Best.ReplacementMsPerToken; moe.Best.Run != "Qwen3-30B-A3B-4bit_greedy" || got == nil || math.Abs(*got-results.Round(mean-kept, 4)) > 1e-9 ||
		math.Abs(moe.Best.NetMsPerToken-(moe.Best.RecoverableMsPerToken-*got)) > 1e-9 || moe.Best.NetMsPerToken >= 0 {
		t.Errorf("2065 at %s: replacement %v ms/token, net %v; want %.4f (mean %.4f less %.4f kept) and the net below zero", moe.Best.Run, got, moe.Best.NetMsPerToken, mean-kept, mean, kept)
	}

	// A decode_kernels file that is not one is an error naming the run.
	bad := t.TempDir()
	for _, name := range []string{"Qwen3-30B-A3B-4bit_greedy_summary.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bad, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bad, "Qwen3-30B-A3B-4bit_greedy_decode_kernels.csv"), []byte("not,a,kernels,file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(bad, nil); err == nil || !strings.Contains(err.Error(), `reading the decode kernels of "Qwen3-30B-A3B-4bit_greedy"`) {
		t.Errorf("Dir with a broken decode_kernels.csv: %v", err)
	}
}

// The worked example of docs/analysis.md §7, on the real 2026-09-30 folder: the MoE
// port recovers 0.6238 ms/token gross on Qwen3 greedy (kernel time alone); at a
// replacement of 0.35 of it the fused kernel costs 0.2183 and the net is 0.4055
// ms/token, 2.39 % of the 16.99 ms wall. The fused kernel form breaks even at the
// 6.2503 ms/token the four MoE roles take now (5.6265 of it the expert GEMVs it keeps).
func TestNetWorkedExampleOfTheDocs(t *testing.T) {
	t.Parallel()
	dir := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
	rk, err := Dir(dir, withReplacement(t, "2065", "{fraction: 0.35, reason: an assumed cost}"))
	if err != nil {
		t.Fatal(err)
	}
	b := unitByID(t, rk, "2065").Best
	if b.Run != "Qwen3-30B-A3B-4bit_greedy" || b.RecoverableMsPerToken != 0.6238 || b.ReplacementMsPerToken == nil || *b.ReplacementMsPerToken != 0.2183 ||
		b.NetMsPerToken != 0.4055 || b.NetPctOfWall != 2.39 || b.RecoverablePctOfWall != 3.67 {
		t.Errorf("2065 at %s: gross %v (%v %%), replacement %v, net %v (%v %%); want 0.6238 (3.67 %%), 0.2183, 0.4055 (2.39 %%)",
			b.Run, b.RecoverableMsPerToken, b.RecoverablePctOfWall, b.ReplacementMsPerToken, b.NetMsPerToken, b.NetPctOfWall)
	}
	if results.Round(b.kept, 4) != 5.6265 || results.Round(b.kept+b.removed, 4) != 6.2503 {
		t.Errorf("kept %.4f, all reached kernel time %.4f; want 5.6265 and 6.2503", b.kept, b.kept+b.removed)
	}
}
