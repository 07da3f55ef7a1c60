package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/linestest"
)

// The test binary doubles as a program that starts a command through Start and prints
// what it started, for the tests that kill the starter.
func TestMain(m *testing.M) {
	if os.Getenv("PROC_TEST_HELPER") == "starter" {
		os.Exit(helperStarter())
	}
	os.Exit(m.Run())
}

// helperStarter starts its argv through Start, prints "started <pid>", and waits.
func helperStarter() int {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	p, err := Start(cmd)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("started", p.Pid)
	st, _ := p.Wait()
	return st.ShellCode()
}

// pids waits for a line `<name> <pid>` for each name and returns the pids.
func pids(t *testing.T, out *linestest.Lines, names ...string) []int {
	t.Helper()
	var ps []int
	for _, n := range names {
		pid, err := strconv.Atoi(out.WaitAny(t, `^`+n+` (\d+)$`)[1])
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, pid)
	}
	return ps
}

func gone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if err := WaitExit(pid, 20*time.Second); err != nil {
			t.Errorf("pid %d outlived its command: %v", pid, err)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// The script starts a background child in the command's group, a grandchild that
// leaves the group with setsid and whose parent exits at once (it is never seen in the
// group), and a double-forked daemon; each says its pid in the file $0, and the command
// exits by itself once all three have.
const leaverScript = `sleep 600 & echo "child $!" >> "$0"
sh -c 'setsid sh -c "echo escaper \$\$ >> \"\$0\"; exec sleep 600" "$0" & exit 0' "$0"
sh -c '(sleep 600 & echo "daemon $!" >> "$0") &' "$0"
while [ "$(wc -l < "$0")" -lt 3 ]; do sleep 0.01; done
cat "$0"; exit 7`

// Run names and stops everything the command left behind, the setsid'd orphan and the
// double-forked daemon included, and reports the command's own exit status.
func TestRunStopsLeftovers(t *testing.T) {
	t.Parallel()
	out := linestest.New()
	cmd := exec.Command("sh", "-c", leaverScript, filepath.Join(t.TempDir(), "pids"))
	cmd.Stdout, cmd.Stderr = out, out
	res, err := Run(context.Background(), cmd, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != (Status{Code: 7}) || res.Stopped {
		t.Fatalf("result %+v, want exit 7, not stopped", res)
	}
	pids := pids(t, out, "child", "escaper", "daemon")
	gone(t, pids...)
	var left []int
	for _, m := range res.Left {
		left = append(left, m.PID)
		if m.Comm != "sleep" {
			t.Errorf("leftover %+v is not the sleep", m)
		}
	}
	slices.Sort(left)
	slices.Sort(pids)
	if !slices.Equal(left, pids) {
		t.Errorf("Left = %v, want %v", left, pids)
	}
}

// A context that ends stops the whole command, members that ignore SIGTERM included.
func TestRunStoppedByContext(t *testing.T) {
	t.Parallel()
	out := linestest.New()
	cmd := exec.Command("sh", "-c", `trap "" TERM; sleep 600 & echo "child $!"; setsid sh -c 'trap "" TERM; echo "escaper $$"; while :; do sleep 1; done' & echo ready; wait`)
	cmd.Stdout, cmd.Stderr = out, out
	ctx, cancel := context.WithCancel(context.Background())
	type ran struct {
		res Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := Run(ctx, cmd, 200*time.Millisecond)
		done <- ran{res, err}
	}()
	out.WaitAny(t, `^escaper \d+$`)
	out.WaitAny(t, `^ready$`)
	cancel()
	var r ran
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after the context ended")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.res.Stopped || r.res.Status.Signal != syscall.SIGKILL {
		t.Fatalf("result %+v, want stopped by SIGKILL (the leader ignores SIGTERM)", r.res)
	}
	gone(t, pids(t, out, "child", "escaper")...)
}

func TestStartStatusAndErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		argv    []string
		want    Status
		wantErr error
	}{
		{"exit code", []string{"sh", "-c", "exit 3"}, Status{Code: 3}, nil},
		{"signal", []string{"sh", "-c", "kill -SEGV $$"}, Status{Code: -1, Signal: syscall.SIGSEGV}, nil},
		{"not found", []string{filepath.Join(dir, "missing")}, Status{}, syscall.ENOENT},
		{"not executable", []string{noexec}, Status{}, syscall.EACCES},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), exec.Command(tc.argv[0], tc.argv[1:]...), time.Second)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || res.Status != tc.want {
				t.Fatalf("status %+v %v, want %+v", res.Status, err, tc.want)
			}
		})
	}
}

// The command sees its own folder, environment and streams, never the reaper's marker,
// and a relative command path is taken from perfbot's folder.
func TestStartPassesTheCommandsSetting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out strings.Builder
	cmd := exec.Command("sh", "-c", `pwd; echo "x=$X"; env | grep -c PERFBOT_PROC_REAPER; read line; echo "in=$line"; echo err >&2`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "X=1")
	cmd.Stdin = strings.NewReader("hello\n")
	cmd.Stdout, cmd.Stderr = &out, &out
	res, err := Run(context.Background(), cmd, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := dir + "\nx=1\n0\nin=hello\nerr\n"
	if out.String() != want || res.Status.Code != 0 {
		t.Fatalf("output %q (%v), want %q", out.String(), res.Status, want)
	}
}

// SIGKILL of the process that started the command stops the command and everything
// below it, the setsid'd orphan included.
func TestStarterKilled(t *testing.T) {
	t.Parallel()
	out := linestest.New()
	cmd := exec.Command(os.Args[0], "sh", "-c", `sleep 600 & echo "child $!"; setsid sh -c 'echo "escaper $$"; exec sleep 600' & echo "leader $$"; wait`)
	cmd.Env = append(os.Environ(), "PROC_TEST_HELPER=starter")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := pids(t, out, "started", "child", "escaper", "leader")
	if pids[0] != pids[3] {
		t.Fatalf("started %d but the leader says %d", pids[0], pids[3])
	}
	cmd.Process.Kill()
	cmd.Wait()
	gone(t, pids[1:]...)
}

func TestParseStatTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		line string
		want Stat
		bad  bool
	}{
		{
			name: "plain",
			line: "3292996 (mlxcel-bench-de) R 3292990 3292990 1200 0 -1 4194560 5 0 0 0 1234 56 0 0 20 0 9 0 987654 1 2 3\n",
			want: Stat{PID: 3292996, Comm: "mlxcel-bench-de", State: 'R', PPID: 3292990, PGRP: 3292990, SID: 1200, Ticks: 1290, Start: 987654},
		},
		{
			name: "comm with spaces and parentheses",
			line: "42 (a) b (c)) S 1 42 42 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 55 0",
			want: Stat{PID: 42, Comm: "a) b (c)", State: 'S', PPID: 1, PGRP: 42, SID: 42, Ticks: 10, Start: 55},
		},
		{
			name: "zombie",
			line: "7 (sleep) Z 6 6 6 0 -1 4227084 0 0 0 0 0 0 0 0 20 0 1 0 99 0",
			want: Stat{PID: 7, Comm: "sleep", State: 'Z', PPID: 6, PGRP: 6, SID: 6, Start: 99},
		},
		{
			name: "kernel thread",
			line: "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 3 0",
			want: Stat{PID: 2, Comm: "kthreadd", State: 'S', KThread: true, Ticks: 1, Start: 3},
		},
		{name: "truncated", line: "7 (sleep) S 6 6", bad: true},
		{name: "no comm", line: "7 sleep S 6 6 6 0", bad: true},
		{name: "bad number", line: "7 (sleep) S x 6 6 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0", bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tc.line), map[string]string{})
			if tc.bad {
				if err == nil {
					t.Fatalf("parsed %q as %+v, want an error", tc.line, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseStat = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	line := "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 1 0 0 0 7 5 0 0 20 0 1 0 123456 0 0\n"
	s, err := ParseStat([]byte(line), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s != (Stat{PID: 4242, PPID: 1, PGRP: 4242, SID: 4242, State: 'S', Ticks: 12, Start: 123456, Comm: "a (b) c"}) {
		t.Fatalf("ParseStat = %+v", s)
	}
	kt := "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0"
	if s, err := ParseStat([]byte(kt), nil); err != nil || !s.KThread {
		t.Fatalf("kthreadd = %+v %v", s, err)
	}
	for _, bad := range []string{"", "1 (x", "x (y) S 1 2 3", "1 (x) SS 1 2 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", "1 (x) S 1 2 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 99999999999999999999999"} {
		if _, err := ParseStat([]byte(bad), nil); err == nil {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
	self, err := ReadStat(os.Getpid())
	if err != nil || self.PID != os.Getpid() || self.PPID != os.Getppid() {
		t.Fatalf("ReadStat(self) = %+v %v", self, err)
	}
}
