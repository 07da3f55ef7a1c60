package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/queue"
)

// runningMarks are a running request's marks as the fake GitHub holds them: a status
// comment that shows it queued and a queued check run.
func runningMarks(t *testing.T) (*marks, *fakeGitHub, queue.Request) {
	t.Helper()
	f := newFakeGitHub()
	now := time.Date(2026, 12, 3, 18, 30, 0, 0, time.UTC)
	sc, _, err := f.UpsertComment(context.Background(), gh.Repo{}, 7, requestMarker(41), "<!-- perfbot:status -->\n**/profile rocm**: queued.\n")
	if err != nil {
		t.Fatal(err)
	}
	cr, _ := f.CreateCheckRun(context.Background(), gh.Repo{}, gh.CheckRunSpec{})
	r := queue.Request{ID: 1, Repo: "octo/engine", Installation: 1, Host: testHost, SHA: testSHA, Command: "/profile rocm", State: queue.Running,
		RunID: 8401, RunURL: "https://github.com/octo/engine/actions/runs/8401", StatusCommentID: sc.ID, CheckRunID: cr.ID, CommentID: 41, StartedAt: now.Add(-time.Minute)}
	return &marks{api: apiFor[markAPI](f), now: func() time.Time { return now }}, f, r
}

// A GitHub failure starting a running request's check run is returned, for the
// refresh to log and try again; a check run deleted meanwhile (404) is not a failure.
func TestShowRunningReturnsAFailedCheckRunStart(t *testing.T) {
	m, f, r := runningMarks(t)
	f.startErr = &gh.APIError{Op: "starting the check run", Status: 500}
	if err := m.showRunning(context.Background(), r, true); err == nil || !strings.Contains(err.Error(), "starting the check run") {
		t.Errorf("a failed start: %v, want it returned", err)
	}
	f.startErr = &gh.APIError{Op: "starting the check run", Status: 404}
	if err := m.showRunning(context.Background(), r, true); err != nil {
		t.Errorf("a check run deleted meanwhile: %v", err)
	}
}

// The end a succeeded run's publish job did not write: a GitHub failure writing it is
// returned; without a link to the check run (the publisher completed it, GitHub gave
// no page), the status names the run alone; a request without a run id lists no
// run's artifacts.
func TestFinishPublishedWrites(t *testing.T) {
	ctx := context.Background()
	m, f, r := runningMarks(t)
	r.State = queue.Done
	f.checkRuns[r.CheckRunID] = gh.CheckRun{ID: r.CheckRunID, Status: "completed", Conclusion: "success"}
	f.updateErr = &gh.APIError{Op: "editing the status comment", Status: 502}
	if err := m.finishPublished(ctx, f, gh.Repo{Owner: "octo", Name: "engine"}, r, r.RunURL); err == nil || !strings.Contains(err.Error(), "editing the status comment") {
		t.Errorf("a failed write: %v, want it returned", err)
	}
	f.updateErr, f.artifactLists = nil, 0
	r.RunID = 0
	if err := m.finishPublished(ctx, f, gh.Repo{Owner: "octo", Name: "engine"}, r, r.RunURL); err != nil {
		t.Fatal(err)
	}
	body := f.comments[r.StatusCommentID].Body
	if !strings.Contains(body, "published the results; see the run.") || strings.Contains(body, "check run") {
		t.Errorf("the status without a check run link:\n%s", body)
	}
	if f.artifactLists != 0 {
		t.Errorf("the artifacts of run 0 were listed %d time(s)", f.artifactLists)
	}
}

// The refresh of the running requests' status logs a warning when GitHub fails it,
// and nothing at that level when it works.
func TestLiveWarnsOnlyOnAFailedRefresh(t *testing.T) {
	ctx := context.Background()
	r := newDispatcherRig(t)
	log, lines := capture()
	r.dp.log = log
	req := r.started(t, 41)
	if ok, err := r.q.SetRun(ctx, req.ID, 8401, "https://github.com/octo/engine/actions/runs/8401", r.clk.now()); !ok || err != nil {
		t.Fatalf("the run was not recorded (%v, %v)", ok, err)
	}
	r.dp.live(ctx)
	wantLogged(t, lines, "WARN")
	// Five minutes on, the status has a new text to write, and GitHub fails the edit.
	r.clk.add(5 * time.Minute)
	r.gh.updateErr = &gh.APIError{Op: "editing the status comment", Status: 502}
	r.dp.live(ctx)
	wantLogged(t, lines, "WARN", "server: refreshing a running request's status failed")
}
