package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lablup/perfbot/internal/demo"
)

func init() {
	register(command{
		name:    "demo",
		summary: "the whole /profile rocm flow, comment to pull request, on a simulated GPU host and a local GitHub",
		run:     runDemo,
	})
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "[--out DIR] [--keep]\n\nexamples:\n  perfbot demo\n  perfbot demo --out /tmp/perfbot-demo --keep", stderr)
	out := fs.String("out", "", "write the outputs to `DIR` (new or empty; default: a new temporary folder)")
	keep := fs.Bool("keep", false, "keep the working folders (bare remote, server database, runner workspace) under <out>/work")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("demo takes no arguments, got %q", fs.Args())
	}
	res, err := demo.Run(ctx, demo.Options{Out: *out, Keep: *keep, Stdout: stdout})
	if err != nil {
		if res != nil {
			fmt.Fprintf(stderr, "perfbot demo: what was written so far is in %s\n", res.Out)
		}
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(stdout, "\ndone in %.1f s\n", res.Elapsed.Seconds())
	return nil
}
