package action

import (
	"io"
	"slices"
	"sync"
	"time"

	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/results"
)

// EnvProgressDir names the host's folder of progress files: when the runner's
// environment sets it, the profile and bench jobs write their progress to
// `<folder>/<request-id>.json` (results.Progress) at most once a minute, and the
// server shows it in the request's status comment (docs/install.md). The GPU job has
// no token that may write on GitHub, so progress goes through the host.
const EnvProgressDir = "PERFBOT_PROGRESS_DIR"

// progressFile passes the job's progress lines on to the step's log and keeps the
// request's progress file: rewritten (atomically) when the step changes, at most once
// per results.ProgressEvery, and once more when the job ends.
type progressFile struct {
	io.Writer
	dir, id string
	now     func() time.Time
	warn    func(error)

	mu      sync.Mutex
	start   time.Time
	cur     results.Progress
	written time.Time
	failed  bool // a write failed: warned once, not tried again
}

// progressOut returns the Progress writer of a host job: w itself, or w with the
// progress file when the runner names a progress folder and the step a request id.
func (s *step) progressOut(w io.Writer) io.Writer {
	dir := s.rt.Getenv(EnvProgressDir)
	if dir == "" || s.in.RequestID == "" {
		return w
	}
	s.progress = &progressFile{Writer: w, dir: dir, id: s.in.RequestID, now: time.Now,
		warn: func(err error) {
			s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: the progress file is not kept", Message: err.Error()})
		}}
	return s.progress
}

// progressDone writes the last progress of the step's host job, if it kept one.
func (s *step) progressDone() {
	if s.progress != nil {
		s.progress.done()
	}
}

// Step records where the session stands and writes the file when a minute has passed
// since the last write.
func (f *progressFile) Step(st job.Step) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if f.start.IsZero() {
		f.start = now
	}
	f.cur = results.Progress{RequestID: f.id, Phase: st.Phase, Done: st.Done, Planned: st.Planned, Model: st.Model, ETASecs: -1,
		Verdicts: slices.Clone(st.Verdicts[:min(len(st.Verdicts), results.ProgressVerdictsMax)])}
	switch {
	case st.ETA >= 0:
		f.cur.ETASecs = int64(st.ETA / time.Second)
	case st.Done > 0 && st.Planned > st.Done:
		// The time per model so far, times the models left.
		per := now.Sub(f.start) / time.Duration(st.Done)
		f.cur.ETASecs = int64(per * time.Duration(st.Planned-st.Done) / time.Second)
	}
	if !f.written.IsZero() && now.Sub(f.written) < results.ProgressEvery {
		return
	}
	f.write(now)
}

func (f *progressFile) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur.RequestID == "" {
		f.cur = results.Progress{RequestID: f.id, ETASecs: -1}
	}
	f.cur.Phase, f.cur.Model, f.cur.ETASecs = results.PhaseDone, "", 0
	if f.cur.Planned > 0 {
		f.cur.Done = f.cur.Planned
	}
	f.write(f.now())
}

// write writes the current progress; the caller holds f.mu.
func (f *progressFile) write(now time.Time) {
	if f.failed {
		return
	}
	f.cur.WrittenAt = now.UTC().Truncate(time.Second)
	if err := results.WriteProgress(f.dir, f.cur); err != nil {
		f.failed = true
		f.warn(err)
		return
	}
	f.written = now
}
