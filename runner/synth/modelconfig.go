package synth

import "fmt"

// ModelConfig returns the config.json that a synthetic run of the model key writes into
// its model directory, for callers that lay out a model folder without a run (the demo's
// sample checkout).
func ModelConfig(key string) ([]byte, error) {
	m, ok := models[key]
	if !ok {
		return nil, fmt.Errorf("unknown model %q: want one of %v", key, Models())
	}
	return configJSON(m)
}
