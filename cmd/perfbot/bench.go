package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/results"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run bench", `--repo DIR --out DIR [--config FILE] [--history DIR] [--models-dir DIR] [--no-build] [--no-baseline]
           [--no-remeasure] [--window N] [--min-history N] [--k K] [--min-change PCT] [--root DIR]

examples:
  perfbot run bench --repo mlxcel --out out
  perfbot run bench --repo mlxcel --out out --no-baseline --models-dir ../models`, stderr)
	repo := fs.String("repo", "", "the mlxcel checkout: its harness runs, at its commit")
	out := fs.String("out", "", "results root: the CSVs, guard evidence and manifest go to `DIR`/<results.benchmarks>/")
	cfgPath := fs.String("config", "", "perfbot config (default: the checkout's "+config.DefaultPath+")")
	history := fs.String("history", "", "the nightly history to compare with (default: the checkout's <results.benchmarks>)")
	modelsDir := fs.String("models-dir", "", "MODELS_DIR for the harnesses, relative to the checkout (default: the folder of the config's models)")
	noBuild := fs.Bool("no-build", false, "skip the cargo build: the harness runs the binaries already built")
	noBaseline := fs.Bool("no-baseline", false, "skip the mlx-lm sweep")
	noRemeasure := fs.Bool("no-remeasure", false, "report a model outside its band without re-measuring it")
	rules := baseline.DefaultRules()
	rulesFlags(fs, &rules)
	root := fs.String("root", "/", "read host files under `DIR` (a fake host); tools come from $PATH")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if *repo == "" || *out == "" {
		return usageError("--repo and --out are required")
	}
	if err := rules.Validate(); err != nil {
		return usageError("%v", err)
	}
	h, cfg, g, err := jobSetup(*root, *cfgPath, *repo, true)
	if err != nil {
		return err
	}
	rep, err := job.Bench(ctx, job.BenchOptions{
		Host: h, RepoDir: *repo, Config: cfg, OutDir: *out, HistoryDir: *history, ModelsDir: *modelsDir,
		Guard: g, SkipBuild: *noBuild, NoBaseline: *noBaseline, NoRemeasure: *noRemeasure, Rules: rules, Progress: stderr,
	})
	if rep.Folder != "" {
		m := rep.Manifest
		fmt.Fprintf(stdout, "results: %s\nmanifest: %s\n", rep.Folder, m.Stem+results.NightlySuffix)
		for _, s := range m.Sweeps {
			line := fmt.Sprintf("  %-14s %s sweep", s.Status, s.Name)
			if len(s.CSVs) > 0 {
				line += ": " + strings.Join(s.CSVs, ", ")
			}
			if s.Reason != "" {
				line += ": " + s.Reason
			}
			fmt.Fprintln(stdout, line)
		}
		if c := m.Comparison; c != nil {
			for _, r := range c.Models {
				fmt.Fprintf(stdout, "  %-22s %s: %s\n", r.Verdict, r.Model, r.Text)
			}
		}
		for _, p := range m.Problems {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{code: interruptCode(ctx), err: err}
		}
		return err
	}
	if probs := rep.HarnessProblems(); len(probs) > 0 {
		return fmt.Errorf("%d harness problem(s) in the CSVs, first: %s; everything is in %s", len(probs), probs[0].Text, filepath.Join(rep.Folder, rep.Manifest.Stem+results.NightlySuffix))
	}
	if failed := rep.Failed(); len(failed) > 0 {
		err := fmt.Errorf("%s did not give a result; the reasons are in %s", strings.Join(failed, ", "), filepath.Join(rep.Folder, rep.Manifest.Stem+results.NightlySuffix))
		if rep.OnlyGuardGaveUp() {
			return &exitError{code: guard.ExitContended, err: err}
		}
		return err
	}
	return nil
}
