package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/results"
)

func init() {
	register(command{name: "run", summary: "run the host jobs: a guarded profile session, the grouped_gemm numeric tests, the nightly baseline", run: runRun})
}

const runUsage = `profile --repo DIR --out DIR [--config FILE] [--models NAME,...] [--sampling TAG,...]
                   [--traces DIR] [--no-build] [--bench FILE] [--gfx TARGET] [--root DIR]
       perfbot run gemm-tests --repo DIR --out FILE [--config FILE] [--guard-log FILE] [--logs DIR]
                   [--timeout DURATION] [--root DIR]
       perfbot run bench --repo DIR --out DIR [--config FILE] [--history DIR] [--models-dir DIR]
                   [--no-build] [--no-baseline] [--no-remeasure] [--window N] [--min-history N] [--root DIR]

examples:
  perfbot run profile --repo mlxcel --out out --models qwen3-moe --sampling greedy,t0.7
  perfbot run bench --repo mlxcel --out out`

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runGroup(ctx, "run", "job", runUsage,
		[]subcommand{{"profile", runProfile}, {"gemm-tests", runGemmTests}, {"bench", runBench}}, args, stdout, stderr)
}

// runHost is the machine the jobs run on: root "/" for real, a fake root in tests.
func runHost(root string) (*host.Machine, error) {
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, usageError("--root %s is not a folder", root)
	}
	return host.New(root, os.Getenv("PATH"), os.Environ()), nil
}

// jobSetup is where every host job starts: the machine (root "/" for real), the target
// repo's config, and the guard options from it with the shell guard's environment
// overrides.
func jobSetup(root, cfgPath, repo string, cfgRequired bool) (*host.Machine, config.Config, guard.Options, error) {
	h, err := runHost(root)
	if err != nil {
		return nil, config.Config{}, guard.Options{}, err
	}
	cfg, err := loadRunConfig(cfgPath, repo, cfgRequired)
	if err != nil {
		return nil, cfg, guard.Options{}, err
	}
	g, err := guardFromConfig(cfg, h)
	return h, cfg, g, err
}

// loadRunConfig reads the target repo's config (config.LoadRepo, as the Action does); a
// request error is a usage error.
func loadRunConfig(path, repo string, required bool) (config.Config, error) {
	c, err := config.LoadRepo(path, repo, required)
	return c, asUsage(err)
}

// guardFromConfig is the config's guard settings with the shell guard's environment
// overrides on top.
func guardFromConfig(c config.Config, h host.Host) (guard.Options, error) {
	g, err := job.GuardFromConfig(c, h, os.Getenv)
	return g, asUsage(err)
}

// asUsage turns an error in what was asked for (job.ErrBadRequest, config.ErrMissing)
// into a usage error (exit 2).
func asUsage(err error) error {
	if err != nil && (errors.Is(err, job.ErrBadRequest) || errors.Is(err, config.ErrMissing)) {
		return usageError("%v", err)
	}
	return err
}

// interruptCode is the shell's code for the signal that stopped the job.
func interruptCode(ctx context.Context) int {
	if strings.Contains(fmt.Sprint(context.Cause(ctx)), syscall.SIGTERM.String()) {
		return 128 + int(syscall.SIGTERM)
	}
	return 128 + int(syscall.SIGINT)
}

func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run profile", `--repo DIR --out DIR [--config FILE] [--models NAME,...] [--sampling TAG,...]
           [--traces DIR] [--no-build] [--bench FILE] [--gfx TARGET] [--root DIR]

examples:
  perfbot run profile --repo mlxcel --out out
  perfbot run profile --repo mlxcel --out out --models qwen3-moe --sampling greedy,t0.7-p0.95 --no-build`, stderr)
	repo := fs.String("repo", "", "the mlxcel checkout to build and profile")
	cfgPath := fs.String("config", "", "perfbot config (default: the checkout's "+config.DefaultPath+")")
	models := fs.String("models", "", "comma-separated config model names (default: the config's default_models)")
	sampling := fs.String("sampling", "", "comma-separated sampling tags: greedy, t0.7, t0.7-p0.95 (default: the config's)")
	out := fs.String("out", "", "results root: the folder goes to `DIR`/<results.profiles>/<gfx>_<commit8>")
	traces := fs.String("traces", "", "traces root for the workflow's artifacts (default: <out>/traces)")
	noBuild := fs.Bool("no-build", false, "skip the cargo build and use the bench already built")
	bench := fs.String("bench", "", "bench binary, relative to the checkout or absolute (default: "+job.DefaultBench+")")
	gfx := fs.String("gfx", "", "GPU target naming the results folder (default: rocminfo's)")
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
	h, err := runHost(*root)
	if err != nil {
		return err
	}
	// The same request the Action's profile job makes (job.ProfileRequest).
	po, err := job.ProfileRequest{
		Host: h, RepoDir: *repo, ConfigPath: *cfgPath, Models: strs.SplitList(*models, ","), Sampling: strs.SplitList(*sampling, ","),
		OutDir: *out, TraceDir: *traces, SkipBuild: *noBuild, Bench: *bench, GFX: *gfx, Getenv: os.Getenv, Progress: stderr,
	}.Options()
	if err != nil {
		return asUsage(err)
	}
	rep, err := job.Profile(ctx, po)
	if rep.Folder != "" {
		fmt.Fprintf(stdout, "results: %s\ntraces:  %s\n", rep.Folder, po.TraceDir)
		for _, r := range rep.Session.Runs {
			line := fmt.Sprintf("  %-14s %s", r.Status, r.Name)
			if r.Reason != "" {
				line += ": " + r.Reason
			}
			fmt.Fprintln(stdout, line)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{code: interruptCode(ctx), err: err}
		}
		return err
	}
	if failed := rep.Failed(); len(failed) > 0 {
		names := make([]string, len(failed))
		for i, r := range failed {
			names[i] = r.Name + " (" + string(r.Status) + ")"
		}
		err := fmt.Errorf("%d of %d runs failed: %s; their logs and reasons are in %s",
			len(failed), len(rep.Session.Runs), strings.Join(names, ", "), filepath.Join(rep.Folder, results.SessionFile))
		if rep.OnlyGuardGaveUp() {
			// The host was busy: worth trying again later (the guard's own code).
			return &exitError{code: guard.ExitContended, err: err}
		}
		return err
	}
	return nil
}

func runGemmTests(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run gemm-tests", `--repo DIR --out FILE [--config FILE] [--guard-log FILE] [--logs DIR] [--timeout DURATION] [--root DIR]

examples:
  perfbot run gemm-tests --repo mlxcel --out out/gemm_tests.json --logs out/gemm-logs --timeout 45m`, stderr)
	repo := fs.String("repo", "", "the mlxcel checkout to test")
	out := fs.String("out", "", "write the outcome JSON (docs/formats.md §7) to `FILE`, e.g. <results folder>/"+results.GemmTestsFile)
	cfgPath := fs.String("config", "", "perfbot config for the guard settings (default: the checkout's "+config.DefaultPath+" if any)")
	guardLog := fs.String("guard-log", "", "append the guard's evidence to `FILE` (e.g. the session's guard.log)")
	logs := fs.String("logs", "", "keep the build's and each test's full output in `DIR`")
	timeout := fs.Duration("timeout", job.DefaultTestTimeout, "time limit of one test run")
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
	if *timeout <= 0 {
		return usageError("--timeout must be positive (e.g. 30m)")
	}
	h, err := runHost(*root)
	if err != nil {
		return err
	}
	// The same request the Action's gemm-tests job makes (job.GemmRequest).
	gopts, err := job.GemmRequest{
		Host: h, RepoDir: *repo, ConfigPath: *cfgPath, GuardLog: *guardLog, LogDir: *logs, Timeout: *timeout,
		Getenv: os.Getenv, Progress: stderr,
	}.Options()
	if err != nil {
		return asUsage(err)
	}
	outcome, err := job.GemmTests(ctx, gopts)
	if outcome.OverlayCommit != "" && outcome.Validate() == nil {
		if werr := job.WriteOutcome(*out, outcome); werr != nil {
			return werr
		}
		for _, t := range outcome.Tests {
			fmt.Fprintf(stdout, "%-12s %s: %s\n", t.Outcome, t.Name, t.Detail)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{code: interruptCode(ctx), err: err}
		}
		return err
	}
	return nil
}
