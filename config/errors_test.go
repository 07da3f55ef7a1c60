package config

import (
	"strconv"
	"strings"
	"testing"
)

// yamlModels is a config file with n models, each line made by model(i).
func yamlModels(n int, model func(i int) string) string {
	var b strings.Builder
	b.WriteString("version: 1\nlimits: {max_models: 256}\nmodels:\n")
	for i := range n {
		b.WriteString("  " + model(i) + "\n")
	}
	return b.String()
}

// At most maxErrors problems are listed, then how many more there are: exactly
// maxErrors are all listed.
func TestParseErrorCountEdges(t *testing.T) {
	t.Parallel()
	bad := func(i int) string {
		return "m" + strconv.Itoa(i) + ": {dir: d/m" + strconv.Itoa(i) + ", model_type: llama, weights_gib: 0}"
	}
	typeErr := func(i int) string {
		return "m" + strconv.Itoa(i) + ": {dir: d/m" + strconv.Itoa(i) + ", model_type: llama, weights_gib: heavy}"
	}
	for _, c := range []struct {
		name  string
		model func(int) string
	}{{"validation", bad}, {"type", typeErr}} {
		for _, n := range []int{maxErrors, maxErrors + 1} {
			_, err := Parse([]byte(yamlModels(n, c.model)), "p.yml")
			if err == nil {
				t.Fatalf("%s errors, %d models: no error", c.name, n)
			}
			lines := strings.Split(err.Error(), "\n")
			more := n - maxErrors
			wantLines := maxErrors
			if more > 0 {
				wantLines++
			}
			if len(lines) != wantLines || (more > 0) != (lines[len(lines)-1] == "p.yml: and "+strconv.Itoa(more)+" more problems") {
				t.Errorf("%s errors, %d models: %d lines, last %q; want %d", c.name, n, len(lines), lines[len(lines)-1], wantLines)
			}
		}
	}
}

// An unknown default model is answered with the configured names, the first twenty
// of them.
func TestUnknownDefaultModelListsTheKnown(t *testing.T) {
	t.Parallel()
	good := func(i int) string {
		return "m" + strconv.Itoa(i) + ": {dir: d/m" + strconv.Itoa(i) + ", model_type: llama, weights_gib: 1}"
	}
	for _, n := range []int{20, 21} {
		_, err := Parse([]byte(yamlModels(n, good)+"default_models: [nope]\n"), "p.yml")
		names := make([]string, 20)
		for i := range names {
			names[i] = "m" + strconv.Itoa(i)
		}
		want := `default_models.0: "nope" is not a configured model; known: ` + strings.Join(names, ", ")
		if n > 20 {
			want += " and 1 more"
		}
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%d models: %v, want it to end %q", n, err, want)
		}
	}
}
