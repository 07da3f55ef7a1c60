package main

import (
	"context"
	"io"

	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/rank"
)

func init() {
	register(command{name: "rank", summary: "rank the port units over a folder of run summaries", run: runRank})
}

// rankOptions are the inputs of `perfbot rank`.
type rankOptions struct {
	dir    string
	rules  string
	format string
}

func runRank(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var opts rankOptions
	fs := newFlags("rank", "DIR [--rules FILE] [--format md|json]\n\nexamples:\n  perfbot rank benchmarks/rocm_profiles/gfx1151_929c80ab\n  perfbot rank benchmarks/rocm_profiles/gfx1151_929c80ab --format json", stderr)
	fs.StringVar(&opts.rules, "rules", "", "attribution rules file (default: the shipped rules)")
	fs.StringVar(&opts.format, "format", "md", "output format: md or json")
	// Flags may come before or after DIR.
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if rest := fs.Args(); len(rest) > 0 {
		opts.dir = rest[0]
		if err := parseFlags(fs, rest[1:]); err != nil {
			return err
		}
		if len(fs.Args()) > 0 {
			return usageError("unexpected arguments %q: give one results folder", fs.Args())
		}
	}
	if opts.dir == "" {
		return usageError("give the results folder holding the runs' <run>_summary.json (usage: perfbot rank DIR [--rules FILE] [--format md|json])")
	}
	if opts.format != "md" && opts.format != "json" {
		return usageError("--format %q: want md or json", opts.format)
	}
	out, err := rankDir(opts)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

func rankDir(opts rankOptions) ([]byte, error) {
	rules, err := loadRules(opts.rules)
	if err != nil {
		return nil, err
	}
	rk, err := rank.Dir(opts.dir, rules)
	if err != nil {
		return nil, err
	}
	if opts.format == "json" {
		return rk.JSON()
	}
	return []byte(rk.Markdown()), nil
}

// loadRules loads an attribution rules file; "" is perfbot's own rules.
func loadRules(path string) (*attrib.Rules, error) {
	if path == "" {
		return attrib.Default(), nil
	}
	return attrib.Load(path)
}
