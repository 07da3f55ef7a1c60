package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lablup/perfbot/internal/mdtext"
	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/portdiff"
)

func init() {
	register(command{name: "diff", summary: "compare two decode profiles per port unit and kernel: what went down or up, appeared or vanished", run: runDiff})
}

// diffUsage is the synopsis, then what follows the flags in --help.
const diffUsage = `A B [--rules FILE] [--format md|json]

A and B are two <run>_summary.json files (each with its <run>_decode_kernels.csv
beside it), or two results folders, whose runs are paired by name.

examples:
  perfbot diff before/Qwen3-30B-A3B-4bit_greedy_summary.json after/Qwen3-30B-A3B-4bit_greedy_summary.json
  perfbot diff benchmarks/rocm_profiles/gfx1151_929c80ab benchmarks/rocm_profiles/gfx1151_0c09b02a --format json`

// diffOptions are the inputs of `perfbot diff`.
type diffOptions struct {
	a, b   string
	rules  string
	format string
}

func runDiff(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var opts diffOptions
	fs := newFlags("diff", diffUsage, stderr)
	fs.StringVar(&opts.rules, "rules", "", "attribution rules file (default: the shipped rules)")
	fs.StringVar(&opts.format, "format", "md", "output format: md or json")
	// Flags may come before, between or after A and B.
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 2 {
		return usageError("give A and B, two summaries or two results folders (usage: perfbot diff %s)", diffUsage)
	}
	opts.a, opts.b = pos[0], pos[1]
	if opts.format != "md" && opts.format != "json" {
		return usageError("--format %s: want md or json", safetext.Quote(opts.format))
	}
	out, err := diffOf(opts)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

func diffOf(opts diffOptions) ([]byte, error) {
	rules, err := loadRules(opts.rules)
	if err != nil {
		return nil, err
	}
	da, errA := isDir(opts.a)
	db, errB := isDir(opts.b)
	switch {
	case errA != nil:
		return nil, errA
	case errB != nil:
		return nil, errB
	case da != db:
		return nil, usageError("A and B must both be summaries or both be results folders")
	case !da:
		a, err := portdiff.ReadRun(opts.a)
		if err != nil {
			return nil, err
		}
		b, err := portdiff.ReadRun(opts.b)
		if err != nil {
			return nil, err
		}
		d, err := portdiff.Compare(a, b, rules)
		if err != nil {
			return nil, err
		}
		if opts.format == "json" {
			return d.JSON()
		}
		return []byte(d.Markdown()), nil
	}
	pairs, onlyA, onlyB, err := portdiff.Pairs(opts.a, opts.b)
	if err != nil {
		return nil, err
	}
	var diffs []*portdiff.Diff
	for _, p := range pairs {
		d, err := portdiff.Compare(p[0], p[1], rules)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, d)
	}
	if opts.format == "json" {
		b, err := json.MarshalIndent(struct {
			Runs  []*portdiff.Diff `json:"runs"`
			OnlyA []string         `json:"only_in_a,omitempty"`
			OnlyB []string         `json:"only_in_b,omitempty"`
		}{diffs, onlyA, onlyB}, "", "  ")
		return append(b, '\n'), err
	}
	var b strings.Builder
	for _, only := range []struct {
		side string
		runs []string
	}{{"A", onlyA}, {"B", onlyB}} {
		if len(only.runs) > 0 {
			names := make([]string, len(only.runs))
			for i, r := range only.runs {
				names[i] = mdtext.Code(r)
			}
			fmt.Fprintf(&b, "> Only in %s, not compared: %s\n\n", only.side, strings.Join(names, ", "))
		}
	}
	for i, d := range diffs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(d.Markdown())
	}
	return []byte(b.String()), nil
}

func isDir(path string) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", safetext.Quote(path), err)
	}
	return fi.IsDir(), nil
}
