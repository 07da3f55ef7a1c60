package guard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A holder that comes and goes: every broken streak is counted, but the log says so at
// most once a second (a reset exactly a second after the last logged one is logged),
// each line with the length of the streak it broke.
func TestFlappingHolderResets(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	holder := startProc(t, "sleep", "600")
	pid := holder.Process.Pid
	fc := newFakeClock()
	o := w.options()
	o.Clock, o.Idle, o.SampleHz = fc, time.Second, 10
	w.hold(t, pid) // the first sample, at 0 s, is contended
	run := goRun(testCtx(t), o, []string{"true"}, fc)
	// Samples k = 1, 2, ... come 0.1 s apart; the holder is back at 0.2 s and 1.0 s.
	contended := map[int]bool{2: true, 10: true}
	held := true
	ok := fc.waitGen(0)
	// After the idle window the guard samples on while `true` starts and exits in real
	// time: the bound is the tests' wait limit, not a sample count.
	deadline := time.Now().Add(waitLimit)
	for k := 1; ok; k++ {
		if time.Now().After(deadline) {
			t.Fatalf("the guard is still sampling after %v:\n%s", waitLimit, w.logText(t))
		}
		if contended[k] != held {
			if held {
				w.release(t, pid)
			} else {
				w.hold(t, pid)
			}
			held = contended[k]
		}
		ok = fc.step()
	}
	out, err := run.wait(t)
	if err != nil || len(out.Attempts) != 1 || out.Attempts[0].Verdict != Clean {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if got := out.Attempts[0].IdleResets; got != 3 {
		t.Errorf("idle resets %d, want 3", got)
	}
	var resets []string
	for _, l := range strings.Split(w.logText(t), "\n") {
		if i := strings.Index(l, "idle streak reset"); i >= 0 {
			resets = append(resets, l[i:])
		}
	}
	line := "idle streak reset after 0s: gpu=[" + strconv.Itoa(pid) + ":sleep] compilers=[]"
	if len(resets) != 2 || resets[0] != line || resets[1] != line {
		t.Errorf("reset lines %q, want two of %q", resets, line)
	}
}

// Waiting for the host lock past --max-wait: the give-up line counts whole seconds, and
// an attempt summary that cannot be written is the run's error.
func TestLockGiveUpLineAndSummaryFailure(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	l, busy, err := tryLock(w.lock)
	if err != nil || busy {
		t.Fatalf("taking the lock: busy %v, %v", busy, err)
	}
	defer l.release()
	if err := os.Symlink("/dev/full", w.log+".jsonl"); err != nil {
		t.Fatal(err)
	}
	fc := newFakeClock()
	o := w.options()
	o.Clock, o.MaxWait = fc, 1500*time.Millisecond
	run := goRun(testCtx(t), o, []string{"true"}, fc)
	for ok := fc.waitGen(0); ok; ok = fc.step() {
	}
	out, err := run.wait(t)
	if !out.GaveUp || out.ExitCode != ExitContended {
		t.Errorf("outcome %+v, want gave up", out)
	}
	if err == nil || !strings.Contains(err.Error(), "writing attempt summary") {
		t.Errorf("err %v, want the attempt summary's write error", err)
	}
	if log := w.logText(t); !strings.Contains(log, "gave up after 1s of waiting for the host lock "+w.lock+" (held by ") {
		t.Errorf("no give-up line with 1s:\n%s", log)
	}
}

// A hold whose command ends well logs its start and exit and nothing else.
func TestHoldLogsNoError(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	o := w.options()
	o.Hold = true
	out, err := Run(testCtx(t), o, []string{"true"})
	if err != nil || out.ExitCode != 0 || out.Verdict != Clean {
		t.Fatalf("hold: %+v, %v", out, err)
	}
	var holds []string
	for _, l := range strings.Split(w.logText(t), "\n") {
		if i := strings.Index(l, "hold: "); i >= 0 {
			holds = append(holds, l[i:])
		}
	}
	if want := []string{"hold: start: true", "hold: exit 0"}; !slices.Equal(holds, want) {
		t.Errorf("hold lines %q, want %q", holds, want)
	}
}

func TestIdleWhat(t *testing.T) {
	t.Parallel()
	for cpu, want := range map[float64]string{
		0:   "idle GPU and no compiler",
		0.5: "idle GPU and no compiler (nor a process above 0.5% CPU)",
		150: "idle GPU and no compiler (nor a process above 150% CPU)",
	} {
		r := &runner{o: Options{MaxForeignCPU: cpu}}
		if got := r.idleWhat(); got != want {
			t.Errorf("max foreign CPU %g: %q, want %q", cpu, got, want)
		}
	}
}

// Waits are logged to a tenth of a second, rounded half up.
func TestRound1(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]float64{0: 0, 1234 * time.Millisecond: 1.2, 1250 * time.Millisecond: 1.3, 90 * time.Second: 90} {
		if got := round1(d); got != want {
			t.Errorf("round1(%v) = %g, want %g", d, got, want)
		}
	}
}

// C0 and C1 control characters and DEL are escaped; the first printable ones around
// them are not.
func TestCommandLineEscapesControls(t *testing.T) {
	t.Parallel()
	got := commandLine([]string{"a\x1fb", "\x7f", "\u0080\u009f", "\u00a0~ "})
	if want := `a\x1fb \x7f \u0080\u009f ` + "\u00a0~ "; got != want {
		t.Errorf("commandLine = %q, want %q", got, want)
	}
}

// CPU use per process over the window: the busy share of one core since the snapshot
// one window old (the newest such), above the limit only; a process that restarted
// (another start time), is new, or is the guard's own is left out.
func TestSamplerCPU(t *testing.T) {
	t.Parallel()
	s := &sampler{maxCPU: 50, cpuWindow: 2 * time.Second, self: 99, chain: map[int]bool{}}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	snap := func(ticks map[int]uint64) []cpuEntry {
		var e []cpuEntry
		for pid, tk := range ticks {
			start := uint64(5)
			if pid == 12 && tk > 0 {
				start = 6 // pid 12 was reused
			}
			e = append(e, cpuEntry{pid: pid, start: start, ticks: tk, comm: "p" + strconv.Itoa(pid)})
		}
		return e
	}
	if got := s.cpu(at(0), snap(map[int]uint64{10: 100, 11: 100, 12: 0, 99: 0})); got != nil {
		t.Errorf("first snapshot: %v", got)
	}
	if got := s.cpu(at(1.9), snap(map[int]uint64{10: 150, 11: 150, 12: 0, 99: 150})); got != nil {
		t.Errorf("before a window has passed: %v", got)
	}
	// At exactly one window: 10 used 100 ticks in 2 s (50 %, not above the limit),
	// 11 used 102 (51 %), 12 restarted, 13 is new, 99 is the guard.
	got := s.cpu(at(2), snap(map[int]uint64{10: 200, 11: 202, 12: 500, 13: 900, 99: 900}))
	if want := []CPUUse{{PID: 11, Comm: "p11", Percent: 51}}; !slices.Equal(got, want) {
		t.Errorf("at one window: %v, want %v", got, want)
	}
	// At 4 s the base is the 2 s snapshot (the 0 s one is dropped): 11 used 160 ticks.
	got = s.cpu(at(4), snap(map[int]uint64{10: 200, 11: 362}))
	if want := []CPUUse{{PID: 11, Comm: "p11", Percent: 80}}; !slices.Equal(got, want) {
		t.Errorf("at two windows: %v, want %v", got, want)
	}
}

// Each attempt's record has its own idle wait: the rerun's counts from the end of the
// first attempt, not from the start.
func TestRerunRecordsItsOwnIdleWait(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fc := newFakeClock()
	stdin, feed := stdinPipe(t)
	echo := newLines()
	o := w.options()
	o.Clock, o.Idle, o.SampleHz, o.MaxAttempts = fc, time.Second, 10, 2
	o.Stdin, o.Stderr = stdin, echo
	run := goRun(testCtx(t), o, []string{"sh", "-c", "read x"}, fc)
	holder := startProc(t, "sleep", "600")
	pid := holder.Process.Pid
	step := func(until string) {
		t.Helper()
		for deadline := time.Now().Add(waitLimit); time.Now().Before(deadline); {
			if strings.Contains(w.logText(t), until) {
				return
			}
			if !fc.step() {
				t.Fatalf("the guard ended before %q", until)
			}
		}
		t.Fatalf("no %q within %v", until, waitLimit)
	}
	fc.waitGen(0)
	step("attempt 1/2: start")
	w.hold(t, pid)
	step("CONTENDED")
	w.release(t, pid)
	fmt.Fprintln(feed, "x")
	step("attempt 2/2: start")
	fmt.Fprintln(feed, "x")
	for deadline := time.Now().Add(waitLimit); fc.step(); {
		if time.Now().After(deadline) {
			t.Fatalf("the guard is still sampling after %v", waitLimit)
		}
	}
	out, err := run.wait(t)
	if err != nil || len(out.Attempts) != 2 || out.Verdict != Clean {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if a, b := out.Attempts[0].IdleWaitSecs, out.Attempts[1].IdleWaitSecs; a != 1 || b != 1 {
		t.Errorf("idle waits %g and %g, want 1 and 1", a, b)
	}
}

// cancelClock is a fake clock that cancels the run the first time it is read at or
// after at: there, the guard's last sample of the idle window.
type cancelClock struct {
	*fakeClock
	at     time.Time
	cancel context.CancelFunc
}

func (c *cancelClock) Now() time.Time {
	t := c.fakeClock.Now()
	if !t.Before(c.at) {
		c.cancel()
	}
	return t
}

// A run cancelled while the last sample of the idle window is taken starts nothing.
func TestCancelDuringTheLastIdleSample(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fc := newFakeClock()
	ctx, cancel := context.WithCancelCause(testCtx(t))
	o := w.options()
	o.Idle, o.SampleHz = time.Second, 10
	o.Clock = &cancelClock{fakeClock: fc, at: fc.Now().Add(time.Second), cancel: func() { cancel(errors.New("stopped by the test")) }}
	run := goRun(ctx, o, []string{"true"}, fc)
	for deadline, ok := time.Now().Add(waitLimit), fc.waitGen(0); ok; ok = fc.step() {
		if time.Now().After(deadline) {
			t.Fatalf("the guard is still sampling after %v", waitLimit)
		}
	}
	out, _ := run.wait(t)
	if out.Verdict != Interrupted || strings.Contains(w.logText(t), "attempt 1/1: start") {
		t.Errorf("outcome %+v; log:\n%s", out, w.logText(t))
	}
}
