package yamlstrict

import (
	"strings"
	"testing"
)

type inner struct {
	Size float64 `yaml:"size"`
}

type cfg struct {
	Version int              `yaml:"version"`
	Models  map[string]inner `yaml:"models"`
	List    []inner          `yaml:"list"`
}

func TestDecodeErrorsNameFileLineAndKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"version: 1\nbogus: 2\n", `c.yml:2: unknown key "bogus"`},
		{"version: 1\nmodels:\n  a:\n    size: 1\n    colour: red\n", `c.yml:5: unknown key "colour"`},
		{"version: one\n", "c.yml:1: cannot unmarshal"},
		{"version: 1\n  bad indent: [\n", "c.yml:"},
		{"", "c.yml: the file is empty"},
		{"version: 1\n---\nversion: 2\n", "c.yml:2: a second YAML document"},
	}
	for _, c := range cases {
		var v cfg
		_, err := Decode([]byte(c.in), "c.yml", &v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(%q) error = %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestErrorfPointsAtTheValue(t *testing.T) {
	t.Parallel()
	var v cfg
	doc, err := Decode([]byte("version: 1\nmodels:\n  a:\n    size: -1\nlist:\n  - size: 2\n  - size: 3\n"), "c.yml", &v)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Errorf("models.a.size", "must be positive").Error(); got != "c.yml:4: models.a.size: must be positive" {
		t.Errorf("got %q", got)
	}
	if got := doc.Line("list.1.size"); got != 7 {
		t.Errorf("Line(list.1.size) = %d, want 7", got)
	}
	if got := doc.Line("models.zzz"); got != 2 {
		t.Errorf("Line of a missing key = %d, want its parent's line 2", got)
	}
}
