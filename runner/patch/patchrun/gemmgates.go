package patchrun

import (
	"context"
	"os/exec"
	"time"

	"github.com/lablup/perfbot/runner/patch"
)

// Options tunes GemmGates.
type Options struct {
	// DryRun computes the changes without writing them or running the checker.
	DryRun bool
	// Python runs the checker; default "python3".
	Python string
	// CheckerTimeout bounds the checker run; default 2 minutes.
	CheckerTimeout time.Duration
	// OutputLimit is how many bytes of checker output the report keeps; default 16 KiB.
	OutputLimit int
	// Wrap, when set, turns the checker's command into the same command in a sandbox
	// (runner/sandbox's Wrap) before it starts.
	Wrap func(*exec.Cmd) error
}

// GemmGates applies the outcome of the three grouped_gemm numeric tests to the repo at
// repoDir (patch.Apply: three passes switch the gates and drop the checker entry, a
// failure on the GPU is recorded in the entry's comment, anything else changes
// nothing), then runs the repo's checker on the patched tree and records its verdict
// in the report. A *patch.RefusedError means a file was not as expected and nothing
// was written or run.
func GemmGates(ctx context.Context, repoDir string, outcome patch.Outcome, opts Options) (patch.Report, error) {
	r, err := patch.Apply(ctx, repoDir, outcome, opts.DryRun)
	if err != nil || opts.DryRun {
		return r, err
	}
	r.SetChecker(runChecker(ctx, repoDir, opts))
	return r, nil
}

// runChecker runs the repo's checker from the repo root and reads its verdict.
func runChecker(ctx context.Context, repoDir string, opts Options) *patch.CheckerResult {
	py := opts.Python
	if py == "" {
		py = "python3"
	}
	timeout := opts.CheckerTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	limit := opts.OutputLimit
	if limit <= 0 {
		limit = 16 << 10
	}
	return patch.ParseChecker(runCommand(ctx, repoDir, []string{py, patch.CheckerPath}, timeout, limit, opts.Wrap))
}
