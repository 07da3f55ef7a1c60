package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
)

// FuzzParse: any bytes parse or fail without a panic, and what Parse accepts,
// Validate accepts too (the two must agree on every rule).
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(filepath.Join(testfix.RepoRoot(f), "docs", "perfbot.example.yml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte(base))
	f.Add(manyModels(3, false))
	f.Add([]byte("version: 1\nmodels: &m\n  a: {dir: x/.y, model_type: \"\\e\", weights_gib: .nan}\nsampling: [t1e400, greedy, greedy]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, name)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted what Validate refuses: %v", err)
		}
		if len(c.Models) > MaxModels || len(c.Sampling) != len(c.SamplingTags) {
			t.Fatalf("accepted %d models, %d settings for %d tags", len(c.Models), len(c.Sampling), len(c.SamplingTags))
		}
	})
}
