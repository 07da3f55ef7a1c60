package attrib

import (
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

// node finds a key path in the rules document and answers nil, without panicking,
// for a key a mapping does not have or a list index past its end.
func TestNodeLookup(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a:\n  b: 1\n  c: [x, y]\nd: 2\n"), &doc); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"a.b": "1", "a.c.1": "y", "d": "2"} {
		if n := node(&doc, path); n == nil || n.Value != want {
			t.Errorf("node(%q) = %v, want %q", path, n, want)
		}
	}
	for _, path := range []string{"a.z", "z", "a.c.2", "a.c.-1", "a.c.x", "d.e", "a.b.c"} {
		if n := node(&doc, path); n != nil {
			t.Errorf("node(%q) = %q, want nil", path, n.Value)
		}
	}
	if got := keys(&doc, "a"); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("keys(a) = %q", got)
	}
	if got := keys(&doc, "a.z"); got != nil {
		t.Errorf("keys(a.z) = %q, want none", got)
	}
}
