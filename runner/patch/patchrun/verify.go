package patchrun

import (
	"context"
	"os/exec"
	"time"

	"github.com/lablup/perfbot/runner/patch"
)

// VerifyOptions tunes VerifyWith.
type VerifyOptions struct {
	// Timeout bounds each command; default 10 minutes.
	Timeout time.Duration
	// OutputLimit is how many bytes of each command's output are kept; default 16 KiB.
	OutputLimit int
	// Wrap, when set, turns each command into the same command in a sandbox
	// (runner/sandbox's Wrap) before it starts.
	Wrap func(*exec.Cmd) error
}

// Verify runs the verification commands on the patched tree with the default
// timeout and output bound; nil cmds means patch.DefaultVerifyCommands.
func Verify(ctx context.Context, repoDir string, cmds [][]string) []patch.VerifyResult {
	return VerifyWith(ctx, repoDir, cmds, VerifyOptions{})
}

// VerifyWith runs each command from repoDir in turn, all of them even after a failure
// so the report shows every verdict. Commands left when ctx ends are reported as
// not run.
func VerifyWith(ctx context.Context, repoDir string, cmds [][]string, opts VerifyOptions) []patch.VerifyResult {
	if len(cmds) == 0 {
		cmds = patch.DefaultVerifyCommands(repoDir)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Minute
	}
	if opts.OutputLimit <= 0 {
		opts.OutputLimit = 16 << 10
	}
	out := make([]patch.VerifyResult, 0, len(cmds))
	for _, c := range cmds {
		if err := ctx.Err(); err != nil {
			out = append(out, patch.VerifyResult{Command: c, ExitCode: -1, Err: "not run: " + err.Error()})
			continue
		}
		out = append(out, runCommand(ctx, repoDir, c, opts.Timeout, opts.OutputLimit, opts.Wrap))
	}
	return out
}
