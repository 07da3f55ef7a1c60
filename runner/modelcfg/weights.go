package modelcfg

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Shape is what a config.json says about the size of a transformer's weights, as the
// MLX (Hugging Face) configs spell it; zero where the file does not say.
type Shape struct {
	HiddenSize        int
	IntermediateSize  int // the dense MLP's width (Mixtral's: each expert's)
	NumAttentionHeads int
	NumKeyValueHeads  int
	HeadDim           int
	VocabSize         int
	// Mixture of experts: the routed experts, how many a token uses, each one's width
	// (moe_intermediate_size, else IntermediateSize) and a shared expert's width.
	NumExperts               int
	ExpertsPerToken          int
	MoEIntermediateSize      int
	SharedExpertIntermediate int
	// Quantization (MLX's "quantization" object): bits per weight and the group size;
	// zero when the weights are not quantized. Mode is "affine" (a float16 scale and
	// bias per group) unless the file names another (mxfp4: one byte per group).
	QuantBits      int
	QuantGroupSize int
	QuantMode      string
	// DType is torch_dtype (the unquantized weights' type).
	DType string
}

// shapeKeys maps each field to the keys configs use for it, first found wins.
var shapeKeys = []struct {
	keys []string
	dst  func(*Shape) *int
}{
	{[]string{"hidden_size", "d_model"}, func(s *Shape) *int { return &s.HiddenSize }},
	{[]string{"intermediate_size", "ffn_dim"}, func(s *Shape) *int { return &s.IntermediateSize }},
	{[]string{"num_attention_heads"}, func(s *Shape) *int { return &s.NumAttentionHeads }},
	{[]string{"num_key_value_heads"}, func(s *Shape) *int { return &s.NumKeyValueHeads }},
	{[]string{"head_dim"}, func(s *Shape) *int { return &s.HeadDim }},
	{[]string{"vocab_size"}, func(s *Shape) *int { return &s.VocabSize }},
	{[]string{"num_experts", "num_local_experts", "n_routed_experts"}, func(s *Shape) *int { return &s.NumExperts }},
	{[]string{"num_experts_per_tok", "experts_per_token", "num_experts_per_token"}, func(s *Shape) *int { return &s.ExpertsPerToken }},
	{[]string{"moe_intermediate_size"}, func(s *Shape) *int { return &s.MoEIntermediateSize }},
	{[]string{"shared_expert_intermediate_size"}, func(s *Shape) *int { return &s.SharedExpertIntermediate }},
}

// shape reads the size facts; a key of the wrong kind is an error, a missing one zero.
func shape(raw, text map[string]any, name string) (Shape, error) {
	var s Shape
	for _, k := range shapeKeys {
		for _, key := range k.keys {
			v, where := lookup(raw, text, key)
			if v == nil {
				continue
			}
			n, err := wholeNumber(v, where, name)
			if err != nil {
				return Shape{}, err
			}
			*k.dst(&s) = n
			break
		}
	}
	var err error
	if s.DType, err = stringKey(raw, text, "torch_dtype", name); err != nil {
		return Shape{}, err
	}
	for _, key := range []string{"quantization", "quantization_config"} {
		v, where := lookup(raw, text, key)
		if v == nil {
			continue
		}
		q, ok := v.(map[string]any)
		if !ok {
			return Shape{}, fmt.Errorf("%s: %s is %s, want an object", name, where, kind(v))
		}
		if b, ok := q["bits"]; ok && b != nil {
			if s.QuantBits, err = wholeNumber(b, where+".bits", name); err != nil {
				return Shape{}, err
			}
		}
		if g, ok := q["group_size"]; ok && g != nil {
			if s.QuantGroupSize, err = wholeNumber(g, where+".group_size", name); err != nil {
				return Shape{}, err
			}
		}
		if m, ok := q["mode"].(string); ok {
			s.QuantMode = m
		}
		break
	}
	return s, nil
}

func wholeNumber(v any, where, name string) (int, error) {
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, fmt.Errorf("%s: %s is %s, want a whole number", name, where, jsonText(v))
	}
	return int(f), nil
}

// weightModels are the model types whose layers WeightsPerToken can count: a
// transformer of attention and MLP (or mixture-of-experts) layers.
var weightModels = map[string]bool{
	"llama": true, "mistral": true, "qwen2": true, "qwen3": true,
	"mixtral": true, "qwen2_moe": true, "qwen3_moe": true,
}

// Weights is the count of the weights a decode step reads, per generated token.
type Weights struct {
	Params float64 // weights read per token
	Bytes  float64 // their bytes
	// Basis says how they were counted, for a reader to check.
	Basis string
}

// WeightsPerToken counts the weights one decode step reads: every layer's attention
// projections and its MLP (for a mixture of experts, the router, the experts a token
// uses and a shared expert), and the output projection over the vocabulary. Norms,
// biases, the embedding row and the KV cache are left out, so it is a lower bound of the
// bytes moved. Quantized weights cost bits/8 bytes each plus their group's scale (and,
// for affine quantization, bias) in float16. It says why when the config does not give
// what is needed.
func (m Model) WeightsPerToken() (Weights, error) {
	s := m.Shape
	if !weightModels[m.ModelType] {
		return Weights{}, fmt.Errorf("model type %s is not one whose layers are counted (%s)", orNone(m.ModelType), strings.Join(slices.Sorted(maps.Keys(weightModels)), ", "))
	}
	var missing []string
	need := func(v int, key string) {
		if v <= 0 {
			missing = append(missing, key)
		}
	}
	need(m.NumHiddenLayers, "num_hidden_layers")
	need(s.HiddenSize, "hidden_size")
	need(s.NumAttentionHeads, "num_attention_heads")
	need(s.VocabSize, "vocab_size")
	moe := s.NumExperts > 0
	expertWidth := s.MoEIntermediateSize
	if expertWidth == 0 {
		expertWidth = s.IntermediateSize
	}
	if moe {
		need(s.ExpertsPerToken, "num_experts_per_tok")
		need(expertWidth, "moe_intermediate_size")
	} else {
		need(s.IntermediateSize, "intermediate_size")
	}
	if len(missing) > 0 {
		return Weights{}, fmt.Errorf("the config does not give %s", strings.Join(missing, ", "))
	}
	kv, hd := s.NumKeyValueHeads, s.HeadDim
	if kv == 0 {
		kv = s.NumAttentionHeads
	}
	if hd == 0 {
		hd = s.HiddenSize / s.NumAttentionHeads
	}
	h := float64(s.HiddenSize)
	attn := h*float64(s.NumAttentionHeads*hd)*2 + h*float64(kv*hd)*2
	var mlp float64
	basis := fmt.Sprintf("%d layers of attention (%d query, %d key/value heads of %d)", m.NumHiddenLayers, s.NumAttentionHeads, kv, hd)
	if moe {
		mlp = h*float64(s.NumExperts) + float64(s.ExpertsPerToken)*3*h*float64(expertWidth)
		basis += fmt.Sprintf(" and a router with %d of %d experts of width %d", s.ExpertsPerToken, s.NumExperts, expertWidth)
		if s.SharedExpertIntermediate > 0 {
			mlp += 3*h*float64(s.SharedExpertIntermediate) + h
			basis += fmt.Sprintf(" plus a shared expert of width %d", s.SharedExpertIntermediate)
		}
	} else {
		mlp = 3 * h * float64(s.IntermediateSize)
		basis += fmt.Sprintf(" and an MLP of width %d", s.IntermediateSize)
	}
	params := float64(m.NumHiddenLayers)*(attn+mlp) + h*float64(s.VocabSize)
	basis += fmt.Sprintf(", hidden size %d, and the output projection over %d tokens", s.HiddenSize, s.VocabSize)
	per, how, err := s.bytesPerWeight()
	if err != nil {
		return Weights{}, err
	}
	return Weights{Params: params, Bytes: params * per, Basis: basis + "; " + how}, nil
}

// bytesPerWeight is what one weight costs to read, with how it was found.
func (s Shape) bytesPerWeight() (float64, string, error) {
	if s.QuantBits > 0 {
		if s.QuantGroupSize <= 0 {
			return 0, "", fmt.Errorf("the config's quantization gives %d bits but no group_size", s.QuantBits)
		}
		perGroup, what := 4.0, "a float16 scale and bias"
		switch s.QuantMode {
		case "", "affine":
		case "mxfp4":
			perGroup, what = 1, "a one-byte scale"
		default:
			return 0, "", fmt.Errorf("the config's quantization mode %s is not one whose size is known (affine, mxfp4)", s.QuantMode)
		}
		return float64(s.QuantBits)/8 + perGroup/float64(s.QuantGroupSize),
			fmt.Sprintf("%d-bit weights with %s per group of %d", s.QuantBits, what, s.QuantGroupSize), nil
	}
	switch s.DType {
	case "float16", "bfloat16":
		return 2, s.DType + " weights", nil
	case "float32":
		return 4, "float32 weights", nil
	}
	return 0, "", fmt.Errorf("the config gives neither a quantization nor a torch_dtype of float16, bfloat16 or float32")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
