package job

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/results"
)

// The harnesses' lines that start a model (docs/nightly.md): bench_decode.sh prints
// `>>> [bench]  <model> (...` or `>>> [skip]   <model> (...`, bench_mlxlm.py
// `>>> [i/n] [warmup+bench] <model> (...`, `>>> [i/n] [skip-done] <model>` or the same
// skip line; both print `    decode: <tok/s> tok/s` after a measured model.
var (
	benchStartRE  = regexp.MustCompile(`^>>> \[(bench|skip)\]\s+(\S+)`)
	pylmStartRE   = regexp.MustCompile(`^>>> \[(\d+)/(\d+)\] \[(warmup\+bench|skip-done)\] (\S+)`)
	decodeLineRE  = regexp.MustCompile(`^\s+decode: ([0-9.]+) tok/s`)
	guardAttempt  = regexp.MustCompile(`^` + regexp.QuoteMeta(guard.EchoPrefix) + `attempt (\d+)/(\d+): start: `)
	harnessFailRE = regexp.MustCompile(`^\s+(benchmark failed|OOM at load/run|FAIL:\S+|no decode output)`)
)

// sweepTracker turns a harness's lines into progress: model i of n, the time since the
// sweep started, and an ETA from last night's model times.
type sweepTracker struct {
	name  string
	names []string           // the models the harness will run, in its order
	last  map[string]float64 // last night's seconds per model
	prog  *progress
	now   func() time.Time

	start    time.Time
	i        int
	cur      string
	curStart time.Time
	result   string
	times    []results.ModelTime
}

func (t *sweepTracker) line(l string) {
	l = strings.TrimRight(l, "\r\n")
	if m := guardAttempt.FindStringSubmatch(l); m != nil {
		if m[1] != "1" {
			t.prog.printf("[%s] attempt %s/%s: the sweep starts over", t.name, m[1], m[2])
		}
		t.start, t.i, t.cur, t.times = t.now(), 0, "", nil
		return
	}
	if m := benchStartRE.FindStringSubmatch(l); m != nil {
		t.begin(m[2], 0, m[1] == "skip")
		return
	}
	if m := pylmStartRE.FindStringSubmatch(l); m != nil {
		n, _ := strconv.Atoi(m[2])
		t.begin(m[4], n, m[3] == "skip-done")
		return
	}
	if t.cur == "" {
		return
	}
	if m := decodeLineRE.FindStringSubmatch(l); m != nil {
		t.result = m[1] + " tok/s"
		t.prog.printf("[%s %d/%d] %s: %s tok/s", t.name, t.i, t.total(), t.cur, m[1])
	} else if m := harnessFailRE.FindStringSubmatch(l); m != nil {
		t.result = strings.TrimSpace(l)
		t.prog.printf("[%s %d/%d] %s: %s", t.name, t.i, t.total(), t.cur, t.result)
	}
}

func (t *sweepTracker) total() int {
	return max(len(t.names), t.i)
}

// begin closes the model before and announces the next.
func (t *sweepTracker) begin(model string, n int, skipped bool) {
	now := t.now()
	if t.start.IsZero() {
		t.start = now
	}
	t.close(now)
	t.i++
	t.cur, t.curStart, t.result = model, now, ""
	if skipped {
		t.result = "skipped"
	}
	if n > 0 && n != len(t.names) {
		t.names = t.names[:0:0]
		for range n {
			t.names = append(t.names, "")
		}
	}
	what := "started"
	if skipped {
		what = "skipped"
	}
	t.prog.printf("[%s %d/%d] %s: %s, %s into the sweep; %s", t.name, t.i, t.total(), model, what, dur(now.Sub(t.start).Round(time.Second)), t.eta(now))
}

// eta adds last night's times of the models from the current one on.
func (t *sweepTracker) eta(now time.Time) string {
	if len(t.last) == 0 {
		return "ETA unknown: no model times from an earlier night"
	}
	var known, total float64
	n := 0
	for _, s := range t.last {
		known += s
		n++
	}
	avg := known / float64(n)
	guessed := 0
	left := t.remaining()
	for _, m := range left {
		if s, ok := t.last[m]; ok {
			total += s
		} else {
			total += avg
			guessed++
		}
	}
	left0 := time.Duration(total * float64(time.Second)).Round(time.Second)
	s := fmt.Sprintf("ETA %s (about %s left by last night's model times", now.Add(left0).Format("15:04:05"), dur(left0))
	if guessed > 0 {
		s += fmt.Sprintf(", %d model(s) new since: their time is last night's average", guessed)
	}
	return s + ")"
}

// remaining are the models from the current one on, by the harness's order when known.
func (t *sweepTracker) remaining() []string {
	for i, m := range t.names {
		if m == t.cur {
			return t.names[i:]
		}
	}
	// The order is not known (the harness numbers its own models): count what is left.
	out := []string{t.cur}
	for range max(0, t.total()-t.i) {
		out = append(out, "")
	}
	return out
}

func (t *sweepTracker) close(now time.Time) {
	if t.cur == "" {
		return
	}
	t.times = append(t.times, results.ModelTime{Model: t.cur, Seconds: round1(now.Sub(t.curStart).Seconds()), Result: t.result})
	t.cur = ""
}

// end closes the last model when the harness has finished.
func (t *sweepTracker) end() {
	t.close(t.now())
}
