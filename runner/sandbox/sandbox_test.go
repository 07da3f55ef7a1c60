package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/proc"
)

// mapEnv is a getenv over a map.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// A sandbox that is off, or asked for with bad settings, never runs a command
// unsandboxed by mistake: every bad setting is an error that names it.
func TestFromEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(dir, "bwrap")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"", "off", " off "} {
		s, err := FromEnv(mapEnv(map[string]string{EnvMode: m, EnvBwrap: "relative"}))
		if err != nil || s.On() || s.Mode != Off {
			t.Errorf("%s=%q: %+v, %v; want off", EnvMode, m, s, err)
		}
	}
	bad := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"unknown mode", map[string]string{EnvMode: "on"}, `PERFBOT_SANDBOX="on": want off or bwrap`},
		{"relative bwrap", map[string]string{EnvMode: "bwrap", EnvBwrap: "bin/bwrap"}, "give the absolute path of bwrap"},
		{"missing bwrap", map[string]string{EnvMode: "bwrap", EnvBwrap: filepath.Join(dir, "missing")}, "is not an executable file: install bubblewrap"},
		{"not executable", map[string]string{EnvMode: "bwrap", EnvBwrap: notExec}, "is not an executable file"},
		{"relative read-only", map[string]string{EnvMode: "bwrap", EnvBwrap: "/bin/sh", EnvReadOnly: "/usr:opt/rocm"}, `"opt/rocm" is not an absolute path`},
		{"missing read-only", map[string]string{EnvMode: "bwrap", EnvBwrap: "/bin/sh", EnvReadOnly: filepath.Join(dir, "nope")}, "list folders that exist"},
		{"home in read-only", map[string]string{EnvMode: "bwrap", EnvBwrap: "/bin/sh", EnvReadOnly: dir, "HOME": home}, "holds the home folder"},
		{"bad variable", map[string]string{EnvMode: "bwrap", EnvBwrap: "/bin/sh", EnvPassEnv: "HIP_*,A-B"}, `"A-B" is not a variable name`},
	}
	for _, tc := range bad {
		s, err := FromEnv(mapEnv(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %+v, %v; want an error with %q", tc.name, s, err, tc.want)
		}
	}
}

// Without bwrap on the PATH, the sandbox asked for is a start-up error.
func TestFromEnvNoBwrapOnPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := FromEnv(mapEnv(map[string]string{EnvMode: "bwrap"}))
	if err == nil || !strings.Contains(err.Error(), "bwrap is not on the PATH") || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Fatalf("error %v, want bwrap not on the PATH", err)
	}
}

// A bwrap that cannot make a sandbox (here: one that always fails, as bwrap does
// without user namespaces) is a start-up error, not a run without the sandbox.
func TestFromEnvProbeFails(t *testing.T) {
	t.Parallel()
	fake := filepath.Join(t.TempDir(), "bwrap")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := FromEnv(mapEnv(map[string]string{EnvMode: "bwrap", EnvBwrap: fake}))
	if err == nil || !strings.Contains(err.Error(), "cannot make a sandbox here") || !strings.Contains(err.Error(), "uid map: Permission denied") {
		t.Fatalf("error %v, want the probe's failure with bwrap's words", err)
	}
}

// A writable folder inside the checkout is created when missing and refused when it is,
// or passes through, a symbolic link or a file.
func TestNewWritableFolders(t *testing.T) {
	t.Parallel()
	s := Settings{Mode: Bwrap, Bwrap: "/usr/bin/bwrap"}
	if sb, err := New(Settings{}, t.TempDir(), "/x"); sb != nil || err != nil {
		t.Fatalf("off: %v %v, want nil, nil", sb, err)
	}
	repo := t.TempDir()
	outside := t.TempDir()
	sb, err := New(s, repo, filepath.Join(repo, "target", "release"), filepath.Join(outside, "traces"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(repo, "target", "release"), filepath.Join(outside, "traces")} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s not created: %v", d, err)
		}
	}
	if !slices.Equal(sb.writable, []string{filepath.Join(repo, "target", "release"), filepath.Join(outside, "traces")}) {
		t.Errorf("writable %v", sb.writable)
	}
	if err := os.Symlink(outside, filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{filepath.Join(repo, "link"), filepath.Join(repo, "link", "target"), filepath.Join(repo, "file", "x")} {
		if _, err := New(s, repo, w); err == nil {
			t.Errorf("%s accepted as writable", w)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "target")); err == nil {
		t.Error("a folder was created through the symbolic link")
	}
	if _, err := New(s, "relative", filepath.Join(repo, "target")); err == nil {
		t.Error("a relative checkout accepted")
	}
	if _, err := New(s, repo, "target"); err == nil {
		t.Error("a relative writable folder accepted")
	}
}

// The command gets the variables it needs and none of the rest (a token above all).
func TestEnv(t *testing.T) {
	t.Parallel()
	sb := &Sandbox{set: Settings{Mode: Bwrap, PassEnv: []string{"FAKE_*", "EXTRA"}}}
	got := sb.Env([]string{"PATH=/usr/bin", "HOME=/home/r", "GITHUB_TOKEN=secret", "HSA_OVERRIDE_GFX_VERSION=11.5.1",
		"LC_ALL=C", "FAKE_CARGO_TESTS=a=pass", "EXTRA=1", "EXTRAS=2", "TMPDIR=/var/tmp/r", "SSH_AUTH_SOCK=/run/x", "CARGO_NET_OFFLINE=false"})
	want := []string{"PATH=/usr/bin", "HOME=/home/r", "HSA_OVERRIDE_GFX_VERSION=11.5.1", "LC_ALL=C", "FAKE_CARGO_TESTS=a=pass",
		"EXTRA=1", "TMPDIR=/tmp", "CARGO_NET_OFFLINE=true"}
	if !slices.Equal(got, want) {
		t.Fatalf("Env = %q\nwant  %q", got, want)
	}
}

// Visible tells a model folder the sandbox shows from one it hides, symbolic links
// resolved.
func TestVisible(t *testing.T) {
	t.Parallel()
	repo, data, other := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(repo, "models"), filepath.Join(data, "m"), filepath.Join(other, "m")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(data, "m"), filepath.Join(repo, "models", "shown")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "m"), filepath.Join(repo, "models", "hidden")); err != nil {
		t.Fatal(err)
	}
	sb := &Sandbox{set: Settings{Mode: Bwrap, ReadOnly: []string{data}}, dir: repo}
	for p, want := range map[string]bool{
		filepath.Join(repo, "models"):           true,
		filepath.Join(repo, "models", "shown"):  true,
		filepath.Join(repo, "models", "hidden"): false,
		filepath.Join(other, "m"):               false,
		filepath.Join(repo, "missing"):          false,
	} {
		if got := sb.Visible(p); got != want {
			t.Errorf("Visible(%s) = %v, want %v", p, got, want)
		}
	}
	var none *Sandbox
	if !none.Visible(other) {
		t.Error("without a sandbox everything is visible")
	}
}

// The test binary is a tool for the sandboxed commands: `dial ADDR` says whether a TCP
// connection to ADDR opens.
func dialHelper(addr string) int {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		fmt.Println("dial failed:", err)
		return 0
	}
	c.Close()
	fmt.Println("dial ok")
	return 0
}

// listener opens a TCP listener on 127.0.0.1 that accepts and closes connections.
func listener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().String()
}

// selfCommand is the test binary as a tool: helper mode and its arguments.
func selfCommand(ctx context.Context, t *testing.T, mode string, args ...string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	return cmd
}

// helperEnv switches the test binary into a helper: `dial ADDR`, or `run CHECKOUT`.
const helperEnv = "SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "dial":
		os.Exit(dialHelper(os.Args[1]))
	case "run":
		os.Exit(runHelper(os.Args[1]))
	}
	os.Exit(m.Run())
}

// runHelper runs a sandboxed command tree in checkout through runner/proc, as a job
// does, until SIGTERM; the host settings are in the environment.
func runHelper(checkout string) int {
	s, err := FromEnv(os.Getenv)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	sb, err := New(s, checkout)
	if err != nil || sb == nil {
		fmt.Println("error", err)
		return 1
	}
	cmd := exec.Command("sh", "-c", `sleep 600 & echo "child $!"; setsid sh -c 'echo "escaper $$"; exec sleep 600' & echo "leader $$"; wait`)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := sb.Wrap(cmd); err != nil {
		fmt.Println("error", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	res, err := proc.Run(ctx, cmd, time.Second)
	fmt.Println("ended", res.Stopped, err)
	return 0
}
