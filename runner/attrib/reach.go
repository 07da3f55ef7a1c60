package attrib

import (
	"slices"
	"strings"
)

// RunOf returns the reach facts of an attribution input.
func RunOf(in Input) Run {
	return Run{ModelType: in.ModelType, RopeScaling: in.RopeScaling, Sampled: in.Temperature > 0}
}

func (s NameSet) matches(v string) bool {
	if len(s.Names) == 0 && !s.Not {
		return true
	}
	return slices.Contains(s.Names, v) != s.Not
}

func (s NameSet) set() bool { return len(s.Names) > 0 || s.Not }

// Matches reports whether the condition holds for the run.
func (c *Condition) Matches(run Run) bool {
	if c == nil {
		return true
	}
	if c.ModelType.set() && !c.ModelType.matches(run.ModelType) {
		return false
	}
	if c.RopeScaling.set() {
		if run.RopeScalingUnknown {
			return false
		}
		rs := run.RopeScaling
		if rs == "" {
			rs = "none"
		}
		if !c.RopeScaling.matches(rs) {
			return false
		}
	}
	switch c.Sampling {
	case "greedy":
		return !run.Sampled
	case "sampled":
		return run.Sampled
	}
	return true
}

// Reach returns the roles the unit's port takes over in the run, with the shipped
// defaults and with the opt-in switches on (a superset), both in the unit's role order.
func (u *Unit) Reach(run Run) (def, optIn []string) {
	pick := func(conds []Condition, into map[string]bool) {
		for i := range conds {
			c := &conds[i]
			if !c.Matches(run) {
				continue
			}
			if len(c.Roles) == 0 {
				for _, r := range u.Roles {
					into[r] = true
				}
			}
			for _, r := range c.Roles {
				into[r] = true
			}
		}
	}
	d := map[string]bool{}
	pick(u.Default, d)
	o := map[string]bool{}
	for r := range d {
		o[r] = true
	}
	pick(u.OptIn, o)
	for _, r := range u.Roles {
		if d[r] {
			def = append(def, r)
		}
		if o[r] {
			optIn = append(optIn, r)
		}
	}
	return def, optIn
}

// Fraction returns the share of the role's kernel time the port can recover.
func (u *Unit) Fraction(role string) float64 {
	if f, ok := u.Fractions[role]; ok {
		return f.Value
	}
	return 1
}

// Note returns the unit's reach note for the run: every clause whose condition holds,
// joined by "; ", placeholders filled in.
func (u *Unit) Note(run Run) string {
	var parts []string
	for i := range u.Notes {
		n := &u.Notes[i]
		if !n.When.Matches(run) {
			continue
		}
		parts = append(parts, fill(n.Text, run))
	}
	return strings.Join(parts, "; ")
}

func fill(text string, run Run) string {
	if !strings.Contains(text, "{") {
		return text
	}
	mt := run.ModelType
	if mt == "" {
		mt = "the model (model_type unknown)"
	}
	rs := run.RopeScaling
	switch {
	case run.RopeScalingUnknown:
		rs = "unknown"
	case rs == "":
		rs = "none"
	}
	sm := "greedy"
	if run.Sampled {
		sm = "sampled"
	}
	return strings.NewReplacer("{model_type}", mt, "{rope_scaling}", rs, "{sampling}", sm).Replace(text)
}
