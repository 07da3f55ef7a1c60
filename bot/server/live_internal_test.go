package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/runner/results"
)

// The progress file of a running request is read at most once a minute; between reads
// the last answer stands, a file from before the run is not trusted, and a bad file is
// no progress.
func TestProgressReaderOncePerMinute(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	pr := newProgressReader([]Host{{Label: "gfx1151", ProgressDir: dir}, {Label: "other"}}, func() time.Time { return now }, slog.New(slog.DiscardHandler))
	r := queue.Request{ID: 4, Host: "gfx1151", StartedAt: now.Add(-10 * time.Minute)}
	write := func(done int, at time.Time) {
		t.Helper()
		if err := results.WriteProgress(dir, results.Progress{RequestID: "4", Phase: "bench", Done: done, Planned: 6, ETASecs: -1, WrittenAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := pr.read(r); ok {
		t.Fatal("progress before the file exists")
	}
	write(1, now)
	if p, ok := pr.read(r); !ok || p.Done != 1 {
		t.Fatalf("first read: %+v %v (a missing file is looked for again)", p, ok)
	}
	write(2, now)
	now = now.Add(59 * time.Second)
	if p, _ := pr.read(r); p.Done != 1 {
		t.Errorf("read again within the minute: done %d, want the last answer 1", p.Done)
	}
	now = now.Add(time.Second)
	if p, _ := pr.read(r); p.Done != 2 {
		t.Errorf("read after a minute: done %d, want 2", p.Done)
	}
	// A file written before the run started (an earlier request of the same id).
	write(3, r.StartedAt.Add(-time.Hour))
	now = now.Add(time.Minute)
	if _, ok := pr.read(r); ok {
		t.Error("a file from before the run was trusted")
	}
	// A bad file is no progress.
	os.WriteFile(filepath.Join(dir, "4.json"), []byte(`{"request_id":"4"`), 0o644)
	now = now.Add(time.Minute)
	if _, ok := pr.read(r); ok {
		t.Error("a truncated file was read")
	}
	// A host without a folder has no progress.
	if _, ok := pr.read(queue.Request{ID: 4, Host: "other"}); ok {
		t.Error("progress on a host without a progress folder")
	}
}

func TestRunningStatus(t *testing.T) {
	now := time.Date(2026, 12, 3, 18, 30, 0, 0, time.UTC)
	r := queue.Request{ID: 9, Host: "gfx1151", SHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", Command: "/bench rocm", StartedAt: now.Add(-25 * time.Minute)}
	for _, tc := range []struct {
		name  string
		p     results.Progress
		has   bool
		state string
		want  string
	}{
		{"no folder", results.Progress{}, false, "started", "Request 9 on host gfx1151, commit 6dcb09b5, running for 25 min."},
		{"bench", results.Progress{Phase: "bench", Done: 3, Planned: 8, Model: "llama", ETASecs: 3900, WrittenAt: now}, true, "running",
			"Request 9 on host gfx1151, commit 6dcb09b5, running for 25 min. 3 of 8 models done; now llama; about 1 h 5 min left (progress as of 18:30 UTC)."},
		{"build", results.Progress{Phase: "build", ETASecs: -1, WrittenAt: now}, true, "started",
			"running for 25 min. Building; no estimate of the time left yet (progress as of 18:30 UTC)."},
		// Before the job has planned its models: the estimate alone, nothing joined to it.
		{"unplanned", results.Progress{Phase: "bench", ETASecs: -1, WrittenAt: now}, true, "started",
			"running for 25 min. No estimate of the time left yet (progress as of 18:30 UTC)."},
		{"done", results.Progress{Phase: "done", Done: 8, Planned: 8, WrittenAt: now}, true, "started",
			"Request 9 on host gfx1151, commit 6dcb09b5. The GPU job has finished; the results are published next."},
	} {
		d := runningStatus(r, now, tc.p, tc.has)
		if d.State != tc.state || !strings.Contains(d.Detail, tc.want) {
			t.Errorf("%s: %s %q, want %s containing %q", tc.name, d.State, d.Detail, tc.state, tc.want)
		}
	}

	// A compare names both commits, counts runs, stays "in progress" and shows its
	// verdicts so far; escaped as Markdown in the comment.
	c := r
	c.Base, c.Command = "9fceb02d0ae598e95dc970b74767f19372d61af8", "/bench rocm compare"
	p := results.Progress{Phase: "bench", Done: 12, Planned: 20, Model: "qwen3", ETASecs: 1200, WrittenAt: now,
		Verdicts: []string{"llama: decode tok/s faster, prefill tok/s no significant change", "qwen3: decode tok/s *too* noisy"}}
	d := runningStatus(c, now, p, true)
	want := "Request 9 on host gfx1151, compare 9fceb02d..6dcb09b5, running for 25 min. 12 of 20 runs done; now qwen3; about 20 min left (progress as of 18:30 UTC). " +
		"So far: llama: decode tok/s faster, prefill tok/s no significant change; qwen3: decode tok/s *too* noisy."
	if d.State != "started" || d.Detail != want {
		t.Errorf("compare: %s %q, want started %q", d.State, d.Detail, want)
	}
	body, err := renderStatus(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "in progress. Request 9") || strings.Contains(body, "*too*") {
		t.Errorf("the compare's status comment:\n%s", body)
	}
	// Without progress a compare still names both commits.
	if d := runningStatus(c, now, results.Progress{}, false); d.Detail != "Request 9 on host gfx1151, compare 9fceb02d..6dcb09b5, running for 25 min." {
		t.Errorf("compare without progress: %q", d.Detail)
	}
}

// TestRunningStatusAtAnETAOfZero: a job that estimates no time left still shows an
// estimate ("about ... left"), not "no estimate"; only a negative ETA means none.
func TestRunningStatusAtAnETAOfZero(t *testing.T) {
	now := time.Date(2026, 12, 3, 18, 30, 0, 0, time.UTC)
	r := queue.Request{ID: 9, Host: "gfx1151", SHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", Command: "/bench rocm", StartedAt: now.Add(-25 * time.Minute)}
	d := runningStatus(r, now, results.Progress{Phase: "bench", Done: 7, Planned: 8, Model: "llama", ETASecs: 0, WrittenAt: now}, true)
	if !strings.Contains(d.Detail, "now llama; about ") || strings.Contains(d.Detail, "no estimate") {
		t.Errorf("ETA 0: %q, want an estimate of the time left", d.Detail)
	}
}

// TestRunNumber: the id at the end of a run's link, with or without a trailing slash,
// also when the link is a bare path; a string without a slash is its own id.
func TestRunNumber(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/lablup/mlxcel/actions/runs/1011":  "1011",
		"https://github.com/lablup/mlxcel/actions/runs/1011/": "1011",
		"/1011": "1011",
		"1011":  "1011",
	} {
		if got := runNumber(in); got != want {
			t.Errorf("runNumber(%q) = %q, want %q", in, got, want)
		}
	}
}
