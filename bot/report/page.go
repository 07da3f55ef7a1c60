package report

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/lablup/perfbot/runner/results"
)

// PageInput is what the report page is made of, as plain values read from a results
// folder: the caller reads the folder, the ranking and the patch; the page's rows and
// prose are laid out here.
type PageInput struct {
	GFX    string // the device the results folder measured
	Folder string // the results folder's name (<gfx>_<commit8>)
	// Commit is the measured commit: the pinned base, or what the folder says.
	Commit           string
	Date             string
	Models, Sampling []string
	// HostEnv are the host's facts as hostinfo.json gives them; HasHost is false when
	// the folder has no hostinfo.json.
	HostEnv []Row
	HasHost bool
	// Method is what the session says about how it ran: the build first.
	Method     []Row
	Guard      []results.GuardEvent
	Runs       []*results.Summary
	FailedRuns []RunState
	Rules      Rules
	RankingMD  string // runner/rank's Markdown, trusted
	// Gemm is the numeric test section, nil when the folder holds no test outcome.
	Gemm *Gemm
	// KernelSteps are the decode steps counted from the decode_kernels.csv of each run
	// whose summary has no decode_steps, by run name.
	KernelSteps map[string]KernelSteps
	// Peak is the device's peak memory bandwidth, nil when perfbot does not know it.
	Peak *Peak
	// ProfilesDir is the folder of the results folders, for the reproduce lines.
	ProfilesDir string
	Files       []Link // the committed results files
	ChartURL    string // the unit chart's link from the page, "" for none
}

// KernelSteps are a run's decode steps as counted from its decode_kernels.csv: the call
// count most kernels share (Steps, 0 when unknown, with Why saying why), how many
// kernels run that many times (Whole) and how many do not run a whole number of times
// per step (Odd).
type KernelSteps struct {
	Steps, Whole, Odd int
	Why               string
}

// Peak is a device's peak memory bandwidth and where the figure comes from.
type Peak struct {
	GBps   float64
	Source string
}

// ChartText is the text of the link to the report's unit chart.
const ChartText = "GPU ms/token of each run split by port unit"

// NewPageData lays out the report page from its input.
func NewPageData(in PageInput) PageData {
	rows, notes := GuardRows(in.Guard)
	comment, lines := reproduce(in.Guard, in.ProfilesDir, in.Folder, in.Models, in.Sampling, in.Commit)
	d := PageData{
		GFX: in.GFX, Date: in.Date, Commit: in.Commit, Models: in.Models, Sampling: in.Sampling,
		Env: envRows(in.Folder, in.HostEnv, in.HasHost, in.Commit), Method: methodRows(in.Method, in.Guard, in.Gemm != nil),
		Guard: rows, GuardNotes: notes, Runs: in.Runs, Rules: in.Rules, UnitIDs: unitIDs(in.Runs),
		RankingMD: in.RankingMD, Gemm: in.Gemm, Reproduce: lines, ReproduceBy: comment,
	}
	d.GemmNotRun = gemmNotRun(in.Gemm != nil, in.Guard)
	d.Window = WindowRows(in.Runs, in.KernelSteps)
	d.Bandwidth, d.PeakNote = BandwidthRows(in.GFX, in.Peak, in.Runs)
	d.FailedRuns = in.FailedRuns
	d.Files = in.Files
	if in.ChartURL != "" {
		d.Chart = &Link{Text: ChartText, URL: in.ChartURL}
	}
	return d
}

// methodRows says what ran: the build and the profiler's flags as the session
// recorded them (session, the build first), and the first plain and profiled command
// lines the guard recorded, as they ran.
func methodRows(session []Row, evs []results.GuardEvent, hasGemm bool) []Row {
	rows := slices.Clone(session)
	seen := map[string]bool{}
	phase := ""
	for _, ev := range evs {
		switch ev.Kind {
		case results.EvSection:
			phase = ev.Phase
		case results.EvNote:
			phase = "test"
		case results.EvAttemptStart:
			label := map[string]string{"plain": "plain run (first)", "profiled": "profiled run (first)", "test": "numeric test (first)"}[phase]
			if label != "" && !seen[label] {
				seen[label] = true
				rows = append(rows, Row{Label: label, Value: ev.Command})
			}
		}
	}
	switch {
	case seen["numeric test (first)"]:
	case !hasGemm:
		rows = append(rows, Row{Label: "numeric tests", Value: "not run: the results folder holds no " + results.GemmTestsFile})
	default:
		rows = append(rows, Row{Label: "numeric tests", Value: "cargo test --release --features rocm -p mlxcel-core --lib grouped_gemm_numeric_tests::<name> -- --exact --test-threads=1 --nocapture"})
	}
	rows = append(rows, Row{Label: "analysis", Value: "perfbot analyze (decode window from the phase marks, docs/analysis.md rules)"})
	return rows
}

// unitIDs are the port units of the runs' summaries, in first-seen order.
func unitIDs(runs []*results.Summary) []string {
	var ids []string
	for _, s := range runs {
		for _, kv := range s.PortUnits {
			if !slices.Contains(ids, kv.ID) {
				ids = append(ids, kv.ID)
			}
		}
	}
	return ids
}

// reproduce is how to run the same profile again: the comment, and the commands the
// guard recorded for each run, as they ran.
func reproduce(evs []results.GuardEvent, profilesDir, folder string, models, sampling []string, commit string) (comment string, lines []string) {
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
	for _, ev := range evs {
		switch ev.Kind {
		case results.EvSection:
			phase = ev.Run + " " + ev.Phase
		case results.EvNote:
			phase = ev.Text
		case results.EvAttemptStart:
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
	lines = append(lines, "perfbot rank "+path.Join(profilesDir, folder))
	return comment, lines
}

// envRows are the page's environment rows: the measured commit and the results
// folder, then the host's facts.
func envRows(folder string, host []Row, hasHost bool, base string) []Row {
	env := []Row{{Label: "mlxcel commit", Value: base}, {Label: "results", Value: folder}}
	for _, r := range host {
		// The pinned base is the commit that was measured; the host's own reading of
		// its checkout is shown only when it says something else.
		if r.Label == "mlxcel commit" {
			if r.Value != "" && strings.HasPrefix(base, r.Value) {
				continue
			}
			r.Label = "mlxcel checkout on the host"
		}
		env = append(env, r)
	}
	if !hasHost {
		env = append(env, Row{Label: "host facts", Value: "hostinfo.json is missing from the results"})
	}
	return env
}

// gemmNotRun says why the page has no numeric test outcome ("" when it has one): the
// tests were not run, or ran (the guard log has their sections) and left no outcome.
func gemmNotRun(hasGemm bool, evs []results.GuardEvent) string {
	if hasGemm {
		return ""
	}
	for _, ev := range evs {
		if ev.Kind == results.EvNote && strings.Contains(ev.Text, results.TestModule+"::") {
			return "The numeric tests ran (the guard log has their sections) but left no outcome: the results folder holds no " + results.GemmTestsFile + ", so the gates were left as they are."
		}
	}
	return "The numeric tests were not run for this profile: the results folder holds no " + results.GemmTestsFile + ", so the gates were left as they are."
}

// WindowRows are the decode window's sanity checks of each run: dispatches per step
// against the layer count, and whether the steps are alike (a window that cuts a step
// shows in its edges). The steps come from the summary's decode_steps, else from
// kernelSteps, the run's decode_kernels.csv as counted by the caller.
func WindowRows(runs []*results.Summary, kernelSteps map[string]KernelSteps) []WindowRow {
	var out []WindowRow
	for _, s := range runs {
		row := WindowRow{Run: s.Name, PerToken: fmt.Sprintf("%.1f", float64(s.DispatchesPerToken)), Layers: "unknown", PerLayer: "—", Steps: "—", PerStep: "—"}
		if s.NumHiddenLayers > 0 {
			row.Layers = fmt.Sprint(s.NumHiddenLayers)
		}
		var perStep float64
		var readings []string
		switch st := s.DecodeSteps; {
		case st != nil:
			perStep = float64(st.Median)
			row.Steps = fmt.Sprint(st.Steps)
			row.PerStep = fmt.Sprintf("%.1f (%d to %d)", perStep, st.Min, st.Max)
			if float64(st.Edges) == perStep {
				readings = append(readings, fmt.Sprintf("the window's edges hold %d dispatches, one whole step: it cuts no step", st.Edges))
			} else {
				readings = append(readings, fmt.Sprintf("the window's edges hold %d dispatches against %g in a step: the window cuts a step", st.Edges, perStep))
			}
			if st.Max > st.Min {
				readings = append(readings, fmt.Sprintf("the steps differ by up to %d dispatches (work done once, such as growing the KV cache)", st.Max-st.Min))
			}
		default:
			k := kernelSteps[s.Name]
			if k.Steps == 0 {
				readings = append(readings, k.Why)
				break
			}
			perStep = float64(s.DecodeDispatches) / float64(k.Steps)
			row.Steps = fmt.Sprint(k.Steps)
			row.PerStep = fmt.Sprintf("%.1f", perStep)
			readings = append(readings, fmt.Sprintf("the steps are counted from the decode kernels: %d kernels run %d times", k.Whole, k.Steps))
			if k.Odd > 0 {
				readings = append(readings, fmt.Sprintf("%d kernel(s) do not run a whole number of times per step (work done in some steps only, such as growing the KV cache, or a window that cuts a step)", k.Odd))
			} else {
				readings = append(readings, "every kernel runs a whole number of times per step")
			}
		}
		if perStep > 0 && s.NumHiddenLayers > 0 {
			row.PerLayer = fmt.Sprintf("%.2f", perStep/float64(s.NumHiddenLayers))
		}
		if row.Steps != "—" && row.Steps != fmt.Sprint(s.GeneratedTokens) {
			readings = append(readings, fmt.Sprintf("dispatches/token divides by the %d generated tokens, the window holds %s steps (the first token comes out of the prefill)", s.GeneratedTokens, row.Steps))
		}
		row.Reading = strings.Join(readings, "; ")
		out = append(out, row)
	}
	return out
}

// BandwidthRows are the roofline view of each run: the bytes of weights a decode step
// reads times the decode rate (the plain run's, which the profiler did not slow, else
// the profiled one's), against the device's peak (nil when it is unknown).
func BandwidthRows(gfx string, peak *Peak, runs []*results.Summary) (rows []BandwidthRow, peakNote string) {
	peakText := "unknown"
	if peak != nil {
		peakText = fmt.Sprintf("%g", peak.GBps)
		peakNote = fmt.Sprintf("Peak of %s: %s GB/s, %s.", gfx, peakText, peak.Source)
	} else {
		peakNote = fmt.Sprintf("The peak memory bandwidth of %s is unknown to perfbot, so there is no share of it.", gfx)
	}
	for _, s := range runs {
		row := BandwidthRow{Run: s.Name, WeightsGB: "unknown", TokS: "—", AchievedGBps: "—", PeakGBps: peakText, PctOfPeak: "—"}
		tok, of := float64(s.ProfiledDecodeTokS), "profiled"
		if s.PlainDecodeTokS != nil && *s.PlainDecodeTokS > 0 {
			tok, of = float64(*s.PlainDecodeTokS), "plain"
		}
		if tok > 0 {
			row.TokS = fmt.Sprintf("%.2f (%s)", tok, of)
		}
		switch {
		case s.WeightBytesPerToken == nil:
			row.Basis = weightsUnknown(s)
		default:
			bytes := float64(*s.WeightBytesPerToken)
			row.WeightsGB = fmt.Sprintf("%.2f", bytes/1e9)
			row.Basis = s.WeightBytesBasis
			if tok > 0 {
				gbps := bytes * tok / 1e9
				row.AchievedGBps = fmt.Sprintf("%.1f", gbps)
				if peak != nil {
					row.PctOfPeak = fmt.Sprintf("%.0f", 100*gbps/peak.GBps)
				}
			}
		}
		rows = append(rows, row)
	}
	return rows, peakNote
}

// weightsUnknown says why a run has no weight bytes: the analysis's own note, or a
// summary written before perfbot counted them.
func weightsUnknown(s *results.Summary) string {
	const prefix = "the bytes of weights a decode step reads are not known: "
	for _, n := range s.Notes {
		if why, ok := strings.CutPrefix(n, prefix); ok {
			return "not known: " + why
		}
	}
	return "not known: the summary does not carry weight_bytes_per_token (an analysis without the model's config.json, or from before perfbot counted the weights)"
}
