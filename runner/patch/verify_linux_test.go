//go:build linux

package patch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVerifyTimeoutKillsTheGroup: a recipe whose sleep outlives make is stopped at
// the timeout, grandchild included.
func TestVerifyTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "Makefile"), verifyMakefile)
	rs := VerifyWith(context.Background(), dir, [][]string{{"make", "hang"}, {"true"}}, VerifyOptions{Timeout: 500 * time.Millisecond})
	if !rs[0].TimedOut || rs[0].ExitCode != -1 || !strings.HasPrefix(rs[0].Err, "timed out after 500ms") || rs[0].Passed() {
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
	if err := waitExit(pid, 10*time.Second); err != nil {
		t.Fatalf("sleep (pid %d) outlived the timeout: %v", pid, err)
	}
}

// waitExit waits until pid has exited (a zombie counts), at most timeout.
func waitExit(pid int, timeout time.Duration) error {
	fd, _, errno := syscall.Syscall(434 /* pidfd_open */, uintptr(pid), 0, 0)
	if errno == syscall.ESRCH {
		return nil
	}
	if errno != 0 {
		return fmt.Errorf("pidfd_open: %w", errno)
	}
	defer syscall.Close(int(fd))
	var set syscall.FdSet
	set.Bits[fd/64] |= int64(1) << (fd % 64)
	tv := syscall.NsecToTimeval(timeout.Nanoseconds())
	n, err := syscall.Select(int(fd)+1, &set, nil, nil, &tv)
	if err != nil {
		return fmt.Errorf("select: %w", err)
	}
	if n == 0 {
		return errors.New("still running")
	}
	return nil
}
