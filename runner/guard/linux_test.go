package guard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// procFixture is a process scanner on the real /proc with a child process to follow.
type procFixture struct {
	s     *procScanner
	child int
}

func newProcFixture(t *testing.T, withStat bool) procFixture {
	t.Helper()
	s, err := newProcScanner(host.Local(), withStat)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	child := exec.CommandContext(ctx, "sleep", "30")
	if err := child.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Kill()
		child.Wait()
		cancel()
	})
	// Wait for the exec: until then the child's comm is the test binary's.
	deadline := time.Now().Add(waitLimit)
	for {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", child.Process.Pid))
		if string(b) == "sleep\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child's comm is %q", b)
		}
		time.Sleep(time.Millisecond)
	}
	return procFixture{s: s, child: child.Process.Pid}
}

// The pid counter is the last field of /proc/loadavg; anything else is no counter.
func TestPidCounter(t *testing.T) {
	t.Parallel()
	f := newProcFixture(t, false)
	s := f.s
	if last, ok := s.pidCounter(); !ok || last <= 0 {
		t.Errorf("the real /proc/loadavg: %d, %v", last, ok)
	}
	dir := t.TempDir()
	for i, c := range []struct {
		content string
		want    int
		ok      bool
	}{{"0.50 0.40 0.30 2/345 4242\n", 4242, true}, {"", 0, false}, {"4242\n", 0, false}, {"0.50 0.40 0.30 2/345 x\n", 0, false}} {
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		rawClose(s.loadFD)
		var err error
		if s.loadFD, err = rawOpen(p, syscall.O_RDONLY|syscall.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		if got, ok := s.pidCounter(); got != c.want || ok != c.ok {
			t.Errorf("%q: %d, %v; want %d, %v", c.content, got, ok, c.want, c.ok)
		}
	}
	rawClose(s.loadFD)
	s.loadFD = -1
	if _, ok := s.pidCounter(); ok {
		t.Error("no loadavg descriptor: a counter")
	}
}

// A listing re-reads a known pid only when the counter says it was allocated again
// since the last look: pids in (last look, counter].
func TestListRereadsRecentPids(t *testing.T) {
	t.Parallel()
	f := newProcFixture(t, false)
	s, pid := f.s, f.child
	for _, c := range []struct {
		prev, counter int
		reread        bool
	}{
		{pid - 1, pid, true}, {pid - 1, pid + 5, true}, {pid, pid + 5, false}, {pid - 5, pid - 1, false},
		// The counter wrapped: (last look, max] and [1, counter].
		{pid - 5, pid - 10, true}, {pid + 5, pid, true}, {pid + 5, pid - 1, false}, {pid, pid - 10, false},
	} {
		s.procs[pid] = &entry{fd: -1, comm: "bogus"}
		s.lastPID = c.prev
		if err := s.list(c.counter, true); err != nil {
			t.Fatal(err)
		}
		e, ok := s.procs[pid]
		if !ok {
			t.Fatalf("last look %d, counter %d: the child is not followed", c.prev, c.counter)
		}
		if reread := e.comm == "sleep"; reread != c.reread {
			t.Errorf("last look %d, counter %d, pid %d: re-read %v, want %v", c.prev, c.counter, pid, reread, c.reread)
		}
		if s.lastPID != c.counter {
			t.Errorf("last pid %d after a listing with the counter at %d", s.lastPID, c.counter)
		}
	}
	if len(s.comms) == 0 {
		t.Error("the comm intern table is empty after a listing")
	}
}

// direntPIDs yields the names that are pids above 0.
func TestDirentPIDs(t *testing.T) {
	t.Parallel()
	var b []byte
	for _, name := range []string{".", "0", "1", "self", "42", "4x", "300000"} {
		reclen := (19 + len(name) + 1 + 7) &^ 7
		rec := make([]byte, reclen)
		rec[16], rec[17] = byte(reclen), byte(reclen>>8)
		copy(rec[19:], name)
		b = append(b, rec...)
	}
	var got []int
	for pid := range direntPIDs(b) {
		got = append(got, pid)
	}
	if want := []int{1, 42, 300000}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pids %v, want %v", got, want)
	}
}

// Descriptors: a followed process gets one (comm, or stat with a CPU limit) while the
// budget lasts and none past it; the count matches what is open.
func TestScannerDescriptors(t *testing.T) {
	t.Parallel()
	for _, withStat := range []bool{false, true} {
		f := newProcFixture(t, withStat)
		s, pid := f.s, f.child
		s.add(pid)
		e := s.procs[pid]
		if e == nil || e.fd < 0 || s.nfd != 1 || e.comm != "sleep" {
			t.Fatalf("stat %v: add: entry %+v, %d descriptors", withStat, e, s.nfd)
		}
		s.drop(pid, e)
		if s.nfd != 0 {
			t.Errorf("stat %v: %d descriptors after drop", withStat, s.nfd)
		}
		s.maxFD = 0
		s.add(pid)
		if e := s.procs[pid]; e == nil || e.fd != -1 || s.nfd != 0 {
			t.Errorf("stat %v: add past the budget: entry %+v, %d descriptors", withStat, e, s.nfd)
		}
		// Read by path past the budget, and still the same process.
		if e := s.procs[pid]; !s.refresh(pid, e) || e.comm != "sleep" {
			t.Errorf("stat %v: refresh by path: %+v", withStat, e)
		}
		s.drop(pid, s.procs[pid])
		s.addNew(pid)
		if e := s.procs[pid]; e == nil || e.fd != -1 || s.nfd != 0 {
			t.Errorf("stat %v: addNew past the budget: entry %+v, %d descriptors", withStat, e, s.nfd)
		}
		s.drop(pid, s.procs[pid])
		s.maxFD = 1
		s.addNew(pid)
		if e := s.procs[pid]; e == nil || e.fd < 0 || s.nfd != 1 || e.comm != "sleep" {
			t.Errorf("stat %v: addNew: entry %+v, %d descriptors", withStat, e, s.nfd)
		}
	}
}

// refresh follows an exec (a new comm) and drops a pid whose start time says it is
// another process now.
func TestScannerRefresh(t *testing.T) {
	t.Parallel()
	for _, withStat := range []bool{false, true} {
		f := newProcFixture(t, withStat)
		s, pid := f.s, f.child
		s.add(pid)
		e := s.procs[pid]
		start := e.start
		e.comm = "cargo"
		if !s.refresh(pid, e) || e.comm != "sleep" {
			t.Errorf("stat %v: after an exec: %v, comm %q", withStat, s.refresh(pid, e), e.comm)
		}
		// By path (no descriptor), a wrong start time is another process.
		byPath := &entry{fd: -1, start: start + 1, comm: "sleep"}
		clear(s.stats)
		if s.refresh(pid, byPath) {
			t.Errorf("stat %v: a pid whose start time changed is still followed", withStat)
		}
		byPath.start = start
		clear(s.stats)
		if !s.refresh(pid, byPath) {
			t.Errorf("stat %v: the same process by path is dropped", withStat)
		}
		if withStat {
			e.start = start + 1
			if s.refresh(pid, e) {
				t.Error("a stat descriptor whose start time changed is still followed")
			}
		}
	}
}

// read takes the whole file, growing its buffer past the first kilobyte, up to 64 KiB.
func TestScannerReadsWholeFile(t *testing.T) {
	t.Parallel()
	f := newProcFixture(t, false)
	s := f.s
	for _, size := range []int{0, 10, 1024, 1500, 5000, 64<<10 - 1} {
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o644); err != nil {
			t.Fatal(err)
		}
		fd, err := rawOpen(p, syscall.O_RDONLY|syscall.O_CLOEXEC)
		if err != nil {
			t.Fatal(err)
		}
		n, ok := s.read(fd)
		rawClose(fd)
		if !ok || n != size {
			t.Errorf("a file of %d bytes: read %d, %v", size, n, ok)
		}
	}
	// No stat or comm line is 64 KiB long: a file that fills the largest buffer is
	// refused, not read on.
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(strings.Repeat("x", 70000)), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := rawOpen(p, syscall.O_RDONLY|syscall.O_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer rawClose(fd)
	if n, ok := s.read(fd); ok {
		t.Errorf("a file of 70000 bytes: read %d", n)
	}
}

// isProcess finds live processes only.
func TestIsProcess(t *testing.T) {
	t.Parallel()
	if !isProcess(os.Getpid()) || !isProcess(1) {
		t.Error("a live process not found")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if isProcess(cmd.Process.Pid) {
		t.Errorf("the reaped pid %d found", cmd.Process.Pid)
	}
}

// An attempt summary that cannot be written fails the run, after a clean attempt too:
// the evidence is part of the result.
func TestAttemptSummaryWriteFailure(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.Symlink("/dev/full", w.log+".jsonl"); err != nil {
		t.Fatal(err)
	}
	o := w.options()
	out, err := Run(testCtx(t), o, []string{"true"})
	if err == nil || !strings.Contains(err.Error(), "writing attempt summary") {
		t.Fatalf("a full disk under the attempt summary: %v", err)
	}
	if len(out.Attempts) != 1 || out.Attempts[0].Verdict != Clean {
		t.Errorf("attempts %+v, want the one clean attempt kept", out.Attempts)
	}
}

// CPU use is measured over at least a second, longer only when samples are further
// apart.
func TestSamplerCPUWindow(t *testing.T) {
	t.Parallel()
	for interval, want := range map[time.Duration]time.Duration{100 * time.Millisecond: time.Second, time.Second: time.Second, 2 * time.Second: 2 * time.Second} {
		s, err := newSampler(host.Local(), t.TempDir(), nil, 50, interval)
		if err != nil {
			t.Fatal(err)
		}
		if s.cpuWindow != want {
			t.Errorf("samples %v apart: window %v, want %v", interval, s.cpuWindow, want)
		}
		if !s.ps.withStat {
			t.Error("a CPU limit without stat descriptors")
		}
		s.close()
	}
}

// A /proc without loadavg (a fake root here) leaves the scanner without a pid counter:
// it lists at every sample, and no descriptor stands in for the file.
func TestScannerWithoutLoadavg(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := newProcScanner(host.New(root, "", nil), false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if s.loadFD != -1 || s.dirFD != -1 {
		t.Errorf("loadavg fd %d, /proc fd %d; want -1 and -1", s.loadFD, s.dirFD)
	}
	if _, ok := s.pidCounter(); ok {
		t.Error("a pid counter without loadavg")
	}
}
