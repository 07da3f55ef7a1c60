package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/portdiff"
)

// The A/B compare's documents: the comment on the pull request (one per kind of
// compare, edited in place) and the check run's summary.
const (
	CompareComment Kind = "compare-comment" // data: CompareData
	CompareCheck   Kind = "compare-check"   // data: CompareData
)

func init() {
	files[CompareComment] = "compare-comment.md.tmpl"
	files[CompareCheck] = "compare-check.md.tmpl"
	Kinds = append(Kinds, CompareComment, CompareCheck)
}

// CompareMarker is the hidden marker of the compare comment of kind ("bench" or
// "profile"): a pull request keeps one comment per kind, so a profile compare does not
// replace the bench compare's table.
func CompareMarker(kind string) string {
	return "<!-- perfbot:compare-" + markerWord(kind) + " -->"
}

// markerWord keeps a marker to lowercase letters and digits whatever the caller passes.
func markerWord(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "bench"
	}
	return b.String()
}

// CompareMetric is one model and metric of an A/B: abstat's result (after Holm's
// correction when the session applied it).
type CompareMetric struct {
	Model  string
	Metric string
	Result abstat.Result
}

// CompareDiff is the port impact of one run of a profile compare.
type CompareDiff struct {
	Run  string
	Diff *portdiff.Diff
}

// CompareInput is what the compare documents are made of: the results as the GPU
// job decided them, and the links of the publication.
type CompareInput struct {
	Kind   string // bench or profile
	Label  string
	A, B   string // the commits
	Host   string
	Date   string
	Alpha  float64
	Tested int // comparisons in Holm's family; 0 when none was applied
	// Runs are the accepted runs per side in all, Rejected the attempts the guard
	// refused; Complete says every model was done.
	Runs     int
	Rejected int
	Complete bool
	Metrics  []CompareMetric
	Diffs    []CompareDiff
	// Before and After link the committed CSV pair; WorkflowRun and PR are nil when
	// unknown (a dry run has no pull request).
	Before, After Link
	WorkflowRun   *Link
	PR            *Link
	// Failing are the lines of the threshold that fails the check run (empty:
	// neutral); Threshold says the threshold in words ("" when none is set).
	Failing   []string
	Threshold string
	Notes     []string
	Errors    []string
	// Requested is the pull request that asked for the compare, for the documents
	// that are not on it (the CSV pair's pull request); 0 leaves it out.
	Requested int
}

// CompareData fills the compare comment and check run.
type CompareData struct {
	Marker    string
	Kind      string
	Label     string
	A, B      string
	Host      string
	Date      string
	Headline  string
	Rows      []CompareRow
	Method    string
	Runs      string
	Ports     []PortImpact
	Before    Link
	After     Link
	Run       *Link
	PR        *Link
	Failing   []string
	Threshold string
	Notes     []string
	Errors    []string
	Requested int
}

// CompareRow is one model and metric of the verdict table, formatted.
type CompareRow struct {
	Model, Metric    string
	MedianA, MedianB string
	Change           string
	Verdict          string
	Called           bool
	Test             string
	Runs             string
}

// PortImpact is the port impact of one run, formatted.
type PortImpact struct {
	Run      string
	Totals   []PortTotal
	Units    []PortUnit
	Changed  []PortKernel
	More     int // changed kernels not listed
	Appeared []PortKernel
	Vanished []PortKernel
	Notes    []string
}

// PortTotal is one per-token figure of the decode window in A and B; Change holds the
// change in percent of A in brackets (none when A is zero).
type PortTotal struct {
	Figure string
	A, B   string
	Change string
}

// PortUnit is one port unit's change and what A's ranking predicted for it.
type PortUnit struct {
	ID, Port   string
	GPU        string
	HostGap    string
	Dispatches string
	Predicted  string
	Recovered  string
}

// PortKernel is one kernel's time and calls per token in A and B; Only is its time
// per token in the one run that has it (a kernel that appeared or vanished).
type PortKernel struct {
	Kernel string
	Units  []string
	Ms     string
	Calls  string
	Only   string
}

// MaxCompareKernels is how many changed kernels a run's port impact lists.
const MaxCompareKernels = 10

// NewCompareData formats the compare's results for its documents; it computes
// nothing of its own.
func NewCompareData(in CompareInput) CompareData {
	d := CompareData{
		Marker: CompareMarker(in.Kind), Kind: in.Kind, Label: in.Label, A: in.A, B: in.B, Host: in.Host, Date: in.Date,
		Before: in.Before, After: in.After, Run: in.WorkflowRun, PR: in.PR, Failing: in.Failing, Threshold: in.Threshold,
		Notes: in.Notes, Errors: in.Errors, Requested: in.Requested,
	}
	counts := map[abstat.Verdict]int{}
	for _, m := range in.Metrics {
		d.Rows = append(d.Rows, compareRow(m))
		counts[m.Result.Verdict]++
	}
	var parts []string
	for _, v := range []abstat.Verdict{abstat.Slower, abstat.Faster, abstat.NoChange, abstat.TooNoisy, abstat.TooFew} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	d.Headline = strings.Join(parts, ", ")
	alpha := in.Alpha
	if alpha <= 0 {
		alpha = abstat.DefaultOptions().Alpha
	}
	d.Method = fmt.Sprintf("Mann-Whitney U from %d runs a side, Welch's t on the logarithms from %d, no test below; %s %% intervals of B/A", abstat.UMinRepeats, abstat.MinRepeats, trimFloat((1-alpha)*100))
	if in.Tested > 0 {
		d.Method += fmt.Sprintf("; a call stands only after Holm's correction over the %d tested comparisons", in.Tested)
	}
	d.Runs = fmt.Sprintf("%d runs measured interleaved (A and B alternating in ABBA blocks)", in.Runs)
	if in.Rejected > 0 {
		d.Runs += fmt.Sprintf("; %d attempts refused by the guard were redone in place", in.Rejected)
	}
	if !in.Complete {
		d.Runs += "; the session stopped before every model was done: the verdicts are of what was measured, uncorrected"
	}
	for _, pd := range in.Diffs {
		if pd.Diff != nil {
			d.Ports = append(d.Ports, portImpact(pd))
		}
	}
	return d
}

func trimFloat(v float64) string { return fmt.Sprintf("%.4g", v) }

func compareRow(m CompareMetric) CompareRow {
	r := m.Result
	row := CompareRow{Model: m.Model, Metric: m.Metric, MedianA: fmt.Sprintf("%.2f", r.MedianA), MedianB: fmt.Sprintf("%.2f", r.MedianB),
		Verdict: string(r.Verdict), Called: r.Verdict.Called(), Runs: fmt.Sprintf("%d / %d", r.NA, r.NB)}
	row.Change = pct2(r.ChangePct)
	switch r.Test {
	case abstat.TestMannWhitney, abstat.TestWelch:
		row.Change += fmt.Sprintf(" (%s to %s)", pct2(r.LoPct), pct2(r.HiPct))
		name := "Mann-Whitney U"
		if r.Test == abstat.TestWelch {
			name = "Welch's t"
		}
		row.Test = name + ", p = " + pValue(r.P)
		if r.AdjustedP > 0 {
			row.Test += ", " + pValue(r.AdjustedP) + " after Holm"
		}
	default:
		row.Test = "none: " + r.Why
	}
	return row
}

// pct2 is a signed percentage with two decimals; -0.00 reads +0.00.
func pct2(v float64) string {
	if math.Abs(v) < 0.005 {
		v = 0
	}
	return fmt.Sprintf("%+.2f %%", v)
}

func pValue(p float64) string {
	if p < 0.0001 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.4f", p)
}

func portImpact(pd CompareDiff) PortImpact {
	d := pd.Diff
	pi := PortImpact{Run: pd.Run, Notes: d.Notes}
	total := func(name string, c portdiff.Change, decimals int) {
		t := PortTotal{Figure: name, A: fixed(decimals, c.A), B: fixed(decimals, c.B), Change: signedFixed(decimals, c.Delta)}
		if c.A != 0 {
			t.Change += " (" + pct2(c.Pct()) + ")"
		}
		pi.Totals = append(pi.Totals, t)
	}
	total("decode wall ms/token", d.WallMsPerToken, 4)
	total("GPU ms/token", d.GPUMsPerToken, 4)
	total("host gap ms/token", d.HostGapMsPerToken, 4)
	total("dispatches/token", d.DispatchesPerToken, 1)
	total("profiled decode tok/s", d.DecodeTokS, 2)
	for _, u := range d.Units {
		// A unit that none of the two runs reaches and that was predicted nothing says
		// nothing: left out.
		if u.GPUMsPerToken == (portdiff.Change{}) && u.HostGapMsPerToken == (portdiff.Change{}) &&
			u.DispatchesPerToken == (portdiff.Change{}) && u.PredictedMsPerToken == 0 && u.RecoveredMsPerToken == 0 {
			continue
		}
		pi.Units = append(pi.Units, PortUnit{ID: u.ID, Port: u.Port,
			GPU: arrow(4, u.GPUMsPerToken), HostGap: arrow(4, u.HostGapMsPerToken), Dispatches: arrow(1, u.DispatchesPerToken),
			Predicted: fixed(4, u.PredictedMsPerToken), Recovered: signedFixed(4, u.RecoveredMsPerToken)})
	}
	for _, k := range d.Kernels {
		if k.MsPerToken.Delta == 0 && k.CallsPerToken.Delta == 0 {
			continue
		}
		if len(pi.Changed) == MaxCompareKernels {
			pi.More++
			continue
		}
		pi.Changed = append(pi.Changed, portKernel(k))
	}
	for _, k := range d.Appeared {
		pk := portKernel(k)
		pk.Only = fixed(4, k.MsPerToken.B)
		pi.Appeared = append(pi.Appeared, pk)
	}
	for _, k := range d.Vanished {
		pk := portKernel(k)
		pk.Only = fixed(4, k.MsPerToken.A)
		pi.Vanished = append(pi.Vanished, pk)
	}
	return pi
}

func portKernel(k portdiff.KernelDiff) PortKernel {
	return PortKernel{Kernel: portdiff.Short(k.Kernel), Units: k.Units, Ms: arrow(4, k.MsPerToken), Calls: arrow(2, k.CallsPerToken)}
}

func signedFixed(decimals int, v float64) string {
	if math.Abs(v) < 0.5*math.Pow(10, -float64(decimals)) {
		v = 0
	}
	return fmt.Sprintf("%+.*f", decimals, v)
}

// arrow is "A → B (change)" with one precision.
func arrow(decimals int, c portdiff.Change) string {
	return fmt.Sprintf("%s → %s (%s)", fixed(decimals, c.A), fixed(decimals, c.B), signedFixed(decimals, c.Delta))
}
