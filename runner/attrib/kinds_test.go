package attrib

import (
	"strings"
	"testing"
)

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
