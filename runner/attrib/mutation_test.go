package attrib

import (
	"fmt"
	"strings"
	"testing"
)

// The rules file's limits, on their edges: the value on the edge is read, one step
// past it is refused with the key named.
func TestRulesLimitsAtTheirEdges(t *testing.T) {
	t.Parallel()
	base := string(DefaultRulesYAML())
	const fraction = "        fraction: 0\n        reason: a fused kernel still reads the weights, and the expert GEMVs already run near the memory bandwidth limit\n"
	const ranking = "  - unit: \"2068\"\n    action: before\n    other: \"2063\"\n"
	if !strings.Contains(base, fraction) || !strings.Contains(base, "    within: 12\n") || !strings.Contains(base, ranking) {
		t.Fatal("the shipped rules changed shape; update the edits below")
	}
	pin := func(pos string) string {
		return strings.Replace(base, ranking, "  - unit: \"2068\"\n    action: pin\n    position: "+pos+"\n", 1)
	}
	cases := []struct {
		name, rules, want string
	}{
		{"fraction 0 with a reason", base, ""},
		{"fraction 1 without a reason", strings.Replace(base, fraction, "        fraction: 1\n", 1), ""},
		{"fraction just under 1 needs a reason", strings.Replace(base, fraction, "        fraction: 0.999\n", 1), "say why the port cannot recover all of moe_expert_gemv"},
		{"fraction past 1", strings.Replace(base, fraction, "        fraction: 1.001\n", 1), "give fraction: a number from 0 to 1"},
		{"fraction below 0", strings.Replace(base, fraction, "        fraction: -0.001\n        reason: x\n", 1), "give fraction: a number from 0 to 1"},
		{"within 1", strings.Replace(base, "    within: 12\n", "    within: 1\n", 1), ""},
		{"within 0", strings.Replace(base, "    within: 12\n", "    within: 0\n", 1), "within must be at least 1"},
		{"pin at 1", pin("1"), ""},
		{"pin at 0 means 1", pin("0"), ""},
		{"pin at -1", pin("-1"), "position counts from 1"},
	}
	for _, c := range cases {
		r, err := Parse([]byte(c.rules), "r.yml")
		if c.want == "" {
			if err != nil || r == nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// Each list of a rules file holds at most 255 entries.
func TestRulesListLimit(t *testing.T) {
	t.Parallel()
	base := string(DefaultRulesYAML())
	const head = "classes:\n"
	n0 := strings.Count(base[strings.Index(base, head):strings.Index(base, "\nroles:\n")], "\n  - {name: ")
	classes := func(n int) string {
		var b strings.Builder
		b.WriteString(head)
		for i := range n - n0 {
			fmt.Fprintf(&b, "  - {name: extra%d, pattern: 'extra_kernel_%d'}\n", i, i)
		}
		return strings.Replace(base, head, b.String(), 1)
	}
	if _, err := Parse([]byte(classes(255)), "r.yml"); err != nil {
		t.Errorf("255 classes: %v", err)
	}
	if _, err := Parse([]byte(classes(256)), "r.yml"); err == nil || !strings.Contains(err.Error(), "classes: 256 entries, more than the 255 a rules file can have") {
		t.Errorf("256 classes: %v", err)
	}
}
