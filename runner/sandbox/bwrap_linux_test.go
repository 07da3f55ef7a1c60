package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/linestest"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/proc"
)

// bwrapEnv is the host setting of a sandbox for the tests: the test binary's folder is
// read-only inside (it is a tool of the sandboxed commands), and its helper switch
// passes.
func bwrapEnv(t *testing.T) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("bwrap is not installed (apt-get install bubblewrap; .ci/run does)")
		}
		t.Fatal("bwrap is not installed, and CI must test the sandbox: apt-get install bubblewrap")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{EnvMode: "bwrap", EnvReadOnly: filepath.Dir(self), EnvPassEnv: helperEnv, "HOME": os.Getenv("HOME")}
}

// bwrapOn is the sandbox of the tests. A bwrap that cannot make a sandbox here (no
// unprivileged user namespaces) skips the test when CI is unset.
func bwrapOn(t *testing.T) Settings {
	t.Helper()
	s, err := FromEnv(mapEnv(bwrapEnv(t)))
	if err != nil && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !s.On() || !filepath.IsAbs(s.Bwrap) {
		t.Fatalf("settings %+v, want bwrap on", s)
	}
	return s
}

// A sandboxed command reaches no network, writes only to its writable folders (and
// its private /tmp and home), sees an empty home, cannot read perfbot's environment
// through /proc, and gets no token.
func TestSandboxConfines(t *testing.T) {
	t.Parallel()
	s := bwrapOn(t)
	base := t.TempDir()
	repo, home, outside, traces := filepath.Join(base, "repo"), filepath.Join(base, "home"), filepath.Join(base, "outside"), filepath.Join(base, "traces")
	for _, d := range []string{repo, home, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "marker"), []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sb, err := New(s, repo, filepath.Join(repo, "target"), traces)
	if err != nil {
		t.Fatal(err)
	}
	addr := listener(t)
	// The same tool reaches the listener from outside the sandbox.
	if out, err := selfCommand(context.Background(), t, "dial", addr).Output(); err != nil || strings.TrimSpace(string(out)) != "dial ok" {
		t.Fatalf("outside the sandbox: %q %v, want dial ok", out, err)
	}
	self, _ := os.Executable()
	script := `try() { if "$@" 2>/dev/null; then echo ok; else echo failed; fi; }
echo "pwd=$(pwd)"
echo "home_entries=$(ls -A "$HOME" | wc -l)"
echo "repo=$(try touch "$1/x")"
echo "target=$(try touch "$1/target/x")"
echo "traces=$(try touch "$2/x")"
echo "home=$(try touch "$HOME/x")"
echo "outside=$(try touch "$3/x")"
echo "tmp=$(try touch /tmp/x)"
echo "environ=$(try cat /proc/$4/environ)"
echo "token=${GITHUB_TOKEN:-unset}"
echo "tmpdir=$TMPDIR"
echo "caps=$(grep CapEff /proc/self/status | cut -f2)"
echo "session_leader=$([ "$(cut -d' ' -f6 /proc/$$/stat)" = "$$" ] && echo yes || echo no)"
echo "userns=$(try unshare -U true)"
"$5" "$6"`
	cmd := exec.Command("sh", "-c", script, "sh", repo, traces, outside, strconv.Itoa(os.Getpid()), self, addr)
	// A folder on the PATH that holds the home folder is not shown: it would show home.
	cmd.Env = []string{"PATH=/usr/bin:/bin:" + base, "HOME=" + home, "GITHUB_TOKEN=ghs_secret", helperEnv + "=dial"}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sb.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.Path != s.Bwrap {
		t.Fatalf("wrapped command runs %s, want bwrap", cmd.Path)
	}
	res, err := proc.Run(context.Background(), cmd, time.Second)
	if err != nil || res.Status.ShellCode() != 0 {
		t.Fatalf("%v %v:\n%s", res.Status, err, out.String())
	}
	got := out.String()
	for _, want := range []string{"pwd=" + repo, "repo=failed", "target=ok", "traces=ok", "home=ok", "outside=failed", "tmp=ok",
		"home_entries=0", "environ=failed", "token=unset", "tmpdir=/tmp", "caps=0000000000000000", "session_leader=yes", "dial failed:"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want)).MatchString(got) {
			t.Errorf("no line %q in:\n%s", want, got)
		}
	}
	// No user namespace inside it, with a bwrap that can forbid one (0.8 and later).
	if s.nestedUserns && !strings.Contains(got, "userns=failed") {
		t.Errorf("the sandboxed command made a user namespace:\n%s", got)
	}
	for p, want := range map[string]bool{
		filepath.Join(repo, "x"): false, filepath.Join(repo, "target", "x"): true, filepath.Join(traces, "x"): true,
		filepath.Join(home, "x"): false, filepath.Join(outside, "x"): false,
	} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", p, err == nil, want)
		}
	}
}

// The guard counts the sandboxed command, a GPU holder, as the run's own: bwrap forks it
// directly, below the command's reaper, with its host pid (no pid namespace).
func TestGuardSeesSandboxedCommandAsOwn(t *testing.T) {
	t.Parallel()
	s := bwrapOn(t)
	tmp := t.TempDir()
	root := hosttest.Root(t, tmp)
	repo := filepath.Join(tmp, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := New(s, repo)
	if err != nil {
		t.Fatal(err)
	}
	g := guard.DefaultOptions()
	g.Host = sb.Host(host.New(root, "/usr/bin:/bin", os.Environ()))
	g.Idle, g.SampleHz, g.MaxAttempts, g.MaxWait = 0, 50, 1, 30*time.Second
	g.LockPath = filepath.Join(tmp, "guard.lock")
	g.LogPath = filepath.Join(tmp, "guard.log")
	g.CompilerRE = regexp.MustCompile(`^perfbot-test-no-such-compiler$`)
	g.KillGrace = time.Second
	g.Dir = repo
	stdin, feed := io.Pipe()
	g.Stdin = stdin
	out := linestest.New()
	g.Stdout, g.Stderr = out, out
	type ran struct {
		o   guard.Outcome
		err error
	}
	done := make(chan ran, 1)
	go func() {
		o, err := guard.Run(context.Background(), g, []string{"sh", "-c", `echo "pid $$"; read line; echo "read $line"`})
		done <- ran{o, err}
	}()
	pid, _ := strconv.Atoi(out.WaitAny(t, `^pid (\d+)$`)[1])
	st, err := proc.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	if parent, err := proc.ReadStat(st.PPID); err != nil || parent.Comm != "bwrap" {
		t.Errorf("the sandboxed command's parent is %+v (%v), want bwrap", parent, err)
	}
	// It opens the GPU.
	if err := os.Mkdir(filepath.Join(hosttest.KFDDir(root), strconv.Itoa(pid)), 0o755); err != nil {
		t.Fatal(err)
	}
	holder := fmt.Sprintf("gpu=[%d:sh]", pid)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(g.LogPath); strings.Contains(string(b), holder) {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(g.LogPath)
			t.Fatalf("the guard never saw the holder %s:\n%s", holder, b)
		}
	}
	fmt.Fprintln(feed, "done")
	feed.Close()
	r := <-done
	if r.err != nil || r.o.Verdict != guard.Clean || r.o.ExitCode != 0 || len(r.o.Attempts) != 1 || len(r.o.Attempts[0].ForeignGPU) != 0 {
		b, _ := os.ReadFile(g.LogPath)
		t.Fatalf("outcome %+v %v, want one clean attempt with no foreign holder; log:\n%s", r.o, r.err, b)
	}
	out.WaitAny(t, `^read done$`)
}

// SIGTERM to perfbot stops the whole sandboxed tree, the setsid'd process included,
// and so does perfbot's death by SIGKILL (the reaper stops it): nothing outlives it.
func TestNothingOutlivesPerfbot(t *testing.T) {
	t.Parallel()
	bwrapOn(t)
	env := bwrapEnv(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			self, _ := os.Executable()
			cmd := exec.Command(self, t.TempDir())
			cmd.Env = append(os.Environ(), helperEnv+"=run")
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out := linestest.New()
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pids []int
			for _, name := range []string{"child", "escaper", "leader"} {
				pid, _ := strconv.Atoi(out.WaitAny(t, `^`+name+` (\d+)$`)[1])
				pids = append(pids, pid)
			}
			st, _ := proc.ReadStat(pids[2])
			if parent, err := proc.ReadStat(st.PPID); err != nil || parent.Comm != "bwrap" {
				t.Errorf("the leader's parent is %+v (%v), want bwrap", parent, err)
			}
			cmd.Process.Signal(sig)
			cmd.Wait()
			if sig == syscall.SIGTERM {
				out.WaitAny(t, `^ended true <nil>$`)
			}
			for _, pid := range pids {
				if err := proc.WaitExit(pid, 20*time.Second); err != nil {
					t.Errorf("pid %d outlived perfbot's %s: %v", pid, sig, err)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// A sandboxed command that dies of a signal ends with the status a shell reports for it,
// 128+signal, as it would without the sandbox: bwrap passes it on.
func TestSandboxedSignalStatus(t *testing.T) {
	t.Parallel()
	sb, err := New(bwrapOn(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		script string
		want   int
	}{{"exit 3", 3}, {"kill -SEGV $$", 128 + int(syscall.SIGSEGV)}, {"kill -ABRT $$", 128 + int(syscall.SIGABRT)}} {
		cmd := exec.Command("sh", "-c", tc.script)
		if err := sb.Wrap(cmd); err != nil {
			t.Fatal(err)
		}
		res, err := proc.Run(context.Background(), cmd, time.Second)
		if err != nil || res.Status.ShellCode() != tc.want {
			t.Errorf("%s: %v %v, want shell status %d", tc.script, res.Status, err, tc.want)
		}
	}
}
