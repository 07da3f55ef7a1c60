package job

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// sandboxOn is the host's sandbox setting for the fake host: its tools read their
// FAKE_* variables. It needs the real bwrap, able to make a sandbox here (skipped
// without it only when CI is unset).
func sandboxOn(t *testing.T) *sandbox.Settings {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("bwrap is not installed (apt-get install bubblewrap; .ci/run does)")
		}
		t.Fatal("bwrap is not installed, and CI must test the sandbox: apt-get install bubblewrap")
	}
	s, err := sandbox.FromEnv(func(k string) string {
		return map[string]string{sandbox.EnvMode: "bwrap", sandbox.EnvPassEnv: "FAKE_*"}[k]
	})
	if err != nil && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &s
}

// benchWrapper is the checkout's bench as the profile runs it (--bench): it tries to
// write the checkout and the home folder (a private tmpfs inside), then runs the bench
// the build made.
const benchWrapper = `#!/bin/sh
touch "$HOME/escaped-home" 2>/dev/null && echo "wrote the private home" >&2
touch "$(pwd)/escaped-checkout" 2>/dev/null && echo "wrote the checkout" >&2
exec "$(pwd)/target/release/mlxcel-bench-decode" "$@"
`

// The profile session with the sandbox on: the build, the plain and the profiled runs
// all run in bwrap through the same guard and reaper, the guard counts them as the
// run's own (every attempt clean), the build writes only the target dir and the
// profiler only the traces, and the bench's writes to the checkout and home land nowhere.
func TestProfileSandboxed(t *testing.T) {
	t.Parallel()
	sb := sandboxOn(t)
	fh := newFakeHost(t)
	repo := fakeRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "bench.sh"), []byte(benchWrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	out, traces := filepath.Join(fh.tmp, "out"), filepath.Join(fh.tmp, "traces")
	var prog lineHook
	rep, err := Profile(context.Background(), ProfileOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), Models: []string{"qwen3"}, Sampling: sampling(t, "greedy"),
		OutDir: out, TraceDir: traces, Guard: fh.guardOptions(), Bench: "./bench.sh", Sandbox: sb, Progress: &prog,
	})
	if err != nil {
		t.Fatalf("Profile: %v\nprogress:\n%s", err, prog.String())
	}
	if f := rep.Failed(); len(f) > 0 || len(rep.Session.Runs) != 1 {
		t.Fatalf("runs %+v\nprogress:\n%s", rep.Session.Runs, prog.String())
	}
	r := rep.Session.Runs[0]
	if r.Status != results.StatusOK || r.Plain.Attempts != 1 || r.Profiled.Attempts != 1 || r.Plain.Verdict != "clean" || r.Profiled.Verdict != "clean" {
		t.Errorf("run %+v, plain %+v, profiled %+v", r, r.Plain, r.Profiled)
	}
	if _, err := os.Stat(filepath.Join(repo, "target", "release", "mlxcel-bench-decode")); err != nil {
		t.Errorf("the sandboxed build left no bench: %v", err)
	}
	for _, p := range []string{filepath.Join(fh.tmp, "escaped-home"), filepath.Join(repo, "escaped-checkout")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the sandboxed bench wrote %s", p)
		}
	}
	if !strings.Contains(prog.String(), "sandbox: bwrap, no network; the checkout read-only, writable: target, traces") {
		t.Errorf("progress does not say the sandbox:\n%s", prog.String())
	}
	raw := readFile(t, filepath.Join(traces, r.Name, r.Name+"_bench.raw.log"))
	// The home it wrote is the sandbox's own tmpfs.
	if strings.Contains(raw, "wrote the checkout") || !strings.Contains(raw, "wrote the private home") {
		t.Errorf("the bench's writes:\n%s", raw)
	}
}

// A model folder the sandbox does not show (here: a symbolic link out of the checkout)
// is that run's reason, named before anything runs.
func TestProfileSandboxedHiddenModel(t *testing.T) {
	t.Parallel()
	sb := sandboxOn(t)
	fh := newFakeHost(t)
	repo := fakeRepo(t)
	data := t.TempDir()
	moved := filepath.Join(data, "Qwen3-30B-A3B-4bit")
	if err := os.Rename(filepath.Join(repo, qwenDir), moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, filepath.Join(repo, qwenDir)); err != nil {
		t.Fatal(err)
	}
	var prog lineHook
	rep, err := Profile(context.Background(), ProfileOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), Models: []string{"qwen3"}, Sampling: sampling(t, "greedy"),
		OutDir: filepath.Join(fh.tmp, "out"), TraceDir: filepath.Join(fh.tmp, "traces"), Guard: fh.guardOptions(), Sandbox: sb, Progress: &prog,
	})
	if err != nil {
		t.Fatalf("Profile: %v\nprogress:\n%s", err, prog.String())
	}
	r := rep.Session.Runs[0]
	if r.Status != results.StatusNotRun || !strings.Contains(r.Reason, "is outside the sandbox") || !strings.Contains(r.Reason, sandbox.EnvReadOnly) {
		t.Errorf("run %+v, want not run: outside the sandbox", r)
	}
}

// The numeric tests with the sandbox on: the build and each test run in bwrap, and
// their outcomes are told apart as without it.
func TestGemmTestsSandboxed(t *testing.T) {
	t.Parallel()
	sb := sandboxOn(t)
	fh := newFakeHost(t, "FAKE_CARGO_TESTS="+t0+"=pass,"+t1+"=panic,"+t2+"=abort")
	repo := fakeRepo(t, patch.TestNames[:]...)
	g := fh.guardOptions()
	g.LogPath = filepath.Join(fh.tmp, "guard.log")
	o, err := GemmTests(context.Background(), GemmOptions{Host: fh.h, RepoDir: repo, Guard: g, Timeout: DefaultTestTimeout, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]patch.TestOutcome{t0: patch.Passed, t1: patch.Failed, t2: patch.Aborted} {
		if got := testOutcome(t, o, name); got.Outcome != want {
			t.Errorf("%s: %+v, want %s", name, got, want)
		}
	}
}

// The nightly with the sandbox on: the build and both harness sweeps run in bwrap, the
// harnesses write their CSVs into the checkout's benchmarks folder (writable) and the
// run ends as without the sandbox.
func TestBenchSandboxed(t *testing.T) {
	t.Parallel()
	sb := sandboxOn(t)
	const date = "2026-10-20"
	fh := newFakeHost(t, "FAKE_HARNESS_DATE="+date)
	repo := benchRepo(t, date, 0)
	o := benchOptions(t, fh, repo, date)
	o.Sandbox = sb
	rep, prog := runBench(t, o)
	m := rep.Manifest
	if m.State != "complete" || m.Build.Status != "ok" || len(m.CSVs) != 2 || len(rep.Failed()) != 0 || len(rep.HarnessProblems()) != 0 {
		t.Errorf("manifest %+v\n%s", m, prog.String())
	}
	for _, s := range m.Sweeps {
		if s.Status != "ok" || s.Phase == nil || s.Phase.Verdict != "clean" {
			t.Errorf("sweep %+v", s)
		}
	}
	if !strings.Contains(prog.String(), "sandbox: bwrap, no network; the checkout read-only, writable: target, benchmarks") {
		t.Errorf("progress does not say the sandbox:\n%s", prog.String())
	}
	gitClean(t, repo)
}
