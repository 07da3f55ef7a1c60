package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
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
	fs := newFlags("rank", "DIR [--rules FILE] [--format md|json]", stderr)
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
	rules := attrib.Default()
	if opts.rules != "" {
		r, err := attrib.Load(opts.rules)
		if err != nil {
			return nil, err
		}
		rules = r
	}
	if fi, err := os.Stat(opts.dir); err != nil {
		return nil, fmt.Errorf("reading results folder: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder: give the results folder holding the runs' <run>_summary.json", opts.dir)
	}
	paths, err := filepath.Glob(filepath.Join(opts.dir, "*_summary.json"))
	if err != nil {
		return nil, fmt.Errorf("listing summaries: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *_summary.json in %s: run `perfbot analyze` first, or point rank at a results folder (benchmarks/rocm_profiles/<gfx>_<commit>)", opts.dir)
	}
	sort.Strings(paths)
	var sums []*results.Summary
	// Each summary is validated as it is read (results.ReadSummary); two of one run
	// would rank it twice, or the last one alone.
	byName := map[string]string{}
	for _, p := range paths {
		s, err := results.ReadSummary(p)
		if err != nil {
			return nil, fmt.Errorf("reading summary: %w", err)
		}
		if first, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("%s and %s both hold run %s: keep one summary per run in %s", first, p, safetext.Quote(s.Name), opts.dir)
		}
		byName[s.Name] = p
		sums = append(sums, s)
	}
	rk, err := rank.Rank(sums, rules)
	if err != nil {
		return nil, fmt.Errorf("ranking: %w", err)
	}
	if opts.format == "json" {
		return rk.JSON()
	}
	return []byte(rk.Markdown()), nil
}
