package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/runner/patch"
)

func patchOutcomeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "outcome.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const patchAllPassed = `{"overlay_commit": "75915908", "tests": [
  {"name": "gather_mm_matches_dense_per_expert_reference", "outcome": "passed", "detail": "ok"},
  {"name": "gather_mm_selects_the_indexed_expert", "outcome": "passed", "detail": "ok"},
  {"name": "gather_mm_half_precision_matches_reference", "outcome": "passed", "detail": "ok"}]}`

func TestPatchUsageErrors(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	cases := []struct {
		name string
		args func(t *testing.T) []string
		want string
	}{
		{"no subcommand", func(*testing.T) []string { return []string{"patch"} }, "usage: perfbot patch gemm-gates"},
		{"unknown subcommand", func(*testing.T) []string { return []string{"patch", "gates"} }, `unknown patch "gates"`},
		{"missing flags", func(*testing.T) []string { return []string{"patch", "gemm-gates", "--repo", repo} }, "--repo and --tests are required"},
		{"unknown flag", func(*testing.T) []string { return []string{"patch", "gemm-gates", "--force"} }, "unknown flag --force\nusage: perfbot patch gemm-gates "},
		{"extra argument", func(t *testing.T) []string {
			return []string{"patch", "gemm-gates", "--repo", repo, "--tests", patchOutcomeFile(t, patchAllPassed), "now"}
		}, `unexpected argument "now"`},
		{"missing outcome file", func(*testing.T) []string {
			return []string{"patch", "gemm-gates", "--repo", repo, "--tests", filepath.Join(repo, "none.json")}
		}, "reading --tests"},
		{"bad JSON", func(t *testing.T) []string {
			return []string{"patch", "gemm-gates", "--repo", repo, "--tests", patchOutcomeFile(t, `{"overlay_commit": "75915908", "tests": [}`)}
		}, "decoding the outcome JSON"},
		{"unknown outcome", func(t *testing.T) []string {
			return []string{"patch", "gemm-gates", "--repo", repo, "--tests", patchOutcomeFile(t, strings.Replace(patchAllPassed, `"passed"`, `"skipped"`, 1))}
		}, `has outcome "skipped": use one of passed, failed, aborted, build_failed, timed_out, not_run`},
		{"missing test name", func(t *testing.T) []string {
			return []string{"patch", "gemm-gates", "--repo", repo, "--tests", patchOutcomeFile(t, strings.Replace(patchAllPassed, `"name": "gather_mm_selects_the_indexed_expert", `, "", 1))}
		}, "tests[1] has no name"},
		{"not three tests", func(t *testing.T) []string {
			body := `{"overlay_commit": "75915908", "tests": [{"name": "gather_mm_selects_the_indexed_expert", "outcome": "passed", "detail": ""}]}`
			return []string{"patch", "gemm-gates", "--repo", repo, "--tests", patchOutcomeFile(t, body)}
		}, "the outcome has 1 tests; it needs exactly 3"},
		{"verify without repo", func(*testing.T) []string { return []string{"patch", "verify"} }, "--repo is required"},
		{"verify bad timeout", func(*testing.T) []string { return []string{"patch", "verify", "--repo", repo, "--timeout", "0s"} }, "--timeout must be positive"},
		{"verify empty cmd", func(*testing.T) []string { return []string{"patch", "verify", "--repo", repo, "--cmd", "  "} }, "--cmd is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args(t), &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit code %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout should be empty on a usage error:\n%s", stdout.String())
			}
		})
	}
}

func TestPatchGemmGatesCommand(t *testing.T) {
	t.Parallel()
	repo := hosttest.PatcherRepo(t)
	tests := patchOutcomeFile(t, patchAllPassed)
	rust := filepath.Join(repo, filepath.FromSlash(patch.RustPath))
	before, _ := os.ReadFile(rust)

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"patch", "gemm-gates", "--repo", repo, "--tests", tests, "--dry-run"}, &stdout, &stderr); code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, stderr.String())
	}
	if after, _ := os.ReadFile(rust); !bytes.Equal(before, after) {
		t.Error("--dry-run wrote the test file")
	}
	if !strings.Contains(stdout.String(), "Would change (dry run, nothing written)") {
		t.Errorf("dry-run report:\n%s", stdout.String())
	}

	stdout.Reset()
	if code := run(context.Background(), []string{"patch", "gemm-gates", "--repo", repo, "--tests", tests, "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var r patch.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, stdout.String())
	}
	if r.Decision != patch.Switch || r.GatesReplaced != 3 || r.Entry != patch.EntryRemoved || r.Checker.Verdict != "passed" || r.Checker.Awaiting != 2 {
		t.Errorf("report: %+v, checker %+v", r, r.Checker)
	}
	if after, _ := os.ReadFile(rust); bytes.Contains(after, []byte("metal_is_available() &&")) {
		t.Error("the gates were not replaced")
	}

	// Make the checker fail: the command exits 3 and still prints the report.
	extra := filepath.Join(repo, "examples", "warmup.rs")
	if err := os.WriteFile(extra, []byte("fn main() { if metal_is_available() || cuda_is_available() {} }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"patch", "gemm-gates", "--repo", repo, "--tests", tests}, &stdout, &stderr); code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "**failed** (exit 1)") || !strings.Contains(stderr.String(), "open the pull request as a draft") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

func TestPatchGemmGatesRefused(t *testing.T) {
	t.Parallel()
	repo := hosttest.PatcherRepo(t)
	checker := filepath.Join(repo, filepath.FromSlash(patch.CheckerPath))
	if err := os.WriteFile(checker, []byte("print('no set here')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"patch", "gemm-gates", "--repo", repo, "--tests", patchOutcomeFile(t, patchAllPassed)}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
	}
	for _, s := range []string{"refusing to patch the grouped_gemm gates (nothing was written)", patch.CheckerPath + ": no `BACKEND_ENUMERATION_TODO"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
		}
	}
}

func TestPatchVerifyCommand(t *testing.T) {
	t.Parallel()
	repo := hosttest.PatcherRepo(t)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"patch", "verify", "--repo", repo}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "| `python3 scripts/ci/check_kernel_port_dispatch.py` | passed |") {
		t.Errorf("report:\n%s", stdout.String())
	}
	stdout.Reset()
	code := run(context.Background(), []string{"patch", "verify", "--repo", repo, "--cmd", "python3 -c exit(4)", "--json"}, &stdout, &stderr)
	if code != 3 {
		t.Fatalf("exit %d, want 3", code)
	}
	var rs []patch.VerifyResult
	if err := json.Unmarshal(stdout.Bytes(), &rs); err != nil || len(rs) != 1 || rs[0].ExitCode != 4 {
		t.Errorf("JSON results %+v (%v):\n%s", rs, err, stdout.String())
	}
}
