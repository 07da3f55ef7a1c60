package guard

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// burnTicks is how much CPU the burner uses (1/100 s units): 40 ticks over the guard's
// one-second window is 40 % of a core, well above the 20 % limit of the test.
const burnTicks = 40

// With --max-foreign-cpu, a foreign process that used more than the limit of one core
// over the window is contention; the command's own CPU never is. The clock is stepped,
// and the burner stops on its own CPU figure, so the load of the machine does not
// change the result.
func TestForeignCPUContention(t *testing.T) {
	t.Parallel()
	for _, own := range []bool{false, true} {
		t.Run(fmt.Sprintf("own=%v", own), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			fc := newFakeClock()
			out := newLines()
			cmdIn, cmdFeed := stdinPipe(t)
			o := w.options()
			o.Clock, o.MaxForeignCPU = fc, 20
			o.Stdin, o.Stdout, o.Stderr = cmdIn, out, out
			helperEnv := []string{"GUARD_TEST_HELPER=burn", "GUARD_TEST_TICKS=" + strconv.Itoa(burnTicks)}
			argv := []string{"sh", "-c", "read x"}
			var burnFeed *os.File
			if own {
				o.Env = helperEnv
				argv = []string{os.Args[0]}
				burnFeed = cmdFeed
			} else {
				in, feed := stdinPipe(t)
				b := exec.Command(os.Args[0])
				b.Env = append(os.Environ(), helperEnv...)
				b.Stdin, b.Stdout = in, out
				if err := b.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { b.Process.Kill(); b.Wait() })
				burnFeed = feed
			}
			run := goRun(testCtx(t), o, argv, fc)
			if !fc.waitGen(0) {
				t.Fatal("guard ended before monitoring")
			}
			fmt.Fprintln(burnFeed, "go")
			burner, _ := strconv.Atoi(out.Wait(t, `^burned (\d+) `)[1])
			for range 10 {
				fc.step()
			}
			fmt.Fprintln(cmdFeed, "end")
			res, err := run.wait(t)
			if err != nil {
				t.Fatal(err)
			}
			var seen *CPUUse
			for _, c := range res.Attempts[0].ForeignCPU {
				if c.PID == burner {
					seen = &c
				}
			}
			if own {
				if seen != nil {
					t.Fatalf("the command's own CPU was counted: %+v", seen)
				}
				return
			}
			if seen == nil || seen.Percent < burnTicks || res.Verdict != Contended {
				t.Fatalf("burner %d not caught: %+v\n%s", burner, res.Attempts[0], w.logText(t))
			}
			if !strings.Contains(w.logText(t), fmt.Sprintf("cpu=[%d:", burner)) && !strings.Contains(w.logText(t), fmt.Sprintf(",%d:", burner)) {
				t.Fatalf("no cpu= entry in the log:\n%s", w.logText(t))
			}
		})
	}
}

// cpu() only judges a window of at least a second, and a reused pid (other start time)
// is a new process, not a jump in CPU time.
func TestCPUWindow(t *testing.T) {
	t.Parallel()
	s := &sampler{maxCPU: 50, cpuWindow: time.Second, self: -1}
	t0 := time.Unix(1000, 0)
	if got := s.cpu(t0, []cpuEntry{{pid: 11, comm: "calm", start: 5, ticks: 0}, {pid: 10, comm: "hog", start: 5, ticks: 0}}); got != nil {
		t.Fatalf("first snapshot judged: %v", got)
	}
	if got := s.cpu(t0.Add(500*time.Millisecond), []cpuEntry{{pid: 10, comm: "hog", start: 5, ticks: 90}, {pid: 11, comm: "calm", start: 5, ticks: 10}}); got != nil {
		t.Fatalf("half a window judged: %v", got)
	}
	got := s.cpu(t0.Add(time.Second), []cpuEntry{{pid: 12, comm: "new", start: 9, ticks: 500}, {pid: 10, comm: "hog", start: 5, ticks: 90}, {pid: 11, comm: "calm", start: 5, ticks: 10}})
	if len(got) != 1 || got[0].PID != 10 || got[0].Percent != 90 {
		t.Fatalf("cpu = %v, want only pid 10 at 90%%", got)
	}
	if got := s.cpu(t0.Add(2*time.Second), []cpuEntry{{pid: 10, comm: "hog2", start: 77, ticks: 1000}}); got != nil {
		t.Fatalf("reused pid judged: %v", got)
	}
}
