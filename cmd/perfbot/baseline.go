package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
)

func init() {
	register(command{name: "baseline", summary: "compare benchmark CSVs within their noise; publish a nightly baseline", run: runBaseline})
}

const baselineUsage = `compare --history DIR --new FILE [--window N] [--min-history N] [--json]
       perfbot baseline compare A.csv B.csv [--history DIR] [--json]
       perfbot baseline publish --results DIR --repo DIR [--dry-run DIR] [--json]

examples:
  perfbot baseline compare --history benchmarks --new out/benchmarks/rocm_strixhalo-gfx1151_2026-10-01.csv
  perfbot baseline publish --results out/benchmarks --repo . --dry-run /tmp/nightly`

func runBaseline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runGroup(ctx, "baseline", "subcommand", baselineUsage,
		[]subcommand{{"compare", runBaselineCompare}, {"publish", runBaselinePublish}}, args, stdout, stderr)
}

// compareOptions are the inputs of `perfbot baseline compare`.
type compareOptions struct {
	history string
	newFile string
	a, b    string
	rules   baseline.Rules
	json    bool
}

// rulesFlags registers the noise rules' flags on fs.
func rulesFlags(fs *flag.FlagSet, r *baseline.Rules) {
	fs.IntVar(&r.Window, "window", r.Window, "the noise band is made of a model's last `N` comparable nightly runs")
	fs.IntVar(&r.MinHistory, "min-history", r.MinHistory, "fewest comparable runs a band needs; below it the verdict is \"not enough history\"")
	fs.Float64Var(&r.K, "k", r.K, "band half-width in robust standard deviations")
	fs.Float64Var(&r.MinChangePct, "min-change", r.MinChangePct, "smallest change in percent ever called significant")
}

func runBaselineCompare(_ context.Context, args []string, stdout, stderr io.Writer) error {
	o := compareOptions{rules: baseline.DefaultRules()}
	fs := newFlags("baseline compare", `--history DIR --new FILE [--window N] [--min-history N] [--k K] [--min-change PCT] [--json]
       perfbot baseline compare A.csv B.csv [--history DIR] [--json]

examples:
  perfbot baseline compare --history benchmarks --new out/benchmarks/rocm_strixhalo-gfx1151_2026-10-01.csv
  perfbot baseline compare benchmarks/rocm_strixhalo-gfx1151_2026-09-30.csv out/rocm_strixhalo-gfx1151_2026-10-01.csv --json`, stderr)
	fs.StringVar(&o.history, "history", "", "the benchmarks folder of the default branch (the nightly history)")
	fs.StringVar(&o.newFile, "new", "", "the new nightly `FILE` to judge against the history")
	rulesFlags(fs, &o.rules)
	fs.BoolVar(&o.json, "json", false, "print the comparison as JSON")
	var files []string
	for rest := args; ; {
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if err := o.rules.Validate(); err != nil {
		return usageError("%v", err)
	}
	switch {
	case len(files) == 2 && o.newFile == "":
		o.a, o.b = files[0], files[1]
		return compareAB(o, stdout)
	case len(files) == 0 && o.newFile != "" && o.history != "":
		return compareNightly(o, stdout)
	case len(files) > 0 && o.newFile != "":
		return usageError("give either --new FILE with --history DIR, or two files A.csv B.csv, not both")
	case len(files) == 1 || len(files) > 2:
		return usageError("give two files to compare (A.csv B.csv), got %d", len(files))
	}
	return usageError("give --history DIR and --new FILE (a nightly run against its history), or two files A.csv B.csv (an A/B)")
}

func compareNightly(o compareOptions, stdout io.Writer) error {
	h, err := baseline.LoadDir(o.history)
	if err != nil {
		return err
	}
	f, err := benchcsv.ReadFile(o.newFile)
	if err != nil {
		return err
	}
	rep := baseline.CompareNightly(h, f, o.rules)
	if o.json {
		return writeJSON(stdout, rep)
	}
	fmt.Fprintf(stdout, "%s against the nightly history in %s\n", rep.File, o.history)
	if rep.Baseline != "" {
		fmt.Fprintf(stdout, "last accepted baseline: %s\n", rep.Baseline)
	} else {
		fmt.Fprintln(stdout, "last accepted baseline: none (no earlier nightly run of this backend and host)")
	}
	if !f.Name.Nightly() {
		fmt.Fprintf(stdout, "note: %s is not a nightly sweep (an experiment or a single-model run); it is judged against the nightly history all the same\n", rep.File)
	}
	fmt.Fprintf(stdout, "noise band: median and MAD/IQR of the last %d comparable runs, ±%g sd, at least ±%g%%; %d runs at least\n\n",
		o.rules.Window, o.rules.K, o.rules.MinChangePct, o.rules.MinHistory)
	for _, m := range rep.Models {
		fmt.Fprintf(stdout, "%-22s %s: %s\n", m.Verdict, m.Model, m.Text)
	}
	if n := len(rep.Suspects()); n > 0 {
		fmt.Fprintf(stdout, "\n%d suspect(s) not re-measured: `perfbot run bench` re-measures each once with the harness's single-model mode before reporting\n", n)
	}
	printSuperseded(stdout, rep.Superseded)
	printUnread(stdout, rep.Unread)
	return nil
}

func compareAB(o compareOptions, stdout io.Writer) error {
	a, err := benchcsv.ReadFile(o.a)
	if err != nil {
		return err
	}
	b, err := benchcsv.ReadFile(o.b)
	if err != nil {
		return err
	}
	var h *baseline.History
	if o.history == "" {
		// The files' own folder is where newer readings would be.
		o.history = filepath.Dir(o.a)
	}
	if h, err = baseline.LoadDir(o.history); err != nil {
		return err
	}
	rep, err := baseline.CompareAB(a, b, h, abstat.DefaultOptions())
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(stdout, rep)
	}
	fmt.Fprintf(stdout, "A: %s\nB: %s\n", rep.A, rep.B)
	fmt.Fprintf(stdout, "repeats of each file per model and metric: Mann-Whitney U from %d a side, Welch's t on the logarithms from %d, no test below; %g %% intervals of B/A; Holm's correction over the %d tested comparisons; no significant change: the interval within ±%g %%\n\n",
		abstat.UMinRepeats, abstat.MinRepeats, 100*(1-rep.Options.Alpha), rep.Tested, rep.Options.SamePct)
	for _, r := range rep.Results {
		if len(r.Metrics) == 0 {
			fmt.Fprintf(stdout, "%-22s %s: %s\n", r.Verdict, r.Model, r.Text)
			continue
		}
		fmt.Fprintf(stdout, "%-22s %s\n", r.Verdict, r.Model)
		for _, m := range r.Metrics {
			fmt.Fprintf(stdout, "  %-14s %s\n", m.Metric+":", m.Text)
		}
	}
	printSuperseded(stdout, rep.Superseded)
	printUnread(stdout, h.Unread)
	return nil
}

func printSuperseded(w io.Writer, ss []baseline.Superseded) {
	if len(ss) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWARNING: %d baseline reading(s) are superseded: a newer reading of the same backend and host exists, so the comparison measures a stale row\n", len(ss))
	for _, s := range ss {
		fmt.Fprintf(w, "  %s\n", s)
	}
}

func printUnread(w io.Writer, unread []string) {
	if len(unread) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%d file(s) of the folder were not read:\n", len(unread))
	for _, u := range unread {
		fmt.Fprintf(w, "  %s\n", u)
	}
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the comparison: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
