package guard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/host"
)

// On Linux the guard waits on a timerfd: the clock is made, its waits fire through the
// descriptor (not a runtime timer), a wait of zero or less fires at once, and a wait
// re-armed before the earlier one expired replaces it.
func TestFDClock(t *testing.T) {
	t.Parallel()
	c := newFDClock()
	if c == nil {
		t.Fatal("newFDClock: no timerfd clock on Linux")
	}
	defer c.close()
	for _, d := range []time.Duration{0, -time.Second} {
		select {
		case <-c.After(d):
		case <-time.After(waitLimit):
			t.Fatalf("After(%v) did not fire", d)
		}
	}
	start := time.Now()
	ch := c.After(20 * time.Millisecond)
	c.mu.Lock()
	pending := c.ch
	c.mu.Unlock()
	if pending == nil || (<-chan time.Time)(pending) != ch {
		t.Fatal("After(20ms) did not arm the timerfd: its channel is not the pending wait")
	}
	select {
	case at := <-ch:
		if at.Sub(start) < 20*time.Millisecond {
			t.Errorf("After(20ms) fired after %v", at.Sub(start))
		}
	case <-time.After(waitLimit):
		t.Fatal("After(20ms) did not fire")
	}
	first := c.After(time.Hour)
	second := c.After(time.Millisecond)
	select {
	case <-second:
	case <-time.After(waitLimit):
		t.Fatal("a re-armed wait did not fire")
	}
	select {
	case <-first:
		t.Error("the replaced wait fired")
	default:
	}
}

// The process scanner on the real /proc, with the pid counter read from a file the test
// writes: the first look lists /proc whatever the counter says, a later look probes
// every pid up to the counter's (the newest included), and close gives back every
// descriptor.
func TestProcScannerCounter(t *testing.T) {
	t.Parallel()
	s, err := newProcScanner(host.Local(), false)
	if err != nil {
		t.Fatal(err)
	}
	if s.loadFD < 0 {
		t.Fatal("/proc/loadavg not opened: the scanner would list /proc at every sample")
	}
	loadavg := filepath.Join(t.TempDir(), "loadavg")
	setCounter := func(pid int) {
		t.Helper()
		if err := os.WriteFile(loadavg, fmt.Appendf(nil, "0.00 0.00 0.00 1/100 %d\n", pid), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setCounter(20)
	rawClose(s.loadFD)
	if s.loadFD, err = rawOpen(loadavg, syscall.O_RDONLY|syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if err := s.scan(); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.procs[os.Getpid()]; !ok || s.lastPID != 20 {
		t.Fatalf("first look with the counter at 20: own pid followed %v, last pid %d", ok, s.lastPID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	child := exec.CommandContext(ctx, "sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer child.Process.Kill()
	pid := child.Process.Pid
	s.lastPID = pid - 1
	setCounter(pid)
	if err := s.scan(); err != nil {
		t.Fatal(err)
	}
	if e, ok := s.procs[pid]; !ok || e.comm != "sleep" || s.lastPID != pid {
		t.Errorf("a process with the counter's own pid: followed %v, last pid %d", ok, s.lastPID)
	}
	if s.nfd == 0 || s.dirFD < 0 {
		t.Fatalf("after two looks: %d descriptors, /proc fd %d", s.nfd, s.dirFD)
	}
	s.close()
	if s.nfd != 0 || s.dirFD != -1 || s.loadFD != -1 || len(s.procs) != 0 {
		t.Errorf("after close: %d descriptors, /proc fd %d, loadavg fd %d, %d processes", s.nfd, s.dirFD, s.loadFD, len(s.procs))
	}
}
