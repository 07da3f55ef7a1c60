package guard

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
)

func kindCounts(evs []Event) map[EventKind]int {
	m := map[EventKind]int{}
	for _, e := range evs {
		m[e.Kind]++
	}
	return m
}

// The shell guard's real log parses completely, with the values it holds.
func TestParseLogShellFixture(t *testing.T) {
	t.Parallel()
	f, err := os.Open(testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", "guard.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := ParseLog(f)
	if err != nil {
		t.Fatal(err)
	}
	got := kindCounts(evs)
	want := map[EventKind]int{
		EvSection: 17, EvNote: 1, EvWaiting: 18, EvIdleReset: 129, EvIdle: 18,
		EvAttemptStart: 18, EvAttemptEnd: 18, EvMonitor: 18, EvSample: 159,
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d events, want %d", k, got[k], n)
		}
	}
	if got[EvOther] != 0 {
		t.Errorf("%d lines not understood", got[EvOther])
	}
	var contended, rejected, unreadable []Event
	for _, e := range evs {
		switch {
		case e.Kind == EvSample && e.Contended:
			contended = append(contended, e)
		case e.Kind == EvAttemptEnd && e.Verdict == Contended:
			rejected = append(rejected, e)
		case e.Kind == EvIdleReset && len(e.GPU) == 1 && e.GPU[0].Comm == "?":
			unreadable = append(unreadable, e)
		}
	}
	if len(contended) != 1 || contended[0].Sample != 5 || holderList(contended[0].GPU) != "[2682448:mlxcel-bench-de]" || len(contended[0].Compilers) != 0 {
		t.Errorf("contended samples = %+v", contended)
	}
	if len(rejected) != 1 || rejected[0].Attempt != 1 || rejected[0].ExitCode != 0 {
		t.Errorf("rejected attempts = %+v", rejected)
	}
	if len(unreadable) != 3 {
		t.Errorf("holders with unreadable comm = %d, want 3", len(unreadable))
	}
	first := evs[0]
	if first.Kind != EvSection || first.Run != "Meta-Llama-3.1-8B-Instruct-4bit_greedy" || first.Phase != "plain" {
		t.Errorf("first event = %+v", first)
	}
	reset := evs[2]
	if reset.Kind != EvIdleReset || reset.Seconds != 1 || holderList(reset.GPU) != "[3292996:mlxcel-bench-de]" || reset.Time.Format(TimeLayout) != "2026-09-30T17:41:03+0900" {
		t.Errorf("first reset = %+v", reset)
	}
	for _, e := range evs {
		if e.Kind == EvIdleReset && strings.Contains(e.Text, "810466:cargo,811295:rustc") {
			if holderList(e.Compilers) != "[810466:cargo,811295:rustc]" {
				t.Errorf("two compilers parsed as %v", e.Compilers)
			}
		}
		if e.Kind == EvIdle && (e.Seconds != 90 || e.Hz != 1) {
			t.Errorf("idle line %d = %+v", e.Line, e)
		}
	}
}

// perfbot's own log, written by real runs, parses into the same kinds of events as the
// shell guard's (plus the ones the fixture happens not to contain).
func TestParseLogPerfbotMatchesShell(t *testing.T) {
	t.Parallel()
	f, err := os.Open(testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", "guard.log"))
	if err != nil {
		t.Fatal(err)
	}
	shell, err := ParseLog(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}

	w := newWorld(t)
	if err := Section(w.log, "Qwen3-30B-A3B-4bit_greedy profiled"); err != nil {
		t.Fatal(err)
	}
	if err := Section(w.log, "rerun of Qwen3-30B-A3B-4bit_greedy: replaced"); err != nil {
		t.Fatal(err)
	}
	fc := newFakeClock()
	stdin, feed := stdinPipe(t)
	echo := newLines()
	o := w.options()
	o.Clock, o.Idle, o.MaxAttempts, o.Stdin, o.Stderr = fc, 0, 2, stdin, echo
	holder := startProc(t, "sleep", "600")
	w.hold(t, holder.Process.Pid) // busy at the start: the idle wait logs a reset
	run := goRun(testCtx(t), o, []string{"sh", "-c", "read x"}, fc)
	fc.waitGen(0)
	echo.Wait(t, `idle streak reset after 0s`)
	w.release(t, holder.Process.Pid)
	fc.step() // idle: attempt 1 starts and takes sample 1
	echo.Wait(t, `attempt 1/2: start`)
	w.hold(t, holder.Process.Pid)
	fc.step()
	echo.Wait(t, `CONTENDED`)
	w.release(t, holder.Process.Pid)
	fmt.Fprintln(feed, "x")
	echo.Wait(t, `attempt 2/2: start`)
	fc.step()
	fmt.Fprintln(feed, "x")
	if out, err := run.wait(t); err != nil || out.ExitCode != 0 {
		t.Fatalf("%+v %v", out, err)
	}

	b, err := os.ReadFile(w.log)
	if err != nil {
		t.Fatal(err)
	}
	own, err := ParseLog(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	sk, ok := kindCounts(shell), kindCounts(own)
	var missing []string
	for k := range sk {
		if ok[k] == 0 {
			missing = append(missing, string(k))
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 || ok[EvOther] > 0 {
		t.Fatalf("perfbot's log lacks %v (other: %d):\n%s", missing, ok[EvOther], b)
	}
	for _, e := range own {
		if e.Kind == EvSample && e.Contended && holderList(e.GPU) != "["+strconv.Itoa(holder.Process.Pid)+":sleep]" {
			t.Errorf("contended sample = %+v", e)
		}
		if e.Kind == EvIdle && e.Hz != 10 {
			t.Errorf("idle line rate = %v, want 10", e.Hz)
		}
	}
}

func TestParseLogErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"no timestamp": "waiting for 90s of idle GPU and no compiler\n",
		"bad time":     "2026-09-30 17:41:01 waiting\n",
		"bad number":   "2026-09-30T17:41:01+0900 monitor: 99999999999999999999 samples\n",
	}
	for name, in := range cases {
		if _, err := ParseLog(strings.NewReader("== a plain\n" + in)); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: err = %v, want one naming line 2", name, err)
		}
	}
	evs, err := ParseLog(strings.NewReader("2026-09-30T17:41:01+0900 something new\n\n2026-09-30T17:41:02+0900 caught SIGINT: stopping command and monitor\n2026-09-30T17:41:02+0900 every attempt (5) was contended\n2026-09-30T17:41:02+0900 gave up after 120s of waiting without 90s of idle\n"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := []EventKind{evs[0].Kind, evs[1].Kind, evs[2].Kind, evs[3].Kind}
	if !slices.Equal(kinds, []EventKind{EvOther, EvCaught, EvAllContended, EvGaveUp}) || evs[1].Signal != "SIGINT" || evs[2].MaxAttempts != 5 || evs[3].Seconds != 120 {
		t.Fatalf("events = %+v", evs)
	}
}

// A section mark names a run and a phase; a line with nothing before the phase is a
// note.
func TestParseLogSectionNeedsARun(t *testing.T) {
	t.Parallel()
	evs, err := ParseLog(strings.NewReader("== qwen plain\n==  plain\n"))
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v, %v", evs, err)
	}
	if evs[0].Kind != EvSection || evs[0].Run != "qwen" || evs[0].Phase != "plain" {
		t.Errorf("first: %+v", evs[0])
	}
	if evs[1].Kind != EvNote || evs[1].Run != "" {
		t.Errorf("second: %+v", evs[1])
	}
}
