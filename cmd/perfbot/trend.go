package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lablup/perfbot/bot/trend"
	"github.com/lablup/perfbot/runner/baseline"
)

func init() {
	register(command{name: "trend", summary: "write the trend page: decode tok/s per model over the nightly history, as static HTML", run: runTrend})
}

func runTrend(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trend", `--history DIR --out DIR [--link-base URL] [--title TEXT] [--window N] [--min-history N] [--k K] [--min-change PCT]

examples:
  perfbot trend --history benchmarks --out site
  perfbot trend --history benchmarks --out site --link-base https://github.com/lablup/mlxcel/blob/main/benchmarks/`, stderr)
	history := fs.String("history", "", "the nightly history: the benchmarks folder of the default branch")
	out := fs.String("out", "", "write index.html into `DIR`")
	linkBase := fs.String("link-base", "", "where links to CSV rows start, e.g. https://github.com/o/r/blob/main/benchmarks/ (default: the history folder, relative to --out)")
	title := fs.String("title", "", "the page's title")
	rules := baseline.DefaultRules()
	rulesFlags(fs, &rules)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if *history == "" || *out == "" {
		return usageError("--history and --out are required")
	}
	if err := rules.Validate(); err != nil {
		return usageError("%v", err)
	}
	// A folder without a nightly CSV would give a page with no chart: most likely the
	// wrong folder, so say so rather than publish an empty page.
	if h, err := baseline.LoadDir(*history); err == nil && len(h.Files) == 0 {
		msg := fmt.Sprintf("%s holds no harness CSV: give the benchmarks folder of the default branch; no page was written", *history)
		if len(h.Unread) > 0 {
			msg = fmt.Sprintf("%s holds no readable harness CSV (%d could not be read, the first: %s); no page was written", *history, len(h.Unread), h.Unread[0])
		}
		return fmt.Errorf("%s", msg)
	}
	p, h, err := trend.Write(*history, *out, trend.Options{Title: *title, LinkBase: *linkBase, Rules: rules})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d CSV file(s) read", p, len(h.Files))
	if len(h.Unread) > 0 {
		fmt.Fprintf(stdout, ", %d left out", len(h.Unread))
	}
	fmt.Fprintln(stdout)
	for _, u := range h.Unread {
		fmt.Fprintf(stdout, "  not read: %s\n", u)
	}
	return nil
}
