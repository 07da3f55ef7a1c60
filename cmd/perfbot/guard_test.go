package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// guardCLIEnv points the guard at a private KFD dir and lock (t.Setenv: not parallel).
func guardCLIEnv(t *testing.T) (kfd, lock, dir string) {
	t.Helper()
	dir = t.TempDir()
	kfd, lock = filepath.Join(dir, "kfd"), filepath.Join(dir, "guard.lock")
	if err := os.Mkdir(kfd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROCM_GPU_GUARD_KFD_DIR", kfd)
	t.Setenv("ROCM_GPU_GUARD_LOCK", lock)
	t.Setenv("ROCM_GPU_GUARD_COMPILER_RE", "perfbot-test-no-such-compiler")
	t.Setenv("ROCM_GPU_GUARD_LOCK_HELD", "")
	return kfd, lock, dir
}

func guardCLI(ctx context.Context, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(ctx, append([]string{"guard"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestGuardCLIUsage(t *testing.T) {
	_, _, dir := guardCLIEnv(t)
	cases := []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"--status", "--", "true"}, "--status takes no command"},
		{[]string{"--section", "x"}, "--section needs --log"},
		{[]string{"--sample-hz", "0", "--", "true"}, "--sample-hz 0: want a number above 0 and at most 100"},
		{[]string{"--sample-hz", "NaN", "--", "true"}, "--sample-hz NaN: want a number above 0"},
		{[]string{"--sample-hz", "Inf", "--", "true"}, "--sample-hz +Inf: want a number above 0"},
		{[]string{"--sample-hz", "-Inf", "--", "true"}, "--sample-hz -Inf: want a number above 0"},
		{[]string{"--sample-hz", "1e400", "--", "true"}, "value out of range"},
		{[]string{"--max-foreign-cpu", "NaN", "--", "true"}, "--max-foreign-cpu NaN: want a percentage"},
		{[]string{"--max-foreign-cpu", "+Inf", "--", "true"}, "--max-foreign-cpu +Inf: want a percentage"},
		{[]string{"--max-foreign-cpu", "1e9", "--", "true"}, "max foreign CPU 1e+09%"},
		{[]string{"--idle-secs", "9223372036854775807", "--", "true"}, "--idle-secs 9223372036854775807: want at most 86400"},
		{[]string{"--max-wait", "99999999999", "--", "true"}, "--max-wait 99999999999: want at most 2592000"},
		{[]string{"--max-attempts", "0", "--", "true"}, "--max-attempts 0: want 1 to 1000"},
		{[]string{"--idle-secs", "-1", "--", "true"}, "cannot be negative"},
		{[]string{"--no-such-flag"}, "unknown flag --no-such-flag"},
	}
	for _, tc := range cases {
		code, _, stderr := guardCLI(context.Background(), tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("guard %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	t.Setenv("ROCM_GPU_GUARD_COMPILER_RE", "(cargo")
	if code, _, stderr := guardCLI(context.Background(), "--", "true"); code != 2 || !strings.Contains(stderr, "ROCM_GPU_GUARD_COMPILER_RE") {
		t.Errorf("bad compiler pattern: exit %d, %q", code, stderr)
	}
	t.Setenv("ROCM_GPU_GUARD_COMPILER_RE", "")
	t.Setenv("ROCM_GPU_GUARD_KFD_DIR", filepath.Join(dir, "missing"))
	if code, _, stderr := guardCLI(context.Background(), "--", "true"); code != 1 || !strings.Contains(stderr, "is the amdgpu driver loaded?") {
		t.Errorf("missing KFD dir: exit %d, %q", code, stderr)
	}
}

// The command's exit code comes through; the log, its JSON lines and --section work.
func TestGuardCLIRun(t *testing.T) {
	_, lock, dir := guardCLIEnv(t)
	log := filepath.Join(dir, "guard.log")
	if code, _, stderr := guardCLI(context.Background(), "--log", log, "--section", "m_greedy plain"); code != 0 {
		t.Fatalf("--section: exit %d %s", code, stderr)
	}
	code, stdout, stderr := guardCLI(context.Background(), "--idle-secs", "0", "--log", log, "--label", "m_greedy plain",
		"--", "sh", "-c", `echo "held=$ROCM_GPU_GUARD_LOCK_HELD"; exit 7`)
	if code != 7 {
		t.Fatalf("exit %d, want the command's 7; stderr:\n%s", code, stderr)
	}
	if stdout != fmt.Sprintf("held=%d\n", os.Getpid()) {
		t.Errorf("command output %q", stdout)
	}
	if !strings.Contains(stderr, "rocm_gpu_guard: attempt 1: CLEAN, exit 7\n") || strings.Contains(stderr, "sample 1: clean") {
		t.Errorf("stderr echo (clean samples go to the log only):\n%s", stderr)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.HasPrefix(s, "== m_greedy plain\n") || !strings.Contains(s, " sample 1: clean gpu=[]\n") {
		t.Errorf("log:\n%s", s)
	}
	j, err := os.ReadFile(log + ".jsonl")
	if err != nil || !strings.Contains(string(j), `"label":"m_greedy plain"`) || !strings.Contains(string(j), `"exit_code":7`) {
		t.Errorf("jsonl %s %v", j, err)
	}
	if code, stdout, _ := guardCLI(context.Background(), "--status"); code != 0 || stdout != "free\n" {
		t.Errorf("status after the run: %d %q", code, stdout)
	}
	// The shell guard's flock holds the same lock: --status sees it.
	cmd := exec.Command("flock", lock, "sh", "-c", "echo locked; read x")
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("flock: %q %v", buf, err)
	}
	code, stdout, _ = guardCLI(context.Background(), "--status")
	stdin.Close()
	cmd.Wait()
	if code != 0 || !strings.HasPrefix(stdout, "held\n(no holder record") {
		t.Errorf("status under flock: %d %q", code, stdout)
	}
}

// --max-wait expiry exits 75 and says why.
func TestGuardCLIMaxWait(t *testing.T) {
	kfd, _, _ := guardCLIEnv(t)
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	if err := os.Mkdir(filepath.Join(kfd, strconv.Itoa(holder.Process.Pid)), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := guardCLI(context.Background(), "--idle-secs", "2", "--max-wait", "1", "--", "true")
	if code != 75 || !strings.Contains(stderr, "rocm_gpu_guard: gave up after 1s of waiting without 2s of idle\n") {
		t.Fatalf("exit %d, want 75; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, fmt.Sprintf("idle streak reset after 0s: gpu=[%d:sleep] compilers=[]", holder.Process.Pid)) {
		t.Errorf("no reset line naming the holder:\n%s", stderr)
	}
}

// A real SIGTERM, caught the way main catches it, stops the command and exits 143.
func TestGuardCLISigterm(t *testing.T) {
	guardCLIEnv(t)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		// The command tells the test it runs by printing its pid on stdout, the pipe.
		done <- run(ctx, []string{"guard", "--idle-secs", "0", "--", "sh", "-c", "echo $$; exec sleep 600"}, w, &stderr)
	}()
	line := make([]byte, 32)
	n, err := r.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 143 {
			t.Fatalf("exit %d, want 143; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("guard did not stop")
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(b), ") Z ") {
		t.Fatalf("command %d still running: %s", pid, b)
	}
	if !strings.Contains(stderr.String(), "rocm_gpu_guard: caught SIGTERM: stopping command and monitor\n") {
		t.Fatalf("stderr:\n%s", stderr.String())
	}
}
