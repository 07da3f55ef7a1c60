package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/runner/baseline"
)

func init() {
	register(command{name: "report", summary: "render the report page of a results folder, or the baseline page of harness CSVs, without a repository", run: runReport})
}

const reportUsage = `RESULTS_DIR [--rules FILE] [--out FILE]
       perfbot report --baseline MLXCEL.csv [MLXLM.csv] [--guard-log FILE] [--max-spread PCT] [--out FILE]

Renders the page ` + "`perfbot publish`" + ` commits, from the files alone: no repository, no
commit, nothing is patched or pushed. Links to the files are relative to --out's
folder (the current folder without --out, where the page goes to stdout).

examples:
  perfbot report results/gfx1151_929c80ab --out profile.md
  perfbot report --baseline benchmarks/rocm_strixhalo-gfx1151_2026-09-30.csv \
      benchmarks/pylm_strixhalo-gfx1151_2026-09-30.csv --out baseline.md
`

type reportOptions struct {
	baseline  bool
	rules     string
	out       string
	guardLog  string
	maxSpread float64
	args      []string
}

func runReport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	o := reportOptions{}
	fs := newFlags("report", reportUsage, stderr)
	fs.BoolVar(&o.baseline, "baseline", false, "render the baseline page of one or two harness CSVs (mlxcel's rocm_ file, the mlx-lm baseline's pylm_ file) instead of a profile's report")
	fs.StringVar(&o.rules, "rules", "", "attribution rules `FILE` of a profile's report (default: the shipped rules)")
	fs.StringVar(&o.out, "out", "", "write the page to `FILE` instead of stdout")
	fs.StringVar(&o.guardLog, "guard-log", "", "the guard's evidence `FILE` of the sweeps (with --baseline)")
	fs.Float64Var(&o.maxSpread, "max-spread", baseline.DefaultMaxSpreadPct, "widest spread of a runtime's decode repeats, in `PCT` of their median, that still gives a ratio (with --baseline)")
	// Flags may come before or after the files.
	rest := args
	for {
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		o.args = append(o.args, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	page, notes, err := renderReport(o)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(stderr, "note: "+n)
	}
	if o.out == "" {
		_, err = io.WriteString(stdout, page)
		return err
	}
	if err := os.WriteFile(o.out, []byte(page), 0o644); err != nil {
		return fmt.Errorf("writing the page: %w", err)
	}
	fmt.Fprintln(stdout, o.out)
	return nil
}

// renderReport checks the command line and renders the page.
func renderReport(o reportOptions) (string, []string, error) {
	pageDir := "."
	if o.out != "" {
		pageDir = filepath.Dir(o.out)
	}
	if !o.baseline {
		switch {
		case o.guardLog != "":
			return "", nil, usageError("--guard-log goes with --baseline: a results folder has its own guard.log")
		case len(o.args) != 1:
			return "", nil, usageError("give one results folder (usage: perfbot report RESULTS_DIR [--rules FILE] [--out FILE]); %d given", len(o.args))
		}
		return publish.Page(publish.PageOptions{ResultsDir: o.args[0], RulesFile: o.rules, PageDir: pageDir})
	}
	switch {
	case o.rules != "":
		return "", nil, usageError("--rules goes with a results folder, not with --baseline")
	case len(o.args) == 0 || len(o.args) > 2:
		return "", nil, usageError("give mlxcel's CSV and, optionally, the mlx-lm baseline's (usage: perfbot report --baseline MLXCEL.csv [MLXLM.csv] [--guard-log FILE] [--out FILE]); %d given", len(o.args))
	case !(o.maxSpread > 0):
		return "", nil, usageError("--max-spread must be a positive percentage")
	}
	page, err := publish.BaselinePageOf(publish.BaselineFiles{CSVs: o.args, GuardLog: o.guardLog, MaxSpreadPct: o.maxSpread, PageDir: pageDir})
	return page, nil, err
}
