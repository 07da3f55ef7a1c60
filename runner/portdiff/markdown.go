package portdiff

import (
	"fmt"
	"strings"

	"github.com/lablup/perfbot/internal/mdtext"
	"github.com/lablup/perfbot/internal/strs"
)

// MaxKernels is how many changed kernels the Markdown lists (the JSON has them all).
const MaxKernels = 15

// Markdown renders the diff: the per-token totals, the units, and the kernels that
// changed most, appeared or vanished.
func (d *Diff) Markdown() string {
	var b strings.Builder
	if d.A == d.B {
		fmt.Fprintf(&b, "**Decode profile diff of %s** (B against A, per decode token; rules %s)\n\n", mdtext.Code(d.A), mdtext.Code(d.Rules))
	} else {
		fmt.Fprintf(&b, "**Decode profile diff: %s (B) against %s (A)** (per decode token; rules %s)\n\n", mdtext.Code(d.B), mdtext.Code(d.A), mdtext.Code(d.Rules))
	}
	for _, n := range d.Notes {
		b.WriteString("> " + mdtext.Text(n) + "\n\n")
	}
	b.WriteString("| figure | A | B | change |\n|---|---:|---:|---:|\n")
	row := func(name string, c Change, format string) {
		fmt.Fprintf(&b, "| %s | "+format+" | "+format+" | %s |\n", name, c.A, c.B, signed(c, format))
	}
	row("decode wall ms/token", d.WallMsPerToken, "%.4f")
	row("GPU ms/token", d.GPUMsPerToken, "%.4f")
	row("host gap ms/token", d.HostGapMsPerToken, "%.4f")
	row("dispatches/token", d.DispatchesPerToken, "%.1f")
	row("profiled decode tok/s", d.DecodeTokS, "%.2f")

	b.WriteString("\n**Port units** (all roles of each unit; predicted: what A's ranking said the port could recover in A; recovered: the unit's kernel time and host gap, A minus B; a port's own new kernels are listed under the kernels that appeared)\n\n")
	b.WriteString("| unit | port | GPU ms/token | host gap ms/token | dispatches/token | predicted recoverable ms/token | recovered ms/token |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|\n")
	for _, u := range d.Units {
		fmt.Fprintf(&b, "| #%s | %s | %s | %s | %s | %.4f | %+.4f |\n", mdtext.Text(u.ID), mdtext.Text(u.Port),
			arrow(u.GPUMsPerToken, "%.4f"), arrow(u.HostGapMsPerToken, "%.4f"), arrow(u.DispatchesPerToken, "%.1f"),
			u.PredictedMsPerToken, u.RecoveredMsPerToken)
	}

	kernelTable := func(title string, ks []KernelDiff, limit int) {
		if len(ks) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n**%s** (%d)\n\n| kernel | class | units | ms/token | calls/token |\n|---|---|---|---:|---:|\n", title, len(ks))
		for i, k := range ks {
			if i == limit {
				fmt.Fprintf(&b, "\n%d more in the JSON output.\n", len(ks)-limit)
				break
			}
			units := "—"
			if len(k.Units) > 0 {
				ids := make([]string, len(k.Units))
				for i, u := range k.Units {
					ids[i] = "#" + mdtext.Text(u)
				}
				units = strings.Join(ids, ", ")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdtext.CellCode(Short(k.Kernel)), mdtext.Text(k.Class), units,
				arrow(k.MsPerToken, "%.4f"), arrow(k.CallsPerToken, "%.2f"))
		}
	}
	var changed []KernelDiff
	for _, k := range d.Kernels {
		if k.MsPerToken.Delta != 0 || k.CallsPerToken.Delta != 0 {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 && len(d.Kernels) > 0 {
		fmt.Fprintf(&b, "\nNo kernel of both runs changed its time or calls per token (%d kernels).\n", len(d.Kernels))
	}
	kernelTable("Kernels that changed most", changed, MaxKernels)
	kernelTable("Kernels only in B (appeared)", d.Appeared, MaxKernels)
	kernelTable("Kernels only in A (vanished)", d.Vanished, MaxKernels)
	return b.String()
}

func signed(c Change, format string) string {
	s := fmt.Sprintf(strings.Replace(format, "%", "%+", 1), c.Delta)
	if c.A != 0 {
		s += fmt.Sprintf(" (%+.1f %%)", c.Pct())
	}
	return s
}

func arrow(c Change, format string) string {
	return fmt.Sprintf(format+" → "+format+" (%s)", c.A, c.B, fmt.Sprintf(strings.Replace(format, "%", "%+", 1), c.Delta))
}

// Short is a kernel name without its parameter list, at most 120 characters: the
// names of one template differ in their template arguments, which are kept.
func Short(name string) string {
	depth := 0
	for i, r := range name {
		if r == '<' {
			depth++
		} else if r == '>' {
			depth--
		} else if r == '(' && depth == 0 && i > 0 {
			name = name[:i]
			break
		}
	}
	return strs.ClipRunes(name, 120, "…")
}
