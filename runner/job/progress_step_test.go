package job

import (
	"bytes"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/results"
)

// stepRecorder is a Progress writer that keeps the steps it is told.
type stepRecorder struct {
	bytes.Buffer
	steps []Step
}

func (r *stepRecorder) Step(s Step) { r.steps = append(r.steps, s) }

// stepHook is a lineHook that also keeps the steps it is told.
type stepHook struct {
	*lineHook
	mu    sync.Mutex
	steps []Step
}

func (h *stepHook) Step(s Step) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.steps = append(h.steps, s)
}

// The steps come from the session's own progress lines: a sweep's model starts (with
// its ETA), a profile run's end, a build.
func TestProgressSteps(t *testing.T) {
	now := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	rec := &stepRecorder{}
	prog := &progress{w: rec, now: clock}
	sw := &sweepTracker{name: "rocm", names: []string{"llama", "qwen3"}, last: map[string]float64{"llama": 600, "qwen3": 300}, prog: prog, now: clock}
	sw.line(">>> [bench]  llama (8B, q4)")
	now = now.Add(10 * time.Minute)
	sw.line("    decode: 41.5 tok/s")
	sw.line(">>> [bench]  qwen3 (4B)")
	prog.printf("building the bench: cargo build --release")
	prog.printf("%s %s: done (%d attempt(s))", "[2/6]", "qwen3-8b_greedy", 1)
	prog.printf("%s %s: %s", "[3/6]", "gemma_greedy", "the profiled run exited with status 1")
	prog.printf("results folder x: 6 runs")

	want := []Step{
		{Phase: results.PhaseBench, Done: 0, Planned: 2, Model: "llama", ETA: 15 * time.Minute},
		{Phase: results.PhaseBench, Done: 0, Planned: 2, Model: "llama", ETA: -1}, // the decode line: no ETA in it
		{Phase: results.PhaseBench, Done: 1, Planned: 2, Model: "qwen3", ETA: 5 * time.Minute},
		{Phase: results.PhaseBuild, ETA: -1},
		{Phase: results.PhaseProfile, Done: 2, Planned: 6, ETA: -1},
		{Phase: results.PhaseProfile, Done: 2, Planned: 6, Model: "gemma_greedy", ETA: -1},
	}
	if len(rec.steps) != len(want) {
		t.Fatalf("steps %+v\nwant %+v\nlines:\n%s", rec.steps, want, rec.String())
	}
	for i := range want {
		if !reflect.DeepEqual(rec.steps[i], want[i]) {
			t.Errorf("step %d: %+v, want %+v (line %q)", i, rec.steps[i], want[i], bytes.Split(rec.Bytes(), []byte("\n"))[i])
		}
	}
	// A plain writer is told nothing and still gets the lines.
	var plain bytes.Buffer
	(&progress{w: &plain, now: clock}).printf("%s %s: done (1 attempt(s))", "[1/1]", "m")
	if plain.Len() == 0 {
		t.Error("no line written")
	}
}
