package attrib

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/internal/yamlstrict"
)

// The kinds of role rules (docs/rules.md).
const (
	KindSpanAfterWidest = "span_after_widest"
	KindSpanBetween     = "span_between"
	KindCluster         = "cluster"
	KindFollowedBy      = "followed_by"
	KindPair            = "pair"
	KindMatch           = "match"
)

// Unattributed is the role of a dispatch that no rule claims.
const Unattributed = "unattributed"

// Other is the class of a kernel name that no class pattern matches.
const Other = "other"

// Ranking override actions.
const (
	ActionPin    = "pin"
	ActionBefore = "before"
	ActionAfter  = "after"
)

//go:embed default_rules.yml
var defaultRulesYAML []byte

// DefaultRulesYAML returns the shipped default rules file, for a target repo to copy.
func DefaultRulesYAML() []byte { return slices.Clone(defaultRulesYAML) }

// Rules is a parsed, validated rules file. It is immutable and safe for concurrent use.
type Rules struct {
	name      string
	classes   []class
	rules     []rule
	sels      []selector
	roleNames []string // role index -> name; 0 is Unattributed
	roleIndex map[string]uint8
	units     []Unit
	overrides []Override
}

type class struct {
	name string
	re   *regexp.Regexp
}

// selector is a compiled `sels`: a dispatch matches when any part does.
type selector []selPart

type selPart struct {
	classes  []bool // by class index; len(classes)+1 entries, the last one is Other
	anyClass bool
	names    []string
	notNames []string
	fold     bool
}

type rule struct {
	kind   string
	role   uint8
	when   *Condition
	widest int // selector indexes; -1 when absent
	until  int
	anchor int
	bounds int
	first  int
	then   int
	second int
	match  int
	within int

	precededBy []int
	fromLast   *sub
	assign     []sub
	rest       uint8
	anywhere   *sub
	inside     *sub
	after      *sub
	elseRole   uint8
}

type sub struct {
	match, until int
	role         uint8
}

// Unit is a port unit: the roles its port replaces and which of them the target
// repo's code routes to it.
type Unit struct {
	ID       string
	EpicItem int
	Port     string
	Roles    []string
	// Fractions holds the roles whose kernel time a port cannot fully recover;
	// a role not in it recovers all of its time.
	Fractions map[string]Fraction
	// Replacement is the expected cost of the port's fused kernel; nil when the rules
	// do not give one (the net recoverable time is then the gross).
	Replacement *Replacement
	Default     []Condition
	OptIn       []Condition
	Notes       []Note
}

// Fraction is the share of a role's kernel time a port can recover, with the reason.
type Fraction struct {
	Value  float64
	Reason string
}

// Replacement is the expected cost of a port's fused kernel, which a unit's recoverable
// time is taken net of (docs/analysis.md §7). Exactly one form is set: Kernel, a
// pattern of the fused kernel's name, costs the time that kernel takes per token in
// the runs where it already runs; else Fraction of the kernel time the port removes
// (its reached roles' kernel time times their recoverable fractions).
type Replacement struct {
	Fraction float64
	Kernel   *regexp.Regexp // compiled case-insensitively from Pattern
	Pattern  string
	Reason   string
}

// Condition selects runs (and, in reach, the roles reached in them). A zero field
// matches every run.
type Condition struct {
	ModelType   NameSet
	RopeScaling NameSet
	Sampling    string   // "", "greedy" or "sampled"
	Roles       []string // reach only; empty means all of the unit's roles
}

// NameSet matches a value in Names, or, with Not, every value but those. An empty
// set without Not matches everything.
type NameSet struct {
	Names []string
	Not   bool
}

// Note is one clause of a unit's reach note, shown when its condition holds.
type Note struct {
	When *Condition
	Text string
}

// Override is a maintainer's move of a unit in the ranked order.
type Override struct {
	Unit     string
	Action   string // pin, before or after
	Other    string // before/after: the unit to stand next to
	Position int    // pin: 1-based place
	Reason   string
}

// Run is what reach conditions test about a run.
type Run struct {
	ModelType   string
	RopeScaling string // rope_scaling type; "" or "none" when the model has none
	// RopeScalingUnknown is set when the run's record does not say (summaries written
	// by the target repo's own analyzer): a condition on rope_scaling then fails.
	RopeScalingUnknown bool
	Sampled            bool // temperature > 0
}

var (
	defaultOnce  sync.Once
	defaultRules *Rules
)

// Default returns the shipped rules (docs/analysis.md §4-§7).
func Default() *Rules {
	defaultOnce.Do(func() {
		r, err := Parse(defaultRulesYAML, "default_rules.yml")
		if err != nil {
			panic("attrib: the shipped default rules do not parse: " + err.Error())
		}
		defaultRules = r
	})
	return defaultRules
}

// Load reads and parses a rules file.
func Load(path string) (*Rules, error) {
	data, err := infile.ReadFile(path, maxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("reading rules: %w", err)
	}
	return Parse(data, path)
}

// Name is the file name the rules were parsed from.
func (r *Rules) Name() string { return r.name }

// Units returns the port units in file order.
func (r *Rules) Units() []Unit { return slices.Clone(r.units) }

// Unit returns the unit with the id.
func (r *Rules) Unit(id string) (Unit, bool) {
	for _, u := range r.units {
		if u.ID == id {
			return u, true
		}
	}
	return Unit{}, false
}

// Overrides returns the ranking overrides in file order.
func (r *Rules) Overrides() []Override { return slices.Clone(r.overrides) }

// RoleNames returns every role the rules know, "unattributed" first.
func (r *Rules) RoleNames() []string { return slices.Clone(r.roleNames) }

// ClassNames returns the class names in match order, then "other".
func (r *Rules) ClassNames() []string {
	out := make([]string, 0, len(r.classes)+1)
	for _, c := range r.classes {
		out = append(out, c.name)
	}
	return append(out, Other)
}

// Classify returns the class of a kernel name: the first class whose pattern matches.
func (r *Rules) Classify(name string) string {
	return r.classNameOf(r.classify(name))
}

func (r *Rules) classify(name string) int {
	for i, c := range r.classes {
		if c.re.MatchString(name) {
			return i
		}
	}
	return len(r.classes)
}

func (r *Rules) classNameOf(i int) string {
	if i < len(r.classes) {
		return r.classes[i].name
	}
	return Other
}

var roleNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

var placeholderRE = regexp.MustCompile(`\{[^{}]*\}`)

var placeholders = map[string]bool{"{model_type}": true, "{rope_scaling}": true, "{sampling}": true}

// Parse parses and validates a rules file; name is used in error messages
// (`name:LINE: path: message`).
func Parse(data []byte, name string) (*Rules, error) {
	var f fileYAML
	doc, err := yamlstrict.Decode(data, name, &f)
	if err != nil {
		return nil, err
	}
	p := &parser{doc: doc, r: &Rules{name: name, roleIndex: map[string]uint8{}}}
	if err := p.parse(&f); err != nil {
		return nil, err
	}
	return p.r, nil
}

type parser struct {
	doc *yamlstrict.Doc
	r   *Rules
}

// maxEntries bounds each list of a rules file (the shipped rules have a few dozen).
const maxEntries = 255

// maxFileBytes bounds a rules file (the shipped one is 8 KiB).
const maxFileBytes = 1 << 20

// q quotes a value from the file for a message: cut, control characters escaped.
func q(s string) string { return safetext.Quote(s) }

func (p *parser) errorf(path, format string, a ...any) error {
	return p.doc.Errorf(path, format, a...)
}

func (p *parser) parse(f *fileYAML) error {
	if f.Version != 1 {
		return p.errorf("version", "version %d is not supported: this perfbot reads version 1 (add `version: 1`)", f.Version)
	}
	// Every kernel name meets every class and rule: the lists stay small.
	for _, l := range []struct {
		key string
		n   int
	}{{"classes", len(f.Classes)}, {"roles", len(f.Roles)}, {"units", len(f.Units)}, {"ranking", len(f.Ranking)}} {
		if l.n > maxEntries {
			return p.errorf(l.key, "%d entries, more than the %d a rules file can have", l.n, maxEntries)
		}
	}
	p.r.roleNames = []string{Unattributed}
	p.r.roleIndex[Unattributed] = 0
	if err := p.parseClasses(f.Classes); err != nil {
		return err
	}
	for i := range f.Roles {
		if err := p.parseRule(fmt.Sprintf("roles.%d", i), &f.Roles[i]); err != nil {
			return err
		}
	}
	ids := map[string]bool{}
	for i := range f.Units {
		u, err := p.parseUnit(fmt.Sprintf("units.%d", i), &f.Units[i])
		if err != nil {
			return err
		}
		if ids[u.ID] {
			return p.errorf(fmt.Sprintf("units.%d.id", i), "unit %s is defined twice", q(u.ID))
		}
		ids[u.ID] = true
		p.r.units = append(p.r.units, u)
	}
	seen := map[string]bool{}
	for i, o := range f.Ranking {
		path := fmt.Sprintf("ranking.%d", i)
		ov, err := p.parseOverride(path, o, ids)
		if err != nil {
			return err
		}
		if seen[ov.Unit] {
			return p.errorf(path+".unit", "unit %s already has an override; keep one per unit", q(ov.Unit))
		}
		seen[ov.Unit] = true
		p.r.overrides = append(p.r.overrides, ov)
	}
	return nil
}

func (p *parser) parseClasses(cs []classYAML) error {
	seen := map[string]bool{}
	for i, c := range cs {
		path := fmt.Sprintf("classes.%d", i)
		if !roleNameRE.MatchString(c.Name) {
			return p.errorf(path+".name", "class name %s: use lower-case letters, digits and _", q(c.Name))
		}
		if c.Name == Other {
			return p.errorf(path+".name", "%s is the class of names no pattern matches; do not declare it", q(Other))
		}
		if seen[c.Name] {
			return p.errorf(path+".name", "class %s is declared twice", q(c.Name))
		}
		seen[c.Name] = true
		if c.Pattern == "" {
			return p.errorf(path+".pattern", "class %s has no pattern", q(c.Name))
		}
		src := c.Pattern
		if !c.CaseSensitive {
			src = "(?i)" + src
		}
		re, err := regexp.Compile(src)
		if err != nil {
			return p.errorf(path+".pattern", "not a Go regular expression: %v", err)
		}
		p.r.classes = append(p.r.classes, class{name: c.Name, re: re})
	}
	return nil
}

// role registers a role name and returns its index.
func (p *parser) role(path, name string) (uint8, error) {
	if name == Unattributed {
		return 0, p.errorf(path, "%s is what no rule claims; a rule cannot assign it", q(Unattributed))
	}
	if !roleNameRE.MatchString(name) {
		return 0, p.errorf(path, "role name %s: use lower-case letters, digits and _", q(name))
	}
	if i, ok := p.r.roleIndex[name]; ok {
		return i, nil
	}
	if len(p.r.roleNames) > 255 {
		return 0, p.errorf(path, "more than 255 roles")
	}
	i := uint8(len(p.r.roleNames))
	p.r.roleNames = append(p.r.roleNames, name)
	p.r.roleIndex[name] = i
	return i, nil
}

// needRole registers a required role.
func (p *parser) needRole(path, name, what string) (uint8, error) {
	if name == "" {
		return 0, p.errorf(path, "%s: give the role to assign", what)
	}
	return p.role(path, name)
}

// sel compiles a selector and returns its index; -1 for an absent optional one.
func (p *parser) sel(path string, s sels, required bool) (int, error) {
	if len(s) == 0 {
		if required {
			return -1, p.errorf(path, "missing: give a selector like {class: qmv} or {name: copy_gg}")
		}
		return -1, nil
	}
	nc := len(p.r.classes) + 1
	var out selector
	for _, part := range s {
		sp := selPart{anyClass: len(part.Class) == 0, fold: part.IgnoreCase}
		if !sp.anyClass {
			sp.classes = make([]bool, nc)
			for _, c := range part.Class {
				ci := -1
				if c == Other {
					ci = nc - 1
				}
				for i, k := range p.r.classes {
					if k.name == c {
						ci = i
					}
				}
				if ci < 0 {
					return -1, p.errorf(path, "unknown class %s (declared: %s)", q(c), strings.Join(p.r.ClassNames(), ", "))
				}
				sp.classes[ci] = true
			}
		}
		for _, n := range part.Name {
			if n == "" {
				return -1, p.errorf(path, "an empty name matches every kernel; remove it")
			}
		}
		sp.names, sp.notNames = part.Name, part.NotName
		if sp.fold {
			sp.names = lowerAll(sp.names)
			sp.notNames = lowerAll(sp.notNames)
		}
		out = append(out, sp)
	}
	p.r.sels = append(p.r.sels, out)
	return len(p.r.sels) - 1, nil
}

func lowerAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strings.ToLower(v)
	}
	return out
}

func (p *parser) sub(path string, s *subYAML, untilAllowed bool) (*sub, error) {
	if s == nil {
		return nil, nil
	}
	m, err := p.sel(path+".match", s.Match, true)
	if err != nil {
		return nil, err
	}
	if !untilAllowed && len(s.Until) > 0 {
		return nil, p.errorf(path+".until", "until applies only to a cluster's after")
	}
	u, err := p.sel(path+".until", s.Until, false)
	if err != nil {
		return nil, err
	}
	role, err := p.needRole(path+".role", s.Role, "role")
	if err != nil {
		return nil, err
	}
	return &sub{match: m, until: u, role: role}, nil
}

func (p *parser) parseRule(path string, y *ruleYAML) error {
	allowed, ok := ruleKeys[y.Kind]
	if !ok {
		return p.errorf(path+".kind", "unknown kind %s (want %s)", q(y.Kind), strings.Join(kindNames(), ", "))
	}
	for _, k := range keys(p.doc.Root, path) {
		if k != "kind" && k != "role" && k != "when" && !slices.Contains(allowed, k) {
			return p.errorf(path+"."+k, "%s does not apply to kind %s (it takes %s)", k, y.Kind, strings.Join(allowed, ", "))
		}
	}
	ru := rule{kind: y.Kind, widest: -1, until: -1, anchor: -1, bounds: -1, first: -1, then: -1, second: -1, match: -1}
	var err error
	if y.When != nil {
		if ru.when, err = p.cond(path+".when", *y.When, nil); err != nil {
			return err
		}
	}
	if y.Kind == KindSpanBetween {
		if y.Role != "" {
			return p.errorf(path+".role", "span_between assigns with from_last, assign and rest, not role")
		}
	} else if ru.role, err = p.needRole(path+".role", y.Role, y.Kind); err != nil {
		return err
	}
	switch y.Kind {
	case KindSpanAfterWidest:
		if ru.widest, err = p.sel(path+".widest", y.Widest, true); err != nil {
			return err
		}
		ru.until, err = p.sel(path+".until", y.Until, true)
	case KindSpanBetween:
		if ru.anchor, err = p.sel(path+".anchor", y.Anchor, true); err != nil {
			return err
		}
		if ru.bounds, err = p.sel(path+".bounds", y.Bounds, true); err != nil {
			return err
		}
		if ru.fromLast, err = p.sub(path+".from_last", y.FromLast, false); err != nil {
			return err
		}
		for i := range y.Assign {
			s, err := p.sub(fmt.Sprintf("%s.assign.%d", path, i), &y.Assign[i], false)
			if err != nil {
				return err
			}
			ru.assign = append(ru.assign, *s)
		}
		if y.Rest != "" {
			if ru.rest, err = p.role(path+".rest", y.Rest); err != nil {
				return err
			}
		}
		if ru.fromLast == nil && len(ru.assign) == 0 && y.Rest == "" {
			return p.errorf(path, "span_between assigns nothing: give from_last, assign or rest")
		}
	case KindCluster:
		if ru.anchor, err = p.sel(path+".anchor", y.Anchor, true); err != nil {
			return err
		}
		if y.Within < 1 {
			return p.errorf(path+".within", "within must be at least 1 (positions between two anchors of one cluster)")
		}
		ru.within = y.Within
		if ru.anywhere, err = p.sub(path+".anywhere", y.Anywhere, false); err != nil {
			return err
		}
		if ru.inside, err = p.sub(path+".inside", y.Inside, false); err != nil {
			return err
		}
		ru.after, err = p.sub(path+".after", y.After, true)
	case KindFollowedBy:
		if ru.first, err = p.sel(path+".first", y.First, true); err != nil {
			return err
		}
		ru.then, err = p.sel(path+".then", y.Then, true)
	case KindPair:
		if ru.first, err = p.sel(path+".first", y.First, true); err != nil {
			return err
		}
		if ru.second, err = p.sel(path+".second", y.Second, true); err != nil {
			return err
		}
		for i, s := range y.PrecededBy {
			k, err := p.sel(fmt.Sprintf("%s.preceded_by.%d", path, i), s, true)
			if err != nil {
				return err
			}
			ru.precededBy = append(ru.precededBy, k)
		}
		if y.ElseRole != "" {
			if len(y.PrecededBy) == 0 {
				return p.errorf(path+".else_role", "else_role needs preceded_by (without it every pair gets role)")
			}
			ru.elseRole, err = p.role(path+".else_role", y.ElseRole)
		}
	case KindMatch:
		ru.match, err = p.sel(path+".match", y.Match, true)
	}
	if err != nil {
		return err
	}
	p.r.rules = append(p.r.rules, ru)
	return nil
}

func kindNames() []string {
	return []string{KindSpanAfterWidest, KindSpanBetween, KindCluster, KindFollowedBy, KindPair, KindMatch}
}

// cond validates a condition; unitRoles is nil where roles are not allowed.
func (p *parser) cond(path string, y condYAML, unitRoles []string) (*Condition, error) {
	c := &Condition{Sampling: y.Sampling}
	if y.ModelType != nil {
		c.ModelType = NameSet(*y.ModelType)
		if len(c.ModelType.Names) == 0 {
			return nil, p.errorf(path+".model_type", "an empty list matches no model; remove the key to match every model")
		}
	}
	if y.RopeScaling != nil {
		c.RopeScaling = NameSet(*y.RopeScaling)
		if len(c.RopeScaling.Names) == 0 {
			return nil, p.errorf(path+".rope_scaling", "an empty list matches no model; remove the key to match every model")
		}
	}
	switch y.Sampling {
	case "", "greedy", "sampled":
	default:
		return nil, p.errorf(path+".sampling", "sampling %s: want greedy or sampled", q(y.Sampling))
	}
	if len(y.Roles) > 0 {
		if unitRoles == nil {
			return nil, p.errorf(path+".roles", "roles belong in a reach condition, not here")
		}
		for _, r := range y.Roles {
			if !slices.Contains(unitRoles, r) {
				return nil, p.errorf(path+".roles", "role %s is not one of the unit's roles (%s)", q(r), strings.Join(unitRoles, ", "))
			}
		}
		c.Roles = y.Roles
	}
	return c, nil
}

func (p *parser) parseUnit(path string, y *unitYAML) (Unit, error) {
	u := Unit{ID: y.ID, EpicItem: y.EpicItem, Port: y.Port, Roles: y.Roles}
	if u.ID == "" {
		return u, p.errorf(path+".id", "a unit needs an id (the issue number of its port)")
	}
	if u.Port == "" {
		return u, p.errorf(path+".port", "unit %s: say what the port is", u.ID)
	}
	if len(u.Roles) == 0 {
		return u, p.errorf(path+".roles", "unit %s: list the roles its port replaces", u.ID)
	}
	listed := make(map[string]bool, len(u.Roles))
	for i, r := range u.Roles {
		if _, ok := p.r.roleIndex[r]; !ok || r == Unattributed {
			return u, p.errorf(fmt.Sprintf("%s.roles.%d", path, i), "no rule under roles: assigns %s; add one or fix the name", q(r))
		}
		if listed[r] {
			return u, p.errorf(path+".roles", "role %s is listed twice", q(r))
		}
		listed[r] = true
	}
	for role, fr := range y.Recoverable {
		fp := path + ".recoverable." + role
		if !slices.Contains(u.Roles, role) {
			return u, p.errorf(fp, "role %s is not one of the unit's roles (%s)", q(role), strings.Join(u.Roles, ", "))
		}
		// "Not inside" so that .nan, which fails every comparison, is refused.
		if fr.Fraction == nil || !(*fr.Fraction >= 0 && *fr.Fraction <= 1) {
			return u, p.errorf(fp, "give fraction: a number from 0 to 1")
		}
		if *fr.Fraction < 1 && fr.Reason == "" {
			return u, p.errorf(fp, "say why the port cannot recover all of %s (reason:)", role)
		}
		if u.Fractions == nil {
			u.Fractions = map[string]Fraction{}
		}
		u.Fractions[role] = Fraction{Value: *fr.Fraction, Reason: fr.Reason}
	}
	if y.Replacement != nil {
		r, err := p.parseReplacement(path+".replacement", u.ID, y.Replacement)
		if err != nil {
			return u, err
		}
		u.Replacement = r
	}
	for i, c := range y.Reach.Default {
		cc, err := p.cond(fmt.Sprintf("%s.reach.default.%d", path, i), c, u.Roles)
		if err != nil {
			return u, err
		}
		u.Default = append(u.Default, *cc)
	}
	for i, c := range y.Reach.OptIn {
		cc, err := p.cond(fmt.Sprintf("%s.reach.opt_in.%d", path, i), c, u.Roles)
		if err != nil {
			return u, err
		}
		u.OptIn = append(u.OptIn, *cc)
	}
	for i, n := range y.Notes {
		np := fmt.Sprintf("%s.notes.%d", path, i)
		if strings.TrimSpace(n.Text) == "" {
			return u, p.errorf(np+".text", "a note needs text")
		}
		for _, ph := range placeholderRE.FindAllString(n.Text, -1) {
			if !placeholders[ph] {
				return u, p.errorf(np+".text", "unknown placeholder %s (want {model_type}, {rope_scaling} or {sampling})", ph)
			}
		}
		note := Note{Text: n.Text}
		if n.When != nil {
			cc, err := p.cond(np+".when", *n.When, nil)
			if err != nil {
				return u, err
			}
			note.When = cc
		}
		u.Notes = append(u.Notes, note)
	}
	return u, nil
}

// maxKernelPattern bounds a replacement's kernel pattern, which meets every kernel
// name of every run ranked.
const maxKernelPattern = 1024

func (p *parser) parseReplacement(path, id string, y *replacementYAML) (*Replacement, error) {
	switch {
	case y.Fraction != nil && y.Kernel != "":
		return nil, p.errorf(path, "unit %s: give fraction or kernel, not both", id)
	case y.Fraction != nil:
		// "Not inside" so that .nan, which fails every comparison, is refused.
		if !(*y.Fraction >= 0 && *y.Fraction <= 1) {
			return nil, p.errorf(path+".fraction", "give fraction: a number from 0 to 1 (the fused kernel's cost as a part of the kernel time the port removes)")
		}
		if strings.TrimSpace(y.Reason) == "" {
			return nil, p.errorf(path, "unit %s: say where the fraction comes from (reason:)", id)
		}
		return &Replacement{Fraction: *y.Fraction, Reason: y.Reason}, nil
	case y.Kernel != "":
		if len(y.Kernel) > maxKernelPattern {
			return nil, p.errorf(path+".kernel", "the pattern is %d bytes long, more than %d", len(y.Kernel), maxKernelPattern)
		}
		re, err := regexp.Compile("(?i)" + y.Kernel)
		if err != nil {
			return nil, p.errorf(path+".kernel", "not a Go regular expression: %v", err)
		}
		return &Replacement{Kernel: re, Pattern: y.Kernel, Reason: y.Reason}, nil
	}
	return nil, p.errorf(path, "unit %s: give fraction (of the kernel time the port removes) or kernel (a pattern of the fused kernel's name, measured where it runs)", id)
}

func (p *parser) parseOverride(path string, y overrideYAML, ids map[string]bool) (Override, error) {
	o := Override(y)
	if !ids[o.Unit] {
		return o, p.errorf(path+".unit", "no unit %s in units:", q(o.Unit))
	}
	if strings.TrimSpace(o.Reason) == "" {
		return o, p.errorf(path+".reason", "an override must say why (it is printed beside the ranking)")
	}
	switch o.Action {
	case ActionPin:
		if o.Other != "" {
			return o, p.errorf(path+".other", "pin takes a position, not another unit")
		}
		if o.Position == 0 {
			o.Position = 1
		}
		if o.Position < 1 {
			return o, p.errorf(path+".position", "position counts from 1")
		}
	case ActionBefore, ActionAfter:
		if o.Position != 0 {
			return o, p.errorf(path+".position", "%s takes another unit, not a position", o.Action)
		}
		if !ids[o.Other] {
			return o, p.errorf(path+".other", "%s needs another unit from units: (got %s)", o.Action, q(o.Other))
		}
		if o.Other == o.Unit {
			return o, p.errorf(path+".other", "a unit cannot move %s itself", o.Action)
		}
	default:
		return o, p.errorf(path+".action", "action %s: want pin, before or after", q(o.Action))
	}
	return o, nil
}
