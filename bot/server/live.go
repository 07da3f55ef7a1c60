package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/results"
)

// The live status of a running request (docs/server.md §5): when its workflow run
// starts, the status comment and the check run move from queued to in progress with
// the run's link; while it runs, the status comment shows the time since it started
// and, when the host's settings name a progress folder, what the GPU job's progress
// file says (models done of planned, the current model, the time left), refreshed at
// most once a minute.

// liveEvery is how often the status comments of running requests are refreshed.
const liveEvery = results.ProgressEvery

// progressReader reads the progress files of running requests, each at most once per
// every; in between it answers what it read last.
type progressReader struct {
	dirs  map[string]string // host label -> progress folder
	every time.Duration
	now   func() time.Time
	log   *slog.Logger

	mu   sync.Mutex
	seen map[int64]progressSeen
}

type progressSeen struct {
	at time.Time
	p  results.Progress
	ok bool
}

func newProgressReader(hosts []Host, now func() time.Time, log *slog.Logger) *progressReader {
	pr := &progressReader{dirs: map[string]string{}, every: results.ProgressEvery, now: now, log: log, seen: map[int64]progressSeen{}}
	for _, h := range hosts {
		if h.ProgressDir != "" {
			pr.dirs[h.Label] = h.ProgressDir
		}
	}
	return pr
}

// read returns the progress of a running request, or false when its host has no
// progress folder, the file is not there (yet), or it cannot be trusted: not one the
// job of this run wrote (written before the run started), or not a valid file (logged).
func (pr *progressReader) read(r queue.Request) (results.Progress, bool) {
	if pr == nil || pr.dirs[r.Host] == "" {
		return results.Progress{}, false
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	now := pr.now()
	if s, ok := pr.seen[r.ID]; ok && now.Sub(s.at) < pr.every {
		return s.p, s.ok
	}
	start := time.Now()
	p, err := results.ReadProgress(pr.dirs[r.Host], strconv.FormatInt(r.ID, 10))
	ok := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		pr.log.Warn("server: the progress file could not be read", logkey.Request, r.ID, logkey.Host, r.Host, logkey.Error, err,
			"read_ms", time.Since(start).Milliseconds())
	case ok && !r.StartedAt.IsZero() && p.WrittenAt.Before(r.StartedAt.Add(-2*time.Minute)):
		// A file left by an earlier request of the same id (a database started anew).
		ok = false
	}
	if !ok {
		p = results.Progress{}
	}
	if errors.Is(err, fs.ErrNotExist) {
		// Not written yet: looked for again next time (a failed lookup reads nothing).
		delete(pr.seen, r.ID)
		return p, false
	}
	pr.seen[r.ID] = progressSeen{at: now, p: p, ok: ok}
	return p, ok
}

// forget drops what was read for a request that ended.
func (pr *progressReader) forget(id int64) {
	if pr == nil {
		return
	}
	pr.mu.Lock()
	delete(pr.seen, id)
	pr.mu.Unlock()
}

// runningStatus is the status comment's state and text of a running request.
func runningStatus(r queue.Request, now time.Time, p results.Progress, hasProgress bool) report.StatusData {
	d := report.StatusData{State: "started", Command: r.Command}
	head := requestHead(r)
	if !hasProgress || p.Phase != results.PhaseDone {
		started := r.StartedAt
		if started.IsZero() {
			started = r.DispatchedAt
		}
		if !started.IsZero() {
			head += ", running for " + roundDuration(max(now.Sub(started), 0))
		}
	}
	d.Detail = head + "."
	if !hasProgress {
		return d
	}
	if p.Phase == results.PhaseDone {
		d.Detail += " The GPU job has finished; the results are published next."
		return d
	}
	// A compare counts runs (a bench compare's, or one side's profile runs) and stays
	// "in progress": "running model k/N" would not say which side.
	compare := r.Base != ""
	var parts []string
	if p.Planned > 0 {
		unit := "models"
		if compare {
			unit = "runs"
		}
		parts = append(parts, fmt.Sprintf("%d of %d %s done", p.Done, p.Planned, unit))
		if !compare && (p.Phase == results.PhaseProfile || p.Phase == results.PhaseBench) {
			d.State, d.Model, d.Models = "running", min(p.Done+1, p.Planned), p.Planned
		}
	} else if p.Phase == results.PhaseBuild {
		parts = append(parts, "building")
	}
	if p.Model != "" {
		parts = append(parts, "now "+p.Model)
	}
	if eta := p.ETA(); eta >= 0 {
		parts = append(parts, "about "+roundDuration(eta)+" left")
	} else {
		parts = append(parts, "no estimate of the time left yet")
	}
	d.Detail += " " + strings.ToUpper(parts[0][:1]) + parts[0][1:]
	if len(parts) > 1 {
		d.Detail += "; " + strings.Join(parts[1:], "; ")
	}
	d.Detail += fmt.Sprintf(" (progress as of %s UTC).", p.WrittenAt.UTC().Format("15:04"))
	if compare && len(p.Verdicts) > 0 {
		// Cleaned and clipped by results.ReadProgress; the template escapes them.
		d.Detail += " So far: " + strings.Join(p.Verdicts, "; ") + "."
	}
	return d
}

// showRunning writes a running request's status comment (and, with check, moves its
// check run from queued to in progress with the run's link). It leaves alone what is
// finished (by the publisher or the server), what is being published, what was
// deleted, and a comment that already says the same: processing a delivery again
// writes nothing new.
func (m *marks) showRunning(ctx context.Context, r queue.Request, check bool) error {
	if r.RunURL == "" {
		return nil
	}
	c, repo, err := m.client(r)
	if err != nil {
		return err
	}
	p, ok := m.progress.read(r)
	data := runningStatus(r, m.now(), p, ok)
	data.Links = []report.Link{{Text: "workflow run", URL: r.RunURL}}
	cm, ok, err := statusComment(ctx, c, repo, r)
	if err != nil {
		return err
	}
	if ok && !statusEnded(cm.Body) {
		body, err := renderStatus(r, data)
		if err != nil {
			return err
		}
		if strings.ReplaceAll(cm.Body, "\r\n", "\n") != body {
			// Read again right before the write: the publish job may have written
			// the end meanwhile, which a refresh must never replace.
			if _, _, err := c.UpdateCommentUnless(ctx, repo, r.StatusCommentID, body, statusEnded); err != nil && !errors.Is(err, gh.ErrNotFound) {
				return err
			}
		}
	}
	if !check {
		return nil
	}
	cr, ok, err := checkRun(ctx, c, repo, r)
	if err != nil {
		return err
	}
	if ok && cr.Status == "queued" {
		summary := fmt.Sprintf("Request %d runs on host %s at commit %s in workflow run %s.", r.ID, r.Host, strs.ShortSHA(r.SHA), r.RunURL)
		err := c.StartCheckRun(ctx, repo, r.CheckRunID, gh.CheckProgress{Title: "Running in workflow run " + runNumber(r.RunURL), Summary: summary, DetailsURL: r.RunURL})
		if err != nil && !errors.Is(err, gh.ErrNotFound) {
			return err
		}
	}
	return nil
}

// runNumber is the last path element of a run's URL (its id), or the URL.
func runNumber(url string) string {
	if i := strings.LastIndexByte(strings.TrimRight(url, "/"), '/'); i >= 0 {
		return strings.TrimRight(url, "/")[i+1:]
	}
	return url
}

// renderStatus renders a status comment with the request's marker.
func renderStatus(r queue.Request, d report.StatusData) (string, error) {
	body, err := report.Render(report.Status, d)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(body, "\n") + "\n\n" + requestMarker(r.ID) + "\n", nil
}

// statusEnded reports whether a status comment is past what a refresh may write: the
// publisher (or the server) finished it, or the publisher is at work.
func statusEnded(body string) bool {
	return statusFinal(body) || statusPublishing(body)
}

// finishPublished ends the marks of a request whose run succeeded: its publish job
// wrote the status comment and the check run, which are left alone. One that does
// not show the end (a refresh's write landed over the publisher's, the window GitHub's
// unconditional edits leave, docs/server.md) says the run published, with the run's,
// the traces artifact's and the check run's links; it never says failed.
func (m *marks) finishPublished(ctx context.Context, c markAPI, repo gh.Repo, r queue.Request, runURL string) error {
	link := runLinks(ctx, c, repo, r, runURL)
	var checkLink []report.Link
	cr, ok, err := checkRun(ctx, c, repo, r)
	switch {
	case err != nil:
		return err
	case !ok:
	case cr.Status != "completed":
		summary := withLinks(fmt.Sprintf("Request %d: the workflow run succeeded; its publish job did not complete this check run.", r.ID), link())
		if err := c.CompleteCheckRun(ctx, repo, r.CheckRunID, gh.CheckOutput{Conclusion: "success", Title: "The run succeeded", Summary: summary, DetailsURL: runURL}); err != nil && !errors.Is(err, gh.ErrNotFound) {
			return err
		}
	case cr.URL != "":
		checkLink = []report.Link{{Text: "check run", URL: cr.URL}}
	}
	cm, ok, err := statusComment(ctx, c, repo, r)
	if err != nil || !ok || statusFinal(cm.Body) {
		return err
	}
	why := fmt.Sprintf("Request %d: the workflow run succeeded and its publish job published the results; see the run", r.ID)
	if len(checkLink) > 0 {
		why += ", and the check run for the publisher's summary"
	}
	why += "."
	body, err := statusBody(r, "done", why, append(link(), checkLink...))
	if err != nil {
		return err
	}
	if _, _, err := c.UpdateCommentUnless(ctx, repo, r.StatusCommentID, body, statusFinal); err != nil && !errors.Is(err, gh.ErrNotFound) {
		return err
	}
	return nil
}

// statusPublishing reports whether a status comment says the publisher is at work.
func statusPublishing(body string) bool {
	return strings.Contains(body, "**: publishing the results.")
}

// tracesArtifact is the name the workflows give a request's traces artifact
// (examples/workflows: perfbot-traces-REQUEST_ID).
func tracesArtifact(id int64) string { return fmt.Sprintf("perfbot-traces-%d", id) }

// artifactLink is the link to a request's traces artifact on its run's page, when the
// run uploaded one. Best effort: a listing that fails leaves the link out.
func artifactLink(ctx context.Context, c markAPI, repo gh.Repo, r queue.Request, runURL string) (report.Link, bool) {
	if r.RunID <= 0 || runURL == "" {
		return report.Link{}, false
	}
	list, err := c.RunArtifacts(ctx, repo, r.RunID)
	if err != nil {
		return report.Link{}, false
	}
	a, ok := gh.FindArtifact(list, "", tracesArtifact(r.ID))
	if !ok {
		return report.Link{}, false
	}
	return report.Link{Text: "traces artifact", URL: gh.ArtifactURL(runURL, a.ID)}, true
}

// live refreshes the status comment of every running request (at most one per host),
// under its host's lock so a run's end is never overwritten. Errors are logged; the
// next turn tries again.
func (dp *dispatcher) live(ctx context.Context) {
	running, err := dp.queue.List(ctx, queue.Filter{States: []queue.State{queue.Running}})
	if err != nil {
		dp.log.Warn("server: listing the running requests failed", logkey.Error, err)
		return
	}
	for _, r := range running {
		start := time.Now()
		unlock := dp.lock(r.Host)
		cur, ok, err := dp.queue.Get(ctx, r.ID)
		if err == nil && ok && cur.State == queue.Running {
			err = dp.marks.showRunning(ctx, cur, false)
		}
		unlock()
		if err != nil && ctx.Err() == nil {
			dp.log.Warn("server: refreshing a running request's status failed", logkey.Request, r.ID, logkey.Host, r.Host, logkey.Error, err,
				"took_ms", time.Since(start).Milliseconds())
		}
	}
}
