package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manyModels is a config of n models; bad gives each one an error.
func manyModels(n int, bad bool) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nlimits: {max_models: 8}\ndefault_models: [m0]\nmodels:\n")
	w := 4.5
	if bad {
		w = -1
	}
	for i := range n {
		fmt.Fprintf(&b, "  m%d: {dir: models/m%d, model_type: llama, weights_gib: %v}\n", i, i, w)
	}
	return []byte(b.String())
}

// A config of many models is refused with one clear error, and however many problems
// a file has, the error lists a few and counts the rest.
func TestParseBoundsModelsAndErrors(t *testing.T) {
	t.Parallel()
	if _, err := Parse(manyModels(MaxModels, false), name); err != nil {
		t.Fatalf("%d models: %v", MaxModels, err)
	}
	cases := []struct {
		n    int
		bad  bool
		want string
	}{
		{MaxModels + 1, false, name + ":4: models: 257 models, more than the 256 perfbot takes; keep the models you profile"},
		{5000, false, name + ":5: a mapping of 5000 keys, more than the 1000 this file can have"},
		{200, true, name + ": and 180 more problems"},
	}
	for _, c := range cases {
		_, err := Parse(manyModels(c.n, c.bad), name)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d models: got %v, want %q", c.n, err, c.want)
			continue
		}
		if lines := strings.Count(err.Error(), "\n") + 1; lines > maxErrors+1 {
			t.Errorf("%d models: %d error lines", c.n, lines)
		}
	}
	// An unknown default model names a few known ones, not all.
	text := strings.Replace(string(manyModels(MaxModels, false)), "default_models: [m0]", "default_models: [nope]", 1)
	_, err := Parse([]byte(text), name)
	if err == nil || !strings.Contains(err.Error(), `"nope" is not a configured model; known: m0, m1,`) || !strings.Contains(err.Error(), "m19 and 236 more") {
		t.Errorf("unknown default model: %v", err)
	}
	over := filepath.Join(t.TempDir(), "perfbot.yml")
	os.WriteFile(over, append(manyModels(1, false), strings.Repeat("# padding\n", MaxFileBytes/10)...), 0o644)
	if _, err := Load(over); err == nil || !strings.Contains(err.Error(), "more than the 1 MiB") {
		t.Errorf("a file over 1 MiB: %v", err)
	}
	if err := (Config{Limits: Limits{MaxModels: 1000}}).Validate(); err == nil || !strings.Contains(err.Error(), "limits.max_models: must be >= 1 and at most 256 (got 1000)") {
		t.Errorf("max_models 1000: %v", err)
	}
}

// Float values: finite (the YAML `.nan` and `.inf` are no numbers) and in range.
func TestParseFloatValuesFiniteAndInRange(t *testing.T) {
	t.Parallel()
	cases := []struct{ repl, want string }{
		{"weights_gib: .nan", "want a number, not `.nan`"},
		{"weights_gib: -.inf", "want a number, not `-.inf`"},
		{"weights_gib: 1e9", "models.llama.weights_gib: must be > 0 and at most 4096"},
		{"weights_gib: 4.5\nguard:\n  max_foreign_cpu_pct: .NaN", "want a number, not `.NaN`"},
		{"weights_gib: 4.5\nguard:\n  max_foreign_cpu_pct: 1e300", "guard.max_foreign_cpu_pct: must be >= 0 and at most 100000"},
	}
	for _, c := range cases {
		text := strings.Replace(base, "weights_gib: 4.5", c.repl, 1)
		if text == base {
			t.Fatal("base has no weights_gib: 4.5")
		}
		_, err := Parse([]byte(text), name)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.repl, err, c.want)
		}
	}
}

// Values quoted from the file are cut and escaped; a model folder that cannot name a
// run is refused.
func TestParseQuotesValuesSafely(t *testing.T) {
	t.Parallel()
	cases := []struct{ from, to, want string }{
		{"model_type: llama", "model_type: \"ll\\e[31mama x\"", `models.llama.model_type: "ll\x1b[31mama x" is not a model type`},
		{"weights_gib: 4.5", "weights_gib: \"" + strings.Repeat("9", 5000) + "\"", "... (4800 more bytes)"},
		{"dir: models/llama", "dir: models/.hidden", `models.llama.dir: its last folder ".hidden" cannot name a run`},
		{"dir: models/llama", "dir: \"models/a\\tb\"", `its last folder "a\tb" cannot name a run`},
	}
	for _, c := range cases {
		text := strings.Replace(base, c.from, c.to, 1)
		if text == base {
			t.Fatalf("base has no %q", c.from)
		}
		_, err := Parse([]byte(text), name)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.ContainsRune(err.Error(), 0x1b) || len(err.Error()) > 2000 {
			t.Errorf("%s: got %q, want %q", c.to[:min(len(c.to), 40)], err, c.want)
		}
	}
}

// The cost of checking a config is linear in its models up to the cap, and a file far
// beyond it is refused before any check.
func BenchmarkParseManyModels(b *testing.B) {
	for _, n := range []int{8, MaxModels, 900, 5000} {
		data := manyModels(n, false)
		b.Run(fmt.Sprintf("models-%d", n), func(b *testing.B) {
			for b.Loop() {
				Parse(data, name)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/model")
		})
	}
}
