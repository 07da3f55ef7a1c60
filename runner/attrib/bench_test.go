package attrib

import "testing"

// hybridWindow is a granite-like decode window: per step, an embedding gather, then
// per layer a Mamba2 mixer (47 elementwise SSM dispatches) or attention, a MoE block,
// the residual joins, and the lm_head with a sampled tail: 2,790 dispatches a step
// (granite-4.0-h-tiny has about 3,200).
func hybridWindow(steps int) Input {
	ssmOps := []string{kMul, kExp, kAdd, kSub, kCopyV}
	var ds []disp
	for range steps {
		ds = append(ds, names(kGRows, kGRows, kDequant)...)
		for layer := range 40 {
			ds = append(ds, disp{kRms, 0}, disp{kQmv, 4096 * 64})
			if layer%10 == 9 {
				ds = append(ds, names(kRms, kRope, kRms, kRope, kCopyGG, kCopyGG, kSdpa)...)
			} else {
				ds = append(ds, names(kConv, kCopyGG, kSigmoid)...)
				for i := range 47 {
					ds = append(ds, disp{ssmOps[i%len(ssmOps)], 0})
				}
				ds = append(ds, names(kRms, kMul)...)
			}
			ds = append(ds, disp{kQmv, 1536 * 64}, disp{kAdd, 0}, disp{kRms, 0}, disp{kQmv, 64 * 64})
			ds = append(ds, names(kSoftmax, kSort, kArange, kGatherQ, kArange, kGatherQ, kRowRed, kDiv, kSwiGLU, kArange, kGatherQ, kMul, kColRed, kCopyV, kCopyV, kAdd)...)
		}
		ds = append(ds, disp{kRms, 0}, disp{kQmv, 100352 * 64})
		ds = append(ds, names(kCopyV, kSort, kExp, kArgRed, kCopyV)...)
	}
	in := build(ds, true)
	in.Tokens = steps
	in.ModelType = "granitemoehybrid"
	in.Temperature, in.TopP = 0.7, 0.95
	return in
}

// BenchmarkAttribute attributes a 480k-dispatch window (173 steps of a hybrid model).
func BenchmarkAttribute(b *testing.B) {
	in := hybridWindow(173)
	if n := len(in.Name); n < 480000 {
		b.Fatalf("window has %d dispatches, want 480k", n)
	}
	r := Default()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Attribute(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(in.Name)), "dispatches")
}

// The benchmark's window is attributed as the hybrid model it imitates.
func TestHybridWindowCounts(t *testing.T) {
	t.Parallel()
	in := hybridWindow(2)
	res, err := Default().Attribute(in)
	if err != nil {
		t.Fatal(err)
	}
	perStep := map[string]float64{
		"ssm_step":           36 * 47,
		"ssm_conv":           36 * 2,
		"ssm_silu":           36,
		"ssm_gated_norm":     36 * 2,
		"moe_expert_gemv":    40 * 3,
		"moe_gather_indices": 40 * 3,
		"moe_weighted_sum":   40 * 4,
		"rope_append":        4 * 4,
		"sampler_tail":       5,
	}
	for role, want := range perStep {
		got, ok := res.RoleDispatchesPerToken.Get(role)
		if !ok || got != want {
			t.Errorf("%s: %v per token, want %v", role, got, want)
		}
	}
}
