// Package modelcfg reads the facts perfbot needs from a model's config.json (the
// Hugging Face / MLX layout): the model type, the rope scaling type, the layer count,
// and the sizes that give the bytes of weights one decode step reads (Shape,
// WeightsPerToken). It must not load weights or guess facts the file does not state.
package modelcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// Model is what a config.json says about a model.
type Model struct {
	// ModelType is the top-level model_type, or text_config's for VLMs that have none.
	ModelType string
	// RopeScalingType is rope_scaling.rope_type (or the older .type); "" without scaling.
	RopeScalingType string
	// NumHiddenLayers is 0 when the file does not say.
	NumHiddenLayers int
	// Shape holds the weights' sizes and quantization, zero where the file is silent.
	Shape Shape
	// Raw is the whole file, for facts this package does not name.
	Raw map[string]any
}

// maxConfigBytes bounds a config.json: real ones, VLMs included, are under 100 KiB.
const maxConfigBytes = 4 << 20

// Read parses the config.json at path (a regular file of at most 4 MiB).
func Read(path string) (Model, error) {
	data, err := infile.ReadFile(path, maxConfigBytes)
	if err != nil {
		return Model{}, fmt.Errorf("reading model config: %w", err)
	}
	return Parse(data, path)
}

// Parse reads a config.json; name is used in errors.
func Parse(data []byte, name string) (Model, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Model{}, fmt.Errorf("%s: the file is empty; want the model's config.json", name)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return Model{}, jsonError(data, name, err)
	}
	if raw == nil {
		return Model{}, fmt.Errorf("%s: holds null, not a JSON object; is this a model's config.json?", name)
	}
	// Vision-language models keep the language model's settings in text_config; the
	// top level wins where both say something.
	var text map[string]any
	if tc, ok := raw["text_config"]; ok && tc != nil {
		if text, ok = tc.(map[string]any); !ok {
			return Model{}, fmt.Errorf("%s: text_config is %s, want an object", name, kind(tc))
		}
	}

	m := Model{Raw: raw}
	var err error
	if m.ModelType, err = stringKey(raw, text, "model_type", name); err != nil {
		return Model{}, err
	}
	if m.ModelType == "" {
		return Model{}, fmt.Errorf("%s: no model_type (neither at the top nor in text_config); is this a model's config.json?", name)
	}
	if m.RopeScalingType, err = ropeType(raw, text, name); err != nil {
		return Model{}, err
	}
	if m.NumHiddenLayers, err = layers(raw, text, name); err != nil {
		return Model{}, err
	}
	if m.Shape, err = shape(raw, text, name); err != nil {
		return Model{}, err
	}
	return m, nil
}

// lookup returns key from the top level, else from text_config; null and "" count as
// absent.
func lookup(raw, text map[string]any, key string) (v any, where string) {
	if v, ok := raw[key]; ok && v != nil && v != "" {
		return v, key
	}
	if v, ok := text[key]; ok && v != nil && v != "" {
		return v, "text_config." + key
	}
	return nil, ""
}

func stringKey(raw, text map[string]any, key, name string) (string, error) {
	v, where := lookup(raw, text, key)
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: %s is %s, want a string", name, where, kind(v))
	}
	return s, nil
}

func ropeType(raw, text map[string]any, name string) (string, error) {
	v, where := lookup(raw, text, "rope_scaling")
	if v == nil {
		return "", nil
	}
	rs, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("%s: %s is %s, want an object or null", name, where, kind(v))
	}
	// rope_type is the current key; type is what older configs (and some VLMs) use.
	for _, k := range []string{"rope_type", "type"} {
		t, ok := rs[k]
		if !ok || t == nil {
			continue
		}
		s, ok := t.(string)
		if !ok {
			return "", fmt.Errorf("%s: %s.%s is %s, want a string", name, where, k, kind(t))
		}
		return s, nil
	}
	return "", nil
}

func layers(raw, text map[string]any, name string) (int, error) {
	v, where := lookup(raw, text, "num_hidden_layers")
	if v == nil {
		return 0, nil
	}
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, fmt.Errorf("%s: %s is %s, want a whole number", name, where, jsonText(v))
	}
	return int(f), nil
}

func kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "null"
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return kind(v)
	}
	return safetext.Clean(string(b))
}

// jsonError says where the file stops being JSON, as name:LINE:COLUMN.
func jsonError(data []byte, name string, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(data, se.Offset)
		return fmt.Errorf("%s:%d:%d: not valid JSON: %w", name, line, col, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: the file holds a JSON %s, want an object; is this a model's config.json?", name, te.Value)
	}
	return fmt.Errorf("%s: not valid JSON: %w", name, err)
}

func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}
