package attrib

import (
	"strings"
	"testing"
)

// Each §5 rule on hand-built decode sequences, edge cases included.
func TestRolesOnHandBuiltSequences(t *testing.T) {
	t.Parallel()
	lmHead := disp{kQmv, 128256 * 64}
	proj := disp{kQmv, 4096 * 64}
	const (
		st = "sampler_tail"
		ex = "moe_expert_gemv"
		gi = "moe_gather_indices"
		ac = "moe_activation"
		ws = "moe_weighted_sum"
		ra = "rope_append"
		pa = "add_rms_join_post_attn"
		aj = "add_rms_join"
		gn = "ssm_gated_norm"
		sc = "ssm_conv"
		si = "ssm_silu"
		ss = "ssm_step"
		pg = "paged_attention"
	)
	cases := []struct {
		name    string
		ds      []disp
		noGrid  bool
		want    []string
		note    string // a substring of a note, when one is expected
		noNotes bool
	}{
		{
			name: "sampler tail runs from the widest qmv to the next step's embedding gather",
			ds: append([]disp{proj, {kRms, 0}, lmHead},
				names(kCopyV, kSort, kExp, kArgRed, kGRows, kDequant, kRms)...),
			want:    []string{"-", "-", "-", st, st, st, st, "-", "-", "-"},
			noNotes: true,
		},
		{
			name: "the tail of the last step runs to the end of the window",
			ds:   append([]disp{lmHead}, names(kCopyV, kArgRed)...),
			want: []string{"-", st, st},
		},
		{
			name: "every stop class ends the tail",
			ds: []disp{
				lmHead, {kArgRed, 0}, {kRms, 0}, {kArgRed, 0},
				lmHead, {kArgRed, 0}, {kDequant, 0}, {kArgRed, 0},
				lmHead, {kArgRed, 0}, {kGatherQ, 0}, {kArgRed, 0},
				lmHead, {kArgRed, 0}, {kSdpa, 0}, {kArgRed, 0},
				lmHead, {kArgRed, 0}, {kGemm, 0}, {kArgRed, 0},
				lmHead, {kArgRed, 0}, proj, {kArgRed, 0},
			},
			want: []string{
				"-", st, "-", "-",
				"-", st, "-", "-",
				"-", st, ex, "-",
				"-", st, "-", "-",
				"-", st, "-", "-",
				"-", st, "-", "-",
			},
		},
		{
			name:   "no grid: the sampler tail is skipped with a note",
			ds:     append([]disp{proj, lmHead}, names(kCopyV, kArgRed, kGRows)...),
			noGrid: true,
			want:   []string{"-", "-", "-", "-", "-"},
			note:   "sampler_tail not attributed: the trace has no grid sizes",
		},
		{
			name: "Mamba2 mixer between in_proj and out_proj",
			ds: append([]disp{proj}, append(names(
				kConv, kCopyGG, kSigmoid, kMul, kExp, kAdd, kSub, kRms, kMul),
				proj, disp{kAdd, 0}, lmHead)...),
			want: []string{"-", sc, sc, si, ss, ss, ss, ss, gn, gn, "-", "-", "-"},
		},
		{
			name: "the gated norm starts at the LAST rms_norm of the span; no bound before the conv",
			ds:   append(names(kExp, kConv, kRms, kExp, kRms, kMul), lmHead),
			want: []string{ss, sc, ss, ss, gn, gn, "-"},
		},
		{
			name: "a span without rms_norm has no gated norm; a span without conv is no mixer",
			ds:   append([]disp{proj}, append(names(kConv, kExp, kMul), proj, disp{kExp, 0}, disp{kMul, 0}, lmHead)...),
			want: []string{"-", sc, ss, ss, "-", "-", "-", "-"},
		},
		{
			name: "MoE: aranges, expert GEMVs, activation (Divide excluded), weighted sum stopping at Add",
			ds: names(kSoftmax, kArange, kGatherQ, kArange, kGatherQ, kRowRed, kDiv, kSwiGLU, kArange, kGatherQ,
				kMul, kColRed, kCopyV, kExp, kAdd, kRms, kMul),
			want: []string{"-", gi, ex, gi, ex, "-", "-", ac, gi, ex, ws, ws, ws, ws, aj, aj, "-"},
		},
		{
			name: "weighted sum stops at a class outside binary/copy/reduce/unary",
			ds:   names(kGatherQ, kMul, kSoftmax, kMul),
			want: []string{ex, ws, "-", "-"},
		},
		{
			name: "gather_qmvs 12 positions apart form one cluster",
			ds:   names(cat([]string{kGatherQ}, repeat(kExp, 11), []string{kGatherQ})...),
			want: cat([]string{ex}, repeat(ac, 11), []string{ex}),
		},
		{
			name: "13 positions apart are two clusters: what follows the first is its weighted sum",
			ds:   names(cat([]string{kGatherQ}, repeat(kExp, 12), []string{kGatherQ})...),
			want: cat([]string{ex}, repeat(ws, 12), []string{ex}),
		},
		{
			name: "aranges are MoE indices only when a gather_qmv exists",
			ds:   names(kArange, kExp, kArange),
			want: []string{"-", "-", "-"},
		},
		{
			name: "rope and the copy_gg appends right after it",
			ds:   names(kRope, kRope, kCopyGG, kCopyGG, kSdpa, kCopyGG, kRope, kRms, kCopyGG),
			want: []string{ra, ra, ra, ra, "-", "-", ra, "-", "-"},
		},
		{
			name: "residual joins: post-attention when sdpa then qmv precede the add",
			ds: []disp{
				{kSdpa, 0}, proj, {kAdd, 0}, {kRms, 0}, // post-attention join
				proj, proj, {kAdd, 0}, {kRms, 0}, // MLP join
				{kSdpa, 0}, {kExp, 0}, proj, {kAdd, 0}, {kRms, 0}, // sdpa not right before the qmv
				{kAdd, 0}, {kExp, 0}, // no norm after the add
				{kMul, 0}, {kRms, 0}, // not an add
				lmHead,
			},
			want: []string{
				"-", "-", pa, pa,
				"-", "-", aj, aj,
				"-", "-", "-", aj, aj,
				"-", "-",
				"-", "-",
				"-",
			},
		},
		{
			name:   "a join at the very start has no two dispatches before it",
			ds:     append([]disp{proj}, names(kAdd, kRms)...),
			noGrid: true,
			want:   []string{"-", aj, aj},
		},
		{
			name: "paged attention by name, any case",
			ds:   names(kPaged, kPagedUp, kSdpa, kUnknownK),
			want: []string{pg, pg, "-", "-"},
		},
		{
			name: "a dispatch keeps its first role: the sampler tail wins over rope and joins",
			ds:   append([]disp{lmHead}, names(kRope, kCopyGG, kAdd, kPagedUp, kGRows, kRope)...),
			want: []string{"-", st, st, st, st, "-", ra},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := build(c.ds, !c.noGrid)
			got, res := rolesOf(t, Default(), in)
			checkRoles(t, c.ds, got, c.want)
			if c.note != "" && !strings.Contains(strings.Join(res.Notes, "\n"), c.note) {
				t.Errorf("notes %q lack %q", res.Notes, c.note)
			}
			if c.noNotes && len(res.Notes) > 0 {
				t.Errorf("unexpected notes %q", res.Notes)
			}
		})
	}
}

func TestPerTokenTablesAddUp(t *testing.T) {
	t.Parallel()
	// Two steps of a tiny model, 2 tokens.
	step := []disp{{kGRows, 0}, {kRms, 0}, {kQmv, 10}, {kRope, 0}, {kCopyGG, 0}, {kSdpa, 0}, {kQmv, 10}, {kAdd, 0}, {kRms, 0}, {kQmv, 99}, {kArgRed, 0}, {kCopyV, 0}}
	ds := append(append([]disp{}, step...), step...)
	in := build(ds, true)
	in.Tokens = 2
	in.ModelType, in.RopeScaling = "llama", ""
	in.TailGapNs = 500
	_, res := rolesOf(t, Default(), in)

	// 12 dispatches per step: 6 unattributed, 2 rope_append, 2 post-attn, 2 sampler_tail.
	wantDisp := map[string]float64{"unattributed": 6, "rope_append": 2, "add_rms_join_post_attn": 2, "sampler_tail": 2}
	var keys []string
	for _, kv := range res.RoleDispatchesPerToken {
		keys = append(keys, kv.Key)
		if w, ok := wantDisp[kv.Key]; ok && float64(kv.Value) != w {
			t.Errorf("%s: %v dispatches/token, want %v", kv.Key, kv.Value, w)
		}
		if _, ok := wantDisp[kv.Key]; !ok && kv.Value != 0 {
			t.Errorf("%s: %v dispatches/token, want 0", kv.Key, kv.Value)
		}
	}
	// First occurrence, then every unit's roles (the repo analyzer's order).
	wantKeys := "unattributed rope_append add_rms_join_post_attn sampler_tail moe_expert_gemv moe_activation moe_weighted_sum moe_gather_indices ssm_step paged_attention"
	if got := strings.Join(keys, " "); got != wantKeys {
		t.Errorf("role order\n got %s\nwant %s", got, wantKeys)
	}
	var share, gap float64
	for _, kv := range res.RoleSharePct {
		share += float64(kv.Value)
	}
	for _, kv := range res.RoleHostGapMsPerToken {
		gap += float64(kv.Value)
	}
	if share < 99.99 || share > 100.01 {
		t.Errorf("role shares sum to %v", share)
	}
	// 24 gaps of 100 ns over 2 tokens.
	if want := 24 * 100 / 1e6 / 2; gap < want-1e-9 || gap > want+1e-9 {
		t.Errorf("role host gaps sum to %v ms/token, want %v", gap, want)
	}
	if res.RoleSharePct[0].Key != "unattributed" || res.RoleSharePct[0].Value != 50 {
		t.Errorf("largest role share = %+v, want unattributed 50", res.RoleSharePct[0])
	}
	u, _ := res.Units.Get("2063")
	if u.FallbackSharePct != 33.33 { // 4 of 12 dispatches of equal length
		t.Errorf("2063 fallback share %v, want 33.33", u.FallbackSharePct)
	}
	if u.ReachedDefaultSharePct != 0 || u.ReachedOptinSharePct != 33.33 {
		t.Errorf("2063 reached %v default, %v opt-in; want 0 and 33.33 (llama, no rope scaling)", u.ReachedDefaultSharePct, u.ReachedOptinSharePct)
	}
	// Opt-in recoverable: 4 dispatches x (1000 ns + 100 ns gap) per step, 2 steps, 2 tokens.
	if got := float64(*u.RecoverableOptinMsPerToken); got != 0.0044 {
		t.Errorf("2063 recoverable opt-in %v ms/token, want 0.0044", got)
	}
	if got := float64(*u.RecoverableDefaultMsPerToken); got != 0 {
		t.Errorf("2063 recoverable default %v ms/token, want 0", got)
	}
	var classes []string
	for _, kv := range res.ClassSharePct {
		classes = append(classes, kv.Key)
	}
	// By share (qmv 3 per step; rms_norm and copy 2), equal shares in order of first occurrence.
	if got := strings.Join(classes, " "); got != "qmv rms_norm copy gather_scatter rope sdpa binary arg_reduce" {
		t.Errorf("class order %s", got)
	}
}

func TestKernelColumns(t *testing.T) {
	t.Parallel()
	ds := []disp{{kQmv, 9}, {kCopyV, 0}, {kGatherQ, 0}, {kCopyV, 0}, {kRms, 0}, {kSdpa, 0}, {kQmv, 1}, {kAdd, 0}, {kRms, 0}}
	in := build(ds, true)
	_, res := rolesOf(t, Default(), in)
	col := func(name string) (string, string) {
		for id, n := range in.Names {
			if n == name {
				return strings.Join(res.KernelRoles[id], ";"), strings.Join(res.KernelUnits[id], ";")
			}
		}
		t.Fatalf("no name %s", name)
		return "", ""
	}
	for _, c := range []struct{ name, roles, units string }{
		{kCopyV, "moe_weighted_sum;sampler_tail", "2064;2065"},
		{kQmv, "", ""},
		{kRms, "add_rms_join_post_attn", "2063"},
		{kGatherQ, "moe_expert_gemv", "2065"},
	} {
		roles, units := col(c.name)
		if roles != c.roles || units != c.units {
			t.Errorf("%s: roles %q units %q, want %q %q", short(c.name), roles, units, c.roles, c.units)
		}
	}
}

func TestAttributeRejectsBadInput(t *testing.T) {
	t.Parallel()
	good := build(names(kQmv, kRms), true)
	cases := map[string]func(in *Input){
		"short durations": func(in *Input) { in.DurNs = in.DurNs[:1] },
		"short gaps":      func(in *Input) { in.GapNs = nil },
		"short grid":      func(in *Input) { in.Grid = in.Grid[:1] },
		"no tokens":       func(in *Input) { in.Tokens = 0 },
		"bad name index":  func(in *Input) { in.Name = []uint32{0, 7} },
	}
	for name, mutate := range cases {
		in := good
		in.Name = append([]uint32(nil), good.Name...)
		mutate(&in)
		if _, err := Default().Attribute(in); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A trace without grids may pass no grid array at all.
	in := good
	in.Grid, in.HasGrid = nil, false
	if _, err := Default().Attribute(in); err != nil {
		t.Errorf("nil grid without HasGrid: %v", err)
	}
}

// Shares are of the GPU time the input gives, or of the dispatches' sum when it gives
// none; with no GPU time at all they are 0, not NaN.
func TestAttributeGPUSum(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		sumNs  int64
		durNs  int64
		wantPc float64
	}{
		{"given sum", 4000, 1000, 25},
		{"sum left out", 0, 1000, 100},
		{"no GPU time", 0, 0, 0},
	}
	for _, c := range cases {
		in := build(names("unknown_kernel"), false)
		in.GPUSumNs, in.DurNs[0] = c.sumNs, c.durNs
		res, err := Default().Attribute(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(res.ClassSharePct[0].Value); got != c.wantPc {
			t.Errorf("%s: class share %v, want %v", c.name, got, c.wantPc)
		}
	}
}

// A dispatch naming a kernel past the name table is refused, not read out of range.
func TestAttributeNameIndexEdge(t *testing.T) {
	t.Parallel()
	in := build(names("a", "b"), false)
	in.Name[1] = 2
	if _, err := Default().Attribute(in); err == nil || err.Error() != "attribution input: name index 2 out of range (2 names)" {
		t.Errorf("name index 2 of 2 names: %v", err)
	}
	in.Name[1] = 1
	if _, err := Default().Attribute(in); err != nil {
		t.Errorf("name index 1 of 2 names: %v", err)
	}
}
