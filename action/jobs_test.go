package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

// jobsConfig asks for two models at two sampling settings; the checkout has no folder
// for the second model.
const jobsConfig = `version: 1
epic: 1814
models:
  llama:
    dir: models/mlx/Meta-Llama-3.1-8B-Instruct-4bit
    model_type: llama
    weights_gib: 4.5
  qwen3:
    dir: models/mlx/Qwen3-30B-A3B-4bit
    model_type: qwen3_moe
    weights_gib: 16.0
default_models: [llama, qwen3]
sampling: [greedy, t0.7]
shape: {prompt: 64, generate: 16, warmup: 4}
guard: {idle_secs: 1, sample_hz: 20, max_attempts: 2, max_wait_secs: 60}
`

// hostJobs is a GPU job's surroundings for the host jobs: the fake gfx1151 host on
// PATH and as PERFBOT_ROOT, a target checkout cloned from a bare remote, and the
// step's runtime files. The host's environment is vars, handed to the step as its
// processes' environment (Options.Environ), so that host-job tests run side by side.
type hostJobs struct {
	dir, repo, bare, base, root string
	vars                        map[string]string
}

func newHostJobs(t *testing.T, config string, extra ...map[string]string) *hostJobs {
	t.Helper()
	h := &hostJobs{dir: t.TempDir()}
	h.root = hosttest.Root(t, h.dir)
	bin := filepath.Join(h.dir, "bin")
	buildPerfbot(t, bin)
	home := filepath.Join(h.dir, "home")
	host := map[string]string{
		"PATH": hosttest.Path(t, bin), "HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"TMPDIR": h.dir, "FAKEHOST_ROCMINFO": testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"),
		"ROCM_GPU_GUARD_LOCK": filepath.Join(h.dir, "guard.lock"), "ROCM_GPU_GUARD_COMPILER_RE": noCompiler,
		"ROCM_GPU_GUARD_KFD_DIR": "", "ROCM_GPU_GUARD_LOCK_HELD": "", "FAKE_BENCH_CRASH": "", "FAKE_CARGO_TESTS": "",
		"FAKE_HARNESS": "", "FAKE_HARNESS_DATE": "",
	}
	files := targetFiles(t, config)
	for _, m := range extra {
		for k, v := range m {
			files[k] = v
		}
	}
	tg := hosttest.NewTarget(t, home, files)
	h.repo, h.bare, h.base = tg.Repo, tg.Bare, tg.Base
	h.vars = host
	return h
}

// step runs one step of the GPU job with the given inputs.
func (h *hostJobs) step(t *testing.T, inputs map[string]string) (result, *stepEnv, string, error) {
	t.Helper()
	e := newStepEnv(t, inputs)
	for k, v := range h.vars {
		e.vars[k] = v
	}
	e.vars["GITHUB_WORKSPACE"] = h.repo
	e.vars["RUNNER_TEMP"] = filepath.Join(h.dir, "runner-temp")
	e.vars[EnvRoot] = h.root
	e.vars["GITHUB_REPOSITORY"] = "lablup/mlxcel"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log bytes.Buffer
	res, err := run(ctx, Options{Stdout: &log, Getenv: e.getenv, Environ: e.environ})
	return res, e, log.String(), err
}

// annotations are the log's annotations by level, as "title: message".
func annotations(t *testing.T, log string) map[string][]string {
	out := map[string][]string{}
	for _, c := range commands(t, log) {
		switch c.Name {
		case "error", "warning", "notice":
			out[c.Name] = append(out[c.Name], c.Props["title"]+": "+c.Msg)
		}
	}
	return out
}

func hasAnnotation(list []string, parts ...string) bool {
	return slices.ContainsFunc(list, func(a string) bool {
		for _, p := range parts {
			if !strings.Contains(a, p) {
				return false
			}
		}
		return true
	})
}

// A partial session is published, not failed: a skipped model and a crashed run become
// annotations and the job goes on to the numeric tests (one aborts: an outcome, not a
// failure) and a dry-run publish, each step reporting through outputs and summary.
func TestHostJobsPartialSessionThroughPublish(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig)
	h.vars["FAKE_BENCH_CRASH"] = "Meta-Llama-3.1-8B-Instruct-4bit_t0.7:profiled"

	// profile
	_, e, log, err := h.step(t, map[string]string{"job": "profile", "ref": h.base[:12]})
	if err != nil {
		t.Fatalf("profile: %v\n%s", err, log)
	}
	outs := readOutputs(t, e.output)
	folder := outs["results-dir"]
	if outs["verdict"] != VerdictPartial || filepath.Base(folder) != "gfx1151_"+h.base[:8] || outs["traces-dir"] == "" {
		t.Fatalf("profile outputs %v", outs)
	}
	var rk struct {
		Order []string `json:"order"`
		Runs  []string `json:"runs"`
	}
	if err := json.Unmarshal([]byte(outs["ranking"]), &rk); err != nil || len(rk.Order) == 0 || !slices.Equal(rk.Runs, []string{"Meta-Llama-3.1-8B-Instruct-4bit_greedy"}) {
		t.Errorf("ranking output %q: %v", outs["ranking"], err)
	}
	ann := annotations(t, log)
	if !hasAnnotation(ann["warning"], "Qwen3-30B-A3B-4bit_greedy skipped", "model directory models/mlx/Qwen3-30B-A3B-4bit") ||
		!hasAnnotation(ann["error"], "Meta-Llama-3.1-8B-Instruct-4bit_t0.7 bench crashed") {
		t.Errorf("annotations %v", ann)
	}
	// Every run got the GPU at its first attempt: no run warns of guard rejections.
	if hasAnnotation(ann["warning"], "guard rejections") {
		t.Errorf("warnings %v", ann["warning"])
	}
	sum := e.summaryText(t)
	// The run with results is a row of figures, not a run without results.
	if !regexp.MustCompile("\\| `Meta-Llama-3.1-8B-Instruct-4bit_greedy` \\| [0-9.]+ \\| [0-9.]+ \\|").MatchString(sum) || strings.Contains(sum, "| `Meta-Llama-3.1-8B-Instruct-4bit_greedy` | ok |") {
		t.Errorf("the run with results is not a row of its figures:\n%s", sum)
	}
	for _, want := range []string{"Verdict: **partial**", "| `Qwen3-30B-A3B-4bit_t0.7` | not\\_run |", "### Ranked port order"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the profile summary has no %q:\n%s", want, sum)
		}
	}
	h.vars["FAKE_BENCH_CRASH"] = ""

	// gemm-tests: the third test aborts.
	h.vars["FAKE_CARGO_TESTS"] = patch.TestNames[2] + "=abort"
	_, e, log, err = h.step(t, map[string]string{"job": "gemm-tests"})
	if err != nil {
		t.Fatalf("gemm-tests: %v\n%s", err, log)
	}
	if outs := readOutputs(t, e.output); outs["verdict"] != string(patch.Record) || outs["results-dir"] != folder {
		t.Errorf("gemm-tests outputs %v", outs)
	}
	if ann := annotations(t, log); len(ann["error"]) != 1 || !hasAnnotation(ann["error"], patch.TestNames[2]+" aborted", "SIGABRT") {
		t.Errorf("gemm-tests annotations %v", ann)
	}
	if o, err := os.ReadFile(filepath.Join(folder, results.GemmTestsFile)); err != nil || !strings.Contains(string(o), `"aborted"`) {
		t.Errorf("the outcome in the results folder: %v\n%s", err, o)
	}
	if sum := e.summaryText(t); !strings.Contains(sum, "Decision: **record**") {
		t.Errorf("the gemm-tests summary:\n%s", sum)
	}

	// patch: the record decision applied to a scratch worktree and verified there.
	_, e, log, err = h.step(t, map[string]string{"job": "patch"})
	if err != nil {
		t.Fatalf("patch: %v\n%s", err, log)
	}
	if outs := readOutputs(t, e.output); outs["verdict"] != VerdictReady || outs["results-dir"] != folder {
		t.Errorf("patch outputs %v", outs)
	}
	// The step summary names what the patch changed and the checker's verdict.
	if sum := e.summaryText(t); !strings.Contains(sum, "| changed | scripts/ci/check\\_kernel\\_port\\_dispatch.py |") || !strings.Contains(sum, "| checker | passed |") {
		t.Errorf("the patch job's step summary:\n%s", sum)
	}
	// The log's group shows the tests' report the decision came from.
	if !strings.Contains(log, "### grouped_gemm numeric tests on ROCm (overlay ") {
		t.Errorf("the patch job's log lacks the numeric tests' report:\n%s", log)
	}
	prep, err := os.ReadFile(filepath.Join(folder, patch.PreparedFile))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := patch.ParsePrepared(prep); err != nil || p.Commit != h.base || p.Decision != patch.Record || len(p.Files) != 1 || p.Files[0].Path != patch.CheckerPath {
		t.Errorf("the prepared patch: %v %+v", err, p)
	}
	if st := hosttest.Git(t, h.vars["HOME"], h.repo, "status", "--porcelain"); st != "" {
		t.Errorf("the patch job changed the workflow's checkout:\n%s", st)
	}

	// publish, dry run: the documents as files, the push to the bare remote only.
	_, e, log, err = h.step(t, map[string]string{"job": "publish", "dry-run": "true", "trigger-comment-id": "4242"})
	if err != nil {
		t.Fatalf("publish: %v\n%s", err, log)
	}
	outs = readOutputs(t, e.output)
	if outs["verdict"] != VerdictSuccess || outs["pr-operation"] != "created" || !strings.HasPrefix(outs["report-path"], "docs/benchmark_results/") || outs["ranking"] == "" {
		t.Errorf("publish outputs %v", outs)
	}
	if ann := annotations(t, log); len(ann["error"]) != 0 || len(ann["warning"]) != 0 {
		t.Errorf("publish annotations %v", ann)
	}
	pr, err := os.ReadFile(filepath.Join(h.dir, "runner-temp", "perfbot", publishFolder, "pr.md"))
	if err != nil || !strings.Contains(string(pr), "Meta-Llama-3.1-8B-Instruct-4bit_greedy") {
		t.Errorf("the dry run's pull request: %v\n%s", err, pr)
	}
	if !strings.Contains(e.summaryText(t), "## ROCm decode profile, gfx1151") {
		t.Errorf("the publish summary:\n%s", e.summaryText(t))
	}
	if got := hosttest.Git(t, h.vars["HOME"], h.bare, "rev-parse", "refs/heads/perfbot/rocm-profile^"); got != h.base {
		t.Errorf("the bot branch's parent on the remote is %s, want %s", got, h.base)
	}
}

// The step fails (non-zero exit) only when the job failed: here no run produced results.
func TestProfileWithoutResultsFails(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig)
	h.vars["FAKE_BENCH_CRASH"] = "Meta-Llama-3.1-8B-Instruct-4bit_greedy"
	_, e, log, err := h.step(t, map[string]string{"job": "profile", "models": "llama", "sampling": "greedy"})
	if !errors.Is(err, ErrJobFailed) {
		t.Fatalf("profile: %v, want ErrJobFailed\n%s", err, log)
	}
	if outs := readOutputs(t, e.output); outs["verdict"] != VerdictFailed || outs["ranking"] != "" {
		t.Errorf("outputs %v", outs)
	}
	if ann := annotations(t, log); !hasAnnotation(ann["error"], "perfbot profile failed", "none of the 1 runs produced results") {
		t.Errorf("annotations %v", ann)
	}
	// Without a run's results there is nothing to rank: no error of the ranking's.
	if ann := annotations(t, log); hasAnnotation(ann["error"], "perfbot profile failed", "_summary.json") {
		t.Errorf("a ranking of no runs was attempted: %v", ann["error"])
	}
	// A model the config does not have is the request's fault, before anything runs.
	_, _, log, err = h.step(t, map[string]string{"job": "profile", "models": "mistral"})
	if !errors.Is(err, ErrJobFailed) || !hasAnnotation(annotations(t, log)["error"], "the request does not fit the config", `"mistral" is not a model of the config`) {
		t.Errorf("an unknown model: %v\n%s", err, log)
	}
}

// The job runs the pinned commit: a checkout of a later commit is moved back to it, and
// a commit the checkout cannot have is refused before anything runs.
func TestPinChecksOutThePinnedCommit(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig)
	home := h.vars["HOME"]
	if err := os.WriteFile(filepath.Join(h.repo, "later.txt"), []byte("moved on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosttest.Git(t, home, h.repo, "add", "later.txt")
	hosttest.Git(t, home, h.repo, "commit", "-q", "-m", "a later commit on the branch")
	e := newStepEnv(t, map[string]string{"job": "profile", "ref": h.base})
	e.vars["GITHUB_WORKSPACE"] = h.repo
	rt, err := NewRuntime(&bytes.Buffer{}, e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	s := &step{rt: rt, in: Inputs{Ref: h.base}, workspace: h.repo}
	got, err := s.pin(context.Background())
	if err != nil || got != h.base || hosttest.Git(t, home, h.repo, "rev-parse", "HEAD") != h.base {
		t.Errorf("pin: %s, %v; HEAD %s, want %s", got, err, hosttest.Git(t, home, h.repo, "rev-parse", "HEAD"), h.base)
	}
	s.in.Ref = "0123456"
	if _, err := s.pin(context.Background()); err == nil || !strings.Contains(err.Error(), "the pinned commit 0123456 is not in the checkout") {
		t.Errorf("an unknown short SHA: %v", err)
	}
}

// The nightly: job bench runs the repository's harnesses on the fake host and leaves
// the folder a dry-run publish turns into the baseline pull request.
func TestBenchThenPublishTheBaseline(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig, benchFiles(t))
	date := time.Now().Format(time.DateOnly)
	h.vars["FAKE_HARNESS_DATE"] = date
	h.vars["FAKE_HARNESS"] = ""
	_, e, log, err := h.step(t, map[string]string{"job": "bench"})
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, log)
	}
	outs := readOutputs(t, e.output)
	stem := "rocm_strixhalo-gfx1151_" + date
	if outs["verdict"] != VerdictComplete || filepath.Base(outs["results-dir"]) != "benchmarks" {
		t.Fatalf("bench outputs %v", outs)
	}
	if _, err := os.Stat(filepath.Join(outs["results-dir"], stem+results.NightlySuffix)); err != nil {
		t.Errorf("no manifest: %v", err)
	}
	sum := e.summaryText(t)
	for _, want := range []string{"## perfbot bench, gfx1151", "| mlxcel sweep | ok: " + strings.ReplaceAll(stem, "_", "\\_") + ".csv |", "| Meta-Llama-3.1-8B-Instruct-4bit | decode 35.41 tok/s"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the bench summary has no %q:\n%s", want, sum)
		}
	}

	_, e, log, err = h.step(t, map[string]string{"job": "publish", "dry-run": "true"})
	if err != nil {
		t.Fatalf("publish: %v\n%s", err, log)
	}
	outs = readOutputs(t, e.output)
	if outs["verdict"] != VerdictSuccess || outs["report-path"] != "docs/benchmark_results/rocm-baseline-gfx1151-"+date+".md" || outs["pr-operation"] != "created" {
		t.Errorf("publish outputs %v", outs)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "runner-temp", "perfbot", publishFolder, "baseline-pr.md")); err != nil {
		t.Error(err)
	}

	// The same nightly from a publish job of its own: the downloaded artifact, no
	// checkout, the repository cloned.
	artifact := filepath.Join(t.TempDir(), "nightly")
	if err := os.CopyFS(artifact, os.DirFS(filepath.Join(h.dir, "runner-temp", "perfbot", "benchmarks"))); err != nil {
		t.Fatal(err)
	}
	pe := newStepEnv(t, map[string]string{"job": "publish", "dry-run": "true", "ref": h.base, "results": artifact})
	pe.vars["GITHUB_REPOSITORY"], pe.vars[EnvRepoURL], pe.vars["HOME"] = "lablup/mlxcel", h.bare, h.vars["HOME"]
	var plog bytes.Buffer
	if _, err := run(context.Background(), Options{Stdout: &plog, Getenv: pe.getenv}); err != nil {
		t.Fatalf("publish from the artifact: %v\n%s", err, plog.String())
	}
	if outs := readOutputs(t, pe.output); outs["verdict"] != VerdictSuccess || outs["report-path"] != "docs/benchmark_results/rocm-baseline-gfx1151-"+date+".md" {
		t.Errorf("publish from the artifact: outputs %v", outs)
	}
	if _, err := os.Stat(filepath.Join(pe.vars["RUNNER_TEMP"], "perfbot", publishFolder, "baseline-pr.md")); err != nil {
		t.Error(err)
	}

	// A harness that mislabels its ROCm rows fails the job, as `perfbot run bench` does.
	h2 := newHostJobs(t, jobsConfig, benchFiles(t))
	h2.vars["FAKE_HARNESS"] = "pre-rocm"
	_, e, log, err = h2.step(t, map[string]string{"job": "bench"})
	if !errors.Is(err, ErrJobFailed) || readOutputs(t, e.output)["verdict"] != VerdictFailed ||
		!hasAnnotation(annotations(t, log)["error"], "perfbot bench failed", "harness problem(s) in the CSVs") {
		t.Errorf("a mislabelling harness: %v\n%s", err, log)
	}
}

// benchFiles are the fake harnesses as the checkout's scripts/ and a second model.
func benchFiles(t *testing.T) map[string]string {
	t.Helper()
	harness := filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "harness")
	files := map[string]string{
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/fake-bench.txt":    "mlxcel 35.41 1065.78\nmlx-lm 32.81 966.84\n",
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/model.safetensors": "weights",
		"models/mlx/Qwen3-0.6B-4bit/config.json":                       "{}",
		"models/mlx/Qwen3-0.6B-4bit/fake-bench.txt":                    "mlxcel 278.48 4417.27\nmlx-lm 220.13 4316.74\n",
		"models/mlx/Qwen3-0.6B-4bit/model.safetensors":                 "weights",
	}
	for _, s := range []string{"bench_decode.sh", "bench_mlxlm.py"} {
		b, err := os.ReadFile(filepath.Join(harness, s))
		if err != nil {
			t.Fatal(err)
		}
		files["scripts/"+s] = string(b)
	}
	return files
}

// The publish job of its own: the GPU job's results as a downloaded artifact (the
// results input), no checkout (no GITHUB_WORKSPACE), the repository cloned from its
// URL and read from the git objects only. It commits the sources gemm_patch.json
// carries.
func TestPublishResultsFromAnotherJob(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig)
	for _, st := range []map[string]string{{"job": "profile", "ref": h.base, "models": "llama", "sampling": "greedy"}, {"job": "gemm-tests"}, {"job": "patch"}} {
		if _, _, log, err := h.step(t, st); err != nil {
			t.Fatalf("%s: %v\n%s", st["job"], err, log)
		}
	}
	// The download: the results folder as the artifact holds it, in another place.
	folder := filepath.Join(h.dir, "runner-temp", "perfbot", "benchmarks", "rocm_profiles", "gfx1151_"+h.base[:8])
	artifact := filepath.Join(t.TempDir(), "artifact")
	if err := os.CopyFS(artifact, os.DirFS(filepath.Dir(folder))); err != nil {
		t.Fatal(err)
	}
	prep, err := patch.ParsePrepared(mustRead(t, filepath.Join(folder, patch.PreparedFile)))
	if err != nil {
		t.Fatal(err)
	}

	e := newStepEnv(t, map[string]string{"job": "publish", "dry-run": "true", "ref": h.base, "results": artifact})
	for k, v := range h.vars {
		e.vars[k] = v
	}
	e.vars["GITHUB_REPOSITORY"] = "lablup/mlxcel"
	e.vars[EnvRepoURL] = h.bare
	var log bytes.Buffer
	if _, err := run(context.Background(), Options{Stdout: &log, Getenv: e.getenv}); err != nil {
		t.Fatalf("publish: %v\n%s", err, log.String())
	}
	outs := readOutputs(t, e.output)
	if outs["verdict"] != VerdictSuccess || outs["pr-operation"] != "created" || outs["ranking"] == "" {
		t.Errorf("publish outputs %v\n%s", outs, log.String())
	}
	home := h.vars["HOME"]
	branch := "refs/heads/perfbot/rocm-profile"
	if got := hosttest.Git(t, home, h.bare, "rev-parse", branch+"^"); got != h.base {
		t.Errorf("the bot branch's parent is %s, want %s", got, h.base)
	}
	for _, f := range prep.Files {
		if got := hosttest.Git(t, home, h.bare, "show", branch+":"+f.Path); strings.TrimRight(f.Content, "\n") != got {
			t.Errorf("%s on the bot branch is not the prepared content", f.Path)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(e.vars["RUNNER_TEMP"], "perfbot")); len(ents) != 2 {
		t.Errorf("the publish job left %v in RUNNER_TEMP/perfbot, want the dry run and the checked results, not the clone", ents)
	}
	if _, err := os.Stat(filepath.Join(outs["results-dir"], patch.PreparedFile)); err != nil {
		t.Errorf("results-dir %s is not the checked copy: %v", outs["results-dir"], err)
	}

	// Another commit than the results' is refused by the strict copy or publish.
	e = newStepEnv(t, map[string]string{"job": "publish", "dry-run": "true", "ref": h.base[:8], "results": artifact})
	e.vars["GITHUB_REPOSITORY"], e.vars[EnvRepoURL] = "lablup/mlxcel", h.bare
	log.Reset()
	if _, err := run(context.Background(), Options{Stdout: &log, Getenv: e.getenv}); !errors.Is(err, ErrJobFailed) ||
		!hasAnnotation(annotations(t, log.String())["error"], "ref", "full SHA") {
		t.Errorf("a short ref with results: %v\n%s", err, log.String())
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The patch job without the numeric tests' outcome writes nothing and says so; a
// publish with results but no checkout does not ask for GITHUB_WORKSPACE.
func TestPatchWithoutTestsWritesNothing(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig)
	_, e, log, err := h.step(t, map[string]string{"job": "profile", "ref": h.base, "models": "llama", "sampling": "greedy"})
	if err != nil {
		t.Fatalf("profile: %v\n%s", err, log)
	}
	folder := readOutputs(t, e.output)["results-dir"]
	_, e, log, err = h.step(t, map[string]string{"job": "patch"})
	if err != nil {
		t.Fatalf("patch: %v\n%s", err, log)
	}
	if outs := readOutputs(t, e.output); outs["verdict"] != VerdictSkipped || outs["results-dir"] != folder {
		t.Errorf("patch outputs %v", outs)
	}
	if !hasAnnotation(annotations(t, log)["notice"], "no grouped_gemm patch", "has no gemm_tests.json", "no gemm_patch.json written") {
		t.Errorf("patch annotations %v", annotations(t, log))
	}
	if _, err := os.Stat(filepath.Join(folder, patch.PreparedFile)); !os.IsNotExist(err) {
		t.Errorf("gemm_patch.json was written: %v", err)
	}

	// The artifact is missing: the error names the input, not the workspace.
	pe := newStepEnv(t, map[string]string{"job": "publish", "dry-run": "true", "ref": h.base, "results": filepath.Join(t.TempDir(), "none")})
	pe.vars["GITHUB_REPOSITORY"], pe.vars[EnvRepoURL] = "lablup/mlxcel", h.bare
	var plog bytes.Buffer
	if _, err := run(context.Background(), Options{Stdout: &plog, Getenv: pe.getenv}); !errors.Is(err, ErrJobFailed) ||
		!hasAnnotation(annotations(t, plog.String())["error"], "input results", "is not a folder") {
		t.Errorf("a missing artifact: %v\n%s", err, plog.String())
	}
}

// An artifact the strict copy refuses (a link out of it) stops the publish job before
// anything is read or pushed, and the status comment and check run say why.
func TestPublishResultsRefusesAHostileArtifact(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig)
	artifact := filepath.Join(t.TempDir(), "artifact")
	folder := filepath.Join(artifact, "gfx1151_"+h.base[:8])
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(folder, results.SessionFile)); err != nil {
		t.Fatal(err)
	}
	e := newStepEnv(t, map[string]string{"job": "publish", "dry-run": "true", "ref": h.base, "results": artifact, "status-comment-id": "77"})
	e.vars["GITHUB_REPOSITORY"], e.vars[EnvRepoURL], e.vars["HOME"] = "lablup/mlxcel", h.bare, h.vars["HOME"]
	var log bytes.Buffer
	if _, err := run(context.Background(), Options{Stdout: &log, Getenv: e.getenv}); !errors.Is(err, ErrJobFailed) ||
		!hasAnnotation(annotations(t, log.String())["error"], "perfbot publish failed", "input results") {
		t.Fatalf("a hostile artifact: %v\n%s", err, log.String())
	}
	if outs := readOutputs(t, e.output); outs["verdict"] != VerdictFailure {
		t.Errorf("outputs %v", outs)
	}
	dry := filepath.Join(e.vars["RUNNER_TEMP"], "perfbot", publishFolder)
	for name, want := range map[string]string{"status-comment.md": "failed", "check-run.md": "Conclusion: failure"} {
		b, err := os.ReadFile(filepath.Join(dry, name))
		if err != nil || !strings.Contains(string(b), want) || !strings.Contains(string(b), "session.json") {
			t.Errorf("%s: %v\n%s", name, err, b)
		}
	}
	if got := hosttest.Git(t, h.vars["HOME"], h.bare, "for-each-ref", "refs/heads/perfbot"); got != "" {
		t.Errorf("something was pushed: %s", got)
	}
}

// The profile job with base-ref runs the compare of the base (A) against the pinned
// commit (B), which plants a known change: the compare folder with each side's
// profile and their difference, and compare.json naming both commits.
func TestHostJobsProfileCompare(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig)
	home := h.vars["HOME"]
	if err := os.WriteFile(filepath.Join(h.repo, "fake-change.txt"), []byte("faster kernel_sdpav_1pass 2\nadded mlx_fused_rope_append_kernel rope 1200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosttest.Git(t, home, h.repo, "add", "fake-change.txt")
	hosttest.Git(t, home, h.repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "-m", "B: a faster attention")
	head := hosttest.Git(t, home, h.repo, "rev-parse", "HEAD")
	hosttest.Git(t, home, h.repo, "push", "--quiet", "origin", "HEAD:refs/heads/main")

	_, e, log, err := h.step(t, map[string]string{"job": "profile", "ref": head, "base-ref": h.base, "models": "llama", "sampling": "greedy"})
	if err != nil {
		t.Fatalf("profile compare: %v\n%s", err, log)
	}
	outs := readOutputs(t, e.output)
	folder := outs["results-dir"]
	if outs["verdict"] != VerdictComplete || filepath.Base(folder) != "gfx1151_"+h.base[:8]+"_"+head[:8] {
		t.Fatalf("outputs %v", outs)
	}
	c, err := results.ReadCompareFolder(folder)
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != results.CompareProfile || c.ShaA != h.base || c.ShaB != head || len(c.Diffs) != 1 {
		t.Errorf("compare %+v", c)
	}
	d := readFileString(t, filepath.Join(folder, c.Diffs[0].JSON))
	if !strings.Contains(d, `"kernel": "mlx_fused_rope_append_kernel"`) {
		t.Errorf("the difference does not name the added kernel:\n%s", d)
	}
	if sum := e.summaryText(t); !strings.Contains(sum, "Verdict: **complete**") {
		t.Errorf("summary:\n%s", sum)
	}

	// The publish job: the artifact as the workflow stages it (the root holding the
	// compare folder), published from a bare clone that fetches B and A.
	artifact := filepath.Join(t.TempDir(), "artifact")
	if err := os.CopyFS(filepath.Join(artifact, filepath.Base(folder)), os.DirFS(folder)); err != nil {
		t.Fatal(err)
	}
	publishStep := func(ref string) (*stepEnv, string, error) {
		pe := newStepEnv(t, map[string]string{"job": "publish", "dry-run": "true", "ref": ref, "results": artifact, "issue": "1900", "status-comment-id": "77"})
		for k, v := range h.vars {
			pe.vars[k] = v
		}
		pe.vars["GITHUB_REPOSITORY"], pe.vars[EnvRepoURL] = "lablup/mlxcel", h.bare
		pe.vars["GITHUB_SERVER_URL"], pe.vars["GITHUB_RUN_ID"] = "https://github.example", "4242"
		plog, err := pe.runStep()
		return pe, plog, err
	}
	pe, plog, err := publishStep(head)
	if err != nil {
		t.Fatalf("publish the compare: %v\n%s", err, plog)
	}
	pouts := readOutputs(t, pe.output)
	if pouts["verdict"] != VerdictSuccess || filepath.Base(pouts["results-dir"]) != filepath.Base(folder) {
		t.Errorf("publish outputs %v\n%s", pouts, plog)
	}
	if !strings.Contains(plog, "fetched A "+h.base) {
		t.Errorf("the publish job did not fetch A's commit:\n%s", plog)
	}
	dry := filepath.Join(pe.vars["RUNNER_TEMP"], "perfbot", "dry-run")
	comment := readFileString(t, filepath.Join(dry, "compare-comment.md"))
	for _, want := range []string{"perfbot:compare-profile", "mlx_fused_rope_append_kernel", "https://github.example/lablup/mlxcel/actions/runs/4242"} {
		if !strings.Contains(comment, want) {
			t.Errorf("the compare comment lacks %q:\n%s", want, comment)
		}
	}
	var dsum map[string]any
	if err := json.Unmarshal(mustRead(t, filepath.Join(dry, "summary.json")), &dsum); err != nil || dsum["kind"] != "profile" || dsum["a"] != h.base || dsum["b"] != head {
		t.Errorf("the dry run's summary %v (%v)", dsum, err)
	}
	if st := readFileString(t, filepath.Join(dry, "status-comment.md")); !strings.Contains(st, "/profile rocm compare") {
		t.Errorf("status comment:\n%s", st)
	}

	// The artifact of another B than the pinned commit is refused, with the status
	// comment saying so.
	pe, plog, err = publishStep(h.base)
	if !errors.Is(err, ErrJobFailed) || !hasAnnotation(annotations(t, plog)["error"], "input results", "not of the pinned commit") {
		t.Errorf("a compare of another commit: %v\n%s", err, plog)
	}
	if outs := readOutputs(t, pe.output); outs["verdict"] != VerdictFailure {
		t.Errorf("outputs %v", outs)
	}
}

func readFileString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The bench job with base-ref runs a bench compare on the models asked for, capped at
// the repeats asked for: the harness of each side in ABBA blocks, a 10 % decode gain
// planted in B called faster, and the CSV pair named by the label beside compare.json.
func TestHostJobsBenchCompare(t *testing.T) {
	t.Parallel()
	harness, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "harness", "bench_decode.sh"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHostJobs(t, jobsConfig, map[string]string{
		"scripts/bench_decode.sh":                                   string(harness),
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/fake-bench.txt": "mlxcel 35.41 1065.78\n",
	})
	home := h.vars["HOME"]
	if err := os.WriteFile(filepath.Join(h.repo, "fake-change.txt"), []byte("decode 1.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosttest.Git(t, home, h.repo, "add", "fake-change.txt")
	hosttest.Git(t, home, h.repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "-m", "B: a faster decode")
	head := hosttest.Git(t, home, h.repo, "rev-parse", "HEAD")

	progress := filepath.Join(h.dir, "progress")
	if err := os.Mkdir(progress, 0o755); err != nil {
		t.Fatal(err)
	}
	h.vars[EnvProgressDir] = progress
	// A short base-ref of a commit in the checkout: resolved to its full SHA there.
	_, e, log, err := h.step(t, map[string]string{"job": "bench", "ref": head, "base-ref": h.base[:12], "models": "llama", "repeats": "5", "label": "pr-57", "request-id": "58"})
	if err != nil {
		t.Fatalf("bench compare: %v\n%s", err, log)
	}
	outs := readOutputs(t, e.output)
	c, err := results.ReadCompareFolder(outs["results-dir"])
	if err != nil {
		t.Fatalf("outputs %v: %v", outs, err)
	}
	m, _ := c.Model("Meta-Llama-3.1-8B-Instruct-4bit")
	if outs["verdict"] != VerdictComplete || c.Kind != results.CompareBench || c.ShaA != h.base || c.ShaB != head ||
		!m.Done || len(m.Results) != 2 || m.Results[0].Verdict != "faster" || c.Cap != 5 || c.Label != "pr-57" ||
		!strings.HasSuffix(c.CSVBefore, "_pr-57-before.csv") || !strings.HasSuffix(c.CSVAfter, "_pr-57-after.csv") {
		t.Errorf("outputs %v, compare %+v", outs, c)
	}
	if len(c.Runs) < 4 || c.Runs[0].Side != results.SideA || c.Runs[1].Side != results.SideB || c.Runs[2].Side != results.SideB || c.Runs[3].Side != results.SideA {
		t.Errorf("runs out of ABBA order: %+v", c.Runs)
	}
	if sum := e.summaryText(t); !strings.Contains(sum, "decode tok/s") || !strings.Contains(sum, "faster") {
		t.Errorf("summary:\n%s", sum)
	}
	// No run was rejected by the guard, so there is no warning of rejections.
	if w := annotations(t, log)["warning"]; hasAnnotation(w, "perfbot: guard rejections") {
		t.Errorf("warnings %q", w)
	}
	// The progress file counts the runs and keeps the last verdicts.
	p, err := results.ReadProgress(progress, "58")
	if err != nil {
		t.Fatal(err)
	}
	if p.Phase != results.PhaseDone || p.Planned != len(c.Runs) || p.Done != p.Planned ||
		len(p.Verdicts) != 1 || !strings.HasPrefix(p.Verdicts[0], "Meta-Llama-3.1-8B-Instruct-4bit: decode tok/s faster, prefill tok/s ") {
		t.Errorf("progress %+v, want done with %d runs and the model's verdicts", p, len(c.Runs))
	}
}

// A bench compare whose B is 15 % slower in decode, published from its artifact with
// A's config's compare.fail_slower_pct at 5 (B's own config says 50, and is not read): the CSV pair committed on A on the compare
// branch (its pull request in the dry run), the compare comment on the issue input's
// pull request, and the check run failed by the threshold, which the log also warns of.
func TestPublishBenchCompareFailsOnTheThreshold(t *testing.T) {
	t.Parallel()
	harness, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "harness", "bench_decode.sh"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHostJobs(t, jobsConfig+"compare: {fail_slower_pct: 5}\n", map[string]string{
		"scripts/bench_decode.sh":                                   string(harness),
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/fake-bench.txt": "mlxcel 35.41 1065.78\n",
	})
	home := h.vars["HOME"]
	if err := os.WriteFile(filepath.Join(h.repo, "fake-change.txt"), []byte("decode 0.85\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// B also loosens the threshold in its own config: the compare is judged by A's.
	if err := os.WriteFile(filepath.Join(h.repo, ".github", "perfbot.yml"), []byte(jobsConfig+"compare: {fail_slower_pct: 50}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosttest.Git(t, home, h.repo, "add", "fake-change.txt", ".github/perfbot.yml")
	hosttest.Git(t, home, h.repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "-m", "B: a slower decode")
	head := hosttest.Git(t, home, h.repo, "rev-parse", "HEAD")
	hosttest.Git(t, home, h.repo, "push", "--quiet", "origin", "HEAD:refs/heads/pr")

	_, e, log, err := h.step(t, map[string]string{"job": "bench", "ref": head, "base-ref": h.base, "models": "llama"})
	if err != nil {
		t.Fatalf("bench compare: %v\n%s", err, log)
	}
	folder := readOutputs(t, e.output)["results-dir"]
	artifact := filepath.Join(t.TempDir(), "artifact")
	if err := os.CopyFS(filepath.Join(artifact, filepath.Base(folder)), os.DirFS(folder)); err != nil {
		t.Fatal(err)
	}
	pe := newStepEnv(t, map[string]string{"job": "publish", "dry-run": "true", "ref": head, "results": artifact, "issue": "1900", "check-run-id": "55"})
	for k, v := range h.vars {
		pe.vars[k] = v
	}
	pe.vars["GITHUB_REPOSITORY"], pe.vars[EnvRepoURL] = "lablup/mlxcel", h.bare
	var plog bytes.Buffer
	if _, err := run(context.Background(), Options{Stdout: &plog, Getenv: pe.getenv}); err != nil {
		t.Fatalf("publish the bench compare: %v\n%s", err, plog.String())
	}
	if outs := readOutputs(t, pe.output); outs["verdict"] != VerdictSuccess {
		t.Errorf("outputs %v\n%s", outs, plog.String())
	}
	if !hasAnnotation(annotations(t, plog.String())["warning"], "slower than compare.fail_slower_pct", "Meta-Llama-3.1-8B-Instruct-4bit, decode tok/s: slower by") {
		t.Errorf("no warning of the threshold:\n%s", plog.String())
	}
	dry := filepath.Join(pe.vars["RUNNER_TEMP"], "perfbot", "dry-run")
	// Both metrics were tested (one at a p of 0: the fake harness repeats its reading
	// exactly), so Holm's family has two members.
	if comment := readFileString(t, filepath.Join(dry, "compare-comment.md")); !strings.Contains(comment, "Holm's correction over the 2 tested comparisons") {
		t.Errorf("the comment's method line does not count both tested comparisons:\n%s", comment)
	}
	check := readFileString(t, filepath.Join(dry, "check-run.md"))
	if !strings.Contains(check, "failure") {
		t.Errorf("the check run is not failed by the threshold:\n%s", check)
	}
	var dsum struct {
		Files   []string `json:"files"`
		Failing []string `json:"failing"`
		Git     struct {
			Base   string `json:"base"`
			Branch string `json:"branch"`
		} `json:"git"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(dry, "summary.json")), &dsum); err != nil {
		t.Fatal(err)
	}
	if len(dsum.Files) != 2 || !strings.HasSuffix(dsum.Files[0], "-after.csv") || !strings.HasSuffix(dsum.Files[1], "-before.csv") ||
		len(dsum.Failing) != 1 || dsum.Git.Base != h.base || !strings.HasPrefix(dsum.Git.Branch, "perfbot/rocm-compare-") {
		t.Errorf("the dry run's summary %+v", dsum)
	}
	comment := readFileString(t, filepath.Join(dry, "compare-comment.md"))
	for _, want := range []string{"perfbot:compare-bench", "**slower**", "The check run fails", "decode tok/s: slower by 15.00 %"} {
		if !strings.Contains(comment, want) {
			t.Errorf("the compare comment lacks %q:\n%s", want, comment)
		}
	}
}
