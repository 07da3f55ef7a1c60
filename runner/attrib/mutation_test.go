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

// With more roles than fit in one 64-bit word (exactly 128, two words in full), every
// kernel still gets its own role in the kernel table, the last role included.
func TestKernelRolesPastOneWord(t *testing.T) {
	t.Parallel()
	base := string(DefaultRulesYAML())
	def, err := Parse([]byte(base), "r.yml")
	if err != nil {
		t.Fatal(err)
	}
	extra := 128 - len(def.roleNames)
	var add strings.Builder
	add.WriteString("roles:\n")
	var ds []disp
	for i := range extra {
		fmt.Fprintf(&add, "  - kind: match\n    match: {name: 'xk%03dz'}\n    role: xr%03d\n", i, i)
		ds = append(ds, disp{name: fmt.Sprintf("xk%03dz", i)})
	}
	rules, err := Parse([]byte(strings.Replace(base, "roles:\n", add.String(), 1)), "r.yml")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rules.roleNames); n != 128 {
		t.Fatalf("%d roles, want 128", n)
	}
	res, err := rules.Attribute(build(ds, false))
	if err != nil {
		t.Fatal(err)
	}
	for id, name := range build(ds, false).Names {
		want := []string{"xr" + name[2:5]}
		if got := res.KernelRoles[id]; len(got) != 1 || got[0] != want[0] {
			t.Errorf("%s: roles %v, want %v", name, got, want)
		}
	}
}

// Shares are of the GPU time the input gives, or of the dispatches' sum when it gives
// none; with no GPU time at all they are 0, not NaN.
func TestAttributeGPUSum(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		sumNs  int64
		durNs  int64
		wantPc float64
	}{
		{"given sum", 4000, 1000, 25},
		{"sum left out", 0, 1000, 100},
		{"no GPU time", 0, 0, 0},
	}
	for _, c := range cases {
		in := build(names("unknown_kernel"), false)
		in.GPUSumNs, in.DurNs[0] = c.sumNs, c.durNs
		res, err := Default().Attribute(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(res.ClassSharePct[0].Value); got != c.wantPc {
			t.Errorf("%s: class share %v, want %v", c.name, got, c.wantPc)
		}
	}
}

// A dispatch naming a kernel past the name table is refused, not read out of range.
func TestAttributeNameIndexEdge(t *testing.T) {
	t.Parallel()
	in := build(names("a", "b"), false)
	in.Name[1] = 2
	if _, err := Default().Attribute(in); err == nil || err.Error() != "attribution input: name index 2 out of range (2 names)" {
		t.Errorf("name index 2 of 2 names: %v", err)
	}
	in.Name[1] = 1
	if _, err := Default().Attribute(in); err != nil {
		t.Errorf("name index 1 of 2 names: %v", err)
	}
}
