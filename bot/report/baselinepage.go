package report

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/results"
)

// RuntimePairs pairs the runtimes and says the median ratio ("" when no model has one).
func RuntimePairs(mlxcel, mlxlm *benchcsv.File, maxSpreadPct float64) ([]baseline.RuntimePair, string) {
	pairs, med, n := baseline.CompareRuntimes(mlxcel, mlxlm, maxSpreadPct)
	if n == 0 {
		return pairs, ""
	}
	return pairs, fmt.Sprintf("%.3fx over %d model(s)", med, n)
}

// tok is a reading's decode (or, with prefill, prefill) tok/s, a dash for none.
func tok(pt *baseline.Point, prefill bool) string {
	if pt == nil {
		return "—"
	}
	v := pt.Value()
	if prefill {
		v = pt.Prefill
	}
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", v)
}

// BaselineInput is what the baseline page is made of: a nightly's manifest and its
// files, or (Manifest nil) a pair of harness CSVs and a guard log given by hand.
type BaselineInput struct {
	Manifest      *results.Nightly
	Mlxcel, MlxLM *benchcsv.File
	// MlxcelCSV and MlxLMCSV are the files' names, "" for a side that has none.
	MlxcelCSV, MlxLMCSV string
	Guard               []results.GuardEvent
	GuardLog            string // the evidence's file name, "" when there is none
	Commit              string
	MaxSpreadPct        float64 // 0 takes baseline.DefaultMaxSpreadPct
	Benchmarks          string  // the repo folder of the CSVs, for the links' text
	// RowLink is the link from the page to a file of the page (line 0) or one of its
	// lines.
	RowLink  func(file string, line int) string
	Issues   map[string]Link   // the open regression issue of each model that has one
	History  *baseline.History // the nightly history, nil when unknown
	ChartURL string            // the chart's link from the page, "" for none
	Trend    *Link             // the trend page, from the page; nil for none
	// Changes and Creep are the change-point section (bot/publish fills them).
	Changes   []ChangeRow
	Creep     []string
	CreepDays int
	CreepPct  float64
}

// missingTonight are the models of the last accepted baseline that tonight's mlxcel
// CSV has no row for, and that baseline's file name.
func missingTonight(in BaselineInput) (models []string, from string) {
	if in.Manifest == nil || in.Manifest.Comparison == nil || in.Manifest.Comparison.Baseline == "" || in.History == nil || in.Mlxcel == nil {
		return nil, ""
	}
	from = in.Manifest.Comparison.Baseline
	for _, f := range in.History.Files {
		if f.Name.String() != from {
			continue
		}
		for _, model := range f.Models() {
			if len(in.Mlxcel.RowsOf(model)) == 0 && !slices.Contains(models, model) {
				models = append(models, model)
			}
		}
	}
	return models, from
}

// NewBaselinePageData lays out the baseline page from its input.
func NewBaselinePageData(in BaselineInput) BaselinePageData {
	maxSpread := in.MaxSpreadPct
	if maxSpread <= 0 {
		maxSpread = baseline.DefaultMaxSpreadPct
	}
	pairs, median := RuntimePairs(in.Mlxcel, in.MlxLM, maxSpread)
	d := BaselinePageData{
		GPU: "GPU unknown", Commit: in.Commit, MedianRatio: median,
		StabilityRule: fmt.Sprintf("A ratio is given only when each runtime's decode repeats spread at most %g%% of their median (largest minus smallest, over the median); a wider spread means the runs did not settle, and the row shows the repeats instead (`--max-spread` changes the threshold).", maxSpread),
	}
	if in.GuardLog != "" {
		d.GuardLog = &Link{Text: in.GuardLog, URL: in.RowLink(in.GuardLog, 0)}
	}
	var csvs []string
	if m := in.Manifest; m != nil {
		info := m.HostInfo
		d.GPU, d.GFX, d.Date, d.Host, d.Tenants = orUnknown(info.GPU.Value), m.GFX, m.Date, m.Host, m.Tenants
		csvs = m.CSVs
		d.Env = append(d.Env, Row{Label: "mlxcel commit", Value: in.Commit})
		for _, r := range info.Table() {
			switch {
			case r.Value == "unknown: ":
				// A fact the manifest does not carry at all, not one the host could not tell.
				continue
			case r.Name == "mlxcel commit" && strings.HasPrefix(in.Commit, r.Value):
				continue
			case r.Name == "mlxcel commit":
				r.Name = "mlxcel checkout on the host"
			}
			d.Env = append(d.Env, Row{Label: r.Name, Value: r.Value})
		}
	} else {
		csvs = slices.DeleteFunc([]string{in.MlxcelCSV, in.MlxLMCSV}, func(s string) bool { return s == "" })
		csvPageHead(&d, in)
	}
	for _, name := range csvs {
		d.CSVs = append(d.CSVs, Link{Text: path.Join(in.Benchmarks, name), URL: in.RowLink(name, 0)})
	}
	if in.Mlxcel != nil && len(in.Mlxcel.Rows) > 0 {
		d.Env = append(d.Env, Row{Label: "hardware (CSV)", Value: in.Mlxcel.Rows[0].Hardware})
	}
	if in.MlxLM != nil && len(in.MlxLM.Rows) > 0 {
		d.Env = append(d.Env, Row{Label: "mlx-lm baseline", Value: in.MlxLM.Rows[0].Version})
	}
	d.Shape = shapeRows(in.Mlxcel)
	d.Commands = []string{strings.Join(results.BenchBuildCommand, " ")}
	if m := in.Manifest; m != nil {
		for _, sw := range m.Sweeps {
			if sw.Status != "not_run" {
				d.Commands = append(d.Commands, "MODELS_DIR="+m.ModelsDir+" "+strings.Join(sw.Command, " "))
			}
		}
	}
	for _, pr := range pairs {
		row := BaselineRow{Model: pr.Model, MlxcelPrefill: tok(pr.Mlxcel, true), MlxLMPrefill: tok(pr.MlxLM, true),
			MlxcelDecode: tok(pr.Mlxcel, false), MlxLMDecode: tok(pr.MlxLM, false), Ratio: "—"}
		switch {
		case len(pr.Unstable) > 0:
			row.Ratio = "not stable"
			for _, side := range pr.Unstable {
				pt := pr.Mlxcel
				if side == "mlx-lm" {
					pt = pr.MlxLM
				}
				d.Unstable = append(d.Unstable, fmt.Sprintf("%s, %s: decode %s tok/s, a spread of %.1f%% of the median (over %g%%): no ratio", pr.Model, side, pt.Repeats(), pt.SpreadPct(), maxSpread))
			}
		case pr.DecodeRatio > 0:
			row.Ratio = fmt.Sprintf("%.2fx", pr.DecodeRatio)
		}
		if pr.Mlxcel != nil {
			row.Link = in.RowLink(pr.Mlxcel.File, pr.Mlxcel.Lines[0])
		}
		d.Rows = append(d.Rows, row)
		for _, s := range []struct{ runtime, token string }{{"mlxcel", pr.MlxcelStatus}, {"mlx-lm", pr.MlxLMStatus}} {
			if s.token != "" {
				d.Skipped = append(d.Skipped, SkippedRow{Model: pr.Model, Runtime: s.runtime, Token: s.token, Meaning: benchcsv.StatusText(s.token)})
			}
		}
	}
	d.NoRatio = noRatio(in, median, d.Unstable)
	if m := in.Manifest; m != nil {
		for _, pr := range m.Problems {
			if pr.Severity != benchcsv.Note {
				d.Problems = append(d.Problems, pr.String())
			}
		}
		for _, sw := range m.Sweeps {
			if sw.Status != "ok" && sw.Status != "not_run" {
				d.Problems = append(d.Problems, fmt.Sprintf("the %s sweep: %s: %s", sw.Name, sw.Status, sw.Reason))
			}
		}
		if c := m.Comparison; c != nil {
			d.Baseline = c.Baseline
			r := c.Rules
			d.NoiseRule = r.Describe() + " A reading outside it is re-measured once, alone, before it is reported."
			d.Verdicts = VerdictRows(c, in.Issues)
			for _, s := range c.Superseded {
				d.Superseded = append(d.Superseded, s.String())
			}
		}
		for _, rm := range m.Remeasures {
			line := fmt.Sprintf("%s was re-measured alone (%s)", rm.Model, strings.Join(results.RemeasureCommand(path.Join(m.ModelsDir, rm.Model)), " "))
			if rm.Reason != "" {
				line += ": no reading, " + rm.Reason + "; the suspect stays unconfirmed"
			} else {
				line += fmt.Sprintf(": %.2f tok/s in %s", rm.Decode, rm.CSV)
			}
			d.Remeasures = append(d.Remeasures, line)
		}
	}
	d.NoVerdict = noVerdict(in)
	d.Missing, d.MissingFrom = missingTonight(in)
	d.Changes, d.Creep, d.CreepDays, d.CreepPct = in.Changes, in.Creep, in.CreepDays, in.CreepPct
	if in.ChartURL != "" {
		d.Chart = &Link{Text: "decode tok/s per model over the nightly history, with the noise band", URL: in.ChartURL}
	}
	d.Trend = in.Trend
	d.Guard, d.GuardNotes = GuardRows(in.Guard)
	return d
}

// csvPageHead fills what a nightly's manifest would say from the CSVs themselves: the
// date, host and backend from the file name, the GPU and versions from the first row.
func csvPageHead(d *BaselinePageData, in BaselineInput) {
	f := in.Mlxcel
	if f == nil {
		f = in.MlxLM
	}
	if f == nil {
		return
	}
	d.Date, d.Host = f.Name.Date, f.Name.Host
	if _, gfx, ok := strings.Cut(f.Name.Host, "-"); ok {
		d.GFX = gfx
	}
	if in.Mlxcel != nil && len(in.Mlxcel.Rows) > 0 {
		r := in.Mlxcel.Rows[0]
		if d.Commit == "" {
			d.Commit = r.MlxcelCommit
		}
		d.Env = append(d.Env, Row{Label: "mlxcel commit", Value: commitOrDash(d.Commit)})
		for _, kv := range []Row{{Label: "mlxcel version", Value: r.Version}, {Label: "build", Value: r.BuildType},
			{Label: "MLX commit", Value: r.MlxCommit}, {Label: "MLX ROCm overlay", Value: r.OverlayCommit}, {Label: "HIP", Value: r.HIPVersion}} {
			if kv.Value != "" {
				d.Env = append(d.Env, kv)
			}
		}
	}
	d.Env = append(d.Env, Row{Label: "source", Value: "the CSVs alone: no nightly manifest, so no host facts beyond the rows and no comparison with the nightly history"})
}

// commitOrDash is the commit, or a dash for none.
func commitOrDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// noRatio says why the results table has no ratio at all ("" when it has one): the
// side that is missing, naming the CSV that is there.
func noRatio(in BaselineInput, median string, unstable []string) string {
	switch {
	case median != "":
		return ""
	case in.MlxLM == nil && in.MlxcelCSV != "":
		return fmt.Sprintf("There is no mlx-lm side: no mlx-lm CSV was given or written, only mlxcel's %s, so there is no ratio.", in.MlxcelCSV)
	case in.Mlxcel == nil && in.MlxLMCSV != "":
		return fmt.Sprintf("There is no mlxcel side: no mlxcel CSV was given or written, only mlx-lm's %s, so there is no ratio.", in.MlxLMCSV)
	case len(unstable) > 0:
		return "No model has a stable reading on both sides, so there is no ratio."
	}
	return "No model was measured by both runtimes, so there is no ratio."
}

// noVerdict says why there is no verdict against the nightly history, "" when there is
// one; it names the CSV that exists, so the page never says a file is missing that is
// there.
func noVerdict(in BaselineInput) string {
	switch {
	case in.Manifest != nil && in.Manifest.Comparison != nil && len(in.Manifest.Comparison.Models) > 0:
		return ""
	case in.Manifest != nil && in.Manifest.Comparison != nil && in.MlxcelCSV != "":
		return fmt.Sprintf("No model had a reading to compare with the nightly history tonight: the mlxcel sweep's %s holds no measured row.", in.MlxcelCSV)
	case in.Manifest == nil && in.MlxcelCSV != "":
		return fmt.Sprintf("No comparison with the nightly history was made: this page was made from the CSVs alone (mlxcel's %s), without a nightly manifest.", in.MlxcelCSV)
	case in.Manifest == nil:
		return "No comparison with the nightly history was made: this page was made from the CSVs alone, and none of them is mlxcel's."
	case in.MlxcelCSV != "":
		return fmt.Sprintf("No comparison with the nightly history was made tonight: the nightly manifest holds none, although the mlxcel sweep left %s.", in.MlxcelCSV)
	}
	return "The mlxcel sweep left no ROCm CSV to compare, so there is no verdict tonight."
}

// orUnknown is the GPU's name, or says it is unknown.
func orUnknown(s string) string {
	if s == "" {
		return "GPU unknown"
	}
	return s
}

// shapeRows describe the workload from the rows themselves.
func shapeRows(f *benchcsv.File) []Row {
	out := []Row{{Label: "batch", Value: "1, greedy, the harness's defaults (a discarded warmup pass in the same process)"}}
	if f == nil || len(f.Rows) == 0 {
		return out
	}
	r := f.Rows[0]
	if r.PromptTargetLen != "" {
		out = append(out, Row{Label: "prompt tokens", Value: r.PromptTargetLen + " (a deterministic synthetic prompt)"})
	}
	out = append(out,
		Row{Label: "generated tokens", Value: r.MaxTokens},
		Row{Label: "prompt text", Value: r.Prompt},
		Row{Label: "build", Value: r.BuildType},
	)
	return out
}
