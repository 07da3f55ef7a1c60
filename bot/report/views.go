package report

import (
	"fmt"
	"strings"

	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/rank"
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

// GemmData is the numeric test section of the page.
func GemmData(o *patch.Outcome, r *patch.Report, problem string) *Gemm {
	if o == nil {
		return nil
	}
	g := &Gemm{OverlayCommit: o.OverlayCommit, Tests: o.Tests, Decision: string(o.Decide()), Problem: problem}
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
