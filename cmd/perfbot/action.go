package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/lablup/perfbot/action"
)

func init() {
	register(command{name: "action", summary: "run as a GitHub Actions step: the job named by the step's inputs (docs/action.md)", run: runAction})
}

// actionOptions are the inputs of `perfbot action`: none on the command line, since a
// step passes everything through its environment (INPUT_*, GITHUB_*).
type actionOptions struct {
	stdout io.Writer
	getenv func(string) string
}

func runAction(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("action", "(inputs come from the step's environment: INPUT_JOB, INPUT_GITHUB-TOKEN, ...; see docs/action.md)"+
		"\n\nexamples:\n  perfbot action    # in a step of the workflow, with INPUT_JOB=gate and the event in GITHUB_EVENT_PATH", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q: the Action's inputs come from the step's environment", fs.Arg(0))
	}
	return runActionStep(ctx, actionOptions{stdout: stdout, getenv: os.Getenv})
}

func runActionStep(ctx context.Context, o actionOptions) error {
	err := action.Run(ctx, action.Options{Stdout: o.stdout, Getenv: o.getenv})
	if errors.Is(err, action.ErrJobFailed) {
		// Already reported as annotations on the step; printing it again raw could let
		// hostile text in it be read as a workflow command.
		code := 1
		if ctx.Err() != nil {
			code = interruptCode(ctx)
		}
		return &exitError{code: code}
	}
	return err
}
