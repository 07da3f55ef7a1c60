package modelcfg

import (
	"fmt"
	"strings"
	"testing"
)

// Configs in the MLX layout with the sizes of Llama-3.1-8B-Instruct-4bit and
// Qwen3-30B-A3B-4bit (the models of the published gfx1151 profile) and a Mixtral-8x7B.
const (
	llamaConfig = `{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
		"num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128256,
		"rope_scaling": {"rope_type": "llama3"}, "quantization": {"group_size": 64, "bits": 4}}`
	qwenMoEConfig = `{"model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768,
		"num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936,
		"num_experts": 128, "num_experts_per_tok": 8, "quantization": {"group_size": 64, "bits": 4}}`
	mixtralConfig = `{"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
		"num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000, "num_local_experts": 8,
		"num_experts_per_tok": 2, "torch_dtype": "bfloat16"}`
)

func weights(t *testing.T, cfg string) Weights {
	t.Helper()
	m, err := Parse([]byte(cfg), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.WeightsPerToken()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The counts worked out by hand in docs/analysis.md: Llama reads every weight, 7.50 G
// weights at 0.5625 bytes (4 bits and a float16 scale and bias per 64); Qwen3's
// mixture reads its attention, its router and 8 of its 128 experts, 3.04 G weights.
func TestWeightsPerToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, cfg     string
		params, bytes string
		basis         []string
	}{
		{"llama", llamaConfig, "7504.7", "4221.4", []string{"32 layers of attention (32 query, 8 key/value heads of 128) and an MLP of width 14336", "4-bit weights with a float16 scale and bias per group of 64"}},
		{"qwen3_moe", qwenMoEConfig, "3041.7", "1710.9", []string{"a router with 8 of 128 experts of width 768", "over 151936 tokens"}},
		// Mixtral's experts are intermediate_size wide; unquantized bfloat16 costs 2 bytes.
		{"mixtral", mixtralConfig, "12748.6", "25497.2", []string{"2 of 8 experts of width 14336", "bfloat16 weights"}},
	} {
		w := weights(t, tc.cfg)
		if got := fmt.Sprintf("%.1f", w.Params/1e6); got != tc.params {
			t.Errorf("%s: %s M weights, want %s", tc.name, got, tc.params)
		}
		if got := fmt.Sprintf("%.1f", w.Bytes/1e6); got != tc.bytes {
			t.Errorf("%s: %s MB, want %s", tc.name, got, tc.bytes)
		}
		for _, b := range tc.basis {
			if !strings.Contains(w.Basis, b) {
				t.Errorf("%s: basis %q lacks %q", tc.name, w.Basis, b)
			}
		}
	}
	// A shared expert and mxfp4 quantization count as the config says.
	shared := strings.Replace(qwenMoEConfig, `"model_type": "qwen3_moe"`, `"model_type": "qwen2_moe", "shared_expert_intermediate_size": 5632`, 1)
	if d := weights(t, shared).Params - weights(t, qwenMoEConfig).Params; d != 48*(3*2048*5632+2048) {
		t.Errorf("the shared expert adds %.0f weights", d)
	}
	mx := strings.Replace(qwenMoEConfig, `{"group_size": 64, "bits": 4}`, `{"group_size": 32, "bits": 4, "mode": "mxfp4"}`, 1)
	if w := weights(t, mx); w.Bytes != w.Params*(0.5+1.0/32) {
		t.Errorf("mxfp4: %.4f bytes a weight", w.Bytes/w.Params)
	}
}

// What the config does not give is said, not guessed.
func TestWeightsPerTokenSaysWhy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cfg, want string }{
		{`{"model_type": "nemotron_h", "hidden_size": 2688}`, "model type nemotron_h is not one whose layers are counted"},
		{`{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32}`, "the config does not give num_attention_heads, vocab_size, intermediate_size"},
		{strings.Replace(qwenMoEConfig, `"num_experts_per_tok": 8, `, "", 1), "does not give num_experts_per_tok"},
		{strings.Replace(llamaConfig, `"group_size": 64, `, "", 1), "gives 4 bits but no group_size"},
		{strings.Replace(llamaConfig, `"bits": 4}`, `"bits": 4, "mode": "nvfp4"}`, 1), "quantization mode nvfp4 is not one whose size is known"},
		{strings.Replace(mixtralConfig, `"torch_dtype": "bfloat16"`, `"torch_dtype": "int8"`, 1), "neither a quantization nor a torch_dtype"},
	} {
		m, err := Parse([]byte(tc.cfg), "config.json")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.WeightsPerToken(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := Parse([]byte(`{"model_type": "llama", "hidden_size": "4096"}`), "config.json"); err == nil || !strings.Contains(err.Error(), `hidden_size is "4096", want a whole number`) {
		t.Errorf("a string size: %v", err)
	}
	if _, err := Parse([]byte(`{"model_type": "llama", "quantization": 4}`), "config.json"); err == nil || !strings.Contains(err.Error(), "quantization is a number, want an object") {
		t.Errorf("a number for quantization: %v", err)
	}
}
