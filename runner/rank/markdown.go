package rank

import (
	"fmt"
	"strings"

	"github.com/lablup/perfbot/internal/mdtext"
)

// OrderLine is the ranked order as the epic comment states it: `#2067, #2065, ...`.
func (rk *Ranking) OrderLine() string {
	ids := make([]string, len(rk.Order))
	for i, id := range rk.Order {
		ids[i] = "#" + id
	}
	return strings.Join(ids, ", ")
}

// Markdown renders the ranked order and the evidence table.
func (rk *Ranking) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Ranked port order: %s**\n\n", rk.OrderLine())
	fmt.Fprintf(&b, "Ranked by the net decode time each port could recover at its headline run with the shipped defaults, "+
		"as a share of decode wall time per token. The gross figure is the reached kernel time times the role's recoverable fraction, "+
		"plus the host gap charged to the reached dispatches; the net one takes off what the port's fused kernel is expected to cost "+
		"(the rules' replacement; unknown: net = gross). The headline run is a %s run, unless only other samplings reach the unit; "+
		"the best run of each other sampling is listed beside it. Units that no run reaches rank last, by fallback share.\n\n", mdtext.Code(rk.Headline))
	if len(rk.KernelTimeOnlyRuns) > 0 {
		what := "these runs"
		if len(rk.KernelTimeOnlyRuns) == len(rk.Runs) {
			what = "every run"
		}
		fmt.Fprintf(&b, "> **Ranked on kernel time alone** for %s: %s. Their summaries carry no per-role host gap "+
			"(`role_host_gap_ms_per_token`; written by the target repo's own analyzer), so the host gap a port "+
			"would remove is not counted.\n\n", what, codeList(rk.KernelTimeOnlyRuns))
	}
	b.WriteString("| rank | unit | port | headline run | reached GPU share | gross ms/token | replacement ms/token | net ms/token | net % of wall | dispatches/token removed | fallback share not reached | other samplings | opt-in | reach |\n")
	b.WriteString("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n")
	for _, u := range rk.Units {
		f := u.Best
		run := mdtext.CellCode(f.Run)
		if !u.Evidence && f.FallbackSharePct == 0 && f.FallbackDispatchesPerToken == 0 {
			run = "none"
		}
		optIn := "—"
		if o := u.OptIn; o != nil {
			optIn = fmt.Sprintf("%.2f %% reached, %.4f ms/token net (%.2f %% of wall) in %s", o.ReachedSharePct, o.NetMsPerToken, o.NetPctOfWall, mdtext.CellCode(o.Run))
		}
		notReached := fmt.Sprintf("%.2f %%", f.FallbackNotReachedPct)
		if m := u.MostNotReached; m != nil {
			notReached += fmt.Sprintf(" (%.2f %% in %s)", m.FallbackNotReachedPct, mdtext.CellCode(m.Run))
		}
		others := "—"
		if len(u.OtherSamplings) > 0 {
			var parts []string
			for _, o := range u.OtherSamplings {
				parts = append(parts, fmt.Sprintf("%s: %.4f ms/token net (%.2f %% of wall) in %s", mdtext.CellCode(o.Sampling), o.NetMsPerToken, o.NetPctOfWall, mdtext.CellCode(o.Run)))
			}
			others = strings.Join(parts, "; ")
		}
		repl := "unknown"
		if f.ReplacementMsPerToken != nil {
			repl = fmt.Sprintf("%.4f", *f.ReplacementMsPerToken)
		} else if !f.reaches() {
			repl = "—"
		}
		unit := "#" + u.ID
		if u.EpicItem > 0 {
			unit += fmt.Sprintf(" (item %d)", u.EpicItem)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %.2f %% | %.4f | %s | %.4f | %.2f %% | %.1f | %s | %s | %s | %s |\n",
			u.Rank, unit, cell(u.Port), run, f.ReachedSharePct, f.RecoverableMsPerToken, repl, f.NetMsPerToken, f.NetPctOfWall,
			f.DispatchesPerTokenRemoved, notReached, others, optIn, cell(f.Note))
	}
	b.WriteString("\nReplacement cost per unit:\n\n")
	for _, u := range rk.Units {
		fmt.Fprintf(&b, "- #%s: %s\n", u.ID, oneLine(u.Replacement))
	}
	var overrides []string
	for _, u := range rk.Units {
		o := u.Override
		if o == nil {
			continue
		}
		var what string
		switch o.Action {
		case "pin":
			what = fmt.Sprintf("pinned at place %d", o.Position)
		default:
			what = fmt.Sprintf("placed %s #%s", o.Action, o.Other)
		}
		if !o.Moved {
			what += " (it already stood there)"
		}
		overrides = append(overrides, fmt.Sprintf("- #%s %s: %s\n", u.ID, what, o.Reason))
	}
	if len(overrides) > 0 {
		b.WriteString("\nOverrides from the rules:\n\n")
		for _, l := range overrides {
			b.WriteString(l)
		}
	}
	if len(rk.Notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range rk.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

func codeList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = mdtext.Code(n)
	}
	return strings.Join(out, ", ")
}

// oneLine keeps rules-file text on one list line.
func oneLine(s string) string {
	return strings.ReplaceAll(s, "\n", " ")
}

// cell keeps rules-file text (ports, notes) inside one table cell; the text is the
// target repo's own and stays readable as raw Markdown.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
