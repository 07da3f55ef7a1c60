package attrib

import "fmt"

// pass is one application of the rules to a decode sequence. Every test a rule makes
// on a dispatch is a lookup in a per-name mask, computed once per distinct name: the
// loops below touch small integer arrays only.
type pass struct {
	name  []uint32
	grid  []int64
	roles []uint8
	masks [][]bool // selector index -> name index -> match
	notes []string
	r     *Rules
}

func (p *pass) is(sel int, i int) bool { return p.masks[sel][p.name[i]] }

func (p *pass) set(i int, role uint8) {
	if p.roles[i] == 0 {
		p.roles[i] = role
	}
}

func (p *pass) apply(ru *rule) {
	switch ru.kind {
	case KindSpanAfterWidest:
		p.spanAfterWidest(ru)
	case KindSpanBetween:
		p.spanBetween(ru)
	case KindCluster:
		p.cluster(ru)
	case KindFollowedBy:
		p.followedBy(ru)
	case KindPair:
		p.pair(ru)
	case KindMatch:
		for i := range p.roles {
			if p.roles[i] == 0 && p.is(ru.match, i) {
				p.roles[i] = ru.role
			}
		}
	}
}

// spanAfterWidest: after every widest dispatch (largest grid among the widest
// selector's matches) up to the first `until` match.
func (p *pass) spanAfterWidest(ru *rule) {
	n := len(p.roles)
	var widest int64
	any := false
	for i := 0; i < n; i++ {
		if p.is(ru.widest, i) {
			any = true
			if p.grid != nil && p.grid[i] > widest {
				widest = p.grid[i]
			}
		}
	}
	if !any {
		return
	}
	if widest == 0 {
		// Without grids every candidate ties for widest, so the span would start after
		// every one of them: skip rather than attribute most of the step.
		p.notes = append(p.notes, fmt.Sprintf("%s not attributed: the trace has no grid sizes (Grid_Size columns), so the widest dispatch that starts it cannot be told apart", p.r.roleNames[ru.role]))
		return
	}
	for i := 0; i < n; i++ {
		if !p.is(ru.widest, i) || p.grid[i] != widest {
			continue
		}
		j := i + 1
		for ; j < n && !p.is(ru.until, j); j++ {
			p.set(j, ru.role)
		}
		i = j - 1
	}
}

// spanBetween: around each anchor, the dispatches after the previous bound and
// before the next one.
func (p *pass) spanBetween(ru *rule) {
	n := len(p.roles)
	lastBound := -1
	for i := 0; i < n; i++ {
		if p.is(ru.anchor, i) {
			end := i + 1
			for end < n && !p.is(ru.bounds, end) {
				end++
			}
			p.assignSpan(ru, lastBound+1, end)
			lastBound = end
			i = end
			continue
		}
		if p.is(ru.bounds, i) {
			lastBound = i
		}
	}
}

func (p *pass) assignSpan(ru *rule, lo, hi int) {
	last := hi
	if ru.fromLast != nil {
		for j := hi - 1; j >= lo; j-- {
			if p.is(ru.fromLast.match, j) {
				last = j
				break
			}
		}
	}
	for j := lo; j < hi; j++ {
		if p.roles[j] != 0 {
			continue
		}
		if j >= last {
			p.roles[j] = ru.fromLast.role
			continue
		}
		role := ru.rest
		for k := range ru.assign {
			if p.is(ru.assign[k].match, j) {
				role = ru.assign[k].role
				break
			}
		}
		p.roles[j] = role
	}
}

// cluster: anchors at most `within` positions apart form a cluster.
func (p *pass) cluster(ru *rule) {
	n := len(p.roles)
	any := false
	for i := 0; i < n; i++ {
		if p.is(ru.anchor, i) {
			any = true
			p.set(i, ru.role)
		}
	}
	if !any {
		return
	}
	if s := ru.anywhere; s != nil {
		for i := 0; i < n; i++ {
			if p.roles[i] == 0 && p.is(s.match, i) {
				p.roles[i] = s.role
			}
		}
	}
	if ru.inside == nil && ru.after == nil {
		return
	}
	first, last := -1, -1
	for i := 0; i <= n; i++ {
		if i < n && !p.is(ru.anchor, i) {
			continue
		}
		if i < n && last >= 0 && i-last <= ru.within {
			last = i
			continue
		}
		if last >= 0 {
			p.closeCluster(ru, first, last)
		}
		first, last = i, i
	}
}

func (p *pass) closeCluster(ru *rule, first, last int) {
	if s := ru.inside; s != nil {
		for j := first + 1; j < last; j++ {
			if p.roles[j] == 0 && p.is(s.match, j) {
				p.roles[j] = s.role
			}
		}
	}
	if s := ru.after; s != nil {
		for j := last + 1; j < len(p.roles); j++ {
			if (s.until >= 0 && p.is(s.until, j)) || !p.is(s.match, j) {
				break
			}
			p.set(j, s.role)
		}
	}
}

// followedBy: an unassigned `first` dispatch and the `then` dispatches right after it.
func (p *pass) followedBy(ru *rule) {
	n := len(p.roles)
	for i := 0; i < n; i++ {
		if p.roles[i] != 0 || !p.is(ru.first, i) {
			continue
		}
		p.roles[i] = ru.role
		j := i + 1
		for ; j < n && p.is(ru.then, j); j++ {
			p.set(j, ru.role)
		}
		i = j - 1
	}
}

// pair: an unassigned `first` directly followed by an unassigned `second`; role when
// the dispatches before it match preceded_by in order, else else_role.
func (p *pass) pair(ru *rule) {
	n := len(p.roles)
	k := len(ru.precededBy)
	for i := 0; i+1 < n; i++ {
		if p.roles[i] != 0 || p.roles[i+1] != 0 || !p.is(ru.first, i) || !p.is(ru.second, i+1) {
			continue
		}
		role := ru.role
		if k > 0 {
			ok := i >= k
			for m := 0; ok && m < k; m++ {
				ok = p.is(ru.precededBy[m], i-k+m)
			}
			if !ok {
				role = ru.elseRole
			}
		}
		if role == 0 {
			continue
		}
		p.roles[i], p.roles[i+1] = role, role
		i++
	}
}
