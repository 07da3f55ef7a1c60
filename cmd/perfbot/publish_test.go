package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

// publishCLI runs one perfbot command and fails the test unless it exits with code.
func publishCLI(t *testing.T, code int, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if got := run(context.Background(), args, &out, &errb); got != code {
		t.Fatalf("perfbot %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, out.String(), errb.String())
	}
	return out.String()
}

// `perfbot publish --dry-run` on synthetic runs analysed by perfbot itself: the page
// committed on the local bot branch shows every figure exactly as the summaries hold it.
func TestPublishDryRunOnAnalysedRuns(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_REPOSITORY", "")
	root := t.TempDir()

	// The target repository: a remote on this machine and a clone of it.
	tg := hosttest.NewTarget(t, home, nil)
	base, bare, repo := tg.Base, tg.Bare, tg.Repo

	// Two runs as the runner leaves them: synthetic traces, analysed by perfbot.
	folder := filepath.Join(root, "results", results.FolderName("gfx1151", base))
	for _, m := range []struct{ model, sampling string }{{"llama", "greedy"}, {"qwen3-moe", "t0.7"}} {
		raw := filepath.Join(root, "raw", m.model)
		publishCLI(t, 0, "synth", "--model", m.model, "--sampling", m.sampling, "--tokens", "24", "--out", raw)
		traces, _ := filepath.Glob(filepath.Join(raw, "*_kernel_trace.csv"))
		if len(traces) != 1 {
			t.Fatalf("synth wrote %v", traces)
		}
		name := strings.TrimSuffix(filepath.Base(traces[0]), "_kernel_trace.csv")
		logs, _ := filepath.Glob(filepath.Join(raw, "*bench*.log"))
		var profiled, plain string
		for _, l := range logs {
			if strings.Contains(filepath.Base(l), "plain") {
				plain = l
			} else {
				profiled = l
			}
		}
		dirs, _ := filepath.Glob(filepath.Join(raw, "*", "config.json"))
		if len(dirs) != 1 || profiled == "" || plain == "" {
			t.Fatalf("synth wrote logs %v, model configs %v", logs, dirs)
		}
		publishCLI(t, 0, "analyze", "--trace", traces[0], "--log", profiled, "--plain-log", plain, "--model-dir", filepath.Dir(dirs[0]),
			"--sampling", m.sampling, "--name", name, "--out-dir", folder)
		for from, to := range map[string]string{profiled: name + "_bench.log", plain: name + "_plain_bench.log"} {
			b, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(folder, to), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	guardLog, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", "guard.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "guard.log"), guardLog, 0o644); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 10, 2, 9, 30, 0, 0, time.UTC)
	sess, _ := json.Marshal(results.Session{
		Commit: base, GFX: "gfx1151", Folder: filepath.Base(folder), Date: "2026-10-02", Started: started, Finished: started.Add(time.Hour),
		State: "complete", Models: []string{"llama", "qwen3"}, Sampling: []string{"greedy", "t0.7"},
		Build: results.Build{Command: results.BuildCommand, Status: "skipped"},
		Runs: []results.RunRecord{
			{Name: "Meta-Llama-3.1-8B-Instruct-4bit_greedy", Model: "llama", Sampling: "greedy", Status: results.StatusOK},
			{Name: "Qwen3-30B-A3B-4bit_t0.7", Model: "qwen3", Sampling: "t0.7", Status: results.StatusOK},
		},
	})
	if err := os.WriteFile(filepath.Join(folder, results.SessionFile), sess, 0o644); err != nil {
		t.Fatal(err)
	}

	// The numeric tests' outcome without the patch job's gemm_patch.json: the command
	// line prepares the patch on the maintainer's clone itself, and says so.
	var tests []patch.TestResult
	for _, n := range patch.TestNames {
		tests = append(tests, patch.TestResult{Name: n, Outcome: patch.Passed, Detail: "ok"})
	}
	if err := job.WriteOutcome(filepath.Join(folder, results.GemmTestsFile), patch.Outcome{OverlayCommit: "75915908", Tests: tests}); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(root, "dry")
	var stdoutb, stderrb bytes.Buffer
	if code := run(context.Background(), []string{"publish", "--results", filepath.Dir(folder), "--repo", repo, "--dry-run", out, "--epic", "1814", "--json"}, &stdoutb, &stderrb); code != 0 {
		t.Fatalf("publish: exit %d\n%s\n%s", code, stdoutb.String(), stderrb.String())
	}
	stdout := stdoutb.String()
	if !strings.Contains(stderrb.String(), "has gemm_tests.json but no gemm_patch.json: preparing the grouped_gemm gate patch here") {
		t.Errorf("publish does not say it prepared the patch:\n%s", stderrb.String())
	}
	if _, err := os.Stat(filepath.Join(folder, patch.PreparedFile)); !os.IsNotExist(err) {
		t.Errorf("the patch prepared here was written into the results folder: %v", err)
	}
	if st := hosttest.Git(t, home, repo, "status", "--porcelain"); st != "" {
		t.Errorf("preparing the patch changed the clone's checkout:\n%s", st)
	}
	var sum publish.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, stdout)
	}
	if !sum.OK() || sum.Git.Action != "created" || !sum.Git.Pushed || sum.Draft || sum.Patch == nil || len(sum.Patch.Changed) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	for _, p := range []string{patch.RustPath, patch.CheckerPath} {
		if d := hosttest.Git(t, home, bare, "diff", "--stat", base, sum.Git.Commit, "--", p); d == "" {
			t.Errorf("%s is not patched on the bot branch", p)
		}
	}
	if got := hosttest.Git(t, home, repo, "rev-parse", "refs/heads/perfbot/rocm-profile"); got != sum.Git.Commit {
		t.Errorf("local bot branch %s, want %s", got, sum.Git.Commit)
	}
	page := hosttest.Git(t, home, bare, "show", sum.Git.Commit+":"+sum.Report)
	if strings.Contains(page, "Runs without results") {
		t.Errorf("the page lists a run of the session as without results:\n%s", page)
	}
	paths, _ := filepath.Glob(filepath.Join(folder, "*_summary.json"))
	if len(paths) != 2 {
		t.Fatalf("summaries: %v", paths)
	}
	for _, p := range paths {
		s, err := results.ReadSummary(p)
		if err != nil {
			t.Fatal(err)
		}
		// Each column prints the summary's figure at the column's one precision.
		opt := func(d int, n *results.Num) string {
			if n == nil {
				return "—"
			}
			return strconv.FormatFloat(float64(*n), 'f', d, 64)
		}
		f := func(d int, n results.Num) string { return strconv.FormatFloat(float64(n), 'f', d, 64) }
		row := strings.Join([]string{"", report.CellCode(s.Name), report.Text(s.ModelType), s.Sampling, f(2, s.ProfiledDecodeTokS), opt(2, s.PlainDecodeTokS),
			f(3, s.GPUMsPerToken), f(3, s.HostGapMsPerToken), f(1, s.HostGapPctOfWall), opt(3, s.PlainHostGapMsPerTokenEst),
			f(1, s.DispatchesPerToken), "0", f(1, s.Checks.IdleGapBeforeFirstDecodeDispatchUs), ""}, " | ")
		if !strings.Contains(page, strings.TrimSpace(row)+"\n") {
			t.Errorf("the page has no results row matching the summary of %s:\n%s", s.Name, row)
		}
		for i, k := range s.TopKernels {
			kr := strings.Join([]string{"", itoa(i + 1), report.CellCode(k.Kernel), report.Text(k.Class), f(2, k.CallsPerToken), f(2, k.SharePct), ""}, " | ")
			if !strings.Contains(page, strings.TrimSpace(kr)+"\n") {
				t.Errorf("the page has no top-kernel row matching %s #%d:\n%s", s.Name, i+1, kr)
			}
		}
	}
	for _, name := range []string{publish.DryPR, publish.DryEpic, publish.DryStatus, publish.DryCheckRun, publish.DryStepSummary, publish.DrySummary} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}

	// The text summary of a rerun says nothing changed.
	text := publishCLI(t, 0, "publish", "--results", folder, "--repo", repo, "--dry-run", out, "--epic", "1814")
	for _, s := range []string{"unchanged (remote origin, pushed false)", "pr        unchanged"} {
		if !strings.Contains(text, s) {
			t.Errorf("rerun summary lacks %q:\n%s", s, text)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestPublishUsage(t *testing.T) {
	t.Setenv("GITHUB_REPOSITORY", "")
	t.Setenv("GITHUB_TOKEN", "")
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"publish"}, "--results and --repo are required"},
		{[]string{"publish", "--results", dir, "--repo", dir}, "--github-repo"},
		{[]string{"publish", "--results", dir, "--repo", dir, "--github-repo", "lablup/mlxcel"}, "no GitHub token"},
		{[]string{"publish", "--results", dir, "--repo", dir, "--github-repo", "not a repo"}, "owner/name"},
		{[]string{"publish", "--results", dir, "--repo", dir, "--dry-run", dir, "--issue", "-1"}, "positive"},
		{[]string{"publish", "--results", dir, "--repo", dir, "--github-repo", "lablup/mlxcel", "--app-id", "7"}, "--app-id needs --installation-id and --app-key-file"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", c.args, code, errb.String(), c.want)
		}
	}
}

// `perfbot publish --dry-run` against a clone that lacks the profiled commit fails, and
// says why first: the error leads, then the summary of what was written before it
// stopped, headed "NOT published", without an empty date or an empty verify verdict.
func TestPublishDryRunWithoutTheCommitSaysWhyFirst(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_REPOSITORY", "")
	tg := hosttest.NewTarget(t, home, nil)
	results := filepath.Join(t.TempDir(), "gfx1151_929c80ab")
	if err := hosttest.CopyTree(testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab"), results); err != nil {
		t.Fatal(err)
	}
	var both bytes.Buffer // stdout and stderr in the order they were written
	code := run(context.Background(), []string{"publish", "--results", results, "--repo", tg.Repo, "--dry-run", t.TempDir()}, &both, &both)
	out := both.String()
	lines := strings.Split(out, "\n")
	if code != 1 || !strings.HasPrefix(lines[0], "perfbot publish: publishing: ") || !strings.Contains(lines[0], "929c80ab is not in") {
		t.Fatalf("exit %d; want exit 1 and the missing commit as the first line:\n%s", code, out)
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "NOT published: gfx1151_929c80ab (dry run into ") {
		t.Errorf("the summary does not say it was not published:\n%s", out)
	}
	for _, bad := range []string{"published gfx1151_929c80ab ()", "verify    FAILED: \n", "\nperfbot publish: publishing:"} {
		if strings.Contains(out, bad) {
			t.Errorf("output has %q:\n%s", bad, out)
		}
	}
}
