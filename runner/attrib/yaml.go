package attrib

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// The YAML shapes of the rules file. They are decoded strictly (unknown keys are
// errors); the few that accept two spellings check their keys themselves, since a
// custom unmarshaler does not inherit the strict decoder's settings.

type fileYAML struct {
	Version int            `yaml:"version"`
	Classes []classYAML    `yaml:"classes"`
	Roles   []ruleYAML     `yaml:"roles"`
	Units   []unitYAML     `yaml:"units"`
	Ranking []overrideYAML `yaml:"ranking"`
}

type classYAML struct {
	Name          string `yaml:"name"`
	Pattern       string `yaml:"pattern"`
	CaseSensitive bool   `yaml:"case_sensitive"`
}

// ruleYAML is one entry of `roles`: the union of every kind's keys. Which keys a kind
// takes is checked against the document (ruleKeys).
type ruleYAML struct {
	Kind string    `yaml:"kind"`
	Role string    `yaml:"role"`
	When *condYAML `yaml:"when"`

	Widest     sels      `yaml:"widest"`
	Until      sels      `yaml:"until"`
	Anchor     sels      `yaml:"anchor"`
	Bounds     sels      `yaml:"bounds"`
	FromLast   *subYAML  `yaml:"from_last"`
	Assign     []subYAML `yaml:"assign"`
	Rest       string    `yaml:"rest"`
	Within     int       `yaml:"within"`
	Anywhere   *subYAML  `yaml:"anywhere"`
	Inside     *subYAML  `yaml:"inside"`
	After      *subYAML  `yaml:"after"`
	First      sels      `yaml:"first"`
	Then       sels      `yaml:"then"`
	Second     sels      `yaml:"second"`
	PrecededBy []sels    `yaml:"preceded_by"`
	ElseRole   string    `yaml:"else_role"`
	Match      sels      `yaml:"match"`
}

// subYAML is a sub-assignment inside a span or cluster rule.
type subYAML struct {
	Match sels   `yaml:"match"`
	Until sels   `yaml:"until"`
	Role  string `yaml:"role"`
}

// ruleKeys lists the keys each kind takes besides kind, role and when.
var ruleKeys = map[string][]string{
	KindSpanAfterWidest: {"widest", "until"},
	KindSpanBetween:     {"anchor", "bounds", "from_last", "assign", "rest"},
	KindCluster:         {"anchor", "within", "anywhere", "inside", "after"},
	KindFollowedBy:      {"first", "then"},
	KindPair:            {"first", "second", "preceded_by", "else_role"},
	KindMatch:           {"match"},
}

type unitYAML struct {
	ID          string                  `yaml:"id"`
	EpicItem    int                     `yaml:"epic_item"`
	Port        string                  `yaml:"port"`
	Roles       strList                 `yaml:"roles"`
	Recoverable map[string]fractionYAML `yaml:"recoverable"`
	Replacement *replacementYAML        `yaml:"replacement"`
	Reach       reachYAML               `yaml:"reach"`
	Notes       []noteYAML              `yaml:"notes"`
}

type fractionYAML struct {
	Fraction *float64 `yaml:"fraction"`
	Reason   string   `yaml:"reason"`
}

// replacementYAML is the expected cost of a port's fused kernel: a fraction of the
// kernel time the port removes, or the time the kernel takes where it already runs.
type replacementYAML struct {
	Fraction *float64 `yaml:"fraction"`
	Kernel   string   `yaml:"kernel"`
	Reason   string   `yaml:"reason"`
}

type reachYAML struct {
	Default []condYAML `yaml:"default"`
	OptIn   []condYAML `yaml:"opt_in"`
}

// condYAML is a reach condition (with roles) or a note/rule condition (without).
type condYAML struct {
	ModelType   *nameSet `yaml:"model_type"`
	RopeScaling *nameSet `yaml:"rope_scaling"`
	Sampling    string   `yaml:"sampling"`
	Roles       strList  `yaml:"roles"`
}

type noteYAML struct {
	When *condYAML `yaml:"when"`
	Text string    `yaml:"text"`
}

type overrideYAML struct {
	Unit     string `yaml:"unit"`
	Action   string `yaml:"action"`
	Other    string `yaml:"other"`
	Position int    `yaml:"position"`
	Reason   string `yaml:"reason"`
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func typeErr(n *yaml.Node, format string, a ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, fmt.Sprintf(format, a...))}}
}

// strList is one string or a list of strings.
type strList []string

func (l *strList) UnmarshalYAML(n *yaml.Node) error {
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		*l = strList{n.Value}
		return nil
	case yaml.SequenceNode:
		out := make(strList, 0, len(n.Content))
		for _, c := range n.Content {
			c = resolve(c)
			if c.Kind != yaml.ScalarNode {
				return typeErr(c, "want a string, got a %s", kindName(c))
			}
			out = append(out, c.Value)
		}
		*l = out
		return nil
	}
	return typeErr(n, "want a string or a list of strings, got a %s", kindName(n))
}

// nameSet is a list of names, or `{not: [names]}` for every name but those.
type nameSet struct {
	Names []string
	Not   bool
}

func (s *nameSet) UnmarshalYAML(n *yaml.Node) error {
	n = resolve(n)
	if n.Kind == yaml.MappingNode {
		if len(n.Content) != 2 || n.Content[0].Value != "not" {
			return typeErr(n, "want a list of names or {not: [names]}")
		}
		var l strList
		if err := l.UnmarshalYAML(n.Content[1]); err != nil {
			return err
		}
		s.Names, s.Not = l, true
		return nil
	}
	var l strList
	if err := l.UnmarshalYAML(n); err != nil {
		return err
	}
	s.Names = l
	return nil
}

// selYAML selects dispatches by class and kernel-name substrings; every given key
// must hold.
type selYAML struct {
	Class      []string
	Name       []string
	NotName    []string
	IgnoreCase bool
	Line       int
}

// sels is one selector or a list of them; a dispatch matches when any of them does.
type sels []selYAML

func (s *sels) UnmarshalYAML(n *yaml.Node) error {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		one, err := decodeSel(n)
		if err != nil {
			return err
		}
		*s = sels{one}
		return nil
	case yaml.SequenceNode:
		out := make(sels, 0, len(n.Content))
		for _, c := range n.Content {
			c = resolve(c)
			if c.Kind != yaml.MappingNode {
				return typeErr(c, "want a selector like {class: qmv} or {name: copy_gg}, got a %s", kindName(c))
			}
			one, err := decodeSel(c)
			if err != nil {
				return err
			}
			out = append(out, one)
		}
		*s = out
		return nil
	}
	return typeErr(n, "want a selector like {class: qmv} or a list of them, got a %s", kindName(n))
}

func decodeSel(n *yaml.Node) (selYAML, error) {
	sel := selYAML{Line: n.Line}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var l strList
		switch k.Value {
		case "class", "name", "not_name":
			if err := l.UnmarshalYAML(v); err != nil {
				return sel, err
			}
		}
		switch k.Value {
		case "class":
			sel.Class = l
		case "name":
			sel.Name = l
		case "not_name":
			sel.NotName = l
		case "ignore_case":
			if err := resolve(v).Decode(&sel.IgnoreCase); err != nil {
				return sel, typeErr(v, "ignore_case: want true or false")
			}
		default:
			return sel, typeErr(k, "unknown key %s in a selector (want class, name, not_name, ignore_case)", q(k.Value))
		}
	}
	if len(sel.Class) == 0 && len(sel.Name) == 0 && len(sel.NotName) == 0 {
		return sel, typeErr(n, "an empty selector matches everything; give a class or a name")
	}
	return sel, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	}
	return "node"
}

// node returns the node at a dotted path under the document root, or nil.
func node(root *yaml.Node, path string) *yaml.Node {
	n := root
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, part := range strings.Split(path, ".") {
		n = resolve(n)
		if n == nil {
			return nil
		}
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					next = n.Content[i+1]
					break
				}
			}
		case yaml.SequenceNode:
			var i int
			if _, err := fmt.Sscanf(part, "%d", &i); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		n = next
	}
	return resolve(n)
}

// keys returns the keys of the mapping at path.
func keys(root *yaml.Node, path string) []string {
	n := node(root, path)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, n.Content[i].Value)
	}
	return out
}
