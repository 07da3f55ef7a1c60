package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/proc"
)

// Two guards on one lock run one after the other, whether the first holder is a perfbot
// guard or the shell guard's `flock` on the same file.
func TestLockSerializesGuards(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		first func(t *testing.T, w world, order string) (release func())
	}{
		{"perfbot then perfbot", func(t *testing.T, w world, order string) func() {
			stdin, feed := stdinPipe(t)
			echo := newLines()
			o := w.options()
			o.Stdin, o.Stderr = stdin, echo
			run := goRun(testCtx(t), o, []string{"sh", "-c", `echo A-start >> "$0"; read x; echo A-end >> "$0"`, order}, nil)
			echo.Wait(t, `attempt 1/1: start:`)
			return func() {
				fmt.Fprintln(feed, "x")
				if out, err := run.wait(t); err != nil || out.ExitCode != 0 {
					t.Errorf("first guard: %+v %v", out, err)
				}
			}
		}},
		{"shell flock then perfbot", func(t *testing.T, w world, order string) func() {
			stdin, feed := stdinPipe(t)
			out := newLines()
			cmd := exec.CommandContext(testCtx(t), "flock", w.lock, "sh", "-c", `echo A-start >> "$0"; echo locked; read x; echo A-end >> "$0"`, order)
			cmd.Stdin, cmd.Stdout = stdin, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			out.Wait(t, `^locked$`)
			return func() {
				fmt.Fprintln(feed, "x")
				if err := cmd.Wait(); err != nil {
					t.Error(err)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			order := filepath.Join(w.dir, "order")
			releaseFirst := tc.first(t, w, order)

			echo := newLines()
			o := w.options()
			o.Stderr = echo
			second := goRun(testCtx(t), o, []string{"sh", "-c", `echo B-start >> "$0"; echo B-end >> "$0"`, order}, nil)
			echo.Wait(t, `^rocm_gpu_guard: waiting for the host lock `+w.lock+`: held by `)
			st, err := Status(w.lock)
			if err != nil || !st.Held {
				t.Fatalf("status while the first holds the lock: %+v %v", st, err)
			}
			releaseFirst()
			out, err := second.wait(t)
			if err != nil || out.ExitCode != 0 {
				t.Fatalf("second guard: %+v %v", out, err)
			}
			b, err := os.ReadFile(order)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(string(b)); strings.Join(got, " ") != "A-start A-end B-start B-end" {
				t.Fatalf("order = %v", got)
			}
			// The second guard saw the lock busy, so it waited at least one poll.
			recs := w.attempts(t)
			if last := recs[len(recs)-1]; last.Command[len(last.Command)-2] != `echo B-start >> "$0"; echo B-end >> "$0"` || last.LockWaitSecs < 0.1 {
				t.Fatalf("second guard's record %+v", last)
			}
		})
	}
}

// While a guard runs, the holder record names it; --status reads it; afterwards the
// lock is free and the record gone. A record left by a killed guard shows as stale.
func TestStatusAndHolderRecord(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if st, err := Status(w.lock); err != nil || st.Held || st.Text() != "free\n" {
		t.Fatalf("never used lock: %+v %v", st, err)
	}
	stdin, feed := stdinPipe(t)
	echo := newLines()
	o := w.options()
	o.Hold = true
	o.Stdin, o.Stdout, o.Stderr = stdin, echo, echo
	run := goRun(testCtx(t), o, []string{"sh", "-c", `echo "held=$ROCM_GPU_GUARD_LOCK_HELD"; read x; exit 4`}, nil)
	held := echo.Wait(t, `^held=(\d+)$`)
	if held[1] != strconv.Itoa(os.Getpid()) {
		t.Errorf("command saw %s=%s, want the guard's pid %d", EnvLockHeld, held[1], os.Getpid())
	}
	st, err := Status(w.lock)
	if err != nil || !st.Held || st.Holder == nil {
		t.Fatalf("status = %+v %v", st, err)
	}
	if h := *st.Holder; h.PID != os.Getpid() || h.Mode != "hold" || h.Cmd != `sh -c echo "held=$ROCM_GPU_GUARD_LOCK_HELD"; read x; exit 4` || h.Start <= 0 {
		t.Fatalf("holder = %+v", h)
	}
	if txt := st.Text(); !strings.HasPrefix(txt, "held\npid="+strconv.Itoa(os.Getpid())+"\nstart=") || !strings.Contains(txt, "\nmode=hold\ncmd=sh -c ") {
		t.Fatalf("status text:\n%s", txt)
	}
	fmt.Fprintln(feed, "x")
	out, err := run.wait(t)
	if err != nil || out.ExitCode != 4 {
		t.Fatalf("hold outcome %+v %v", out, err)
	}
	if _, err := os.Stat(HolderPath(w.lock)); !os.IsNotExist(err) {
		t.Fatalf("holder record left behind: %v", err)
	}
	if log := w.logText(t); !strings.Contains(log, "hold: start: sh -c") || !strings.Contains(log, "hold: exit 4\n") || strings.Contains(log, "waiting for") {
		t.Fatalf("hold log:\n%s", log)
	}
	// A guard killed with SIGKILL leaves its record; the lock itself is free.
	if err := os.WriteFile(HolderPath(w.lock), []byte("pid=999999\nstart=1\nmode=guard\ncmd=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = Status(w.lock)
	if err != nil || st.Held || !st.Stale || !strings.HasPrefix(st.Text(), "free\nstale holder record") {
		t.Fatalf("stale status = %+v %v\n%s", st, err, st.Text())
	}
}

func TestParseHolder(t *testing.T) {
	t.Parallel()
	r, err := ParseHolder([]byte("pid=12\nstart=1700000000\nmode=guard\ncmd=a b=c\nextra=1\n"))
	if err != nil || r != (HolderRecord{PID: 12, Start: 1700000000, Mode: "guard", Cmd: "a b=c"}) {
		t.Fatalf("ParseHolder = %+v %v", r, err)
	}
	if _, err := ParseHolder([]byte("mode=guard\n")); err == nil {
		t.Fatal("a record without pid must be refused")
	}
}

func helperCmd(t *testing.T, c helperConfig, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(testCtx(t), os.Args[0], append([]string{"--"}, argv...)...)
	cmd.Env = append(os.Environ(), "GUARD_TEST_HELPER=guard", "GUARD_TEST_CONFIG="+string(b))
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// A guard run by a guard (ROCM_GPU_GUARD_LOCK_HELD naming an ancestor) skips the lock;
// the same variable naming a process that is not an ancestor does not.
func TestNestedGuard(t *testing.T) {
	t.Parallel()
	t.Run("ancestor holds the lock", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		b, _ := json.Marshal(helperConfig{Lock: w.lock, KFD: w.kfd, Log: w.log, MaxWaitMS: 5000})
		o := w.options()
		o.Env = []string{"GUARD_TEST_HELPER=guard", "GUARD_TEST_CONFIG=" + string(b)}
		out, err := Run(testCtx(t), o, []string{os.Args[0], "--", "sh", "-c", "exit 0"})
		if err != nil || out.ExitCode != 0 || out.Verdict != Clean {
			t.Fatalf("outer: %+v %v\n%s", out, err, w.logText(t))
		}
		log := w.logText(t)
		want := fmt.Sprintf("host lock held by ancestor guard pid %d: not taking it again", os.Getpid())
		if !strings.Contains(log, want) || strings.Contains(log, "waiting for the host lock") {
			t.Fatalf("log lacks %q:\n%s", want, log)
		}
		recs := w.attempts(t)
		if len(recs) != 2 || !recs[0].Nested || recs[1].Nested {
			t.Fatalf("records (inner first) = %+v", recs)
		}
	})
}

// ROCM_GPU_GUARD_LOCK_HELD is honoured only when the pid it names is an ancestor that
// holds the lock now: it has the lock file open and the lock is taken. pid 1 (everyone's
// ancestor), a plain shell parent, a process that is no ancestor, and an ancestor that
// has the file open without the lock are all refused with the reason in the log; a
// shell that holds the lock the way the shell guard does is honoured.
func TestLockHeldClaims(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// claim returns the command that runs the helper guard (whose argv follows) and
		// the pid it claims ("": the command sets it); the test holds the lock unless
		// free is set. log is the line wanted, {pid} and {lock} filled in.
		claim func(t *testing.T, w world, helper []string) (*exec.Cmd, string)
		free  bool
		code  int
		log   string
	}{
		{
			name: "not an ancestor",
			claim: func(t *testing.T, w world, helper []string) (*exec.Cmd, string) {
				other := startProc(t, "sleep", "600")
				pid := strconv.Itoa(other.Process.Pid)
				return exec.Command(helper[0], helper[1:]...), pid
			},
			code: ExitContended,
			log:  "ignored: pid {pid} is not an ancestor of this guard; taking the host lock",
		},
		{
			name: "pid 1",
			claim: func(t *testing.T, w world, helper []string) (*exec.Cmd, string) {
				return exec.Command(helper[0], helper[1:]...), "1"
			},
			code: ExitContended,
			log:  "ignored: pid {pid} does not have the host lock {lock} open; taking the host lock",
		},
		{
			name: "plain shell parent",
			claim: func(t *testing.T, w world, helper []string) (*exec.Cmd, string) {
				return exec.Command("sh", append([]string{"-c", `ROCM_GPU_GUARD_LOCK_HELD=$$ "$@"; exit $?`, "sh"}, helper...)...), ""
			},
			code: ExitContended,
			log:  "ignored: pid {pid} does not have the host lock {lock} open; taking the host lock",
		},
		{
			name: "ancestor with the file open, lock free",
			claim: func(t *testing.T, w world, helper []string) (*exec.Cmd, string) {
				f, err := openLockFile(w.lock, true)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				return exec.Command(helper[0], helper[1:]...), strconv.Itoa(os.Getpid())
			},
			free: true,
			code: 0,
			log:  "ignored: the host lock {lock} is not held; taking the host lock",
		},
		{
			name: "shell holding the lock like the shell guard",
			claim: func(t *testing.T, w world, helper []string) (*exec.Cmd, string) {
				script := `exec 9>"$LOCK"; flock -n 9 || exit 9; ROCM_GPU_GUARD_LOCK_HELD=$$ "$@"; exit $?`
				cmd := exec.Command("sh", append([]string{"-c", script, "sh"}, helper...)...)
				cmd.Env = append(cmd.Env, "LOCK="+w.lock)
				return cmd, ""
			},
			free: true,
			code: 0,
			log:  "host lock held by ancestor guard pid {pid}: not taking it again",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			if !tc.free {
				l, busy, err := tryLock(w.lock)
				if err != nil || busy {
					t.Fatal(err, busy)
				}
				defer l.release()
			}
			b, _ := json.Marshal(helperConfig{Lock: w.lock, KFD: w.kfd, Log: w.log, MaxWaitMS: 300})
			cmd, pid := tc.claim(t, w, []string{os.Args[0], "--", "true"})
			cmd.Env = append(append(cmd.Env, os.Environ()...), "GUARD_TEST_HELPER=guard", "GUARD_TEST_CONFIG="+string(b))
			if pid != "" {
				cmd.Env = append(cmd.Env, EnvLockHeld+"="+pid)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			log := w.logText(t)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, stderr.String(), log)
			}
			pidRE := `\d+` // the shell's own pid
			if pid != "" {
				pidRE = regexp.QuoteMeta(pid)
			}
			want := strings.NewReplacer(regexp.QuoteMeta("{pid}"), pidRE, regexp.QuoteMeta("{lock}"), regexp.QuoteMeta(w.lock)).Replace(regexp.QuoteMeta(tc.log))
			if !regexp.MustCompile(want).MatchString(log) {
				t.Errorf("log does not match %q:\n%s", want, log)
			}
		})
	}
}

// SIGINT/SIGTERM to a guard process stop the command's whole process group (even
// members that ignore SIGTERM), release the lock and exit 130/143.
func TestSignalLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	cases := []struct {
		sig  syscall.Signal
		code int
		trap string
	}{
		{syscall.SIGTERM, 143, ""},
		{syscall.SIGTERM, 143, `trap "" TERM;`},
		{syscall.SIGINT, 130, `trap "" TERM;`},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %s", signalName(tc.sig), tc.trap), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			out := newLines()
			cmd := helperCmd(t, helperConfig{Lock: w.lock, KFD: w.kfd, Log: w.log, GraceMS: 300}, nil,
				"sh", "-c", tc.trap+` sleep 600 & echo "bg $!"; sh -c 'sleep 600 & echo "deep $!"; wait' & echo "leader $$"; wait`)
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pids []int
			for _, who := range []string{"bg", "leader", "deep"} {
				pid, _ := strconv.Atoi(out.WaitAny(t, `^`+who+` (\d+)$`)[1])
				pids = append(pids, pid)
			}
			if st, err := Status(w.lock); err != nil || !st.Held {
				t.Fatalf("lock not held during the run: %+v %v", st, err)
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("guard exit = %v, want %d\n%s", err, tc.code, out.Text())
			}
			for _, pid := range pids {
				if running(pid) {
					t.Errorf("pid %d still running", pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if st, err := Status(w.lock); err != nil || st.Held || st.Holder != nil {
				t.Fatalf("lock after the signal: %+v %v", st, err)
			}
			if log := w.logText(t); !strings.Contains(log, "caught "+signalName(tc.sig)+": stopping command and monitor\n") {
				t.Fatalf("log:\n%s", log)
			}
		})
	}
}

// The command runs in Options.Dir, and a relative command path is taken from there,
// while the log keeps the argv as given (as the shell guard's does after a cd).
func TestCommandRunsInDir(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/target/release", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/target/release/here", []byte("#!/bin/sh\npwd\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	o := w.options()
	o.Hold = true
	o.Dir = dir
	o.Stdout, o.Stderr = &out, io.Discard
	res, err := Run(testCtx(t), o, []string{"target/release/here"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("outcome %+v %v", res, err)
	}
	if got := strings.TrimSpace(out.String()); got != dir {
		t.Errorf("command ran in %q, want %q", got, dir)
	}
	if log := w.logText(t); !strings.Contains(log, "hold: start: target/release/here\n") {
		t.Errorf("log does not show the argv as given:\n%s", log)
	}
}

// SIGKILL of the guard itself (nothing can be caught) still stops its command and what
// the command started: the command's reaper gets its parent-death signal.
func TestGuardKilledStopsCommand(t *testing.T) {
	t.Parallel()
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprintf("hold=%v", hold), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			out := newLines()
			cmd := helperCmd(t, helperConfig{Lock: w.lock, KFD: w.kfd, Log: w.log, GraceMS: 300, Hold: hold}, nil,
				"sh", "-c", `sleep 600 & echo "bg $!"; setsid sh -c 'echo "escaper $$"; exec sleep 600' & echo "leader $$"; wait`)
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pids []int
			for _, who := range []string{"bg", "escaper", "leader"} {
				pid, _ := strconv.Atoi(out.WaitAny(t, `^`+who+` (\d+)$`)[1])
				pids = append(pids, pid)
			}
			cmd.Process.Kill()
			cmd.Wait()
			for _, pid := range pids {
				if err := proc.WaitExit(pid, 20*time.Second); err != nil {
					t.Errorf("pid %d outlived the killed guard: %v", pid, err)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// The lock lives in a folder everyone can write to. A symbolic link there is never
// followed (its target keeps its mode and is never created), anything but a regular
// file is refused, an existing lock file is never chmodded, and only a lock file the
// guard creates is made world-writable.
func TestLockPathIsHostile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, w world) (check func(t *testing.T))
		err   string // "" when the guard must run
	}{
		{
			name: "symlink to a file of ours",
			setup: func(t *testing.T, w world) func(t *testing.T) {
				victim := filepath.Join(w.dir, "victim")
				if err := os.WriteFile(victim, []byte("secret\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(victim, w.lock); err != nil {
					t.Fatal(err)
				}
				return func(t *testing.T) {
					if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o600 {
						t.Errorf("victim after the run: %v %v, want mode 0600", fi.Mode(), err)
					}
				}
			},
			err: "is a symbolic link: refusing to follow it",
		},
		{
			name: "dangling symlink",
			setup: func(t *testing.T, w world) func(t *testing.T) {
				target := filepath.Join(w.dir, "created-by-the-guard")
				if err := os.Symlink(target, w.lock); err != nil {
					t.Fatal(err)
				}
				return func(t *testing.T) {
					if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("the link's target was created: %v", err)
					}
				}
			},
			err: "is a symbolic link: refusing to follow it",
		},
		{
			name: "fifo",
			setup: func(t *testing.T, w world) func(t *testing.T) {
				if err := syscall.Mkfifo(w.lock, 0o666); err != nil {
					t.Fatal(err)
				}
				return func(*testing.T) {}
			},
			err: "is not a regular file",
		},
		{
			name: "directory",
			setup: func(t *testing.T, w world) func(t *testing.T) {
				if err := os.Mkdir(w.lock, 0o755); err != nil {
					t.Fatal(err)
				}
				return func(*testing.T) {}
			},
			err: "opening host lock",
		},
		{
			name: "existing lock file keeps its mode",
			setup: func(t *testing.T, w world) func(t *testing.T) {
				if err := os.WriteFile(w.lock, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				return func(t *testing.T) {
					if fi, err := os.Stat(w.lock); err != nil || fi.Mode().Perm() != 0o644 {
						t.Errorf("existing lock after the run: %v %v, want mode 0644", fi.Mode(), err)
					}
				}
			},
		},
		{
			name: "new lock file is world-writable",
			setup: func(t *testing.T, w world) func(t *testing.T) {
				return func(t *testing.T) {
					if fi, err := os.Lstat(w.lock); err != nil || fi.Mode() != 0o666 {
						t.Errorf("new lock: %v %v, want a regular file with mode 0666", fi.Mode(), err)
					}
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			check := tc.setup(t, w)
			o := w.options()
			o.Hold = true
			out, err := goRun(testCtx(t), o, []string{"true"}, nil).wait(t)
			if tc.err == "" {
				if err != nil || out.ExitCode != 0 {
					t.Fatalf("outcome %+v %v", out, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.err) || out.ExitCode != 1 {
				t.Fatalf("outcome %+v %v, want exit 1 and %q", out, err, tc.err)
			}
			if tc.err != "" {
				if _, serr := Status(w.lock); serr == nil || !strings.Contains(serr.Error(), tc.err) {
					t.Errorf("Status: %v, want %q", serr, tc.err)
				}
			}
			check(t)
		})
	}
}

// A holder record that is a symbolic link is not read: --status and the lock wait never
// print what another file says.
func TestHolderRecordNotFollowed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret := filepath.Join(w.dir, "secret")
	if err := os.WriteFile(secret, []byte("pid=4242\nstart=1\nmode=guard\ncmd=the-secret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, HolderPath(w.lock)); err != nil {
		t.Fatal(err)
	}
	l, busy, err := tryLock(w.lock)
	if err != nil || busy {
		t.Fatal(err, busy)
	}
	defer l.release()
	st, err := Status(w.lock)
	if err != nil || !st.Held || st.Holder != nil || strings.Contains(st.Text(), "secret") {
		t.Fatalf("status %+v %v:\n%s", st, err, st.Text())
	}
	o := w.options()
	o.MaxWait = 100 * time.Millisecond
	out, err := goRun(testCtx(t), o, []string{"true"}, nil).wait(t)
	if err != nil || out.ExitCode != ExitContended {
		t.Fatalf("outcome %+v %v", out, err)
	}
	if log := w.logText(t); strings.Contains(log, "secret") || !strings.Contains(log, "held by a process that wrote no holder record") {
		t.Errorf("log:\n%s", log)
	}
}

// Guards of different users share the lock file: one the guard creates is writable by
// all, whatever the umask; one that exists is used as it is, never chmodded.
func TestLockFileMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		existing bool
		want     os.FileMode
	}{
		{"created", false, 0o666},
		{"existing", true, 0o644},
	}
	for _, c := range cases {
		w := newWorld(t)
		if c.existing {
			if err := os.WriteFile(w.lock, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(w.lock, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l, busy, err := tryLock(w.lock)
		if err != nil || busy {
			t.Fatalf("%s: tryLock: busy %v, %v", c.name, busy, err)
		}
		fi, err := os.Stat(w.lock)
		l.release()
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("%s: lock file mode %v, want %v", c.name, got, c.want)
		}
	}
}

// The holder record is read up to its size limit: a record of exactly the limit is
// shown, one byte more is refused rather than cut short and parsed.
func TestHolderRecordSizeLimit(t *testing.T) {
	t.Parallel()
	record := func(n int) []byte {
		b := []byte("pid=4242\nmode=excl\ncmd=")
		for len(b) < n-1 {
			b = append(b, 'x')
		}
		return append(b, '\n')
	}
	for _, c := range []struct {
		size int
		ok   bool
	}{{maxHolderRecord, true}, {maxHolderRecord + 1, false}} {
		w := newWorld(t)
		b := record(c.size)
		if len(b) != c.size {
			t.Fatalf("record of %d bytes, want %d", len(b), c.size)
		}
		if err := os.WriteFile(HolderPath(w.lock), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, ok := readHolder(w.lock)
		if ok != c.ok {
			t.Errorf("a %d-byte record: read %v, want %v", c.size, ok, c.ok)
		}
		if ok && (r.PID != 4242 || r.Mode != "excl" || len(r.Cmd) != c.size-len("pid=4242\nmode=excl\ncmd=\n")) {
			t.Errorf("a %d-byte record read as pid %d mode %q cmd of %d bytes", c.size, r.PID, r.Mode, len(r.Cmd))
		}
	}
}

// Status and its text, whole, for each state a user can see: no lock file, a record
// left by a guard that is gone, a lock held with and without a start time.
func TestStatusText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	st, err := Status(w.lock)
	if err != nil || st.Held || st.Stale || st.Holder != nil {
		t.Fatalf("no lock file, no record: %+v, %v", st, err)
	}
	if got := st.Text(); got != "free\n" {
		t.Errorf("free: %q", got)
	}
	if err := os.WriteFile(HolderPath(w.lock), []byte("pid=4242\nstart=0\nmode=excl\ncmd=make\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = Status(w.lock)
	if err != nil || st.Held || !st.Stale || st.Holder == nil || st.Holder.PID != 4242 {
		t.Fatalf("a record, no lock file: %+v, %v", st, err)
	}
	const rec = "pid=4242\nstart=0\nmode=excl\ncmd=make\n"
	if got := st.Text(); got != "free\nstale holder record (its guard is gone):\n"+rec {
		t.Errorf("stale: %q", got)
	}
	// The lock file exists and nobody holds it: the record is stale all the same.
	if err := os.WriteFile(w.lock, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if st, err = Status(w.lock); err != nil || st.Held || !st.Stale || st.Holder == nil {
		t.Errorf("a record, a free lock file: %+v, %v", st, err)
	}
	if err := os.Remove(HolderPath(w.lock)); err != nil {
		t.Fatal(err)
	}
	if st, err = Status(w.lock); err != nil || st.Held || st.Stale || st.Holder != nil {
		t.Errorf("a free lock file, no record: %+v, %v", st, err)
	}
	held := LockStatus{Held: true, Holder: &HolderRecord{PID: 4242, Mode: "excl", Cmd: "make"}}
	if got := held.Text(); got != "held\n"+rec {
		t.Errorf("held, no start time: %q", got)
	}
	held.Holder.Start = 1
	since := time.Unix(1, 0).Format(TimeLayout)
	if got := held.Text(); got != "held\npid=4242\nstart=1\nmode=excl\ncmd=make\nsince="+since+"\n" {
		t.Errorf("held since 1: %q", got)
	}
	if got := (LockStatus{Held: true}).Text(); got != "held\n(no holder record: the lock was taken by something that does not write one)\n" {
		t.Errorf("held, no record: %q", got)
	}
}
