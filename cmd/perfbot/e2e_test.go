package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/mdtest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

// e2eConfig is the checkout's .github/perfbot.yml: two models at two sampling
// settings, a small workload and a one-second idle window, so the whole flow stays fast.
const e2eConfig = `version: 1
epic: 1814
models:
  llama:
    dir: models/mlx/Meta-Llama-3.1-8B-Instruct-4bit
    model_type: llama
    weights_gib: 4.5
  qwen3:
    dir: models/mlx/Qwen3-30B-A3B-4bit
    config: models/mlx/Qwen3-30B-A3B-4bit/config.json
    weights_gib: 16.0
default_models: [llama, qwen3]
sampling: [greedy, t0.7-p0.95]
shape: {prompt: 64, generate: 16, warmup: 4}
guard: {idle_secs: 1, sample_hz: 20, max_attempts: 2, max_wait_secs: 60}
`

// e2eRuns are the runs the config asks for, in the runner's order.
var e2eRuns = []string{
	"Meta-Llama-3.1-8B-Instruct-4bit_greedy", "Meta-Llama-3.1-8B-Instruct-4bit_t0.7-p0.95",
	"Qwen3-30B-A3B-4bit_greedy", "Qwen3-30B-A3B-4bit_t0.7-p0.95",
}

// e2eTarget is the target repository: a bare remote standing in for GitHub and a
// clone of it, at a commit holding everything the flow touches.
type e2eTarget struct {
	home, bare, repo, base string
}

func (tg e2eTarget) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return hosttest.Git(t, tg.home, dir, args...)
}

// show is a file of a commit of the remote, byte for byte.
func (tg e2eTarget) show(t *testing.T, commit, p string) string {
	t.Helper()
	return tg.blob(t, tg.bare, commit, p)
}

// blob is a file at a revision of the repository in dir, byte for byte.
func (tg e2eTarget) blob(t *testing.T, dir, rev, p string) string {
	t.Helper()
	cmd := exec.Command("git", "-C", dir, "cat-file", "blob", rev+":"+p)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git cat-file %s:%s: %v: %s", rev, p, err, errb.String())
	}
	return out.String()
}

// newE2ETarget lays out the mlxcel checkout: the grouped_gemm test file and the checker
// as the patcher knows them (the sample checkout's sources), the overlay's UPSTREAM
// from the fixtures, the config, the two model folders and what the fake cargo needs.
func newE2ETarget(t *testing.T, home string) e2eTarget {
	t.Helper()
	upstream, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	tg := hosttest.NewTarget(t, home, map[string]string{
		"Cargo.toml":                            "[workspace]\nmembers = [\"src/lib/mlxcel-core\"]\n",
		".gitignore":                            "/target/\n",
		".github/perfbot.yml":                   e2eConfig,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM": string(upstream),
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/config.json": `{"model_type": "llama", "num_hidden_layers": 32, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}` + "\n",
		"models/mlx/Qwen3-30B-A3B-4bit/config.json":              `{"model_type": "qwen3_moe", "num_hidden_layers": 48, "num_experts": 128, "num_experts_per_tok": 8}` + "\n",
	})
	return e2eTarget{home: home, bare: tg.Bare, repo: tg.Repo, base: tg.Base}
}

// copyDir copies a results folder, so the two test outcomes start from the same
// profile session.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// publishJSON runs `perfbot publish --dry-run --json` and returns its summary.
func publishJSON(t *testing.T, results, repo, dry string) publish.Summary {
	t.Helper()
	stdout := publishCLI(t, 0, "publish", "--results", results, "--repo", repo, "--dry-run", dry, "--json")
	var sum publish.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("publish summary: %v\n%s", err, stdout)
	}
	return sum
}

// The whole `/profile rocm` host flow on the fake host, with real git: `perfbot run
// profile` (2 models x 2 sampling settings, each run plain and profiled under the
// guard), `perfbot run gemm-tests` (all three pass; in a second copy of the results one
// aborts), and `perfbot publish --dry-run` of each. The page committed on the bot
// branch shows every run's figures exactly as its summary holds them and ranks as
// `perfbot rank` does; the commit holds the page, the results folder without traces
// and the patched sources; the pull request body names the test outcomes and the
// verification; the same results again change nothing.
func TestProfileFlowEndToEnd(t *testing.T) {
	dir := runJobEnv(t)
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GITHUB_STEP_SUMMARY": "", "GITHUB_REPOSITORY": "", "GITHUB_SERVER_URL": "", "GITHUB_TOKEN": "",
	} {
		t.Setenv(k, v)
	}
	tg := newE2ETarget(t, home)
	out := filepath.Join(dir, "out")

	// 1. The profile session.
	code, stdout, stderr := runJobCLI("profile", "--repo", tg.repo, "--out", out)
	if code != 0 {
		t.Fatalf("run profile: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	profiles := filepath.Join(out, "benchmarks", "rocm_profiles")
	folderName := results.FolderName("gfx1151", tg.base)
	folder := filepath.Join(profiles, folderName)
	sess, err := results.ReadSession(filepath.Join(folder, results.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range sess.Runs {
		names = append(names, r.Name)
		if r.Status != results.StatusOK {
			t.Errorf("run %s: %s (%s)", r.Name, r.Status, r.Reason)
		}
	}
	if diff := cmp.Diff(e2eRuns, names); diff != "" || sess.State != "complete" || sess.Commit != tg.base || sess.Build.Status != "ok" {
		t.Fatalf("session: state %s, commit %s, build %+v, runs (-want +got):\n%s", sess.State, sess.Commit, sess.Build, diff)
	}
	var want []string
	for _, run := range e2eRuns {
		for _, suffix := range []string{"_bench.log", "_decode_kernels.csv", "_kernel_stats.csv", "_plain_bench.log", "_summary.json"} {
			want = append(want, run+suffix)
		}
		if _, err := os.Stat(filepath.Join(out, "traces", run, run+"_kernel_trace.csv")); err != nil {
			t.Errorf("the traces of %s are not in the traces folder: %v", run, err)
		}
	}
	want = append(want, results.GuardLogFile, results.GuardLogFile+".jsonl", results.HostInfoFile, results.SessionFile)
	slices.Sort(want)
	if diff := cmp.Diff(want, listDir(t, folder)); diff != "" {
		t.Fatalf("the results folder (-want +got):\n%s", diff)
	}

	// 2. The numeric tests: all pass here; one aborts in a copy of the same results.
	aborted := filepath.Join(dir, "aborted", folderName)
	copyDir(t, folder, aborted)
	code, stdout, stderr = runJobCLI("gemm-tests", "--repo", tg.repo, "--out", filepath.Join(folder, results.GemmTestsFile),
		"--guard-log", filepath.Join(folder, results.GuardLogFile))
	if code != 0 {
		t.Fatalf("run gemm-tests: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Setenv("FAKE_CARGO_TESTS", patch.TestNames[2]+"=abort")
	code, stdout, stderr = runJobCLI("gemm-tests", "--repo", tg.repo, "--out", filepath.Join(aborted, results.GemmTestsFile),
		"--guard-log", filepath.Join(aborted, results.GuardLogFile))
	if code != 0 {
		t.Fatalf("run gemm-tests with an abort: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Setenv("FAKE_CARGO_TESTS", "")
	passedOutcome := readOutcome(t, folder)
	abortOutcome := readOutcome(t, aborted)
	if passedOutcome.Decide() != patch.Switch || abortOutcome.Decide() != patch.Record || abortOutcome.Tests[2].Outcome != patch.Aborted {
		t.Fatalf("outcomes: %+v / %+v", passedOutcome, abortOutcome)
	}

	// 3. Publish the session whose tests all passed.
	dry := filepath.Join(dir, "dry")
	sum := publishJSON(t, profiles, tg.repo, dry)
	if !sum.OK() || !sum.DryRun || sum.Git.Action != "created" || !sum.Git.Pushed || sum.Draft || !sum.Verify.Passed {
		t.Fatalf("publish: %+v", sum)
	}
	commit := sum.Git.Commit
	if got := tg.git(t, tg.repo, "rev-parse", "refs/heads/perfbot/rocm-profile"); got != commit {
		t.Errorf("the local bot branch is %s, want the commit %s", got, commit)
	}
	if got := tg.git(t, tg.bare, "rev-parse", "refs/heads/perfbot/rocm-profile"); got != commit {
		t.Errorf("the remote's bot branch is %s, want the commit %s", got, commit)
	}
	if got := tg.git(t, tg.bare, "rev-parse", commit+"^"); got != tg.base {
		t.Errorf("the bot commit's parent is %s, want main's head %s (the profiled commit)", got, tg.base)
	}
	pagePath := "docs/benchmark_results/rocm-decode-profile-gfx1151-" + sess.Date + ".md"
	resultsPath := "benchmarks/rocm_profiles/" + folderName
	if sum.Report != pagePath || sum.Date != sess.Date || sum.Commit != tg.base {
		t.Errorf("report %s of %s at %s; want %s of the session's date at %s", sum.Report, sum.Date, sum.Commit, pagePath, tg.base)
	}
	// The page, its chart beside it, the patched gates and the results folder.
	wantCommitted := []string{pagePath, strings.TrimSuffix(pagePath, ".md") + ".svg", patch.CheckerPath, patch.RustPath}
	for _, name := range listDir(t, folder) {
		wantCommitted = append(wantCommitted, resultsPath+"/"+name)
	}
	slices.Sort(wantCommitted)
	if diff := cmp.Diff(wantCommitted, changedFiles(t, tg, commit)); diff != "" {
		t.Errorf("the commit's files (-want +got):\n%s", diff)
	}
	for _, f := range []string{patch.RustPath, patch.CheckerPath} {
		wantSrc, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "runner", "patch", "testdata", "variants", "upstream", "want", "pass", path.Base(f)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(wantSrc), tg.show(t, commit, f)); diff != "" {
			t.Errorf("the committed %s is not the patch of three passed tests (-want +got):\n%s", f, diff)
		}
	}
	committedSess := tg.show(t, commit, resultsPath+"/"+results.SessionFile)
	if onDisk, _ := os.ReadFile(filepath.Join(folder, results.SessionFile)); committedSess != string(onDisk) {
		t.Errorf("the committed session manifest differs from the runner's")
	}
	guardLog := tg.show(t, commit, resultsPath+"/"+results.GuardLogFile)
	for _, run := range e2eRuns {
		for _, phase := range []string{"plain", "profiled"} {
			if !strings.Contains(guardLog, "== "+run+" "+phase+"\n") {
				t.Errorf("the committed guard.log has no section %q", run+" "+phase)
			}
		}
	}
	if n := strings.Count(guardLog, "== grouped_gemm_numeric_tests::"); n != 3 {
		t.Errorf("the committed guard.log has %d numeric test sections, want 3", n)
	}
	// Committed files carry no folder of this machine: the runner cleans them out.
	local := filepath.Dir(dir)
	for _, f := range wantCommitted {
		if body := tg.show(t, commit, f); strings.Contains(body, local) {
			t.Errorf("the committed %s holds the local folder %s", f, local)
		}
	}

	// The page as the local bot branch holds it.
	page := tg.blob(t, tg.repo, "refs/heads/perfbot/rocm-profile", pagePath)
	checkE2EPage(t, page, folder, sess, passedOutcome)
	if n := strings.Count(page, "| mlxcel commit |"); n != 1 {
		t.Errorf("the environment table names the mlxcel commit %d times, want once", n)
	}
	// Only the profiled runs need (and get) phase marks in the reproduce steps.
	for _, line := range strings.Split(page, "\n") {
		if strings.Contains(line, "MLXCEL_BENCH_PHASE_MARKS=1") && strings.Contains(line, "mlxcel-bench-decode") && !strings.Contains(line, "rocprofv3") {
			t.Errorf("a plain run is reproduced with phase marks: %s", line)
		}
		if strings.Contains(line, "MLXCEL_BENCH_PHASE_MARKS=1") && strings.Contains(line, "cargo test") {
			t.Errorf("a test run is reproduced with phase marks: %s", line)
		}
	}
	rank := publishCLI(t, 0, "rank", folder)
	if !strings.Contains(page, "\n## Ranked port order\n\n"+rank) {
		t.Errorf("the page's ranking is not `perfbot rank`'s:\n%s", rank)
	}
	var rk struct {
		Order []string `json:"order"`
	}
	if err := json.Unmarshal([]byte(publishCLI(t, 0, "rank", folder, "--format", "json")), &rk); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rk.Order, sum.Order) || len(rk.Order) != 5 {
		t.Errorf("published order %v, `perfbot rank` says %v", sum.Order, rk.Order)
	}
	var order []string
	for _, id := range rk.Order {
		order = append(order, "#"+id)
	}
	if !strings.Contains(page, "\n**Ranked port order: "+strings.Join(order, ", ")+"**\n") {
		t.Errorf("the page does not state the order %s", strings.Join(order, ", "))
	}
	pr := readDry(t, dry, publish.DryPR)
	checkE2EPR(t, pr, folder, sess.Date, passedOutcome)
	if !strings.Contains(pr, "draft: false") {
		t.Errorf("the pull request of a verified patch is a draft:\n%s", pr)
	}

	// 4. The same results again: nothing changes.
	again := publishJSON(t, profiles, tg.repo, dry)
	wantActions := map[string]string{"git": "unchanged", "pr": "unchanged", "epic": "unchanged", "status": "unchanged", "check": "unchanged"}
	if diff := cmp.Diff(wantActions, e2eActions(again)); diff != "" || again.Git.Pushed || again.Git.Commit != commit {
		t.Errorf("the second publish: pushed %t, commit %s; actions (-want +got):\n%s", again.Git.Pushed, again.Git.Commit, diff)
	}

	// 5. The session whose third test aborted: the gates stay, and the checker entry's
	// comment records the abort.
	sum = publishJSON(t, filepath.Dir(aborted), tg.repo, dry)
	// The ranking is the same, so the epic comment stays as it is; the check run names
	// the test outcomes, so it changes.
	wantActions = map[string]string{"git": "updated", "pr": "updated", "epic": "unchanged", "status": "updated", "check": "updated"}
	if diff := cmp.Diff(wantActions, e2eActions(sum)); diff != "" || !sum.OK() || sum.Draft || !sum.Verify.Passed {
		t.Errorf("publishing the abort: %+v; actions (-want +got):\n%s", sum, diff)
	}
	if check, err := os.ReadFile(filepath.Join(dry, "check-run.md")); err != nil || !strings.Contains(string(check), "`gather_mm_half_precision_matches_reference` aborted") || !strings.Contains(string(check), "Decision: **record**") {
		t.Errorf("the check run does not name the aborted test and the decision (%v):\n%s", err, check)
	}
	commit = sum.Git.Commit
	wantCommitted = slices.DeleteFunc(wantCommitted, func(p string) bool { return p == patch.RustPath })
	if diff := cmp.Diff(wantCommitted, changedFiles(t, tg, commit)); diff != "" {
		t.Errorf("the commit's files (-want +got):\n%s", diff)
	}
	checkAbortEntry(t, tg.show(t, tg.base, patch.CheckerPath), tg.show(t, commit, patch.CheckerPath), abortOutcome.Tests[2])
	checkE2EPage(t, tg.show(t, commit, pagePath), aborted, sess, abortOutcome)
	checkE2EPR(t, readDry(t, dry, publish.DryPR), aborted, sess.Date, abortOutcome)
}

// checkAbortEntry checks that the patched checker differs from the base only in the
// comment of the grouped_gemm entry, which now names the aborted test and its error
// (whitespace folded, cut to one line by the patcher) at the overlay commit.
func checkAbortEntry(t *testing.T, base, patched string, aborted patch.TestResult) {
	t.Helper()
	entry := `    "` + patch.RustPath + `",`
	withoutComment := func(src string) ([]string, []string) {
		lines := strings.Split(src, "\n")
		i := slices.Index(lines, entry)
		if i < 0 {
			t.Fatalf("no entry %s in the checker:\n%s", entry, src)
		}
		j := i
		for j > 0 && strings.HasPrefix(lines[j-1], "    #") {
			j--
		}
		return append(slices.Clip(lines[:j]), lines[i:]...), lines[j:i]
	}
	baseRest, _ := withoutComment(base)
	rest, comment := withoutComment(patched)
	if diff := cmp.Diff(baseRest, rest); diff != "" {
		t.Errorf("the patch changed the checker outside the entry's comment (-base +patched):\n%s", diff)
	}
	folded := strings.Join(strings.Fields(aborted.Detail), " ")
	prefix := "    #   " + aborted.Name + " aborted: "
	if len(comment) != 2 || comment[0] != "    # waits for gpu_backend_available(); on ROCm at overlay 75915908:" ||
		!strings.HasPrefix(comment[1], prefix) || !strings.HasPrefix(folded, strings.TrimSuffix(strings.TrimPrefix(comment[1], prefix), "...")) ||
		!strings.HasPrefix(strings.TrimPrefix(comment[1], prefix), "signal 6 (SIGABRT): HIP error: invalid device function") {
		t.Errorf("the entry's comment does not record the abort of %s (%s):\n%s", aborted.Name, aborted.Detail, strings.Join(comment, "\n"))
	}
}

func e2eActions(s publish.Summary) map[string]string {
	return map[string]string{"git": s.Git.Action, "pr": s.PR.Action, "epic": s.Epic.Action, "status": s.Status.Action, "check": s.CheckRun.Action}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// changedFiles are the files the bot pull request changes, as GitHub shows them: the
// full diff of commit against main (three dots), not the bot commit alone, so code of
// the measured commit that main lacks would show.
func changedFiles(t *testing.T, tg e2eTarget, commit string) []string {
	t.Helper()
	files := strings.Split(tg.git(t, tg.bare, "diff", "--name-only", "main..."+commit), "\n")
	slices.Sort(files)
	return files
}

func readOutcome(t *testing.T, folder string) patch.Outcome {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(folder, results.GemmTestsFile))
	if err != nil {
		t.Fatal(err)
	}
	o, err := patch.ParseOutcome(b)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func readDry(t *testing.T, dry, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dry, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// summaryJSON is a run summary as its file holds it: every number keeps the text it
// has in the file, so the page is compared with the file, not with a second printing.
type summaryJSON map[string]any

func readSummaryJSON(t *testing.T, p string) summaryJSON {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m summaryJSON
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return m
}

// lit is the number at a key path as the file writes it; "—" when it is absent or null,
// as the page shows a figure the run has not.
func (s summaryJSON) lit(t *testing.T, keys ...string) string {
	t.Helper()
	var v any = map[string]any(s)
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return "—"
		}
		v = m[k]
	}
	switch n := v.(type) {
	case nil:
		return "—"
	case json.Number:
		return n.String()
	}
	t.Fatalf("summary %v holds %T at %v, want a number", s["name"], v, keys)
	return ""
}

// fixed is a summary number as the page prints it: rounded to its column's decimals.
func (s summaryJSON) fixed(t *testing.T, decimals int, keys ...string) string {
	t.Helper()
	v := s.lit(t, keys...)
	if v == "—" {
		return v
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("summary %v holds %q at %v: %v", s["name"], v, keys, err)
	}
	return strconv.FormatFloat(f, 'f', decimals, 64)
}

func (s summaryJSON) str(key string) string {
	v, _ := s[key].(string)
	return v
}

// checkE2EPage compares the page's tables with every run's summary file, figure by
// figure, and the method table with the session manifest.
func checkE2EPage(t *testing.T, page, folder string, sess results.Session, o patch.Outcome) {
	t.Helper()
	results := mdtest.Under(t, page, "## Results")
	cost := mdtest.Under(t, page, "## Profiler cost")
	shares := mdtest.Under(t, page, "## Share per port unit")
	method := mdtest.Under(t, page, "## Method")
	for _, r := range sess.Runs {
		s := readSummaryJSON(t, filepath.Join(folder, r.Name+"_summary.json"))
		name := "`" + r.Name + "`"
		want := []string{name, report.Text(s.str("model_type")), report.Text(r.Sampling),
			s.fixed(t, 2, "profiled_decode_tok_s"), s.fixed(t, 2, "plain_decode_tok_s"),
			s.fixed(t, 3, "gpu_ms_per_token"), s.fixed(t, 3, "host_gap_ms_per_token"), s.fixed(t, 1, "host_gap_pct_of_wall"),
			s.fixed(t, 3, "plain_host_gap_ms_per_token_est"), s.fixed(t, 1, "dispatches_per_token"),
			s.lit(t, "checks", "kernels_straddling_decode_start"), s.fixed(t, 1, "checks", "idle_gap_before_first_decode_dispatch_us")}
		if diff := cmp.Diff(want, results.Row(name)); diff != "" {
			t.Errorf("results row of %s (-summary +page):\n%s", r.Name, diff)
		}
		want = []string{name, s.fixed(t, 2, "plain_decode_tok_s"), s.fixed(t, 2, "profiled_decode_tok_s"), s.fixed(t, 1, "profiler_decode_slowdown_pct")}
		if got := cost.Row(name); len(got) < 4 || !slices.Equal(want, got[:4]) {
			t.Errorf("profiler cost row of %s = %q, want %q", r.Name, got, want)
		}
		top := mdtest.Under(t, page, "### "+report.Text(r.Name))
		kernels, _ := s["top_kernels"].([]any)
		if len(kernels) == 0 || len(top.Rows) != len(kernels) {
			t.Errorf("%s: %d top kernels on the page, %d in the summary", r.Name, len(top.Rows), len(kernels))
		}
		for i, k := range kernels {
			km := summaryJSON(k.(map[string]any))
			want := []string{strconv.Itoa(i + 1), report.CellCode(km.str("kernel")), report.Text(km.str("class")),
				km.fixed(t, 2, "calls_per_token"), km.fixed(t, 2, "share_pct")}
			if diff := cmp.Diff(want, top.Row(strconv.Itoa(i+1))); diff != "" {
				t.Errorf("top kernel %d of %s (-summary +page):\n%s", i+1, r.Name, diff)
			}
		}
		units, _ := s["port_units"].(map[string]any)
		if len(units) == 0 || len(shares.Header) != len(units)+1 {
			t.Errorf("%s: the share table has columns %q for the units %v", r.Name, shares.Header, units)
		}
		row := shares.Row(name)
		for col, h := range shares.Header {
			if col == 0 {
				continue
			}
			id := strings.TrimPrefix(h, "#")
			want := s.fixed(t, 2, "port_units", id, "reached_default_share_pct") + " (" + s.fixed(t, 2, "port_units", id, "fallback_share_pct") + ")"
			if col >= len(row) || row[col] != want {
				t.Errorf("share of %s in %s = %q, want %q", h, r.Name, row, want)
			}
		}
	}
	if got := method.Row(report.Text("profiler flags passed")); len(got) != 2 || got[1] != report.CellCode(strings.Join(sess.Profiler, " ")) {
		t.Errorf("method row of the profiler flags %q, want the session's %q", got, sess.Profiler)
	}
	if got := method.Row(report.Text("workload (bench arguments)")); len(got) != 2 || !strings.Contains(got[1], "-n 16 --warmup-tokens 4 --ignore-eos --prompt-tokens 64") {
		t.Errorf("method row of the workload %q", got)
	}
	if !slices.ContainsFunc(method.Rows, func(r []string) bool {
		return strings.HasPrefix(r[0], "build") && r[1] == report.CellCode(strings.Join(sess.Build.Command, " "))
	}) {
		t.Errorf("the method table has no build row of the session's command %q", sess.Build.Command)
	}
	env := mdtest.Under(t, page, "## Environment")
	// The fake rocminfo's GPU; the rest of the table is this machine's.
	for label, want := range map[string]string{"gfx target": "gfx1151", "GPU": "Radeon 8060S Graphics", "mlxcel tree": "clean"} {
		if got := env.Row(label); len(got) != 2 || got[1] != want {
			t.Errorf("environment row %s = %q, want %q", label, got, want)
		}
	}
	tests := mdtest.Under(t, page, "## gather_mm numeric tests")
	for _, tr := range o.Tests {
		if got := tests.Row("`" + tr.Name + "`"); len(got) != 3 || got[1] != string(tr.Outcome) || got[2] != report.CellCode(tr.Detail) {
			t.Errorf("the page's row of %s = %q, want %s: %s", tr.Name, got, tr.Outcome, tr.Detail)
		}
	}
	if decision := "Decision: **" + string(o.Decide()) + "**."; !strings.Contains(page, decision) {
		t.Errorf("the page does not say %q", decision)
	}
	if strings.Contains(page, "Runs without results") {
		t.Errorf("the page lists a run without results, but every run is ok")
	}
}

// checkE2EPR checks the pull request body: every run's headline figures from its
// summary file, every numeric test's outcome, the patch decision and the verification.
func checkE2EPR(t *testing.T, pr, folder, date string, o patch.Outcome) {
	t.Helper()
	page := "rocm-decode-profile-gfx1151-" + date + ".md"
	if link := "Report: [" + report.Text(page) + "](docs/benchmark_results/" + page + ")."; !strings.Contains(pr, link) {
		t.Errorf("the pull request does not link the page with %q", link)
	}
	runs := mdtest.Under(t, pr, "## ROCm decode profile, gfx1151, "+date)
	for _, run := range e2eRuns {
		s := readSummaryJSON(t, filepath.Join(folder, run+"_summary.json"))
		want := []string{"`" + run + "`", s.fixed(t, 3, "gpu_ms_per_token"), s.fixed(t, 3, "host_gap_ms_per_token"), s.fixed(t, 1, "dispatches_per_token"),
			s.fixed(t, 2, "plain_decode_tok_s"), s.fixed(t, 2, "profiled_decode_tok_s")}
		if diff := cmp.Diff(want, runs.Row("`"+run+"`")); diff != "" {
			t.Errorf("pull request row of %s (-summary +body):\n%s", run, diff)
		}
	}
	tests := mdtest.Under(t, pr, "### grouped_gemm numeric tests on ROCm (overlay `75915908`)")
	for _, tr := range o.Tests {
		got := tests.Row("`" + tr.Name + "`")
		fold := func(s string) string { return strings.Join(strings.Fields(s), " ") }
		if len(got) < 3 || got[1] != string(tr.Outcome) || fold(got[2]) != fold(report.CellCode(tr.Detail)) {
			t.Errorf("the pull request's row of %s = %q, want %s: %s", tr.Name, got, tr.Outcome, tr.Detail)
		}
	}
	verify := mdtest.Under(t, pr, "### Verification of the patched tree")
	if got := verify.Row("`python3 scripts/ci/check_kernel_port_dispatch.py`"); len(got) != 2 || got[1] != "passed" {
		t.Errorf("the verification row %q, want the checker passed", got)
	}
	decision := "All three passed: the gates ask `gpu_backend_available()`"
	if o.Decide() == patch.Record {
		decision = "A test failed on the GPU: the Metal/CUDA gates stay and the checker entry records the failure."
	}
	if !strings.Contains(pr, decision) {
		t.Errorf("the pull request does not say %q:\n%s", decision, pr)
	}
}
