package attrib

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lablup/perfbot/runner/results"
)

// Input is the decode window of one run, as parallel arrays in start order.
type Input struct {
	Names     []string // interned kernel names
	Name      []uint32 // per decode dispatch (start order): name index
	Grid      []int64  // per decode dispatch; all 0 (or nil) when !HasGrid
	DurNs     []int64  // per decode dispatch: end - start
	GapNs     []int64  // per decode dispatch: host gap charged (docs/analysis.md §3 frontier walk)
	TailGapNs int64
	HasGrid   bool
	Tokens    int   // generated tokens (per-token denominator)
	GPUSumNs  int64 // sum of DurNs; computed when 0

	ModelType, RopeScaling string
	Temperature, TopP      float64
}

// Result is the attribution of one run.
type Result struct {
	Classes   []string // per name index
	RoleNames []string // role index -> name ("unattributed" included)
	Roles     []uint8  // per decode dispatch: role index
	// KernelRoles and KernelUnits hold, per name index, the sorted roles (unattributed
	// left out) and port units of the name's decode dispatches, for decode_kernels.csv.
	KernelRoles, KernelUnits [][]string
	Notes                    []string

	// Every role that occurs, in order of first occurrence, then every unit's roles
	// that do not (the repo analyzer's order); role_share_pct is sorted by share.
	RoleSharePct           results.Ordered
	RoleDispatchesPerToken results.Ordered
	RoleGPUMsPerToken      results.Ordered
	RoleHostGapMsPerToken  results.Ordered
	ClassSharePct          results.Ordered // classes that occur, by share
	Units                  results.Units   // port_units, keyed by unit id
}

// Attribute classifies the decode dispatches and assigns each a role, then sums
// roles, classes and port units per token.
func (r *Rules) Attribute(in Input) (*Result, error) {
	n := len(in.Name)
	if len(in.DurNs) != n || len(in.GapNs) != n {
		return nil, fmt.Errorf("attribution input: %d dispatches but %d durations and %d gaps", n, len(in.DurNs), len(in.GapNs))
	}
	grid := in.Grid
	switch {
	case len(grid) == n:
	case len(grid) == 0 && !in.HasGrid:
		grid = nil
	default:
		return nil, fmt.Errorf("attribution input: %d dispatches but %d grid sizes", n, len(grid))
	}
	if !in.HasGrid {
		grid = nil
	}
	if in.Tokens <= 0 {
		return nil, errors.New("attribution input: no generated tokens to divide by")
	}
	nn := len(in.Names)
	for _, id := range in.Name {
		if int(id) >= nn {
			return nil, fmt.Errorf("attribution input: name index %d out of range (%d names)", id, nn)
		}
	}

	// Everything that depends on a name alone is computed once per name.
	classOf := make([]int, nn)
	res := &Result{Classes: make([]string, nn), RoleNames: slices.Clone(r.roleNames)}
	for id, name := range in.Names {
		classOf[id] = r.classify(name)
		res.Classes[id] = r.classNameOf(classOf[id])
	}
	p := &pass{name: in.Name, grid: grid, roles: make([]uint8, n), masks: r.masks(in.Names, classOf), r: r}
	run := RunOf(in)
	for i := range r.rules {
		if r.rules[i].when.Matches(run) {
			p.apply(&r.rules[i])
		}
	}
	res.Roles = p.roles
	res.Notes = p.notes
	r.sum(res, in, classOf)
	return res, nil
}

func (r *Rules) masks(names []string, classOf []int) [][]bool {
	var lower []string
	out := make([][]bool, len(r.sels))
	for k, s := range r.sels {
		m := make([]bool, len(names))
		for id, name := range names {
			for _, part := range s {
				if !part.anyClass && !part.classes[classOf[id]] {
					continue
				}
				subject := name
				if part.fold {
					if lower == nil {
						lower = lowerAll(names)
					}
					subject = lower[id]
				}
				if containsAny(subject, part.names, true) && !containsAny(subject, part.notNames, false) {
					m[id] = true
					break
				}
			}
		}
		out[k] = m
	}
	return out
}

// containsAny reports whether s contains one of subs; an empty list gives empty.
func containsAny(s string, subs []string, empty bool) bool {
	if len(subs) == 0 {
		return empty
	}
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// sum fills the per-token tables of res.
func (r *Rules) sum(res *Result, in Input, classOf []int) {
	nr, nc, nn := len(r.roleNames), len(r.classes)+1, len(in.Names)
	cnt := make([]int64, nr)
	roleNs := make([]int64, nr)
	gapNs := make([]int64, nr)
	classNs := make([]int64, nc)
	var roleOrder, classOrder []int
	roleSeen := make([]bool, nr)
	classSeen := make([]bool, nc)
	words := (nr + 63) / 64
	nameRoles := make([]uint64, nn*words)
	nameUsed := make([]bool, nn)
	var gpuSum int64
	for i, id := range in.Name {
		ro, d := int(res.Roles[i]), in.DurNs[i]
		cnt[ro]++
		roleNs[ro] += d
		gapNs[ro] += in.GapNs[i]
		gpuSum += d
		if !roleSeen[ro] {
			roleSeen[ro] = true
			roleOrder = append(roleOrder, ro)
		}
		c := classOf[id]
		classNs[c] += d
		if !classSeen[c] {
			classSeen[c] = true
			classOrder = append(classOrder, c)
		}
		nameRoles[int(id)*words+ro>>6] |= 1 << (ro & 63)
		nameUsed[id] = true
	}
	if in.GPUSumNs > 0 {
		gpuSum = in.GPUSumNs
	}
	tokens := float64(in.Tokens)
	share := func(ns int64) float64 {
		if gpuSum <= 0 {
			return 0
		}
		return 100 * float64(ns) / float64(gpuSum)
	}
	perTok := func(x int64) float64 { return float64(x) / tokens }
	msPerTok := func(ns int64) float64 { return float64(ns) / 1e6 / tokens }

	// The known roles: those that occur, then Unattributed and the units' roles.
	known := roleOrder
	add := func(ro int) {
		if !slices.Contains(known, ro) {
			known = append(known, ro)
		}
	}
	add(0)
	for _, u := range r.units {
		for _, role := range u.Roles {
			add(int(r.roleIndex[role]))
		}
	}
	for _, ro := range known {
		name := r.roleNames[ro]
		res.RoleDispatchesPerToken = append(res.RoleDispatchesPerToken, kv(name, perTok(cnt[ro]), 1))
		res.RoleGPUMsPerToken = append(res.RoleGPUMsPerToken, kv(name, msPerTok(roleNs[ro]), 4))
		res.RoleHostGapMsPerToken = append(res.RoleHostGapMsPerToken, kv(name, msPerTok(gapNs[ro]), 4))
	}
	byShare := slices.Clone(known)
	slices.SortStableFunc(byShare, func(a, b int) int { return cmp.Compare(roleNs[b], roleNs[a]) })
	for _, ro := range byShare {
		res.RoleSharePct = append(res.RoleSharePct, kv(r.roleNames[ro], share(roleNs[ro]), 2))
	}
	slices.SortStableFunc(classOrder, func(a, b int) int { return cmp.Compare(classNs[b], classNs[a]) })
	for _, c := range classOrder {
		res.ClassSharePct = append(res.ClassSharePct, kv(r.classNameOf(c), share(classNs[c]), 2))
	}

	// Kernel columns: the roles of each name's dispatches and the units of those roles.
	res.KernelRoles = make([][]string, nn)
	res.KernelUnits = make([][]string, nn)
	for id := range nn {
		if !nameUsed[id] {
			continue
		}
		var roles []string
		for ro := 1; ro < nr; ro++ {
			if nameRoles[id*words+ro>>6]&(1<<(ro&63)) != 0 {
				roles = append(roles, r.roleNames[ro])
			}
		}
		if len(roles) == 0 {
			continue
		}
		slices.Sort(roles)
		var units []string
		for _, u := range r.units {
			for _, role := range u.Roles {
				if slices.Contains(roles, role) {
					units = append(units, u.ID)
					break
				}
			}
		}
		slices.Sort(units)
		res.KernelRoles[id], res.KernelUnits[id] = roles, units
	}

	run := RunOf(in)
	for i := range r.units {
		u := &r.units[i]
		def, opt := u.Reach(run)
		sumOf := func(roles []string) (ns, count, gap int64, recoverable float64) {
			for _, role := range roles {
				ro := r.roleIndex[role]
				ns += roleNs[ro]
				count += cnt[ro]
				gap += gapNs[ro]
				recoverable += float64(roleNs[ro])*u.Fraction(role) + float64(gapNs[ro])
			}
			return ns, count, gap, recoverable / 1e6 / tokens
		}
		fbNs, fbCount, _, _ := sumOf(u.Roles)
		dNs, dCount, dGap, dRec := sumOf(def)
		oNs, oCount, _, oRec := sumOf(opt)
		res.Units = append(res.Units, results.UnitKV{ID: u.ID, Unit: results.Unit{
			Port:                             u.Port,
			FallbackSharePct:                 num(share(fbNs), 2),
			FallbackDispatchesPerToken:       num(perTok(fbCount), 1),
			ReachedDefaultSharePct:           num(share(dNs), 2),
			ReachedDefaultDispatchesPerToken: num(perTok(dCount), 1),
			ReachedOptinSharePct:             num(share(oNs), 2),
			Note:                             u.Note(run),
			ReachedOptinDispatchesPerToken:   numPtr(perTok(oCount), 1),
			RecoverableDefaultMsPerToken:     numPtr(dRec, 4),
			RecoverableOptinMsPerToken:       numPtr(oRec, 4),
			ReachedDefaultHostGapMsPerToken:  numPtr(msPerTok(dGap), 4),
			Roles:                            sorted(u.Roles),
			ReachedDefaultRoles:              sorted(def),
			ReachedOptinRoles:                sorted(opt),
		}})
	}
}

// sorted returns a sorted copy, never nil (an empty set is written as []).
func sorted(xs []string) []string {
	out := append([]string{}, xs...)
	slices.Sort(out)
	return out
}

func num(x float64, decimals int) results.Num { return results.Num(results.Round(x, decimals)) }

func numPtr(x float64, decimals int) *results.Num {
	v := num(x, decimals)
	return &v
}

func kv(key string, x float64, decimals int) results.KV {
	return results.KV{Key: key, Value: num(x, decimals)}
}
