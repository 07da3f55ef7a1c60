package publish

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/results"
)

// windowRows are the decode window's sanity checks of each run: dispatches per step
// against the layer count, and whether the steps are alike (a window that cuts a step
// shows in its edges). The steps come from the summary's decode_steps, else from the
// run's decode_kernels.csv: the call count most kernels that run about once per
// generated token share.
func windowRows(f *folder) []report.WindowRow {
	var out []report.WindowRow
	for _, s := range f.runs {
		row := report.WindowRow{Run: s.Name, PerToken: fmt.Sprintf("%.1f", float64(s.DispatchesPerToken)), Layers: "unknown", PerLayer: "—", Steps: "—", PerStep: "—"}
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
			steps, k, why := stepsFromKernels(f.dir, s)
			if steps == 0 {
				readings = append(readings, why)
				break
			}
			perStep = float64(s.DecodeDispatches) / float64(steps)
			row.Steps = fmt.Sprint(steps)
			row.PerStep = fmt.Sprintf("%.1f", perStep)
			readings = append(readings, fmt.Sprintf("the steps are counted from the decode kernels: %d kernels run %d times", k.whole, steps))
			if k.odd > 0 {
				readings = append(readings, fmt.Sprintf("%d kernel(s) do not run a whole number of times per step (work done in some steps only, such as growing the KV cache, or a window that cuts a step)", k.odd))
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

// kernelCounts are how many kernels run once per step, and how many do not run a
// whole number of times per step.
type kernelCounts struct{ whole, odd int }

// stepsFromKernels finds the steps of a run from its decode_kernels.csv: the call
// count, tokens-2 to tokens, that most kernels share.
func stepsFromKernels(dir string, s *results.Summary) (steps int, k kernelCounts, why string) {
	name := s.Name + "_decode_kernels.csv"
	p := filepath.Join(dir, name)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return 0, k, "the summary has no decode steps and the folder no " + name
	}
	rows, err := results.ReadKernelsFile(p)
	if err != nil {
		return 0, k, "the summary has no decode steps and " + name + " cannot be read: " + err.Error()
	}
	byCount := map[int64]int{}
	tokens := int64(s.GeneratedTokens)
	for _, r := range rows {
		if r.Calls >= tokens-2 && r.Calls <= tokens && r.Calls >= 2 {
			byCount[r.Calls]++
		}
	}
	var best int64
	for c, n := range byCount {
		if n > byCount[best] || n == byCount[best] && c > best {
			best = c
		}
	}
	if best == 0 {
		return 0, k, fmt.Sprintf("no kernel runs once per step (%d to %d times): the steps are not known", max(tokens-2, 2), tokens)
	}
	k.whole = byCount[best]
	for _, r := range rows {
		if r.Calls%best != 0 {
			k.odd++
		}
	}
	return int(best), k, ""
}

// bandwidthRows are the roofline view of each run: the bytes of weights a decode step
// reads times the decode rate (the plain run's, which the profiler did not slow, else
// the profiled one's), against the device's peak.
func bandwidthRows(f *folder) (rows []report.BandwidthRow, peakNote string) {
	peak, known := hostinfo.PeakBandwidthOf(f.gfx)
	peakText := "unknown"
	if known {
		peakText = fmt.Sprintf("%g", peak.GBps)
		peakNote = fmt.Sprintf("Peak of %s: %s GB/s, %s.", f.gfx, peakText, peak.Source)
	} else {
		peakNote = fmt.Sprintf("The peak memory bandwidth of %s is unknown to perfbot, so there is no share of it.", f.gfx)
	}
	for _, s := range f.runs {
		row := report.BandwidthRow{Run: s.Name, WeightsGB: "unknown", TokS: "—", AchievedGBps: "—", PeakGBps: peakText, PctOfPeak: "—"}
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
				if known {
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
