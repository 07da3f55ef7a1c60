package guard

import (
	"context"
	"fmt"
	"math"
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

// A live foreign process that shows up in the KFD dir during a run makes the attempt
// CONTENDED and it reruns; once that holder has exited its stale KFD entry is not a
// holder, so the rerun is CLEAN and its exit code is the guard's.
func TestForeignHolderMidRunReruns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	stdin, feed := stdinPipe(t)
	echo := newLines()
	o := w.options()
	o.MaxAttempts = 3
	o.Label = "Llama_greedy profiled"
	o.Stdin, o.Stderr = stdin, echo
	run := goRun(testCtx(t), o, []string{"sh", "-c", "read x; exit 3"}, nil)

	echo.Wait(t, `^rocm_gpu_guard: attempt 1/3: start: sh -c read x; exit 3$`)
	foreign := startProc(t, "sleep", "600")
	w.hold(t, foreign.Process.Pid)
	// The holder stays until the guard has seen it: no timing involved.
	echo.Wait(t, `^rocm_gpu_guard: sample \d+: CONTENDED foreign_gpu=\[`+strconv.Itoa(foreign.Process.Pid)+`:sleep\] compilers=\[\]$`)
	foreign.Process.Kill()
	foreign.Wait() // reaped: the KFD entry is now stale
	fmt.Fprintln(feed, "done")
	echo.Wait(t, `attempt 1: REJECTED \(contended\), exit 3; rerunning$`)
	echo.Wait(t, `^rocm_gpu_guard: attempt 2/3: start:`)
	fmt.Fprintln(feed, "done")

	out, err := run.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 3 || out.Verdict != Clean || len(out.Attempts) != 2 {
		t.Fatalf("outcome = exit %d, verdict %s, %d attempts; want exit 3, clean, 2", out.ExitCode, out.Verdict, len(out.Attempts))
	}
	recs := w.attempts(t)
	if len(recs) != 2 {
		t.Fatalf("jsonl has %d records, want 2", len(recs))
	}
	if r := recs[0]; r.Verdict != Contended || r.ContendedSamples == 0 || len(r.ForeignGPU) != 1 ||
		r.ForeignGPU[0].PID != foreign.Process.Pid || r.Label != o.Label || r.ExitCode != 3 {
		t.Errorf("attempt 1 record = %+v", r)
	}
	if r := recs[1]; r.Verdict != Clean || r.ContendedSamples != 0 || r.Attempt != 2 || r.Samples < 1 {
		t.Errorf("attempt 2 record = %+v", r)
	}
	log := w.logText(t)
	for _, want := range []string{"waiting for 0s of idle GPU and no compiler", "idle for 0s: kfd proc empty and no compiler in every 10 Hz sample", "attempt 2: CLEAN, exit 3"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// The command's own processes are never foreign: a direct child, a grandchild whose
// parent exited (still in the command's process group) and one that left the group
// with setsid and was then orphaned (remembered from an earlier sample).
func TestOwnChildrenNeverForeign(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fc := newFakeClock()
	stdin, feed := stdinPipe(t)
	out := newLines()
	o := w.options()
	o.Clock = fc
	o.Stdin, o.Stdout, o.Stderr = stdin, out, out
	script := `sleep 600 & echo "child $!"
sh -c 'sleep 600 & echo "grandchild $!"'
sh -c 'setsid sh -c "echo escaper \$\$; exec sleep 600" & read x'
echo parted
read y`
	run := goRun(testCtx(t), o, []string{"sh", "-c", script}, fc)
	if !fc.waitGen(0) {
		t.Fatal("guard ended before monitoring")
	}
	var pids []int
	for _, who := range []string{"child", "grandchild", "escaper"} {
		pid, _ := strconv.Atoi(out.Wait(t, `^`+who+` (\d+)$`)[1])
		pids = append(pids, pid)
		w.hold(t, pid)
	}
	for range 3 {
		fc.step()
	}
	fmt.Fprintln(feed, "x") // the escaper's parent exits: it is orphaned, in its own session
	out.Wait(t, `^parted$`)
	if p := procOf(t, pids[2]); p.SID != pids[2] || p.PGRP != pids[2] {
		t.Fatalf("escaper not in its own session: %+v", p)
	}
	for range 10 {
		fc.step()
	}
	fmt.Fprintln(feed, "y")
	res, err := run.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Clean || res.ExitCode != 0 {
		t.Fatalf("verdict %s exit %d, want clean 0; log:\n%s", res.Verdict, res.ExitCode, w.logText(t))
	}
	if a := res.Attempts[0]; a.Samples != 14 || a.ContendedSamples != 0 {
		t.Fatalf("attempt = %+v", a)
	}
	log := w.logText(t)
	if !strings.Contains(log, "stopped what the command left running") {
		t.Errorf("leftovers not reported:\n%s", log)
	}
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("pid %d still running after the guard returned", pid)
		}
	}
	// The clean sample lines list every holder, the command's own included.
	if !regexp.MustCompile(`sample \d+: clean gpu=\[\d+:[a-z]+,\d+:[a-z]+,\d+:[a-z]+\]`).MatchString(log) {
		t.Errorf("no clean sample lists the three holders:\n%s", log)
	}
}

func procOf(t *testing.T, pid int) proc.Stat {
	t.Helper()
	p, err := proc.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A holder that lives 300 ms is caught at the default 10 Hz whatever its phase against
// the samples. The clock is stepped by the test, so the result is the same on an idle
// or a loaded machine: the holder appears and vanishes at exact guard times, between
// samples, while the guard waits for its next tick.
func TestShortHolderCaughtAtDefaultRate(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	cases := []struct {
		name      string
		hz        float64
		appear    time.Duration // after sample 1
		life      time.Duration
		contended int
	}{
		{"300ms just after a sample", DefaultSampleHz, 1 * ms, 300 * ms, 3},
		{"300ms mid-interval", DefaultSampleHz, 50 * ms, 300 * ms, 3},
		{"300ms just before a sample", DefaultSampleHz, 99 * ms, 300 * ms, 3},
		{"300ms on a sample", DefaultSampleHz, 100 * ms, 300 * ms, 3},
		{"101ms spans one sample", DefaultSampleHz, 50 * ms, 101 * ms, 1},
		{"90ms between samples slips through", DefaultSampleHz, 5 * ms, 90 * ms, 0},
		{"300ms slips through at 1 Hz", 1, 5 * ms, 300 * ms, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			fc := newFakeClock()
			stdin, feed := stdinPipe(t)
			o := w.options()
			o.Clock, o.SampleHz, o.Stdin = fc, tc.hz, stdin
			holder := startProc(t, "sleep", "600")
			run := goRun(testCtx(t), o, []string{"sh", "-c", "read x"}, fc)
			if !fc.waitGen(0) {
				t.Fatal("guard ended before monitoring")
			}
			t0 := fc.Now() // sample 1 was taken at t0
			events := []struct {
				at  time.Time
				add bool
			}{{t0.Add(tc.appear), true}, {t0.Add(tc.appear + tc.life), false}}
			for _, ev := range events {
				// Step samples due before the event, then apply it while the guard waits.
				// A sample due exactly at the event time sees the world after it: the
				// holder lives over [appear, appear+life).
				for {
					d, ok := fc.deadline()
					if !ok {
						t.Fatal("guard stopped sampling")
					}
					if !d.Before(ev.at) {
						break
					}
					fc.step()
				}
				fc.set(ev.at)
				if ev.add {
					w.hold(t, holder.Process.Pid)
				} else {
					w.release(t, holder.Process.Pid)
				}
			}
			fc.step()
			fc.step()
			fmt.Fprintln(feed, "x")
			res, err := run.wait(t)
			if err != nil {
				t.Fatal(err)
			}
			a := res.Attempts[0]
			if a.ContendedSamples != tc.contended {
				t.Fatalf("contended samples = %d, want %d; log:\n%s", a.ContendedSamples, tc.contended, w.logText(t))
			}
			wantVerdict, wantExit := Clean, 0
			if tc.contended > 0 {
				wantVerdict, wantExit = Contended, ExitContended
			}
			if a.Verdict != wantVerdict || res.ExitCode != wantExit {
				t.Fatalf("verdict %s exit %d, want %s %d", a.Verdict, res.ExitCode, wantVerdict, wantExit)
			}
		})
	}
}

// A real executable whose comm matches the compiler pattern resets the idle streak;
// once it is gone the idle window completes and the command runs. Its name is unique to
// this run (a pid-numbered "cc-"): the machine's own builds, or this test running in
// another process at the same time, must not count (TestDefaultCompilerPattern checks
// the default pattern's names).
func TestCompilerResetsIdleStreak(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sleepPath, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	ccName := fmt.Sprintf("cc-%d", os.Getpid())
	cc := filepath.Join(t.TempDir(), ccName)
	b, err := os.ReadFile(sleepPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cc, b, 0o755); err != nil {
		t.Fatal(err)
	}
	build := startProc(t, cc, "600")
	if c := procOf(t, build.Process.Pid).Comm; c != ccName {
		t.Fatalf("fake build's comm = %q, want %s", c, ccName)
	}
	fc := newFakeClock()
	echo := newLines()
	o := w.options()
	o.CompilerRE = regexp.MustCompile(`^` + ccName + `$`)
	o.Clock, o.Idle, o.Stderr = fc, 2*time.Second, echo
	run := goRun(testCtx(t), o, []string{"true"}, fc)

	pid := strconv.Itoa(build.Process.Pid)
	fc.waitGen(0)
	echo.Wait(t, `^rocm_gpu_guard: idle streak reset after 0s: gpu=\[\] compilers=\[`+pid+`:`+ccName+`\]$`)
	for range 5 {
		fc.step()
	}
	build.Process.Kill()
	build.Wait()
	// Other builds on a shared machine only delay the idle window, never fail it.
	for deadline := time.Now().Add(waitLimit); ; {
		select {
		case <-run.done:
		default:
			if time.Now().After(deadline) {
				t.Fatalf("the guard did not finish within %v of samples", waitLimit)
			}
			fc.step()
			continue
		}
		break
	}
	res, err := run.wait(t)
	if err != nil || res.ExitCode != 0 || res.Verdict != Clean {
		t.Fatalf("outcome %+v, err %v", res, err)
	}
	log := w.logText(t)
	if !strings.Contains(log, "idle for 2s: kfd proc empty and no compiler in every 10 Hz sample") {
		t.Fatalf("no idle line:\n%s", log)
	}
	if n := strings.Count(log, pid+":"+ccName); n != 1 {
		// One reset while the build ran: the streak had already been broken, so the
		// later samples with it do not log again.
		t.Errorf("build resets logged %d times, want 1:\n%s", n, log)
	}
}

// --max-wait expiry exits 75 with the shell guard's message and a gave_up record.
func TestMaxWaitExpiry(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fc := newFakeClock()
	o := w.options()
	o.Clock, o.Idle, o.MaxWait = fc, 3*time.Second, 2*time.Second
	holder := startProc(t, "sleep", "600")
	w.hold(t, holder.Process.Pid)
	run := goRun(testCtx(t), o, []string{"true"}, fc)
	// Let the guard sample until it gives up (step reads the generation before firing,
	// so a wait registered right after the fire is never missed).
	for ok := fc.waitGen(0); ok; ok = fc.step() {
	}
	res, err := run.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != ExitContended || !res.GaveUp || res.Verdict != GaveUp {
		t.Fatalf("outcome %+v, want exit 75 gave up", res)
	}
	log := w.logText(t)
	if !strings.Contains(log, "gave up after 2s of waiting without 3s of idle\n") {
		t.Fatalf("no give-up line:\n%s", log)
	}
	if strings.Contains(log, "attempt 1/") {
		t.Fatalf("an attempt started:\n%s", log)
	}
	recs := w.attempts(t)
	if len(recs) != 1 || recs[0].Verdict != GaveUp || recs[0].ExitCode != ExitContended {
		t.Fatalf("records = %+v", recs)
	}
	// It gives up at the sample that reaches --max-wait, not the one after.
	if recs[0].IdleWaitSecs != 2 {
		t.Errorf("gave up after waiting %gs, want 2", recs[0].IdleWaitSecs)
	}
}

// Every attempt contended: 75 and the shell guard's summary line.
func TestEveryAttemptContended(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	echo := newLines()
	stdin, feed := stdinPipe(t)
	o := w.options()
	o.MaxAttempts = 2
	o.Stdin, o.Stderr = stdin, echo
	holder := startProc(t, "sleep", "600")
	run := goRun(testCtx(t), o, []string{"sh", "-c", "read x"}, nil)
	for k := 1; k <= 2; k++ {
		echo.Wait(t, fmt.Sprintf(`attempt %d/2: start:`, k))
		w.hold(t, holder.Process.Pid)
		echo.Wait(t, fmt.Sprintf(`sample \d+: CONTENDED foreign_gpu=\[%d:sleep\]`, holder.Process.Pid))
		// Out of the KFD dir again, so that the next idle wait can finish.
		w.release(t, holder.Process.Pid)
		fmt.Fprintln(feed, "x")
		echo.Wait(t, fmt.Sprintf(`attempt %d: REJECTED \(contended\), exit 0`, k))
	}
	res, err := run.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != ExitContended || len(res.Attempts) != 2 || res.Verdict != Contended {
		t.Fatalf("outcome %+v", res)
	}
	if log := w.logText(t); !strings.Contains(log, "attempt 2: REJECTED (contended), exit 0; no attempts left\n") ||
		!strings.Contains(log, "every attempt (2) was contended\n") {
		t.Fatalf("log:\n%s", log)
	}
}

// Clean samples are logged at most once a second, but the monitor total counts them
// all; contended samples are always logged.
func TestMonitorLogRate(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fc := newFakeClock()
	stdin, feed := stdinPipe(t)
	o := w.options()
	o.Clock, o.Stdin = fc, stdin
	run := goRun(testCtx(t), o, []string{"sh", "-c", "read x"}, fc)
	fc.waitGen(0)
	for range 24 {
		fc.step()
	}
	fmt.Fprintln(feed, "x")
	res, err := run.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	log := w.logText(t)
	var got []string
	for _, ln := range strings.Split(log, "\n") {
		if i := strings.Index(ln, " sample "); i > 0 {
			got = append(got, ln[i+1:])
		}
	}
	want := []string{"sample 1: clean gpu=[]", "sample 11: clean gpu=[]", "sample 21: clean gpu=[]"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("sample lines = %q, want %q", got, want)
	}
	if !strings.Contains(log, "monitor: 25 samples\n") || res.Attempts[0].Samples != 25 {
		t.Fatalf("monitor total wrong (%d):\n%s", res.Attempts[0].Samples, log)
	}
}

// A command that cannot start exits 127 without retries.
func TestCommandNotFound(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	o := w.options()
	o.MaxAttempts = 3
	res, err := Run(testCtx(t), o, []string{"perfbot-test-no-such-command"})
	if err == nil || res.ExitCode != 127 || len(res.Attempts) != 1 || res.Verdict != NotStarted {
		t.Fatalf("outcome %+v err %v", res, err)
	}
}

// Bad options are refused before anything runs.
func TestRunRejectsBadOptions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cases := []struct {
		name string
		mod  func(*Options)
		argv []string
		want string
	}{
		{"no command", func(*Options) {}, nil, "no command"},
		{"zero attempts", func(o *Options) { o.MaxAttempts = 0 }, []string{"true"}, "max attempts"},
		{"rate too high", func(o *Options) { o.SampleHz = 1000 }, []string{"true"}, "sample rate"},
		{"negative wait", func(o *Options) { o.MaxWait = -time.Second }, []string{"true"}, "max wait"},
		{"rate NaN", func(o *Options) { o.SampleHz = math.NaN() }, []string{"true"}, "sample rate NaN Hz"},
		{"rate +Inf", func(o *Options) { o.SampleHz = math.Inf(1) }, []string{"true"}, "sample rate +Inf Hz"},
		{"CPU limit NaN", func(o *Options) { o.MaxForeignCPU = math.NaN() }, []string{"true"}, "max foreign CPU NaN%"},
		{"CPU limit +Inf", func(o *Options) { o.MaxForeignCPU = math.Inf(1) }, []string{"true"}, "max foreign CPU +Inf%"},
		{"CPU limit negative", func(o *Options) { o.MaxForeignCPU = -1 }, []string{"true"}, "max foreign CPU -1%"},
		{"idle too long", func(o *Options) { o.Idle = 25 * time.Hour }, []string{"true"}, "idle window 25h0m0s"},
		{"wait too long", func(o *Options) { o.MaxWait = 31 * 24 * time.Hour }, []string{"true"}, "max wait 744h0m0s"},
		{"too many attempts", func(o *Options) { o.MaxAttempts = 1001 }, []string{"true"}, "max attempts 1001"},
		{"missing KFD dir", func(o *Options) { o.KFDDir = filepath.Join(w.dir, "nope") }, []string{"true"}, "amdgpu driver"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := w.options()
			tc.mod(&o)
			_, err := Run(testCtx(t), o, tc.argv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// A cancelled context with a signal cause stops the command's whole process group and
// maps to 128+signal.
func TestSignalCauseStopsGroup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	out := newLines()
	o := w.options()
	o.Stdout, o.Stderr = out, out
	o.KillGrace = 300 * time.Millisecond
	ctx, cancel := context.WithCancelCause(testCtx(t))
	run := goRun(ctx, o, []string{"sh", "-c", `trap "" TERM; sleep 600 & echo "bg $!"; echo "leader $$"; wait`}, nil)
	bg, _ := strconv.Atoi(out.Wait(t, `^bg (\d+)$`)[1])
	leader, _ := strconv.Atoi(out.Wait(t, `^leader (\d+)$`)[1])
	cancel(SignalCause{Signal: syscall.SIGTERM})
	res, err := run.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 143 || res.Verdict != Interrupted || res.Signal != syscall.SIGTERM {
		t.Fatalf("outcome %+v", res)
	}
	for _, pid := range []int{bg, leader} {
		if running(pid) {
			t.Errorf("pid %d survived", pid)
		}
	}
	if !strings.Contains(w.logText(t), "caught SIGTERM: stopping command and monitor") {
		t.Fatalf("log:\n%s", w.logText(t))
	}
	if st, err := Status(w.lock); err != nil || st.Held || st.Holder != nil {
		t.Fatalf("lock after interrupt: %+v %v", st, err)
	}
}

// A context cancelled before the run starts nothing.
func TestCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(SignalCause{Signal: syscall.SIGINT})
	marker := filepath.Join(w.dir, "ran")
	res, err := Run(ctx, w.options(), []string{"touch", marker})
	if err != nil || res.ExitCode != 130 || res.Verdict != Interrupted {
		t.Fatalf("outcome %+v, %v", res, err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the command ran")
	}
}

// BeforeAttempt runs before every attempt, the rerun of a contended one included, and
// an error from it starts nothing.
func TestBeforeAttemptHook(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	echo := newLines()
	stdin, feed := stdinPipe(t)
	o := w.options()
	o.MaxAttempts = 2
	o.Stdin, o.Stderr = stdin, echo
	calls := make(chan int, 4)
	o.BeforeAttempt = func(k int) error { calls <- k; return nil }
	holder := startProc(t, "sleep", "600")
	run := goRun(testCtx(t), o, []string{"sh", "-c", "read x"}, nil)
	echo.Wait(t, `attempt 1/2: start:`)
	w.hold(t, holder.Process.Pid)
	echo.Wait(t, fmt.Sprintf(`sample \d+: CONTENDED foreign_gpu=\[%d:sleep\]`, holder.Process.Pid))
	w.release(t, holder.Process.Pid)
	fmt.Fprintln(feed, "x")
	echo.Wait(t, `attempt 2/2: start:`)
	fmt.Fprintln(feed, "x")
	if res, err := run.wait(t); err != nil || res.Verdict != Clean || len(res.Attempts) != 2 {
		t.Fatalf("outcome %+v, %v", res, err)
	}
	close(calls)
	var got []int
	for k := range calls {
		got = append(got, k)
	}
	if fmt.Sprint(got) != "[1 2]" {
		t.Errorf("BeforeAttempt calls %v, want [1 2]", got)
	}

	w2 := newWorld(t)
	o2 := w2.options()
	o2.BeforeAttempt = func(k int) error { return fmt.Errorf("the checkout has a stale CSV") }
	marker := filepath.Join(t.TempDir(), "ran")
	res, err := Run(testCtx(t), o2, []string{"touch", marker})
	if err == nil || !strings.Contains(err.Error(), "preparing attempt 1: the checkout has a stale CSV") || len(res.Attempts) != 0 {
		t.Fatalf("outcome %+v, %v", res, err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the command ran although its attempt could not be prepared")
	}
	if log := w2.logText(t); !strings.Contains(log, "attempt 1/1: not started: the checkout has a stale CSV") {
		t.Errorf("log:\n%s", log)
	}
}

// A grandchild that leaves the command's group with setsid, and whose parent exits at
// once, is never seen in the group by any sample; it still belongs to the command (it
// stays below the command's reaper), so it is stopped when the command exits and named
// in the log.
func TestSetsidOrphanStoppedAndNamed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fc := newFakeClock()
	stdin, feed := stdinPipe(t)
	out := newLines()
	o := w.options()
	o.Clock = fc
	o.KillGrace = 300 * time.Millisecond
	o.Stdin, o.Stdout, o.Stderr = stdin, out, out
	// The escaper starts only after the first sample, and the command exits as soon as
	// it said its pid: no sample of the monitor runs in between (the clock is not
	// stepped).
	script := `read go
sh -c 'setsid sh -c "echo escaper \$\$; exec sleep 600" & exit 0'
while :; do read line; [ "$line" = escaped ] && exit 0; done`
	run := goRun(testCtx(t), o, []string{"sh", "-c", script}, fc)
	if !fc.waitGen(0) {
		t.Fatal("guard ended before monitoring")
	}
	fmt.Fprintln(feed, "go")
	pid, _ := strconv.Atoi(out.Wait(t, `^escaper (\d+)$`)[1])
	fmt.Fprintln(feed, "escaped")
	res, err := run.wait(t)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("outcome %+v %v", res, err)
	}
	if err := proc.WaitExit(pid, 20*time.Second); err != nil {
		t.Errorf("the setsid'd orphan outlived the guarded run: %v", err)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	// Named as sh or sleep: it may not have exec'd yet.
	want := fmt.Sprintf(`attempt 1: stopped what the command left running: \[%d:(sh|sleep)\]\n`, pid)
	if log := w.logText(t); !regexp.MustCompile(want).MatchString(log) {
		t.Errorf("log lacks %q:\n%s", want, log)
	}
}
