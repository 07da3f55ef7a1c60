package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/gittest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

const runTestConfig = `version: 1
models:
  llama: {dir: models/mlx/Meta-Llama-3.1-8B-Instruct-4bit, model_type: llama, weights_gib: 4.5}
sampling: [greedy]
shape: {prompt: 64, generate: 16, warmup: 4}
guard: {idle_secs: 1, sample_hz: 20, max_attempts: 2, max_wait_secs: 60}
`

// runJobRepo is a committed mlxcel checkout for the fake cargo and bench.
func runJobRepo(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "mlxcel")
	upstream, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	var rs strings.Builder
	for _, n := range patch.TestNames {
		rs.WriteString("#[test]\nfn " + n + "() {}\n")
	}
	for name, body := range map[string]string{
		"Cargo.toml":          "[workspace]\n",
		".gitignore":          "target/\n",
		".github/perfbot.yml": runTestConfig,
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/config.json": `{"model_type": "llama"}`,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM":                  string(upstream),
		"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs":  rs.String(),
	} {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "test commit"}} {
		gittest.Git(t, repo, args...)
	}
	return repo
}

// runJobEnv puts the fake tools and a freshly built perfbot (which the fake bench
// runs) on PATH, and points the guard at a private KFD dir and lock (t.Setenv: not
// parallel).
func runJobEnv(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	// `go test` puts its own toolchain first on the PATH of the test process.
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "perfbot"), ".").CombinedOutput(); err != nil {
		t.Fatalf("building perfbot: %v\n%s", err, out)
	}
	fake := filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "bin")
	t.Setenv("PATH", fake+":"+bin+":/usr/local/bin:/usr/bin:/bin")
	t.Setenv("FAKEHOST_ROCMINFO", testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"))
	t.Setenv("TMPDIR", dir)
	kfd := filepath.Join(dir, "kfd")
	if err := os.Mkdir(kfd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROCM_GPU_GUARD_KFD_DIR", kfd)
	t.Setenv("ROCM_GPU_GUARD_LOCK", filepath.Join(dir, "guard.lock"))
	t.Setenv("ROCM_GPU_GUARD_COMPILER_RE", "perfbot-test-no-such-compiler")
	t.Setenv("ROCM_GPU_GUARD_LOCK_HELD", "")
	t.Setenv("FAKE_BENCH_CRASH", "")
	t.Setenv("FAKE_CARGO_TESTS", "")
	return dir
}

func runJobCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"run"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunCLIUsage(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".github", "perfbot.yml"), []byte(runTestConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(repo, "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage: perfbot run profile"},
		{[]string{"nightly"}, `unknown job "nightly"`},
		{[]string{"profile", "--repo", repo}, "--repo and --out are required"},
		{[]string{"profile", "--repo", repo, "--out", out, "--sampling", "hot"}, `sampling "hot"`},
		{[]string{"profile", "--repo", repo, "--out", out, "--models", "mistral"}, `"mistral" is not a model of the config; known: llama`},
		{[]string{"profile", "--repo", t.TempDir(), "--out", out}, "has no .github/perfbot.yml"},
		{[]string{"profile", "--repo", repo, "--out", out, "--root", "/no/such/root"}, "--root /no/such/root is not a folder"},
		{[]string{"gemm-tests", "--repo", repo}, "--repo and --out are required"},
		{[]string{"gemm-tests", "--repo", repo, "--out", out, "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"gemm-tests", "--repo", repo, "--out", out, "extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := runJobCLI(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("perfbot run %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// `perfbot run profile` on the fake host writes a results folder that `perfbot rank`
// reads; a crashed bench makes it exit 1 after writing everything.
func TestRunCLIProfile(t *testing.T) {
	dir := runJobEnv(t)
	repo := runJobRepo(t)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runJobCLI("profile", "--repo", repo, "--out", out, "--models", "llama", "--sampling", "greedy")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	folders, _ := filepath.Glob(filepath.Join(out, "benchmarks", "rocm_profiles", "gfx1151_*"))
	if len(folders) != 1 || !strings.Contains(stdout, "ok             Meta-Llama-3.1-8B-Instruct-4bit_greedy") {
		t.Fatalf("folders %v\nstdout:\n%s", folders, stdout)
	}
	if !strings.Contains(stderr, "[1/1] Meta-Llama-3.1-8B-Instruct-4bit_greedy profiled: attempt 1/2 started") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "traces", "Meta-Llama-3.1-8B-Instruct-4bit_greedy", "Meta-Llama-3.1-8B-Instruct-4bit_greedy_kernel_trace.csv")); err != nil {
		t.Errorf("trace not in the default traces folder: %v", err)
	}
	var rk, rkErr bytes.Buffer
	if c := run(context.Background(), []string{"rank", folders[0]}, &rk, &rkErr); c != 0 || !strings.Contains(rk.String(), "Ranked port order") {
		t.Errorf("rank: exit %d\n%s%s", c, rk.String(), rkErr.String())
	}

	t.Setenv("FAKE_BENCH_CRASH", "Meta-Llama-3.1-8B-Instruct-4bit_greedy:plain")
	code, stdout, stderr = runJobCLI("profile", "--repo", repo, "--out", out, "--no-build")
	if code != 1 || !strings.Contains(stdout, "bench_crashed  Meta-Llama-3.1-8B-Instruct-4bit_greedy: the plain run exited with status 139 (SIGSEGV)") ||
		!strings.Contains(stderr, "1 of 1 runs failed") {
		t.Errorf("crash: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(folders[0], "Meta-Llama-3.1-8B-Instruct-4bit_greedy_summary.json")); !os.IsNotExist(err) {
		t.Errorf("a rerun that crashed left the last session's summary: %v", err)
	}
}

// `perfbot run gemm-tests` writes the outcome JSON the patcher reads.
func TestRunCLIGemmTests(t *testing.T) {
	dir := runJobEnv(t)
	repo := runJobRepo(t)
	t.Setenv("FAKE_CARGO_TESTS", patch.TestNames[1]+"=panic")
	outFile := filepath.Join(dir, "results", results.GemmTestsFile)
	guardLog := filepath.Join(dir, "guard.log")
	code, stdout, stderr := runJobCLI("gemm-tests", "--repo", repo, "--out", outFile, "--guard-log", guardLog)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	o, err := patch.ParseOutcome(b)
	if err != nil {
		t.Fatalf("the patcher refuses %s: %v", b, err)
	}
	if o.OverlayCommit != "75915908" || o.Tests[0].Outcome != patch.Passed || o.Tests[1].Outcome != patch.Failed || o.Decide() != patch.Record {
		t.Errorf("outcome %+v", o)
	}
	if !strings.Contains(stdout, "failed       gather_mm_selects_the_indexed_expert: panicked at src/") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if lg, _ := os.ReadFile(guardLog); strings.Count(string(lg), "== grouped_gemm_numeric_tests::") != 3 {
		t.Errorf("guard log:\n%s", lg)
	}
}
