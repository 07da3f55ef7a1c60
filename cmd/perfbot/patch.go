package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/patch/patchrun"
)

func init() {
	register(command{name: "patch", summary: "patch the grouped_gemm gates after the ROCm tests; verify the patched tree", run: runPatch})
}

const patchUsage = `gemm-gates --repo DIR --tests FILE [--python FILE] [--dry-run] [--json]
       perfbot patch verify --repo DIR [--cmd CMD]... [--timeout DURATION] [--json]

examples:
  perfbot patch gemm-gates --repo mlxcel --tests out/gemm_tests.json --dry-run
  perfbot patch verify --repo mlxcel --cmd "make verify"`

func runPatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runGroup(ctx, "patch", "patch", patchUsage,
		[]subcommand{{"gemm-gates", runPatchGemmGates}, {"verify", runPatchVerify}}, args, stdout, stderr)
}

// gemmGatesOptions are the flags of `perfbot patch gemm-gates`.
type gemmGatesOptions struct {
	repo, tests, python string
	dryRun, json        bool
}

func runPatchGemmGates(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o gemmGatesOptions
	fs := newFlags("patch gemm-gates", `--repo DIR --tests FILE [--python FILE] [--dry-run] [--json]

examples:
  perfbot patch gemm-gates --repo mlxcel --tests out/gemm_tests.json --dry-run
  perfbot patch gemm-gates --repo mlxcel --tests out/gemm_tests.json --json`, stderr)
	fs.StringVar(&o.repo, "repo", "", "root of the mlxcel checkout to patch")
	fs.StringVar(&o.tests, "tests", "", "outcome JSON of the three grouped_gemm numeric tests (docs/formats.md §7)")
	fs.StringVar(&o.python, "python", "python3", "Python that runs the repo's checker")
	fs.BoolVar(&o.dryRun, "dry-run", false, "say what would change; write nothing, run no checker")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON instead of Markdown")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if o.repo == "" || o.tests == "" {
		return usageError("--repo and --tests are required")
	}
	data, err := os.ReadFile(o.tests)
	if err != nil {
		return usageError("reading --tests: %w", err)
	}
	outcome, err := patch.ParseOutcome(data)
	if err != nil {
		return usageError("%s: %w", o.tests, err)
	}
	r, err := patchrun.GemmGates(ctx, o.repo, outcome, patchrun.Options{DryRun: o.dryRun, Python: o.python})
	if err != nil {
		return err
	}
	if err := printReport(stdout, o.json, r, r.Markdown()); err != nil {
		return err
	}
	if r.Checker != nil && r.Checker.Verdict != "passed" {
		return &exitError{code: 3, err: errors.New("the repo's checker failed on the patched tree (see the report); open the pull request as a draft")}
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, "; ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runPatchVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		repo    string
		cmds    stringList
		timeout time.Duration
		asJSON  bool
	)
	fs := newFlags("patch verify", `--repo DIR [--cmd CMD]... [--timeout DURATION] [--json]

examples:
  perfbot patch verify --repo mlxcel
  perfbot patch verify --repo mlxcel --cmd "make verify" --cmd "cargo test -p mlxcel-core" --timeout 20m`, stderr)
	fs.StringVar(&repo, "repo", "", "root of the patched checkout")
	fs.Var(&cmds, "cmd", "a verification command, split on spaces, no shell (repeatable; default: the checker, plus make "+patch.MakeTarget+" when the Makefile has it)")
	fs.DurationVar(&timeout, "timeout", 10*time.Minute, "time limit per command")
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON instead of Markdown")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if repo == "" {
		return usageError("--repo is required")
	}
	if timeout <= 0 {
		return usageError("--timeout must be positive, got %v", timeout)
	}
	var argv [][]string
	for _, c := range cmds {
		f := strings.Fields(c)
		if len(f) == 0 {
			return usageError("--cmd is empty")
		}
		argv = append(argv, f)
	}
	rs := patchrun.VerifyWith(ctx, repo, argv, patchrun.VerifyOptions{Timeout: timeout})
	if err := printReport(stdout, asJSON, rs, patch.VerifyMarkdown(rs)); err != nil {
		return err
	}
	if !patch.VerifyPassed(rs) {
		return &exitError{code: 3, err: errors.New("verification failed (see the report); open the pull request as a draft")}
	}
	return nil
}

func printReport(w io.Writer, asJSON bool, v any, md string) error {
	if !asJSON {
		_, err := io.WriteString(w, md)
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
