package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
)

// The view models built from runner figures: they format, they compute nothing.

// VerdictRows are the rows of the nightly verdicts table: a reading, its change against
// the band (or the last baseline) and the band, with the open regression issue of a
// model that has one.
func VerdictRows(c *baseline.Report, issues map[string]Link) []VerdictRow {
	var out []VerdictRow
	if c == nil {
		return nil
	}
	for _, m := range c.Models {
		row := VerdictRow{Model: m.Model, Verdict: string(m.Verdict), Decode: "—", Band: "—", Change: "—", Text: m.Text}
		if m.New != nil {
			row.Decode = fmt.Sprintf("%.2f", m.New.Value())
			if m.Baseline != nil || m.Band != nil {
				row.Change = signedPct(m.ChangePct)
			}
		}
		if m.Band != nil {
			row.Band = fmt.Sprintf("%.2f to %.2f (%d runs)", m.Band.Lo, m.Band.Hi, m.Band.Runs)
		}
		if l, ok := issues[m.Model]; ok {
			row.Issue = &l
		}
		out = append(out, row)
	}
	return out
}

func signedPct(v float64) string {
	if v >= 0 {
		return fmt.Sprintf("+%.1f%%", v)
	}
	return fmt.Sprintf("%.1f%%", v)
}

// VerdictCounts counts the verdicts of a night, the worst news first ("" without a
// comparison).
func VerdictCounts(c *baseline.Report) string {
	if c == nil {
		return ""
	}
	n := map[baseline.Verdict]int{}
	for _, m := range c.Models {
		n[m.Verdict]++
	}
	// The worst news first.
	var parts []string
	for _, v := range []baseline.Verdict{baseline.Regression, baseline.Suspected, baseline.Improvement, baseline.SuspectedUp,
		baseline.NotConfirmed, baseline.NoChange, baseline.NotEnough, baseline.NoResult} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return strings.Join(parts, ", ")
}

// EpicUnits are the ranked port units as the epic comment lists them.
func EpicUnits(rk *rank.Ranking) []EpicUnit {
	out := make([]EpicUnit, 0, len(rk.Units))
	for _, u := range rk.Units {
		eu := EpicUnit{
			Rank: u.Rank, ID: u.ID, Port: u.Port, Evidence: u.Evidence, BestRun: u.Best.Run,
			// The rank orders by the net figure (gross less the replacement's cost; the
			// gross when that is unknown): the comment states the figure it ranks by.
			ReachedSharePct: u.Best.ReachedSharePct, RecoverableMsPerToken: u.Best.NetMsPerToken,
			RecoverablePctOfWall: u.Best.NetPctOfWall, DispatchesRemoved: u.Best.DispatchesPerTokenRemoved,
			FallbackNotReachedPct: u.Best.FallbackNotReachedPct, Note: u.Best.Note,
		}
		if u.Override != nil && u.Override.Moved {
			eu.Override = u.Override.Reason
		}
		out = append(out, eu)
	}
	return out
}

// GuardRows summarises the guard's evidence log per section.
func GuardRows(evs []results.GuardEvent) (rows []GuardRow, notes []string) {
	var cur *GuardRow
	var waitStart time.Time
	hz := map[float64]bool{}
	idle := map[int]bool{}
	open := func(name string) {
		rows = append(rows, GuardRow{Section: name})
		cur = &rows[len(rows)-1]
		waitStart = time.Time{}
	}
	for _, ev := range evs {
		switch ev.Kind {
		case results.EvSection:
			open(ev.Run + " " + ev.Phase)
			continue
		case results.EvNote:
			open(ev.Text)
			continue
		}
		if cur == nil {
			open("session")
		}
		switch ev.Kind {
		case results.EvWaiting:
			waitStart = ev.Time
		case results.EvIdle:
			if !waitStart.IsZero() {
				cur.Waited = ev.Time.Sub(waitStart).String()
			}
			hz[ev.Hz] = true
			idle[ev.Seconds] = true
		case results.EvIdleReset:
			cur.IdleResets++
			if len(ev.GPU) > 0 {
				cur.HolderResets++
			}
			if len(ev.Compilers) > 0 {
				cur.CompilerResets++
			}
		case results.EvAttemptStart:
			cur.Attempts++
		case results.EvSample:
			if ev.Contended {
				cur.ContendedSamples++
			}
		case results.EvMonitor:
			cur.Samples += ev.Samples
		case results.EvAttemptEnd:
			switch ev.Verdict {
			case results.GuardContended:
				cur.Rejected++
				cur.Outcome = fmt.Sprintf("attempt %d rejected (contended)", ev.Attempt)
			case results.GuardInterrupted:
				cur.Outcome = fmt.Sprintf("attempt %d interrupted", ev.Attempt)
			default:
				cur.Outcome = fmt.Sprintf("clean, exit %d", ev.ExitCode)
			}
		case results.EvAllContended:
			cur.Outcome = fmt.Sprintf("every attempt (%d) was contended", ev.MaxAttempts)
		case results.EvGaveUp:
			cur.Outcome = fmt.Sprintf("gave up after %ds of waiting", ev.Seconds)
		case results.EvCaught:
			cur.Outcome = "stopped by " + ev.Signal
		}
	}
	for i := range rows {
		if rows[i].Outcome == "" {
			rows[i].Outcome = "no attempt"
		}
		if rows[i].Waited == "" {
			rows[i].Waited = "—"
		}
	}
	if len(hz) > 0 {
		notes = append(notes, fmt.Sprintf("The idle window was %s in every sample at %s Hz.", joinKeys(idle, "%ds"), joinKeys(hz, "%g")))
	}
	return rows, notes
}

func joinKeys[K int | float64](m map[K]bool, format string) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf(format, k)
	}
	return strings.Join(out, " or ")
}

// RulesData describes the attribution rules in use.
// file is the rules file's content, nil for perfbot's own rules.
func RulesData(rules *attrib.Rules, file []byte) Rules {
	r := Rules{Name: rules.Name(), Classes: rules.ClassNames(), Roles: rules.RoleNames()}
	if file != nil {
		sum := sha256.Sum256(file)
		r.Digest = hex.EncodeToString(sum[:])
	}
	for _, u := range rules.Units() {
		ru := RulesUnit{ID: u.ID, EpicItem: u.EpicItem, Port: u.Port, Roles: u.Roles}
		roles := make([]string, 0, len(u.Fractions))
		for role := range u.Fractions {
			roles = append(roles, role)
		}
		sort.Strings(roles)
		for _, role := range roles {
			fr := u.Fractions[role]
			s := fmt.Sprintf("%s %g", role, fr.Value)
			if fr.Reason != "" {
				s += ": " + fr.Reason
			}
			ru.Fractions = append(ru.Fractions, s)
		}
		r.Units = append(r.Units, ru)
	}
	return r
}
