package attrib

import (
	"math"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/results"
)

const (
	llamaRun = "Meta-Llama-3.1-8B-Instruct-4bit_greedy"
	qwenRun  = "Qwen3-30B-A3B-4bit_greedy"
)

func fixtureFile(t *testing.T, name string) string {
	return testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", name)
}

func fixtureKernels(t *testing.T, run string) []results.KernelRow {
	t.Helper()
	rows, err := results.ReadKernelsFile(fixtureFile(t, run+"_decode_kernels.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func fixtureSummary(t *testing.T, run string) *results.Summary {
	t.Helper()
	s, err := results.ReadSummary(fixtureFile(t, run+"_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The class of every kernel name in the maintainers' decode_kernels.csv is the class
// column, and every class is one the rules declare.
func TestClassifyMatchesFixtureClassColumn(t *testing.T) {
	t.Parallel()
	r := Default()
	for _, run := range []string{llamaRun, qwenRun} {
		for _, row := range fixtureKernels(t, run) {
			if got := r.Classify(row.Kernel); got != row.Class {
				t.Errorf("%s: Classify(%s) = %s, the file says %s", run, short(row.Kernel), got, row.Class)
			}
		}
	}
}

func TestClassifyEdgeCases(t *testing.T) {
	t.Parallel()
	r := Default()
	for _, c := range []struct{ name, want string }{
		{kGatherQ, "gather_qmv"},
		{"void mlx::core::rocm::qmm_gather_kernel<float>(float*)", "gather_qmv"}, // q(mv|mm).*gather
		{"void mlx::core::rocm::gather_mm_kernel<float>(float*)", "gather_mm"},
		{"void mlx::core::rocm::QMV_kernel<float>(float*)", "qmv"}, // case-insensitive
		{"void mlx::core::rocm::affine_qvm<float>(float*)", "qmv"},
		{kGemm, "gemm"},
		{"void mlx::core::rocm::rmsnorm<float>(float*)", "rms_norm"},
		{"void mlx::core::rocm::LayerNorm<float>(float*)", "layer_norm"},
		{"void mlx::core::rocm::flash_decode<float>(float*)", "sdpa"},
		{"void mlx::core::rocm::logsumexp_kernel<float>(float*)", "logsumexp"},
		{"void mlx::core::rocm::argmax_kernel<float>(float*)", "arg_reduce"},
		{"void mlx::core::rocm::cumsum_kernel<float>(float*)", "scan"},
		{"void mlx::core::rocm::argpartition_kernel<float>(float*)", "sort"},
		{"void mlx::core::rocm::rbits<float>(float*)", "random"},
		{kConv, "conv"},
		{"void mlx::core::rocm::all_reduce<float>(float*)", "reduce"},
		{"void mlx::core::rocm::slice_update_kernel<float>(float*)", "gather_scatter"},
		{"void mlx::core::rocm::fill_kernel<float>(float*)", "copy"},
		{kArange, "copy"},
		{"void mlx::core::rocm::ternary_v<float>(float*)", "ternary"},
		{kExp, "unary"},
		{kDequant, "dequantize"},
		{kSigmoid, "compiled"},
		// The compiled pattern is case-sensitive: a lower-case first letter is no
		// JIT kernel.
		{"void mlx::core::rocm::cf2ISigmoid_VV_f2f2_6142_contiguous<unsigned int, 16>(float*)", "other"},
		{"void mlx::core::rocm::Cf2IExp_VV_f2f2_61425_strided<unsigned int, 16>(float*)", "compiled"},
		{kUnknownK, "other"},
	} {
		if got := r.Classify(c.name); got != c.want {
			t.Errorf("Classify(%s) = %s, want %s", c.name, got, c.want)
		}
	}
}

// fixtureSteps rebuilds a decode window from the maintainers' published per-kernel
// table: every call of every kernel, in a per-step order consistent with the role
// columns, with the kernel's total time spread over its calls. The counts are exact,
// so the per-token role counts and the kernel columns must come out as published.
type stepBuilder struct {
	t     *testing.T
	rows  []results.KernelRow
	index map[string]uint32
	in    Input
	left  map[uint32]int64 // calls not yet placed
}

func newStepBuilder(t *testing.T, run string) *stepBuilder {
	b := &stepBuilder{t: t, rows: fixtureKernels(t, run), index: map[string]uint32{}, left: map[uint32]int64{}}
	for _, r := range b.rows {
		id := uint32(len(b.in.Names))
		b.in.Names = append(b.in.Names, r.Kernel)
		b.index[r.Kernel] = id
		b.left[id] = r.Calls
	}
	b.in.HasGrid = true
	b.in.Tokens = 128
	return b
}

// k finds the one kernel whose name contains every part.
func (b *stepBuilder) k(parts ...string) string {
	b.t.Helper()
	var found []string
	for _, r := range b.rows {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(r.Kernel, p)
		}
		if ok {
			found = append(found, r.Kernel)
		}
	}
	if len(found) != 1 {
		b.t.Fatalf("kernel %q: %d matches", parts, len(found))
	}
	return found[0]
}

func (b *stepBuilder) add(name string, grid int64) {
	id := b.index[name]
	b.in.Name = append(b.in.Name, id)
	b.in.Grid = append(b.in.Grid, grid)
	b.left[id]--
}

func (b *stepBuilder) seq(names ...string) {
	for _, n := range names {
		b.add(n, 0)
	}
}

// finish spreads each kernel's total over its calls and checks every call was placed.
func (b *stepBuilder) finish() Input {
	b.t.Helper()
	for id, left := range b.left {
		if left != 0 {
			b.t.Fatalf("%s: %d calls left unplaced", short(b.in.Names[id]), left)
		}
	}
	seen := make([]int64, len(b.rows))
	for _, id := range b.in.Name {
		r := b.rows[id]
		d := r.TotalNs / r.Calls
		if seen[id] < r.TotalNs%r.Calls {
			d++
		}
		seen[id]++
		b.in.DurNs = append(b.in.DurNs, d)
		b.in.GPUSumNs += d
	}
	b.in.GapNs = make([]int64, len(b.in.Name))
	return b.in
}

// llamaWindow: Llama-3.1-8B, 32 layers, 127 steps; the first step grows the KV cache.
func llamaWindow(t *testing.T) Input {
	b := newStepBuilder(t, llamaRun)
	qmv := b.k("qmv_wide_kernel")
	rms, rope, cg := b.k("rms_norm_kernel"), b.k("rope_single_freqs_1d"), b.k("copy_gg_byval")
	add, sdpa, act := b.k("binary_vv<mlx::core::rocm::Add, __half"), b.k("sdpav_1pass"), b.k("Cf2ISigmoid")
	cs := b.k("copy_s<")
	tail := []string{
		b.k("copy_v<__half, float"), b.k("gather_axis_kernel"), b.k("binary_vv<mlx::core::rocm::Add, float"),
		b.k("scatter_axis_kernel"), b.k("copy_v<float, __half"), b.k("arg_reduce_partial"),
		b.k("arg_reduce_final"), b.k("copy_v<__half, __half"),
	}
	for step := range 127 {
		b.seq(b.k("gather_rows_kernel<unsigned int"), b.k("gather_rows_kernel<__half"), b.k("gather_rows_kernel<__half"), b.k("dequantize"))
		for range 32 {
			b.seq(rms)
			b.add(qmv, 6144*64)
			b.seq(rope, rope)
			if step == 0 {
				b.seq(cg, cg)
			}
			b.seq(cg, cg)
			if step == 0 {
				b.seq(cs, cg, cs, cg)
			}
			b.seq(sdpa)
			b.add(qmv, 4096*64)
			b.seq(add, rms)
			b.add(qmv, 14336*64)
			b.add(qmv, 14336*64)
			b.seq(act)
			b.add(qmv, 4096*64)
			b.seq(add)
		}
		b.seq(rms)
		b.add(qmv, 128256*64)
		b.seq(tail...)
	}
	in := b.finish()
	in.ModelType, in.RopeScaling = "llama", "llama3"
	return in
}

// qwenWindow: Qwen3-30B-A3B, 48 MoE layers, 127 steps.
func qwenWindow(t *testing.T) Input {
	b := newStepBuilder(t, qwenRun)
	bf := "hip_bfloat16"
	qmv, gq := b.k("void mlx::core::rocm::qmv_wide_kernel"), b.k("gather_qmv_wide_kernel")
	rms, rope, cg, cs := b.k("rms_norm_kernel"), b.k("rope_single_1d"), b.k("copy_gg_byval"), b.k("copy_s<")
	add, sdpa := b.k("binary_vv<mlx::core::rocm::Add, "+bf), b.k("sdpav_1pass")
	toF, fromF := b.k("copy_v<"+bf+", float"), b.k("copy_v<float, "+bf)
	tail := []string{
		b.k("binary_ss<mlx::core::rocm::Add, float"), toF, b.k("gather_axis_kernel"), b.k("scatter_axis_kernel"),
		fromF, b.k("arg_reduce_partial"), b.k("arg_reduce_final"), b.k("copy_v<" + bf + ", " + bf),
	}
	ar := b.k("arange_kernel")
	for step := range 127 {
		b.seq(b.k("gather_rows_kernel<unsigned int"), b.k("gather_rows_kernel<"+bf), b.k("gather_rows_kernel<"+bf), b.k("dequantize"))
		for range 48 {
			b.seq(rms)
			b.add(qmv, 5120*64)
			b.seq(rms, rope, rms, rope)
			if step == 0 {
				b.seq(cg, cg, cs, cs, cg, cg)
			}
			b.seq(toF, cg, cg, sdpa)
			b.add(qmv, 2048*64)
			b.seq(add, rms)
			b.add(qmv, 128*64)
			b.seq(b.k("softmax_kernel"), b.k("block_sort_kernel"), b.k("gather_axis_kernel"), fromF)
			b.seq(ar, gq, ar, gq, b.k("row_reduce_simple"), b.k("Divide"), b.k("SigmoidAD"), ar, gq)
			b.seq(b.k("binary_g<mlx::core::rocm::Multiply"), b.k("col_reduce_small"), fromF, toF, add)
		}
		b.seq(rms)
		b.add(qmv, 151936*64)
		b.seq(tail...)
	}
	in := b.finish()
	in.ModelType = "qwen3_moe"
	return in
}

// The rebuilt windows reproduce the published role counts (keys, order, values), the
// class shares, the kernel role and unit columns, and the port units' counts and notes.
func TestFixtureWindowsReproducePublishedAttribution(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		run   string
		build func(*testing.T) Input
	}{{llamaRun, llamaWindow}, {qwenRun, qwenWindow}} {
		t.Run(c.run, func(t *testing.T) {
			t.Parallel()
			in := c.build(t)
			sum := fixtureSummary(t, c.run)
			if got, want := len(in.Name), sum.DecodeDispatches; got != want {
				t.Fatalf("rebuilt window has %d dispatches, the summary %d", got, want)
			}
			if got, want := results.Round(float64(in.GPUSumNs)/1e6, 3), float64(sum.DecodeGPUSumMs); got != want {
				t.Fatalf("rebuilt GPU sum %v ms, the summary %v", got, want)
			}
			res, err := Default().Attribute(in)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := orderedString(res.RoleDispatchesPerToken), orderedString(sum.RoleDispatchesPerToken); got != want {
				t.Errorf("role_dispatches_per_token\n got %s\nwant %s", got, want)
			}
			if got, want := orderedString(res.ClassSharePct), orderedString(sum.ClassSharePct); got != want {
				t.Errorf("class_share_pct\n got %s\nwant %s", got, want)
			}
			// Role shares depend on which calls of a shared kernel went to which role,
			// which the table does not say: Qwen's rms_norm runs on the hidden state
			// (joins) and per head (q/k norms, unattributed) at different costs, spread
			// evenly here. Compare the keys, and the values to 0.4 points.
			if len(res.RoleSharePct) != len(sum.RoleSharePct) {
				t.Errorf("role_share_pct has %d keys, want %d", len(res.RoleSharePct), len(sum.RoleSharePct))
			}
			for _, kv := range sum.RoleSharePct {
				got, ok := res.RoleSharePct.Get(kv.Key)
				if !ok || math.Abs(got-float64(kv.Value)) > 0.4 {
					t.Errorf("role_share_pct[%s] = %v (present %v), want %v", kv.Key, got, ok, kv.Value)
				}
			}
			for _, row := range fixtureKernels(t, c.run) {
				id := indexOf(in.Names, row.Kernel)
				if got, want := strings.Join(res.KernelRoles[id], ";"), strings.Join(row.Roles, ";"); got != want {
					t.Errorf("%s: roles %q, the file says %q", short(row.Kernel), got, want)
				}
				if got, want := strings.Join(res.KernelUnits[id], ";"), strings.Join(row.Units, ";"); got != want {
					t.Errorf("%s: port_units %q, the file says %q", short(row.Kernel), got, want)
				}
			}
			if len(res.Units) != len(sum.PortUnits) {
				t.Fatalf("%d port units, want %d", len(res.Units), len(sum.PortUnits))
			}
			for i, want := range sum.PortUnits {
				got := res.Units[i]
				if got.ID != want.ID {
					t.Errorf("unit %d is %s, want %s", i, got.ID, want.ID)
					continue
				}
				g, w := got.Unit, want.Unit
				if g.Port != w.Port || g.Note != w.Note {
					t.Errorf("%s: port %q note %q\nwant port %q note %q", got.ID, g.Port, g.Note, w.Port, w.Note)
				}
				if g.FallbackDispatchesPerToken != w.FallbackDispatchesPerToken || g.ReachedDefaultDispatchesPerToken != w.ReachedDefaultDispatchesPerToken {
					t.Errorf("%s: dispatches/token fallback %v reached %v, want %v %v", got.ID,
						g.FallbackDispatchesPerToken, g.ReachedDefaultDispatchesPerToken, w.FallbackDispatchesPerToken, w.ReachedDefaultDispatchesPerToken)
				}
				for _, p := range [][2]results.Num{{g.FallbackSharePct, w.FallbackSharePct}, {g.ReachedDefaultSharePct, w.ReachedDefaultSharePct}, {g.ReachedOptinSharePct, w.ReachedOptinSharePct}} {
					if math.Abs(float64(p[0]-p[1])) > 0.4 || (p[1] == 0) != (p[0] == 0) {
						t.Errorf("%s: shares fallback/default/opt-in %v %v %v, want %v %v %v", got.ID,
							g.FallbackSharePct, g.ReachedDefaultSharePct, g.ReachedOptinSharePct,
							w.FallbackSharePct, w.ReachedDefaultSharePct, w.ReachedOptinSharePct)
						break
					}
				}
			}
		})
	}
}

// Roles fixed by names alone: the pure-role kernels' shares are exact, because all
// of a kernel's calls carry one role.
func TestFixturePureRoleSharesAreExact(t *testing.T) {
	t.Parallel()
	in := qwenWindow(t)
	res, err := Default().Attribute(in)
	if err != nil {
		t.Fatal(err)
	}
	sum := fixtureSummary(t, qwenRun)
	for _, role := range []string{"moe_expert_gemv", "moe_activation", "moe_gather_indices"} {
		got, _ := res.RoleSharePct.Get(role)
		want, _ := sum.RoleSharePct.Get(role)
		if got != want {
			t.Errorf("%s share %v, want %v", role, got, want)
		}
	}
	if got, _ := res.Units.Get("2065"); got.ReachedDefaultSharePct == 0 {
		t.Error("qwen3_moe must reach the fused MoE port by default")
	}
}

func orderedString(o results.Ordered) string {
	var b strings.Builder
	for _, kv := range o {
		b.WriteString(kv.Key + "=" + results.PyFloat(float64(kv.Value)) + " ")
	}
	return b.String()
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}
