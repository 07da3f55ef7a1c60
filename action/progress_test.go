package action

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/results"
)

// The progress file is written at the first step, then at most once a minute, and
// once more, as done, at the end; a folder it cannot write to is warned about once.
func TestProgressFileOncePerMinute(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	var warned []error
	f := &progressFile{Writer: &bytes.Buffer{}, dir: dir, id: "42", now: func() time.Time { return now }, warn: func(err error) { warned = append(warned, err) }}
	read := func() results.Progress {
		t.Helper()
		p, err := results.ReadProgress(dir, "42")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.Step(job.Step{Phase: results.PhaseProfile, Done: 0, Planned: 4, Model: "a", ETA: -1})
	if p := read(); p.Done != 0 || p.Model != "a" || p.ETASecs != -1 || !p.WrittenAt.Equal(now) {
		t.Errorf("first step: %+v", p)
	}
	now = now.Add(30 * time.Second)
	f.Step(job.Step{Phase: results.PhaseProfile, Done: 1, Planned: 4, Model: "b", ETA: -1})
	if p := read(); p.Done != 0 {
		t.Errorf("rewritten within the minute: %+v", p)
	}
	now = now.Add(30 * time.Second)
	f.Step(job.Step{Phase: results.PhaseProfile, Done: 2, Planned: 4, Model: "c", ETA: -1})
	// Two models in a minute: two more take about a minute.
	if p := read(); p.Done != 2 || p.Model != "c" || p.ETASecs != 60 {
		t.Errorf("after a minute: %+v", p)
	}
	// An estimate the job gives (a compare's) is written as it is, in seconds.
	now = now.Add(time.Minute)
	f.Step(job.Step{Phase: results.PhaseBench, Done: 1, Planned: 4, Model: "d", ETA: 90 * time.Second})
	if p := read(); p.Model != "d" || p.ETASecs != 90 {
		t.Errorf("the job's estimate: %+v", p)
	}
	f.done()
	if p := read(); p.Phase != results.PhaseDone || p.Done != 4 || p.Model != "" || p.ETASecs != 0 {
		t.Errorf("done: %+v", p)
	}
	if len(warned) != 0 {
		t.Errorf("warned %v", warned)
	}

	gone := &progressFile{Writer: &bytes.Buffer{}, dir: filepath.Join(dir, "missing"), id: "43", now: func() time.Time { return now }, warn: func(err error) { warned = append(warned, err) }}
	gone.Step(job.Step{Phase: results.PhaseBuild, ETA: -1})
	now = now.Add(time.Hour)
	gone.Step(job.Step{Phase: results.PhaseBuild, ETA: -1})
	gone.done()
	if len(warned) != 1 || !errors.Is(warned[0], os.ErrNotExist) {
		t.Errorf("warnings %v, want one about the missing folder", warned)
	}
}

// A profile step on a host whose runner names a progress folder leaves the request's
// progress file there, done, with every planned run counted.
func TestProfileWritesTheProgressFile(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig)
	progress := filepath.Join(h.dir, "progress")
	if err := os.Mkdir(progress, 0o755); err != nil {
		t.Fatal(err)
	}
	h.vars[EnvProgressDir] = progress
	_, _, log, err := h.step(t, map[string]string{"job": "profile", "ref": h.base[:12], "request-id": "17"})
	if err != nil {
		t.Fatalf("profile: %v\n%s", err, log)
	}
	p, err := results.ReadProgress(progress, "17")
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if p.Phase != results.PhaseDone || p.Planned == 0 || p.Done != p.Planned {
		t.Errorf("progress %+v, want done with every planned run", p)
	}
}
