package attrib

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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

// kindsRules is a small rules file of four classes (by the name's first letter) and
// the given roles.
func kindsRules(t *testing.T, roles string) *Rules {
	t.Helper()
	src := "version: 1\nclasses:\n  - {name: a, pattern: '^A'}\n  - {name: b, pattern: '^B'}\n  - {name: c, pattern: '^C'}\n  - {name: u, pattern: '^U'}\nroles:\n" + roles
	r, err := Parse([]byte(src), "kinds.yml")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Each kind at its edges: a span reaching the end of the trace, a bound or a match on
// the first position it may take, a cluster with only an inside or only an after part.
func TestKindsAtTheirEdges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, roles string
		seq         []disp
		grid        bool
		want        string // the role of each dispatch, "-" for none
	}{
		{"span after widest: the next widest right after an until", "  - {kind: span_after_widest, role: t, widest: {class: a}, until: {class: b}}\n",
			[]disp{{"A1", 10}, {"X", 0}, {"B", 0}, {"A2", 10}, {"X", 0}, {"B", 0}}, true, "- t - - t -"},
		{"span between: an anchor with no bound after it", "  - {kind: span_between, anchor: {class: c}, bounds: {class: a}, rest: s}\n",
			names("A", "X", "C", "X"), false, "- s s s"},
		{"span between: from_last on the span's first dispatch", "  - {kind: span_between, anchor: {class: c}, bounds: {class: a}, from_last: {match: {class: b}, role: g}, rest: s}\n",
			names("A", "B", "C", "A"), false, "- g g -"},
		{"cluster: inside only, nothing before the first anchor", "  - {kind: cluster, anchor: {class: a}, within: 3, role: e, inside: {match: {class: u}, role: i}}\n",
			names("U", "U", "A", "U", "A", "U"), false, "- - e i e -"},
		{"cluster: after only, up to the end", "  - {kind: cluster, anchor: {class: a}, within: 3, role: e, after: {match: {class: u}, role: w}}\n",
			names("U", "A", "U", "U"), false, "- e w w"},
		{"pair: preceded_by filling the start", "  - {kind: pair, first: {class: a}, second: {class: b}, preceded_by: [{class: c}], role: p, else_role: q}\n",
			names("C", "A", "B", "A", "B"), false, "- p p q q"},
	}
	for _, c := range cases {
		r := kindsRules(t, c.roles)
		res, err := r.Attribute(build(c.seq, c.grid))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := make([]string, len(res.Roles))
		for i, ro := range res.Roles {
			got[i] = "-"
			if ro != 0 {
				got[i] = res.RoleNames[ro]
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: roles %q, want %q", c.name, g, c.want)
		}
	}
}

// A rules file may name 255 roles besides unattributed (an index fits a byte), not one
// more.
func TestRoleCountEdge(t *testing.T) {
	t.Parallel()
	roles := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "  - {kind: match, match: {name: 'K%03d'}, role: r%03d}\n", i, i)
		}
		return b.String()
	}
	src := "version: 1\nclasses:\n  - {name: a, pattern: '^A'}\nroles:\n"
	if _, err := Parse([]byte(src+roles(255)), "r.yml"); err != nil {
		t.Errorf("255 roles: %v", err)
	}
	var b strings.Builder
	b.WriteString(roles(254))
	b.WriteString("  - {kind: cluster, anchor: {class: a}, within: 1, role: r254, inside: {match: {class: a}, role: r255}}\n")
	if _, err := Parse([]byte(src+b.String()), "r.yml"); err == nil || !strings.Contains(err.Error(), "more than 255 roles") {
		t.Errorf("256 roles: %v", err)
	}
}

// A span_between rule must assign something, by any one of its three parts; a note's
// every placeholder is checked, not only its first.
func TestRulesRefuseEmptyParts(t *testing.T) {
	t.Parallel()
	src := "version: 1\nclasses:\n  - {name: a, pattern: '^A'}\n  - {name: c, pattern: '^C'}\nroles:\n"
	for _, c := range []struct{ name, rule, want string }{
		{"assign only", "  - {kind: span_between, anchor: {class: c}, bounds: {class: a}, assign: [{match: {class: c}, role: x}]}\n", ""},
		{"from_last only", "  - {kind: span_between, anchor: {class: c}, bounds: {class: a}, from_last: {match: {class: c}, role: x}}\n", ""},
		{"nothing", "  - {kind: span_between, anchor: {class: c}, bounds: {class: a}}\n", "span_between assigns nothing: give from_last, assign or rest"},
	} {
		_, err := Parse([]byte(src+c.rule), "r.yml")
		if (c.want == "" && err != nil) || (c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want))) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	base := string(DefaultRulesYAML())
	const note = "        text: greedy argmax dispatches neither sampler kernel\n"
	if !strings.Contains(base, note) {
		t.Fatal("the shipped rules changed shape")
	}
	bad := strings.Replace(base, note, "        text: '{model_type} runs {nonsense}'\n", 1)
	if _, err := Parse([]byte(bad), "r.yml"); err == nil || !strings.Contains(err.Error(), "unknown placeholder {nonsense}") {
		t.Errorf("a note's second placeholder unknown: %v", err)
	}
}

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
