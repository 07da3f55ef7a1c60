package modelcfg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Shaped like the config.json files of the MLX community conversions.
const llama31 = `{
  "architectures": ["LlamaForCausalLM"],
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "hidden_size": 4096,
  "max_position_embeddings": 131072,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "quantization": {"group_size": 64, "bits": 4},
  "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0,
  "vocab_size": 128256
}`

const qwen3moe = `{
  "architectures": ["Qwen3MoeForCausalLM"],
  "model_type": "qwen3_moe",
  "num_experts": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 48,
  "rope_scaling": null,
  "rope_theta": 1000000.0
}`

const gemma3vlm = `{
  "architectures": ["Gemma3ForConditionalGeneration"],
  "model_type": "gemma3",
  "text_config": {
    "model_type": "gemma3_text",
    "num_hidden_layers": 34,
    "rope_scaling": {"factor": 8.0, "rope_type": "linear"}
  },
  "vision_config": {"model_type": "siglip_vision_model", "num_hidden_layers": 27}
}`

const textOnlyType = `{
  "architectures": ["LlavaForConditionalGeneration"],
  "text_config": {"model_type": "llama", "num_hidden_layers": 32},
  "vision_config": {"model_type": "clip_vision_model"}
}`

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     Model // Raw is checked apart
	}{
		{"llama 3.1 with rope_type", llama31, Model{ModelType: "llama", RopeScalingType: "llama3", NumHiddenLayers: 32}},
		{"qwen3 moe with null rope_scaling", qwen3moe, Model{ModelType: "qwen3_moe", NumHiddenLayers: 48}},
		{"no rope_scaling key", `{"model_type": "mistral", "num_hidden_layers": 32}`, Model{ModelType: "mistral", NumHiddenLayers: 32}},
		{"legacy type key", `{"model_type": "qwen2_vl", "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}`,
			Model{ModelType: "qwen2_vl", RopeScalingType: "mrope"}},
		{"rope_type wins over type", `{"model_type": "qwen2_5_vl", "rope_scaling": {"type": "mrope", "rope_type": "default"}}`,
			Model{ModelType: "qwen2_5_vl", RopeScalingType: "default"}},
		{"rope_scaling without a type", `{"model_type": "x", "rope_scaling": {"factor": 2.0}}`, Model{ModelType: "x"}},
		{"top-level type wins over text_config", gemma3vlm, Model{ModelType: "gemma3", RopeScalingType: "linear", NumHiddenLayers: 34}},
		{"type only in text_config", textOnlyType, Model{ModelType: "llama", NumHiddenLayers: 32}},
		{"empty top-level type falls back", `{"model_type": "", "text_config": {"model_type": "llama"}}`, Model{ModelType: "llama"}},
		{"null text_config", `{"model_type": "phi3", "text_config": null, "num_hidden_layers": 32.0}`, Model{ModelType: "phi3", NumHiddenLayers: 32}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse([]byte(tc.in), "config.json")
			if err != nil {
				t.Fatal(err)
			}
			if got.Raw == nil {
				t.Error("Raw is nil")
			}
			if got.ModelType != tc.want.ModelType || got.RopeScalingType != tc.want.RopeScalingType ||
				got.NumHiddenLayers != tc.want.NumHiddenLayers {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseKeepsRaw(t *testing.T) {
	t.Parallel()
	m, err := Parse([]byte(llama31), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m.Raw["vocab_size"].(float64); !ok || v != 128256 {
		t.Errorf("Raw[vocab_size] = %v", m.Raw["vocab_size"])
	}
	if q, ok := m.Raw["quantization"].(map[string]any); !ok || q["bits"] != 4.0 {
		t.Errorf("Raw[quantization] = %v", m.Raw["quantization"])
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"empty", "  \n", "m/config.json: the file is empty"},
		{"not JSON", "model_type: llama\n", "m/config.json:1:1: not valid JSON: invalid character 'm'"},
		{"broken on a later line", "{\n  \"model_type\": \"llama\",\n  \"num_hidden_layers\": 32,,\n}", "m/config.json:3:27: not valid JSON: invalid character ','"},
		{"cut short", `{"model_type": "llama"`, "m/config.json:1:22: not valid JSON: unexpected end of JSON input"},
		{"trailing data", `{"model_type": "llama"} {}`, "m/config.json:1:25: not valid JSON: invalid character '{' after top-level value"},
		{"a list", `[{"model_type": "llama"}]`, "m/config.json: the file holds a JSON array, want an object"},
		{"null", `null`, "m/config.json: holds null, not a JSON object"},
		{"no model_type", `{"num_hidden_layers": 32}`, "m/config.json: no model_type (neither at the top nor in text_config); is this a model's config.json?"},
		{"no model_type in text_config either", `{"text_config": {"num_hidden_layers": 32}}`, "m/config.json: no model_type"},
		{"model_type a number", `{"model_type": 3}`, "m/config.json: model_type is a number, want a string"},
		{"text model_type a list", `{"text_config": {"model_type": ["llama"]}}`, "m/config.json: text_config.model_type is a list, want a string"},
		{"text_config a string", `{"model_type": "x", "text_config": "llama"}`, "m/config.json: text_config is a string, want an object"},
		{"rope_scaling a string", `{"model_type": "x", "rope_scaling": "linear"}`, "m/config.json: rope_scaling is a string, want an object or null"},
		{"rope_type a number", `{"model_type": "x", "rope_scaling": {"rope_type": 1}}`, "m/config.json: rope_scaling.rope_type is a number, want a string"},
		{"layers fractional", `{"model_type": "x", "num_hidden_layers": 32.5}`, "m/config.json: num_hidden_layers is 32.5, want a whole number"},
		{"layers text", `{"model_type": "x", "text_config": {"num_hidden_layers": "32"}}`, `m/config.json: text_config.num_hidden_layers is "32", want a whole number`},
		{"layers negative", `{"model_type": "x", "num_hidden_layers": -1}`, "m/config.json: num_hidden_layers is -1, want a whole number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tc.in), "m/config.json")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to start %q", err, tc.want)
			}
		})
	}
}

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(qwen3moe), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Read(path)
	if err != nil || m.ModelType != "qwen3_moe" || m.NumHiddenLayers != 48 {
		t.Errorf("Read = %+v, %v", m, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": no model_type") {
		t.Errorf("Read(bad) error = %v, want it to name the file", err)
	}
	_, err = Read(filepath.Join(dir, "none.json"))
	if err == nil || !strings.HasPrefix(err.Error(), "reading model config: ") || !os.IsNotExist(unwrap(err)) {
		t.Errorf("Read(missing) error = %v", err)
	}
}

func unwrap(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}
