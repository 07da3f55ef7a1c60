package attrib

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
)

func TestDefaultRulesFollowTheSpec(t *testing.T) {
	t.Parallel()
	r := Default()
	want := "gather_qmv gather_mm qmv qmm gemm rms_norm layer_norm rope sdpa softmax logsumexp arg_reduce scan sort random conv reduce gather_scatter copy binary ternary unary dequantize compiled other"
	if got := strings.Join(r.ClassNames(), " "); got != want {
		t.Errorf("classes\n got %s\nwant %s", got, want)
	}
	var ids []string
	for _, u := range r.Units() {
		ids = append(ids, u.ID)
	}
	if got := strings.Join(ids, " "); got != "2063 2064 2065 2067 2068" {
		t.Errorf("units %s", got)
	}
	ov := r.Overrides()
	if len(ov) != 1 || ov[0].Unit != "2068" || ov[0].Action != ActionBefore || ov[0].Other != "2063" || !strings.Contains(ov[0].Reason, "batched serving") {
		t.Errorf("overrides %+v", ov)
	}
	// The embedded file is what DefaultRulesYAML hands out, and it parses the same.
	again, err := Parse(DefaultRulesYAML(), "copy.yml")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(again.RoleNames(), " ") != strings.Join(r.RoleNames(), " ") {
		t.Error("DefaultRulesYAML parses to other roles")
	}
}

func TestLoadReadsAFileAndNamesItInErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(good, DefaultRulesYAML(), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := Load(good); err != nil || r.Name() != good {
		t.Fatalf("Load: %v", err)
	}
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("version: 1\nclasses:\n  - {name: qmv, pattern: '('}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(bad)
	if err == nil || !strings.HasPrefix(err.Error(), bad+":3: classes.0.pattern: not a Go regular expression") {
		t.Errorf("Load(bad) = %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yml")); err == nil || !strings.Contains(err.Error(), "reading rules") {
		t.Errorf("Load(missing) = %v", err)
	}
}

const baseRules = `version: 1
classes:
  - {name: qmv, pattern: 'qmv'}
  - {name: rope, pattern: 'rope'}
roles:
  - kind: match
    match: {class: rope}
    role: rope_append
units:
  - id: "1"
    port: fused rope
    roles: [rope_append]
    reach:
      default: [{model_type: [llama]}]
    notes:
      - text: fine
`

// Every mistake is reported with the file, the line and the path of the value.
func TestParseErrorsPointAtTheLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, old, new, want string
	}{
		{"unknown top-level key", "version: 1\n", "version: 1\nbogus: 2\n", `r.yml:2: unknown key "bogus"`},
		{"version", "version: 1", "version: 2", "r.yml:1: version: version 2 is not supported"},
		{"bad regexp", "pattern: 'qmv'", "pattern: 'q(mv'", "r.yml:3: classes.0.pattern: not a Go regular expression"},
		{"class other", "name: rope,", "name: other,", `r.yml:4: classes.1.name: "other" is the class`},
		{"duplicate class", "name: rope,", "name: qmv,", `r.yml:4: classes.1.name: class "qmv" is declared twice`},
		{"unknown kind", "kind: match", "kind: matches", `r.yml:6: roles.0.kind: unknown kind "matches"`},
		{"key of another kind", "    role: rope_append\n", "    role: rope_append\n    within: 3\n", "r.yml:9: roles.0.within: within does not apply to kind match"},
		{"unknown class", "match: {class: rope}", "match: {class: ropes}", `r.yml:7: roles.0.match: unknown class "ropes"`},
		{"selector key", "match: {class: rope}", "match: {klass: rope}", `r.yml:7: unknown key "klass" in a selector`},
		{"empty selector", "match: {class: rope}", "match: {ignore_case: true}", "r.yml:7: an empty selector matches everything"},
		{"missing role", "    role: rope_append\n", "", "r.yml:6: roles.0.role: match: give the role to assign"},
		{"unattributed role", "    role: rope_append\n", "    role: unattributed\n", `r.yml:8: roles.0.role: "unattributed" is what no rule claims`},
		{"bad role name", "    role: rope_append\n", "    role: Rope-Append\n", `r.yml:8: roles.0.role: role name "Rope-Append"`},
		{"unit role no rule assigns", "roles: [rope_append]", "roles: [rope_apend]", `r.yml:12: units.0.roles.0: no rule under roles: assigns "rope_apend"`},
		{"unit without port", "    port: fused rope\n", "", "r.yml:10: units.0.port: unit 1: say what the port is"},
		{"duplicate unit", "      - text: fine\n", "      - text: fine\n  - id: \"1\"\n    port: again\n    roles: [rope_append]\n", `r.yml:17: units.1.id: unit "1" is defined twice`},
		{"fraction out of range", "    reach:\n", "    recoverable:\n      rope_append: {fraction: 1.5}\n    reach:\n", "r.yml:14: units.0.recoverable.rope_append: give fraction"},
		{"fraction without reason", "    reach:\n", "    recoverable:\n      rope_append: {fraction: 0.5}\n    reach:\n", "r.yml:14: units.0.recoverable.rope_append: say why"},
		{"fraction of a foreign role", "    reach:\n", "    recoverable:\n      ssm_step: {fraction: 1}\n    reach:\n", `units.0.recoverable.ssm_step: role "ssm_step" is not one of the unit's roles`},
		{"replacement with both forms", "    reach:\n", "    replacement: {fraction: 0.3, kernel: fused_rope, reason: r}\n    reach:\n", "r.yml:13: units.0.replacement: unit 1: give fraction or kernel, not both"},
		{"replacement with neither", "    reach:\n", "    replacement: {reason: r}\n    reach:\n", "r.yml:13: units.0.replacement: unit 1: give fraction (of the kernel time the port removes) or kernel"},
		{"replacement fraction out of range", "    reach:\n", "    replacement: {fraction: 1.5, reason: r}\n    reach:\n", "r.yml:13: units.0.replacement.fraction: give fraction: a number from 0 to 1"},
		{"replacement fraction NaN", "    reach:\n", "    replacement: {fraction: .nan, reason: r}\n    reach:\n", "r.yml:13: units.0.replacement.fraction: give fraction"},
		{"replacement fraction without reason", "    reach:\n", "    replacement:\n      fraction: 0.35\n    reach:\n", "r.yml:13: units.0.replacement: unit 1: say where the fraction comes from"},
		{"replacement kernel not a pattern", "    reach:\n", "    replacement: {kernel: 'fused_rope('}\n    reach:\n", "r.yml:13: units.0.replacement.kernel: not a Go regular expression"},
		{"replacement unknown key", "    reach:\n", "    replacement:\n      kernel: fused_rope\n      cost: 2\n    reach:\n", `r.yml:15: unknown key "cost"`},
		{"replacement not a mapping", "    reach:\n", "    replacement: 0.35\n    reach:\n", "r.yml:13: cannot unmarshal"},
		{"sampling", "{model_type: [llama]}", "{sampling: warm}", `r.yml:14: units.0.reach.default.0.sampling: sampling "warm": want greedy or sampled`},
		{"reach role not the unit's", "{model_type: [llama]}", "{roles: [ssm_step]}", `units.0.reach.default.0.roles: role "ssm_step" is not one of the unit's roles`},
		{"empty model list", "{model_type: [llama]}", "{model_type: []}", "units.0.reach.default.0.model_type: an empty list matches no model"},
		{"bad not", "{model_type: [llama]}", "{model_type: {none: [llama]}}", "r.yml:14: want a list of names or {not: [names]}"},
		{"note placeholder", "text: fine", "text: '{model} is fine'", "r.yml:16: units.0.notes.0.text: unknown placeholder {model}"},
		{"note with roles", "      - text: fine\n", "      - text: fine\n        when: {roles: [rope_append]}\n", "units.0.notes.0.when.roles: roles belong in a reach condition"},
		{"override unit", "      - text: fine\n", "      - text: fine\nranking:\n  - {unit: \"9\", action: pin, reason: r}\n", `r.yml:18: ranking.0.unit: no unit "9"`},
		{"override action", "      - text: fine\n", "      - text: fine\nranking:\n  - {unit: \"1\", action: top, reason: r}\n", `r.yml:18: ranking.0.action: action "top": want pin, before or after`},
		{"override reason", "      - text: fine\n", "      - text: fine\nranking:\n  - {unit: \"1\", action: pin}\n", "r.yml:18: ranking.0.reason: an override must say why"},
		{"override before itself", "      - text: fine\n", "      - text: fine\nranking:\n  - {unit: \"1\", action: before, other: \"1\", reason: r}\n", "ranking.0.other: a unit cannot move before itself"},
		{"wrong type", "    port: fused rope\n", "    port: fused rope\n    epic_item: three\n", "r.yml:12: cannot unmarshal !!str `three` into int"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(baseRules, c.old) {
				t.Fatalf("base rules lack %q", c.old)
			}
			src := strings.Replace(baseRules, c.old, c.new, 1)
			_, err := Parse([]byte(src), "r.yml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v\nwant it to contain %q\nrules:\n%s", err, c.want, src)
			}
		})
	}
	if _, err := Parse([]byte(baseRules), "r.yml"); err != nil {
		t.Fatalf("base rules: %v", err)
	}
}

// A new model family and a new port are a rules edit: the same dispatches attribute
// differently once the target repo's rules say so.
func TestNewFamilyAndUnitThroughRulesAlone(t *testing.T) {
	t.Parallel()
	const kGDN = "void mlx::core::rocm::gated_delta_step_kernel<__half>(__half const*, __half*)"
	src := string(DefaultRulesYAML())
	edits := []struct{ old, new string }{
		// A class for the new kernel, before the generic ones.
		{"classes:\n", "classes:\n  - {name: gated_delta, pattern: 'gated_delta'}\n"},
		// A role for it, and a new Mamba2 family for the SSM port.
		{"roles:\n", "roles:\n  - kind: match\n    match: {class: gated_delta}\n    role: gdn_step\n"},
		{"&mamba2 [granitemoehybrid,", "&mamba2 [jamba, granitemoehybrid,"},
		// A new port unit reaching the new role for its family.
		{"\n# Ranking overrides", `
  - id: "2099"
    epic_item: 9
    port: gated delta net decode (gdn_step_kernel)
    roles: [gdn_step]
    reach:
      default:
        - model_type: [jamba]
    notes:
      - when: {model_type: [jamba]}
        text: jamba's linear-attention layers call gdn_step_kernel

# Ranking overrides`},
	}
	for _, e := range edits {
		if !strings.Contains(src, e.old) {
			t.Fatalf("default rules lack %q", e.old)
		}
		src = strings.Replace(src, e.old, e.new, 1)
	}
	extended, err := Parse([]byte(src), "extended.yml")
	if err != nil {
		t.Fatal(err)
	}
	ds := append([]disp{{kQmv, 100}}, names(kConv, kExp, kExp, kRms, kMul)...)
	ds = append(ds, disp{kQmv, 100}, disp{kGDN, 0}, disp{kGDN, 0}, disp{kQmv, 100})
	in := build(ds, false)
	in.ModelType = "jamba"

	before, err := Default().Attribute(in)
	if err != nil {
		t.Fatal(err)
	}
	after, err := extended.Attribute(in)
	if err != nil {
		t.Fatal(err)
	}
	gdn := indexOf(in.Names, kGDN)
	if before.Classes[gdn] != Other || after.Classes[gdn] != "gated_delta" {
		t.Errorf("class of the new kernel: %s before, %s after", before.Classes[gdn], after.Classes[gdn])
	}
	if strings.Join(before.KernelRoles[gdn], ";") != "" || strings.Join(after.KernelRoles[gdn], ";") != "gdn_step" {
		t.Errorf("roles of the new kernel: %q before, %q after", before.KernelRoles[gdn], after.KernelRoles[gdn])
	}
	if _, ok := before.Units.Get("2099"); ok {
		t.Error("the default rules know unit 2099")
	}
	u, ok := after.Units.Get("2099")
	if !ok || u.ReachedDefaultSharePct == 0 || u.Note != "jamba's linear-attention layers call gdn_step_kernel" {
		t.Errorf("unit 2099: %+v (present %v)", u, ok)
	}
	ssmBefore, _ := before.Units.Get("2067")
	ssmAfter, _ := after.Units.Get("2067")
	if ssmBefore.ReachedDefaultSharePct != 0 || ssmAfter.ReachedDefaultSharePct == 0 || ssmAfter.ReachedDefaultSharePct != ssmAfter.FallbackSharePct {
		t.Errorf("2067 on jamba: reached %v before, %v after (fallback %v)", ssmBefore.ReachedDefaultSharePct, ssmAfter.ReachedDefaultSharePct, ssmAfter.FallbackSharePct)
	}
	if ssmAfter.Note != "every Mamba2 layer's elementwise SSM step goes to ssm_update_kernel" {
		t.Errorf("2067 note on jamba: %q", ssmAfter.Note)
	}
	// The new role is listed among the known roles even where it does not occur.
	in.ModelType = "llama"
	plain := build(names(kQmv, kRms), false)
	res, err := extended.Attribute(plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.RoleDispatchesPerToken.Get("gdn_step"); !ok {
		t.Error("gdn_step missing from role_dispatches_per_token of a run without it")
	}
}

// A rule's `when` limits it to some runs.
func TestRuleWhenCondition(t *testing.T) {
	t.Parallel()
	src := strings.Replace(baseRules, "    role: rope_append\n", "    role: rope_append\n    when: {model_type: {not: [qwen3_moe]}}\n", 1)
	r, err := Parse([]byte(src), "r.yml")
	if err != nil {
		t.Fatal(err)
	}
	in := build(names(kRope, kQmv), false)
	for model, want := range map[string]string{"llama": "rope_append", "qwen3_moe": "-"} {
		in.ModelType = model
		got, _ := rolesOf(t, r, in)
		if got[0] != want {
			t.Errorf("%s: rope got %s, want %s", model, got[0], want)
		}
	}
}

// docs/rules.md shows the shipped default verbatim and documents every kind.
func TestRulesDocShowsTheDefault(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+string(DefaultRulesYAML())+"```\n") {
		t.Error("docs/rules.md does not hold the shipped default rules verbatim; paste runner/attrib/default_rules.yml into it")
	}
	for _, k := range kindNames() {
		if !strings.Contains(string(doc), "| `"+k+"` |") {
			t.Errorf("docs/rules.md lacks kind %s", k)
		}
	}
}

// A unit's replacement is a fraction of the kernel time its port removes, or a pattern
// of the fused kernel's name matched in any case; the shipped rules measure the
// kernels the epic names for each port and give none for paged attention.
func TestReplacementRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		yaml     string
		fraction float64
		pattern  string
		name     string // a kernel name the pattern must match
	}{
		{"{fraction: 0.35, reason: the fused kernel reads each input once}", 0.35, "", ""},
		{"{fraction: 0, reason: free}", 0, "", ""},
		{"{kernel: 'fused_rope_qk_append|fused_add'}", 0, "fused_rope_qk_append|fused_add", "void mlx::core::rocm::Fused_Rope_QK_Append_kernel<__half>"},
	} {
		src := strings.Replace(baseRules, "    reach:\n", "    replacement: "+c.yaml+"\n    reach:\n", 1)
		r, err := Parse([]byte(src), "r.yml")
		if err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		u, _ := r.Unit("1")
		rp := u.Replacement
		if rp == nil || rp.Fraction != c.fraction || rp.Pattern != c.pattern || (rp.Kernel == nil) != (c.pattern == "") {
			t.Fatalf("%s: replacement %+v", c.yaml, rp)
		}
		if rp.Kernel != nil && (!rp.Kernel.MatchString(c.name) || rp.Kernel.MatchString("void rope_kernel")) {
			t.Errorf("%s: pattern %s matches %q: %v, a plain rope kernel: %v", c.yaml, rp.Kernel, c.name, rp.Kernel.MatchString(c.name), rp.Kernel.MatchString("void rope_kernel"))
		}
	}
	r, _ := Parse([]byte(baseRules), "r.yml")
	if u, _ := r.Unit("1"); u.Replacement != nil {
		t.Errorf("a unit without replacement: %+v", u.Replacement)
	}
	want := map[string]string{"2063": "fused_add_rms_norm|fused_rope_qk_append", "2064": "gumbel_max_sample|rejection_sample",
		"2065": "moe_gateup|moe_down", "2067": "ssm_update_kernel", "2068": ""}
	for _, u := range Default().Units() {
		got := ""
		if u.Replacement != nil {
			got = u.Replacement.Pattern
			if u.Replacement.Kernel == nil {
				t.Errorf("%s: a fraction in the shipped rules, which no figure of the epic supports", u.ID)
			}
		}
		if got != want[u.ID] {
			t.Errorf("shipped unit %s: replacement kernel %q, want %q", u.ID, got, want[u.ID])
		}
	}
}

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
