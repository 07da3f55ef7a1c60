package publish

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/runner/results"
)

// kernelSteps counts the decode steps of each run whose summary has no decode_steps
// from its decode_kernels.csv, for the page's window checks.
func kernelSteps(f *folder) map[string]report.KernelSteps {
	out := map[string]report.KernelSteps{}
	for _, s := range f.runs {
		if s.DecodeSteps != nil {
			continue
		}
		steps, k, why := stepsFromKernels(f.dir, s)
		out[s.Name] = report.KernelSteps{Steps: steps, Whole: k.whole, Odd: k.odd, Why: why}
	}
	return out
}

// kernelCounts are how many kernels run once per step, and how many do not run a
// whole number of times per step.
type kernelCounts struct{ whole, odd int }

// stepsFromKernels finds the steps of a run from its decode_kernels.csv, by the rule
// the analysis splits the window with (results.StepCount).
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
	counts := make([]int64, len(rows))
	for i, r := range rows {
		counts[i] = r.Calls
	}
	tokens := int64(s.GeneratedTokens)
	best, whole := results.StepCount(counts, tokens)
	if best == 0 {
		return 0, k, fmt.Sprintf("no kernel runs once per step (%d to %d times): the steps are not known", max(tokens-2, 2), tokens)
	}
	k.whole = whole
	for _, r := range rows {
		if r.Calls%best != 0 {
			k.odd++
		}
	}
	return int(best), k, ""
}
