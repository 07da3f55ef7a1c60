// Package rank orders the port units of the attribution rules by the decode time each
// port could recover net of its fused kernel's cost (docs/analysis.md §7), from the
// summaries of a profile's runs, and renders the ranking with its evidence as Markdown
// or JSON. It reads summaries handed to it, the runs' decode_kernels tables and the
// rules; it must not read traces, write files or talk to GitHub.
package rank

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/lablup/perfbot/internal/mdtext"
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
	// Headline is the sampling a unit is shown and ranked at unless only other
	// samplings reach it.
	Headline string `json:"headline_sampling"`
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
	// Best holds the figures at the unit's headline run: of the runs at the headline
	// sampling (the configured default, greedy), the one where the port recovers the
	// most net (default reach); of every run when only other samplings reach the unit
	// (the samplers); without evidence, the run with the largest fallback share.
	Best Figures `json:"best"`
	// OtherSamplings are, per other sampling that reaches the unit, its run where the
	// port recovers the most net: listed beside the headline run.
	OtherSamplings []Figures `json:"other_samplings,omitempty"`
	// OptIn holds the figures at the best run with the opt-in reach, when some run
	// reaches more with the opt-in switches on.
	OptIn *Figures `json:"opt_in,omitempty"`
	// Replacement says what the port's fused kernel is expected to cost, or why that
	// is unknown (then the net figures are the gross ones).
	Replacement string `json:"replacement"`
	// MostNotReached is the run where the largest share of the unit's roles runs on
	// the fallback path, when that is not the best run (nemotron_h's MoE for #2065).
	MostNotReached *Figures  `json:"most_not_reached,omitempty"`
	Runs           []Figures `json:"runs"`
	Override       *Applied  `json:"override,omitempty"`
}

// Figures are a unit's numbers in one run.
type Figures struct {
	Run      string `json:"run"`
	Sampling string `json:"sampling"` // the run's sampling tag
	// ReachedSharePct, the dispatches and the fallback figures are the summary's own
	// when it holds them for the same roles, never re-added from rounded parts.
	ReachedSharePct float64 `json:"reached_share_pct"`
	// RecoverableMsPerToken is the gross figure: reached kernel time times the
	// recoverable fractions, plus the host gap of the reached dispatches.
	RecoverableMsPerToken float64 `json:"recoverable_ms_per_token"`
	RecoverablePctOfWall  float64 `json:"recoverable_pct_of_wall"`
	HostGapMsPerToken     float64 `json:"host_gap_ms_per_token"` // the host-gap part of recoverable
	// ReplacementMsPerToken is the fused kernel's expected cost per token; null when
	// the rules give none or it could not be measured.
	ReplacementMsPerToken *float64 `json:"replacement_ms_per_token"`
	// NetMsPerToken is the gross less the replacement's cost (the gross when that is
	// unknown); the rank orders by its share of the wall time.
	NetMsPerToken              float64 `json:"net_ms_per_token"`
	NetPctOfWall               float64 `json:"net_pct_of_wall"`
	DispatchesPerTokenRemoved  float64 `json:"dispatches_per_token_removed"`
	FallbackSharePct           float64 `json:"fallback_share_pct"`
	FallbackDispatchesPerToken float64 `json:"fallback_dispatches_per_token"`
	FallbackNotReachedPct      float64 `json:"fallback_not_reached_pct"`
	KernelTimeOnly             bool    `json:"kernel_time_only,omitempty"`
	Note                       string  `json:"note"`

	exactPct float64 // net, unrounded, for ordering
	kept     float64 // reached kernel time the recoverable fractions leave in place
	removed  float64 // reached kernel time the recoverable fractions count as removed
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
	sampling string // canonical tag
	run      attrib.Run
	wallMs   float64 // decode wall per token
	share    map[string]float64
	kernelMs map[string]float64
	gapMs    map[string]float64
	disp     map[string]float64
	hasGap   bool
	units    results.Units                   // the summary's own port_units
	kernels  func(re *regexp.Regexp) float64 // ms/token of the kernels whose names match
}

// Options are what a ranking may be told beside the summaries and the rules.
type Options struct {
	// Headline is the sampling tag of a unit's headline run: the configured default
	// sampling. "" is greedy.
	Headline string
	// Kernels holds runs' `<run>_decode_kernels.csv` rows by run name, to measure a
	// replacement kernel where it runs; a run without rows is read from its summary's
	// top_kernels.
	Kernels map[string][]results.KernelRow
}

// HeadlineOf is the headline sampling of a config's default sampling list (config's
// SamplingTags): its first setting; "" (greedy) for none.
func HeadlineOf(defaultSampling []string) string {
	if len(defaultSampling) == 0 {
		return ""
	}
	return defaultSampling[0]
}

// Rank orders the rules' units over the runs (docs/analysis.md §7) with greedy as the
// headline sampling. rules nil means the shipped default.
func Rank(sums []*results.Summary, rules *attrib.Rules) (*Ranking, error) {
	return RankWith(sums, rules, Options{})
}

// RankWith is Rank with options.
func RankWith(sums []*results.Summary, rules *attrib.Rules, o Options) (*Ranking, error) {
	headline := results.Greedy.Tag()
	if o.Headline != "" {
		s, err := results.ParseSampling(o.Headline)
		if err != nil {
			return nil, fmt.Errorf("the headline sampling: %w", err)
		}
		headline = s.Tag()
	}
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
	rk := &Ranking{Rules: rules.Name(), Headline: headline}
	var runs []runFacts
	var unknownRope []string
	seen := map[string]bool{}
	for _, s := range sums {
		if seen[s.Name] {
			return nil, fmt.Errorf("two summaries of run %s: give one per run", safetext.Quote(s.Name))
		}
		seen[s.Name] = true
		f, err := facts(s, o.Kernels[s.Name])
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

	var unknown []string
	for _, u := range units {
		ur := UnitRank{ID: u.ID, EpicItem: u.EpicItem, Port: u.Port}
		cost := replacementCost(&u, runs)
		ur.Replacement = cost.what
		if cost.perRun == nil {
			unknown = append(unknown, "#"+u.ID)
		}
		var bestOpt *Figures
		for _, f := range runs {
			def, opt := u.Reach(f.run)
			fig := figures(&u, f, def)
			fig.fromSummary(f, &u, def, false)
			fig.net(f, cost)
			fig.Note = u.Note(f.run)
			ur.Runs = append(ur.Runs, fig)
			if fig.reaches() {
				ur.Evidence = true
			}
			if len(opt) > len(def) {
				of := figures(&u, f, opt)
				of.fromSummary(f, &u, opt, true)
				of.net(f, cost)
				of.Note = fig.Note
				if of.ReachedSharePct > 0 && (bestOpt == nil || of.exactPct > bestOpt.exactPct) {
					bestOpt = &of
				}
			}
		}
		ur.Best, ur.OtherSamplings = headlineOf(ur.Runs, ur.Evidence, headline)
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
	if len(unknown) > 0 {
		rk.Notes = append(rk.Notes, "the replacement's cost is unknown for "+strings.Join(unknown, ", ")+
			": their net recoverable time is the gross, an upper bound (the fused kernel costs something)")
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
func facts(s *results.Summary, rows []results.KernelRow) (runFacts, error) {
	f := runFacts{
		name:     s.Name,
		sampling: s.SamplingTag(),
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
	if sm, err := results.ParseSampling(f.sampling); err == nil {
		f.sampling = sm.Tag()
	}
	gpuSum := float64(s.DecodeGPUSumMs)
	top := s.TopKernels
	f.kernels = func(re *regexp.Regexp) float64 {
		var ms float64
		if rows != nil {
			for _, r := range rows {
				if re.MatchString(r.Kernel) {
					ms += float64(r.TotalNs) / 1e6 / tokens
				}
			}
			return ms
		}
		for _, k := range top {
			if re.MatchString(k.Kernel) {
				ms += float64(k.SharePct) / 100 * gpuSum / tokens
			}
		}
		return ms
	}
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
	fig := Figures{Run: f.name, Sampling: f.sampling, KernelTimeOnly: !f.hasGap}
	var rec, gap, share, disp, fb, fbDisp float64
	for _, role := range reached {
		rec += f.kernelMs[role] * u.Fraction(role)
		fig.kept += f.kernelMs[role] * (1 - u.Fraction(role))
		gap += f.gapMs[role]
		share += f.share[role]
		disp += f.disp[role]
	}
	fig.removed = rec
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
	if !ok {
		return
	}
	if len(su.Roles) == 0 {
		fig.fromAnalyzer(su, len(u.Roles), len(reached), optIn)
		return
	}
	if !sameSet(su.Roles, u.Roles) {
		return // other rules: keep the re-derived figures
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

// fromAnalyzer takes the unit's figures from a summary of the target repo's own
// analyzer, which computed them from exact times but does not record its role sets:
// each is taken when the figure re-added from the rounded role figures lies within
// their rounding of it (n parts and the figure itself, each off by at most half a unit
// of its last decimal), so that both stand for the same roles. The page then prints the
// summary's 46.03, not a re-added 46.04.
func (fig *Figures) fromAnalyzer(su results.Unit, nRoles, nReached int, optIn bool) {
	take := func(dst *float64, own float64, parts int, unit float64) {
		if math.Abs(own-*dst) <= unit/2*float64(parts+1)+1e-9 {
			*dst = own
		}
	}
	take(&fig.FallbackSharePct, float64(su.FallbackSharePct), nRoles, 0.01)
	take(&fig.FallbackDispatchesPerToken, float64(su.FallbackDispatchesPerToken), nRoles, 0.1)
	if optIn {
		take(&fig.ReachedSharePct, float64(su.ReachedOptinSharePct), nReached, 0.01)
		if su.ReachedOptinDispatchesPerToken != nil {
			take(&fig.DispatchesPerTokenRemoved, float64(*su.ReachedOptinDispatchesPerToken), nReached, 0.1)
		}
	} else {
		take(&fig.ReachedSharePct, float64(su.ReachedDefaultSharePct), nReached, 0.01)
		take(&fig.DispatchesPerTokenRemoved, float64(su.ReachedDefaultDispatchesPerToken), nReached, 0.1)
	}
	fig.FallbackNotReachedPct = results.Round(fig.FallbackSharePct-fig.ReachedSharePct, 2)
}

// cost is a unit's replacement cost: per run the fused kernel's expected ms/token,
// nil when unknown.
type cost struct {
	perRun func(fig *Figures) float64
	what   string
}

// replacementCost reads the unit's replacement rule (docs/analysis.md §7): a fraction
// of the kernel time the port removes, or the mean ms/token of the fused kernel over
// the runs where it already runs, less the reached kernel time the recoverable
// fractions already leave in place.
func replacementCost(u *attrib.Unit, runs []runFacts) cost {
	r := u.Replacement
	if r == nil {
		return cost{what: "unknown: the rules give no replacement"}
	}
	why := ""
	if r.Reason != "" {
		why = " (" + r.Reason + ")"
	}
	if r.Kernel == nil {
		return cost{
			perRun: func(fig *Figures) float64 { return r.Fraction * fig.removed },
			what:   fmt.Sprintf("%s of the kernel time the port removes%s", results.PyFloat(r.Fraction), why),
		}
	}
	var sum float64
	var where []string
	for _, f := range runs {
		if ms := f.kernels(r.Kernel); ms > 0 {
			sum += ms
			where = append(where, mdtext.Code(f.name))
		}
	}
	if len(where) == 0 {
		return cost{what: fmt.Sprintf("unknown: %s runs in none of these runs%s", mdtext.Code(r.Pattern), why)}
	}
	mean := sum / float64(len(where))
	return cost{
		perRun: func(fig *Figures) float64 { return max(0, mean-fig.kept) },
		what: fmt.Sprintf("%s takes %.4f ms/token where it runs (%s), less the reached kernel time the port keeps%s",
			mdtext.Code(r.Pattern), mean, strings.Join(where, ", "), why),
	}
}

// net sets the replacement's cost and the net figures; exactPct becomes the net share
// of wall time the rank orders by.
func (fig *Figures) net(f runFacts, c cost) {
	net := fig.RecoverableMsPerToken
	if c.perRun != nil && fig.reaches() {
		rc := results.Round(c.perRun(fig), 4)
		fig.ReplacementMsPerToken = &rc
		net -= rc
	}
	fig.NetMsPerToken = results.Round(net, 4)
	fig.exactPct = 100 * net / f.wallMs
	fig.NetPctOfWall = results.Round(fig.exactPct, 2)
}

// reaches says whether the port takes anything over in this run.
func (fig *Figures) reaches() bool {
	return fig.ReachedSharePct > 0 || fig.DispatchesPerTokenRemoved > 0
}

// headlineOf picks the unit's headline run and, per other sampling that reaches it,
// that sampling's best run.
func headlineOf(figs []Figures, evidence bool, headline string) (Figures, []Figures) {
	var head, reached, headReached []Figures
	for _, f := range figs {
		if f.Sampling == headline {
			head = append(head, f)
		}
		if f.reaches() {
			reached = append(reached, f)
			if f.Sampling == headline {
				headReached = append(headReached, f)
			}
		}
	}
	// With evidence, only runs the port reaches compete: a net below zero (a fused
	// kernel dearer than what it removes) is still the port's figure.
	var b Figures
	switch {
	case evidence && len(headReached) > 0:
		b = best(headReached, true)
	case evidence:
		b = best(reached, true) // only other samplings reach it (the samplers)
	case len(head) > 0:
		return best(head, false), nil
	default:
		return best(figs, false), nil
	}
	var tags []string
	byTag := map[string][]Figures{}
	for _, f := range figs {
		if f.Sampling == b.Sampling || !f.reaches() {
			continue
		}
		if byTag[f.Sampling] == nil {
			tags = append(tags, f.Sampling)
		}
		byTag[f.Sampling] = append(byTag[f.Sampling], f)
	}
	var others []Figures
	for _, tag := range tags {
		others = append(others, best(byTag[tag], true))
	}
	return b, others
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
