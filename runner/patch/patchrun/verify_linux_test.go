//go:build linux

package patchrun

import (
	"github.com/lablup/perfbot/runner/patch"

	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/proc"
)

// TestVerifyTimeoutKillsTheGroup: a recipe whose sleep outlives make is stopped at
// the timeout, grandchild included.
func TestVerifyTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "Makefile"), verifyMakefile)
	rs := VerifyWith(context.Background(), dir, [][]string{{"make", "hang"}, {"true"}}, VerifyOptions{Timeout: 3 * time.Second})
	if !rs[0].TimedOut || rs[0].ExitCode != -1 || !strings.HasPrefix(rs[0].Err, "timed out after 3s") || rs[0].Passed() {
		t.Errorf("hang: %+v", rs[0])
	}
	if !rs[1].Passed() {
		t.Errorf("the command after a timeout did not run: %+v", rs[1])
	}
	b, err := os.ReadFile(filepath.Join(dir, "sleep.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// SIGKILL went to the whole group before Verify returned; wait for the kernel to
	// finish tearing the sleep down (a pidfd turns readable when it exits).
	if err := proc.WaitExit(pid, 10*time.Second); err != nil {
		t.Fatalf("sleep (pid %d) outlived the timeout: %v", pid, err)
	}
}

// leaver starts a background child and a grandchild that leaves the group with setsid
// and whose parent exits at once, writes their pids to the file $PIDS, and waits for
// both to be written before going on. $ESCAPER is the grandchild's script.
const leaver = `sleep 600 & echo $! >> "$PIDS"
sh -c 'setsid "$0" & exit 0' "$ESCAPER"
while [ "$(wc -l < "$PIDS")" -lt 2 ]; do sleep 0.01; done
`

// leaverEnv writes the escaper's script under dir and returns the shell lines that set
// PIDS and ESCAPER for the leaver.
func leaverEnv(t *testing.T, dir string) (pids, env string) {
	t.Helper()
	pids = filepath.Join(dir, "pids")
	escaper := filepath.Join(dir, "escaper")
	writeFile(t, escaper, "#!/bin/sh\necho $$ >> \"$PIDS\"\nexec sleep 600\n")
	if err := os.Chmod(escaper, 0o755); err != nil {
		t.Fatal(err)
	}
	return pids, "PIDS='" + pids + "' ESCAPER='" + escaper + "'; export PIDS ESCAPER\n"
}

// leftPIDs reads the pids the leaver wrote.
func leftPIDs(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 2 {
		t.Fatalf("pids %v, want 2", pids)
	}
	return pids
}

// gone checks that every pid has exited, and names the ones left in res.
func gone(t *testing.T, res patch.VerifyResult, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if err := proc.WaitExit(pid, 10*time.Second); err != nil {
			t.Errorf("pid %d outlived %v: %v", pid, res.Command, err)
		}
		if !slices.Contains(res.LeftRunning, strconv.Itoa(pid)+":sleep") {
			t.Errorf("left running %v does not name %d:sleep", res.LeftRunning, pid)
		}
	}
}

// TestCheckerLeavesNothing: a checker that leaves a child and a setsid'd grandchild
// running when it exits; neither survives GemmGates, and the report names them.
func TestCheckerLeavesNothing(t *testing.T) {
	t.Parallel()
	repo := copyRepo(t, "upstream")
	tmp := t.TempDir()
	pids, env := leaverEnv(t, tmp)
	python := filepath.Join(tmp, "python")
	writeFile(t, python, "#!/bin/sh\n"+env+leaver+"exec python3 \"$@\"\n")
	if err := os.Chmod(python, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := GemmGates(context.Background(), repo, passOutcome(t), Options{Python: python, CheckerTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if r.Checker.Verdict != "passed" {
		t.Fatalf("checker: %+v", r.Checker)
	}
	gone(t, r.Checker.VerifyResult, leftPIDs(t, pids))
	if md := r.Markdown(); !strings.Contains(md, "left processes running when it exited; they were stopped") {
		t.Errorf("the report does not say what was left:\n%s", md)
	}
}

// TestVerifyLeavesNothing: the same for a verification command that exits 0.
func TestVerifyLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pids, env := leaverEnv(t, dir)
	rs := VerifyWith(context.Background(), dir, [][]string{{"sh", "-c", env + leaver}}, VerifyOptions{Timeout: time.Minute})
	if !rs[0].Passed() {
		t.Fatalf("result %+v", rs[0])
	}
	gone(t, rs[0], leftPIDs(t, pids))
}
