package attrib

import (
	"strings"
	"testing"
)

// Reach with the shipped rules, per docs/analysis.md §6.
func TestDefaultReach(t *testing.T) {
	t.Parallel()
	moe := "moe_expert_gemv moe_activation moe_weighted_sum moe_gather_indices"
	cases := []struct {
		unit       string
		run        Run
		def, optIn string
		note       string // substring of the note
	}{
		// 2063 ships off; opt-in only on llama, rope_append only without a frequency table.
		{"2063", Run{ModelType: "llama", RopeScaling: "llama3"}, "", "add_rms_join_post_attn", "rope_scaling builds a frequency table"},
		{"2063", Run{ModelType: "llama", RopeScaling: "yarn"}, "", "add_rms_join_post_attn", "frequency table"},
		{"2063", Run{ModelType: "llama"}, "", "add_rms_join_post_attn rope_append", "both paths ship off"},
		{"2063", Run{ModelType: "llama", RopeScaling: "none"}, "", "add_rms_join_post_attn rope_append", "only the post-attention join"},
		{"2063", Run{ModelType: "llama", RopeScaling: "linear"}, "", "add_rms_join_post_attn rope_append", "ship off"},
		{"2063", Run{ModelType: "llama", RopeScalingUnknown: true}, "", "add_rms_join_post_attn", "ship off"},
		{"2063", Run{ModelType: "qwen3_moe"}, "", "", "qwen3_moe never calls fused_add_rms_norm or forward_fused_rope_append"},
		// 2064 only when sampling.
		{"2064", Run{ModelType: "llama"}, "", "", "greedy argmax dispatches neither sampler kernel"},
		{"2064", Run{ModelType: "llama", Sampled: true}, "sampler_tail", "sampler_tail", "temperature > 0"},
		// 2065: the fused MoE callers, not nemotron_h nor granitemoehybrid.
		{"2065", Run{ModelType: "qwen3_moe"}, moe, moe, "forward_fused_kernel caller"},
		{"2065", Run{ModelType: "mixtral", Sampled: true}, moe, moe, "forward_fused_kernel caller"},
		{"2065", Run{ModelType: "bailing_moe"}, moe, moe, "caller"},
		{"2065", Run{ModelType: "nemotron_h"}, "", "", "default MoE branch is gather_qmm"},
		{"2065", Run{ModelType: "granitemoehybrid"}, "", "", "granitemoehybrid does not call forward_fused_kernel"},
		{"2065", Run{ModelType: "llama"}, "", "", "llama does not call forward_fused_kernel"},
		// 2067: the Mamba2 families.
		{"2067", Run{ModelType: "granitemoehybrid"}, "ssm_step", "ssm_step", "ssm_update_kernel"},
		{"2067", Run{ModelType: "nemotron_h"}, "ssm_step", "ssm_step", "Mamba2"},
		{"2067", Run{ModelType: "falcon_h1"}, "ssm_step", "ssm_step", "Mamba2"},
		{"2067", Run{ModelType: "plamo2"}, "ssm_step", "ssm_step", "Mamba2"},
		{"2067", Run{ModelType: "qwen3_moe"}, "", "", "no Mamba2 layer"},
		// 2068: never on this path.
		{"2068", Run{ModelType: "llama", Sampled: true}, "", "", "dense KVCache"},
	}
	r := Default()
	for _, c := range cases {
		u, ok := r.Unit(c.unit)
		if !ok {
			t.Fatalf("no unit %s", c.unit)
		}
		def, opt := u.Reach(c.run)
		if strings.Join(def, " ") != c.def || strings.Join(opt, " ") != c.optIn {
			t.Errorf("%s %+v: reach default [%s] opt-in [%s], want [%s] [%s]", c.unit, c.run,
				strings.Join(def, " "), strings.Join(opt, " "), c.def, c.optIn)
		}
		if note := u.Note(c.run); !strings.Contains(note, c.note) {
			t.Errorf("%s %+v: note %q lacks %q", c.unit, c.run, note, c.note)
		}
	}
}

func TestRecoverableFractions(t *testing.T) {
	t.Parallel()
	u, _ := Default().Unit("2065")
	if got := u.Fraction("moe_expert_gemv"); got != 0 {
		t.Errorf("moe_expert_gemv fraction %v, want 0", got)
	}
	if !strings.Contains(u.Fractions["moe_expert_gemv"].Reason, "still reads the weights") {
		t.Errorf("reason %q", u.Fractions["moe_expert_gemv"].Reason)
	}
	if got := u.Fraction("moe_activation"); got != 1 {
		t.Errorf("moe_activation fraction %v, want 1", got)
	}
}

// The recoverable figure of a unit in a run: reached kernel time times the fraction,
// plus the host gap charged to the reached roles.
func TestRecoverableCountsHostGapAndFraction(t *testing.T) {
	t.Parallel()
	ds := names(kArange, kGatherQ, kSwiGLU, kGatherQ, kMul, kAdd, kRms)
	in := build(ds, true)
	in.ModelType = "qwen3_moe"
	// Make the gaps distinct: gap i = 10*(i+1) us.
	for i := range in.GapNs {
		in.GapNs[i] = int64(10000 * (i + 1))
	}
	in.Tokens = 1
	res, err := Default().Attribute(in)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := res.Units.Get("2065")
	// Roles: arange, 2 experts, activation, weighted sum (5 dispatches); the experts'
	// kernel time counts 0; activation, arange and weighted sum count 1000 ns each.
	kernel := 3 * 1000.0
	gap := 10000.0 + 20000 + 30000 + 40000 + 50000
	if got, want := float64(*u.RecoverableDefaultMsPerToken), (kernel+gap)/1e6; got != want {
		t.Errorf("recoverable %v ms/token, want %v", got, want)
	}
	if got := float64(*u.ReachedDefaultHostGapMsPerToken); got != 0.15 {
		t.Errorf("reached host gap %v ms/token, want 0.15", got)
	}
	if u.ReachedDefaultDispatchesPerToken != 5 || u.FallbackDispatchesPerToken != 5 {
		t.Errorf("dispatches: reached %v fallback %v, want 5", u.ReachedDefaultDispatchesPerToken, u.FallbackDispatchesPerToken)
	}
	// The same run on nemotron_h: the port is not reached.
	in.ModelType = "nemotron_h"
	res, _ = Default().Attribute(in)
	u, _ = res.Units.Get("2065")
	if u.ReachedDefaultSharePct != 0 || *u.RecoverableDefaultMsPerToken != 0 || u.FallbackSharePct == 0 {
		t.Errorf("nemotron_h: reached %v recoverable %v fallback %v; want 0, 0 and the fallback kept",
			u.ReachedDefaultSharePct, *u.RecoverableDefaultMsPerToken, u.FallbackSharePct)
	}
}
