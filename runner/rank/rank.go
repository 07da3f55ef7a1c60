// Package rank orders the port units of the attribution rules by the decode time each
// port could recover (docs/analysis.md §7), from the summaries of a profile's runs, and
// renders the ranking with its evidence as Markdown or JSON. It reads summaries handed
// to it and the rules; it must not read traces, write files or talk to GitHub.
package rank

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/results"
)

// Ranking is the ranked port order with the evidence per unit.
type Ranking struct {
	Order []string   `json:"order"` // unit ids, first is ranked highest
	Units []UnitRank `json:"units"` // in rank order
	Runs  []string   `json:"runs"`
	// KernelTimeOnlyRuns are the runs whose summary carries no per-role host gap
	// (summaries written by the target repo's own analyzer): for them the rank counts
	// kernel time alone.
	KernelTimeOnlyRuns []string `json:"kernel_time_only_runs,omitempty"`
	Notes              []string `json:"notes,omitempty"`
	Rules              string   `json:"rules"`
}

// UnitRank is one unit's place and evidence.
type UnitRank struct {
	Rank     int    `json:"rank"`
	ID       string `json:"unit"`
	EpicItem int    `json:"epic_item"`
	Port     string `json:"port"`
	// Evidence is set when some run reaches the port with the shipped defaults;
	// units without rank below all others.
	Evidence bool `json:"evidence"`
	// Best holds the figures at the run where the port recovers the most (default
	// reach); without evidence, at the run with the largest fallback share.
	Best Figures `json:"best"`
	// OptIn holds the figures at the best run with the opt-in reach, when some run
	// reaches more with the opt-in switches on.
	OptIn *Figures `json:"opt_in,omitempty"`
	// MostNotReached is the run where the largest share of the unit's roles runs on
	// the fallback path, when that is not the best run (nemotron_h's MoE for #2065).
	MostNotReached *Figures  `json:"most_not_reached,omitempty"`
	Runs           []Figures `json:"runs"`
	Override       *Applied  `json:"override,omitempty"`
}

// Figures are a unit's numbers in one run.
type Figures struct {
	Run                        string  `json:"run"`
	ReachedSharePct            float64 `json:"reached_share_pct"`
	RecoverableMsPerToken      float64 `json:"recoverable_ms_per_token"`
	RecoverablePctOfWall       float64 `json:"recoverable_pct_of_wall"`
	HostGapMsPerToken          float64 `json:"host_gap_ms_per_token"` // the host-gap part of recoverable
	DispatchesPerTokenRemoved  float64 `json:"dispatches_per_token_removed"`
	FallbackSharePct           float64 `json:"fallback_share_pct"`
	FallbackDispatchesPerToken float64 `json:"fallback_dispatches_per_token"`
	FallbackNotReachedPct      float64 `json:"fallback_not_reached_pct"`
	KernelTimeOnly             bool    `json:"kernel_time_only,omitempty"`
	Note                       string  `json:"note"`

	exactPct float64 // unrounded, for ordering
}

// Applied is an override from the rules and what it did.
type Applied struct {
	Action   string `json:"action"`
	Other    string `json:"other,omitempty"`
	Position int    `json:"position,omitempty"`
	Reason   string `json:"reason"`
	Moved    bool   `json:"moved"` // false when the unit already stood there
}

// runFacts is what the rank needs from one summary, per role of the rules.
type runFacts struct {
	name     string
	run      attrib.Run
	wallMs   float64 // decode wall per token
	share    map[string]float64
	kernelMs map[string]float64
	gapMs    map[string]float64
	disp     map[string]float64
	hasGap   bool
	units    results.Units // the summary's own port_units
}

// Rank orders the rules' units over the runs (docs/analysis.md §7). rules nil means the
// shipped default.
func Rank(sums []*results.Summary, rules *attrib.Rules) (*Ranking, error) {
	if rules == nil {
		rules = attrib.Default()
	}
	if len(sums) == 0 {
		return nil, errors.New("no run summaries to rank: point rank at a results folder holding <run>_summary.json files")
	}
	units := rules.Units()
	if len(units) == 0 {
		return nil, fmt.Errorf("the rules %s define no port unit", rules.Name())
	}
	rk := &Ranking{Rules: rules.Name()}
	var runs []runFacts
	var unknownRope []string
	seen := map[string]bool{}
	for _, s := range sums {
		if seen[s.Name] {
			return nil, fmt.Errorf("two summaries of run %s: give one per run", safetext.Quote(s.Name))
		}
		seen[s.Name] = true
		f, err := facts(s)
		if err != nil {
			return nil, err
		}
		runs = append(runs, f)
		rk.Runs = append(rk.Runs, f.name)
		if !f.hasGap {
			rk.KernelTimeOnlyRuns = append(rk.KernelTimeOnlyRuns, f.name)
		}
		if f.run.RopeScalingUnknown {
			unknownRope = append(unknownRope, "`"+f.name+"`")
		}
	}
	if len(unknownRope) > 0 {
		rk.Notes = append(rk.Notes, "rope_scaling is unknown for "+strings.Join(unknownRope, ", ")+
			" (summaries written by the target repo's own analyzer do not record it): reach conditions on it count as not met")
	}

	for _, u := range units {
		ur := UnitRank{ID: u.ID, EpicItem: u.EpicItem, Port: u.Port}
		var bestOpt *Figures
		for _, f := range runs {
			def, opt := u.Reach(f.run)
			fig := figures(&u, f, def)
			fig.fromSummary(f, &u, def, false)
			fig.Note = u.Note(f.run)
			ur.Runs = append(ur.Runs, fig)
			if fig.ReachedSharePct > 0 || fig.DispatchesPerTokenRemoved > 0 {
				ur.Evidence = true
			}
			if len(opt) > len(def) {
				of := figures(&u, f, opt)
				of.fromSummary(f, &u, opt, true)
				of.Note = fig.Note
				if of.ReachedSharePct > 0 && (bestOpt == nil || of.exactPct > bestOpt.exactPct) {
					bestOpt = &of
				}
			}
		}
		ur.Best = best(ur.Runs, ur.Evidence)
		ur.OptIn = bestOpt
		for i := range ur.Runs {
			f := &ur.Runs[i]
			if f.FallbackNotReachedPct > ur.Best.FallbackNotReachedPct &&
				(ur.MostNotReached == nil || f.FallbackNotReachedPct > ur.MostNotReached.FallbackNotReachedPct) {
				ur.MostNotReached = f
			}
		}
		rk.Units = append(rk.Units, ur)
	}

	slices.SortStableFunc(rk.Units, compareUnits)
	for _, u := range rk.Units {
		rk.Order = append(rk.Order, u.ID)
	}
	for _, o := range rules.Overrides() {
		rk.apply(o)
	}
	for i := range rk.Units {
		rk.Units[i].Rank = i + 1
	}
	return rk, nil
}

// facts reads what the rank needs from a summary.
func facts(s *results.Summary) (runFacts, error) {
	f := runFacts{
		name: s.Name,
		run: attrib.Run{
			ModelType:   s.ModelType,
			RopeScaling: s.RopeScaling,
			// perfbot's summaries always carry `sampling` and leave rope_scaling out
			// when the model has none; the target repo's analyzer never wrote it.
			RopeScalingUnknown: s.Sampling == "" && s.RopeScaling == "",
			Sampled:            s.Temperature > 0,
		},
		share:    map[string]float64{},
		kernelMs: map[string]float64{},
		gapMs:    map[string]float64{},
		disp:     map[string]float64{},
		hasGap:   len(s.RoleHostGapMsPerToken) > 0,
		units:    s.PortUnits,
	}
	if f.name == "" {
		return f, errors.New("a summary has no name: is it a <run>_summary.json?")
	}
	if s.GeneratedTokens <= 0 || s.DecodeWallMs <= 0 {
		return f, fmt.Errorf("%s: the summary has no generated_tokens or decode_wall_ms to make per-token figures from", f.name)
	}
	tokens := float64(s.GeneratedTokens)
	f.wallMs = float64(s.DecodeWallMs) / tokens
	for _, kv := range s.RoleSharePct {
		f.share[kv.Key] = float64(kv.Value)
		f.kernelMs[kv.Key] = float64(kv.Value) / 100 * float64(s.DecodeGPUSumMs) / tokens
	}
	// perfbot's own per-role kernel time is exact; the share is rounded to 2 decimals.
	for _, kv := range s.RoleGPUMsPerToken {
		f.kernelMs[kv.Key] = float64(kv.Value)
	}
	for _, kv := range s.RoleHostGapMsPerToken {
		f.gapMs[kv.Key] = float64(kv.Value)
	}
	for _, kv := range s.RoleDispatchesPerToken {
		f.disp[kv.Key] = float64(kv.Value)
	}
	return f, nil
}

func figures(u *attrib.Unit, f runFacts, reached []string) Figures {
	fig := Figures{Run: f.name, KernelTimeOnly: !f.hasGap}
	var rec, gap, share, disp, fb, fbDisp float64
	for _, role := range reached {
		rec += f.kernelMs[role] * u.Fraction(role)
		gap += f.gapMs[role]
		share += f.share[role]
		disp += f.disp[role]
	}
	rec += gap
	for _, role := range u.Roles {
		fb += f.share[role]
		fbDisp += f.disp[role]
	}
	fig.exactPct = 100 * rec / f.wallMs
	fig.ReachedSharePct = results.Round(share, 2)
	fig.RecoverableMsPerToken = results.Round(rec, 4)
	fig.RecoverablePctOfWall = results.Round(fig.exactPct, 2)
	fig.HostGapMsPerToken = results.Round(gap, 4)
	fig.DispatchesPerTokenRemoved = results.Round(disp, 1)
	fig.FallbackSharePct = results.Round(fb, 2)
	fig.FallbackDispatchesPerToken = results.Round(fbDisp, 1)
	fig.FallbackNotReachedPct = results.Round(fb-share, 2)
	return fig
}

// fromSummary replaces figures re-derived from rounded role shares by the unit's own
// figures in the summary, when the summary says they stand for the same role sets:
// the analysis computed them from exact nanoseconds, and the report shows both.
func (fig *Figures) fromSummary(f runFacts, u *attrib.Unit, reached []string, optIn bool) {
	su, ok := f.units.Get(u.ID)
	if !ok || len(su.Roles) == 0 || !sameSet(su.Roles, u.Roles) {
		return // not perfbot's, or other rules: keep the re-derived figures
	}
	fig.FallbackSharePct = float64(su.FallbackSharePct)
	fig.FallbackDispatchesPerToken = float64(su.FallbackDispatchesPerToken)
	switch {
	case !optIn && sameSet(su.ReachedDefaultRoles, reached):
		fig.ReachedSharePct = float64(su.ReachedDefaultSharePct)
		fig.DispatchesPerTokenRemoved = float64(su.ReachedDefaultDispatchesPerToken)
		if su.RecoverableDefaultMsPerToken != nil && f.hasGap {
			fig.RecoverableMsPerToken = float64(*su.RecoverableDefaultMsPerToken)
		}
		if su.ReachedDefaultHostGapMsPerToken != nil && f.hasGap {
			fig.HostGapMsPerToken = float64(*su.ReachedDefaultHostGapMsPerToken)
		}
	case optIn && sameSet(su.ReachedOptinRoles, reached):
		fig.ReachedSharePct = float64(su.ReachedOptinSharePct)
		if su.ReachedOptinDispatchesPerToken != nil {
			fig.DispatchesPerTokenRemoved = float64(*su.ReachedOptinDispatchesPerToken)
		}
		if su.RecoverableOptinMsPerToken != nil && f.hasGap {
			fig.RecoverableMsPerToken = float64(*su.RecoverableOptinMsPerToken)
		}
	default:
		return
	}
	fig.exactPct = 100 * fig.RecoverableMsPerToken / f.wallMs
	fig.RecoverablePctOfWall = results.Round(fig.exactPct, 2)
	fig.FallbackNotReachedPct = results.Round(fig.FallbackSharePct-fig.ReachedSharePct, 2)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// best picks the run that shows the unit at its strongest.
func best(figs []Figures, evidence bool) Figures {
	b := figs[0]
	for _, f := range figs[1:] {
		if evidence {
			if f.exactPct > b.exactPct || (f.exactPct == b.exactPct && f.ReachedSharePct > b.ReachedSharePct) {
				b = f
			}
			continue
		}
		if f.FallbackSharePct > b.FallbackSharePct ||
			(f.FallbackSharePct == b.FallbackSharePct && f.FallbackDispatchesPerToken > b.FallbackDispatchesPerToken) {
			b = f
		}
	}
	return b
}

// compareUnits: units with evidence first, by recoverable share of wall; then by
// fallback share, fallback dispatches, and id.
func compareUnits(a, b UnitRank) int {
	if a.Evidence != b.Evidence {
		if a.Evidence {
			return -1
		}
		return 1
	}
	if a.Evidence && a.Best.exactPct != b.Best.exactPct {
		return cmp.Compare(b.Best.exactPct, a.Best.exactPct)
	}
	if c := cmp.Compare(b.Best.FallbackSharePct, a.Best.FallbackSharePct); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Best.FallbackDispatchesPerToken, a.Best.FallbackDispatchesPerToken); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// apply moves a unit as the override says.
func (rk *Ranking) apply(o attrib.Override) {
	from := slices.Index(rk.Order, o.Unit)
	if from < 0 {
		return
	}
	ap := &Applied{Action: o.Action, Other: o.Other, Position: o.Position, Reason: o.Reason}
	to := from
	switch o.Action {
	case attrib.ActionPin:
		to = min(o.Position-1, len(rk.Order)-1)
	case attrib.ActionBefore:
		if other := slices.Index(rk.Order, o.Other); other >= 0 && from > other {
			to = other
		}
	case attrib.ActionAfter:
		if other := slices.Index(rk.Order, o.Other); other >= 0 && from < other {
			to = other
		}
	}
	u := rk.Units[from]
	u.Override = ap
	ap.Moved = to != from
	rk.Units = slices.Delete(rk.Units, from, from+1)
	rk.Units = slices.Insert(rk.Units, to, u)
	rk.Order = slices.Delete(rk.Order, from, from+1)
	rk.Order = slices.Insert(rk.Order, to, o.Unit)
}

// JSON renders the ranking for the report page and the epic comment.
func (rk *Ranking) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(rk, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding ranking: %w", err)
	}
	return append(b, '\n'), nil
}
