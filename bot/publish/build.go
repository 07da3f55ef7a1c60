package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/rank"
)

// guardRows summarises the guard's evidence log per section.
func guardRows(evs []guard.Event) (rows []report.GuardRow, notes []string) {
	var cur *report.GuardRow
	var waitStart time.Time
	hz := map[float64]bool{}
	idle := map[int]bool{}
	open := func(name string) {
		rows = append(rows, report.GuardRow{Section: name})
		cur = &rows[len(rows)-1]
		waitStart = time.Time{}
	}
	for _, ev := range evs {
		switch ev.Kind {
		case guard.EvSection:
			open(ev.Run + " " + ev.Phase)
			continue
		case guard.EvNote:
			open(ev.Text)
			continue
		}
		if cur == nil {
			open("session")
		}
		switch ev.Kind {
		case guard.EvWaiting:
			waitStart = ev.Time
		case guard.EvIdle:
			if !waitStart.IsZero() {
				cur.Waited = ev.Time.Sub(waitStart).String()
			}
			hz[ev.Hz] = true
			idle[ev.Seconds] = true
		case guard.EvIdleReset:
			cur.IdleResets++
			if len(ev.GPU) > 0 {
				cur.HolderResets++
			}
			if len(ev.Compilers) > 0 {
				cur.CompilerResets++
			}
		case guard.EvAttemptStart:
			cur.Attempts++
		case guard.EvSample:
			if ev.Contended {
				cur.ContendedSamples++
			}
		case guard.EvMonitor:
			cur.Samples += ev.Samples
		case guard.EvAttemptEnd:
			switch ev.Verdict {
			case guard.Contended:
				cur.Rejected++
				cur.Outcome = fmt.Sprintf("attempt %d rejected (contended)", ev.Attempt)
			case guard.Interrupted:
				cur.Outcome = fmt.Sprintf("attempt %d interrupted", ev.Attempt)
			default:
				cur.Outcome = fmt.Sprintf("clean, exit %d", ev.ExitCode)
			}
		case guard.EvAllContended:
			cur.Outcome = fmt.Sprintf("every attempt (%d) was contended", ev.MaxAttempts)
		case guard.EvGaveUp:
			cur.Outcome = fmt.Sprintf("gave up after %ds of waiting", ev.Seconds)
		case guard.EvCaught:
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

// methodRows says what ran: the build and the profiler's flags as the session
// recorded them, and the first plain and profiled command lines the guard recorded, as
// they ran.
func methodRows(f *folder) []report.Row {
	build, rest := f.sessionMethod()
	rows := append([]report.Row{build}, rest...)
	evs := f.guard
	seen := map[string]bool{}
	phase := ""
	for _, ev := range evs {
		switch ev.Kind {
		case guard.EvSection:
			phase = ev.Phase
		case guard.EvNote:
			phase = "test"
		case guard.EvAttemptStart:
			label := map[string]string{"plain": "plain run (first)", "profiled": "profiled run (first)", "test": "numeric test (first)"}[phase]
			if label != "" && !seen[label] {
				seen[label] = true
				rows = append(rows, report.Row{Label: label, Value: ev.Command})
			}
		}
	}
	if !seen["numeric test (first)"] {
		rows = append(rows, report.Row{Label: "numeric tests", Value: "cargo test --release --features rocm -p mlxcel-core --lib grouped_gemm_numeric_tests::<name> -- --exact --test-threads=1 --nocapture"})
	}
	rows = append(rows, report.Row{Label: "analysis", Value: "perfbot analyze (decode window from the phase marks, docs/analysis.md rules)"})
	return rows
}

// rulesData describes the attribution rules in use.
// file is the rules file's content, nil for perfbot's own rules.
func rulesData(rules *attrib.Rules, file []byte) report.Rules {
	r := report.Rules{Name: rules.Name(), Classes: rules.ClassNames(), Roles: rules.RoleNames()}
	if file != nil {
		sum := sha256.Sum256(file)
		r.Digest = hex.EncodeToString(sum[:])
	}
	for _, u := range rules.Units() {
		ru := report.RulesUnit{ID: u.ID, EpicItem: u.EpicItem, Port: u.Port, Roles: u.Roles}
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

// unitIDs are the port units of the runs' summaries, in first-seen order.
func unitIDs(f *folder) []string {
	var ids []string
	for _, s := range f.runs {
		for _, kv := range s.PortUnits {
			if !slices.Contains(ids, kv.ID) {
				ids = append(ids, kv.ID)
			}
		}
	}
	return ids
}

// epicUnits are the ranked units as the epic comment lists them.
func epicUnits(rk *rank.Ranking) []report.EpicUnit {
	out := make([]report.EpicUnit, 0, len(rk.Units))
	for _, u := range rk.Units {
		eu := report.EpicUnit{
			Rank: u.Rank, ID: u.ID, Port: u.Port, Evidence: u.Evidence, BestRun: u.Best.Run,
			ReachedSharePct: u.Best.ReachedSharePct, RecoverableMsPerToken: u.Best.RecoverableMsPerToken,
			RecoverablePctOfWall: u.Best.RecoverablePctOfWall, DispatchesRemoved: u.Best.DispatchesPerTokenRemoved,
			FallbackNotReachedPct: u.Best.FallbackNotReachedPct, Note: u.Best.Note,
		}
		if u.Override != nil && u.Override.Moved {
			eu.Override = u.Override.Reason
		}
		out = append(out, eu)
	}
	return out
}

// gemmData is the numeric test section of the page.
func gemmData(o *patch.Outcome, r *patch.Report, problem string) *report.Gemm {
	if o == nil {
		return nil
	}
	g := &report.Gemm{OverlayCommit: o.OverlayCommit, Tests: o.Tests, Decision: string(o.Decide()), Problem: problem}
	if r != nil {
		g.Tests, g.Decision = r.Tests, string(r.Decision)
		for _, fr := range r.Files {
			if fr.Changed {
				g.Changed = append(g.Changed, fr.Path)
			}
		}
	}
	return g
}

// reproduce is how to run the same profile again: the comment, and the commands the
// guard recorded for each run, as they ran.
func reproduce(f *folder, profilesDir string, models, sampling []string, commit string) (comment string, lines []string) {
	comment = "/profile rocm"
	if len(models) > 0 {
		comment += " models=" + strings.Join(models, ",")
	}
	if len(sampling) > 0 {
		comment += " sampling=" + strings.Join(sampling, ",")
	}
	if commit != "" {
		comment += " ref=" + commit
	}
	lines = []string{
		"git checkout " + commit,
		"cargo build --release --features rocm --bin mlxcel-bench-decode",
	}
	phase := ""
	seen := map[string]bool{}
	for _, ev := range f.guard {
		switch ev.Kind {
		case guard.EvSection:
			phase = ev.Run + " " + ev.Phase
		case guard.EvNote:
			phase = ev.Text
		case guard.EvAttemptStart:
			if !seen[phase] {
				seen[phase] = true
				// Only the profiled runs print phase marks (the analysis needs them).
				if strings.HasSuffix(phase, " profiled") {
					lines = append(lines, "MLXCEL_BENCH_PHASE_MARKS=1 "+ev.Command)
				} else {
					lines = append(lines, ev.Command)
				}
			}
		}
	}
	lines = append(lines, "perfbot rank "+path.Join(profilesDir, f.name))
	return comment, lines
}
