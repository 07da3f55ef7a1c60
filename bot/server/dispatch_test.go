package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/queue"
)

// dispatcherRig is the dispatcher alone: GitHub in memory, the queue on SQLite, the
// deliveries in a map, the clock set by the test.
type dispatcherRig struct {
	dp  *dispatcher
	gh  *fakeGitHub
	q   *queue.Queue
	clk *clock
	// deliveries are what the inbox holds, by id.
	deliveries fakeDeliveries
}

type fakeDeliveries map[string]inbox.Delivery

func (f fakeDeliveries) Get(_ context.Context, id string) (inbox.Delivery, bool, error) {
	d, ok := f[id]
	return d, ok, nil
}

const confirmAfter = 30 * time.Second

func newDispatcherRig(t *testing.T) *dispatcherRig {
	t.Helper()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	q, _ := openQueue(t, clk.now)
	f := newFakeGitHub()
	m := newMetrics()
	r := &dispatcherRig{gh: f, q: q, clk: clk, deliveries: fakeDeliveries{}}
	r.dp = &dispatcher{
		log: quiet(), now: clk.now, hosts: []string{testHost}, confirmAfter: confirmAfter,
		queue: q, deliveries: r.deliveries, api: apiFor[runAPI](f), marks: &marks{queue: q, api: apiFor[markAPI](f), now: clk.now},
		dispatches: m.dispatches, finished: m.runs, latency: m.dispatchLatency,
		hostMu: map[string]*sync.Mutex{},
	}
	r.dp.loops = newHostLoops(r.dp.pass) // never started: the tests run passes themselves
	return r
}

// queuedWithStatus queues a request of comment commentID with a status comment GitHub
// holds.
func (r *dispatcherRig) queuedWithStatus(t *testing.T, commentID int64) queue.Request {
	t.Helper()
	sc, _, _ := r.gh.UpsertComment(context.Background(), gh.Repo{}, 7, requestMarker(commentID), "**Profile**: queued.")
	return queued(t, r.q, commentID, "alice", sc.ID)
}

// started queues a request and dispatches it.
func (r *dispatcherRig) started(t *testing.T, commentID int64) queue.Request {
	t.Helper()
	req := r.queuedWithStatus(t, commentID)
	r.dp.pass(context.Background(), testHost, false)
	return req
}

// lost queues a request whose dispatch answer is lost (GitHub answers 502).
func (r *dispatcherRig) lost(t *testing.T) queue.Request {
	t.Helper()
	r.gh.dispatchErr = &gh.APIError{Op: "dispatching perfbot.yml", Status: 502}
	req := r.started(t, 41)
	if got := state(t, r.q, req.ID); got.State != queue.Dispatching {
		t.Fatalf("after a lost answer request %d is %s, want dispatching", req.ID, got.State)
	}
	return req
}

// runEnded delivers the workflow_run completion of a request's run 9001 of the
// workflow file path.
func (r *dispatcherRig) runEnded(t *testing.T, req queue.Request, path, conclusion string) {
	t.Helper()
	d := inbox.Delivery{ID: "run-1", Event: "workflow_run", Payload: runPayload(req.ID, 9001, path, conclusion, r.clk.now())}
	if err := r.dp.onWorkflowRun(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

func (r *dispatcherRig) dispatched(t *testing.T) []string {
	t.Helper()
	r.gh.mu.Lock()
	defer r.gh.mu.Unlock()
	var ids []string
	for _, in := range r.gh.dispatches {
		ids = append(ids, fmt.Sprint(in["request_id"]))
	}
	return ids
}

func TestPassDispatchesTheOldestQueuedRequest(t *testing.T) {
	r := newDispatcherRig(t)
	first := r.queuedWithStatus(t, 41)
	second := r.queuedWithStatus(t, 42)
	r.clk.add(3 * time.Second)
	r.dp.pass(context.Background(), testHost, false)
	if got := r.dispatched(t); len(got) != 1 || got[0] != "1" {
		t.Fatalf("dispatched requests %q, want [1]: one run at a time per host", got)
	}
	in := r.gh.dispatches[0]
	for k, want := range map[string]string{"job": "profile", "sha": testSHA, "issue": "7", "trigger_comment_id": "41",
		"status_comment_id": fmt.Sprint(first.StatusCommentID), "check_run_id": "0", "epic": "0"} {
		if in[k] != want {
			t.Errorf("input %s = %v, want %s", k, in[k], want)
		}
	}
	if got := state(t, r.q, first.ID); got.State != queue.Dispatched {
		t.Errorf("request 1 is %s, want dispatched", got.State)
	}
	if got := state(t, r.q, second.ID); got.State != queue.Queued {
		t.Errorf("request 2 is %s, want queued behind request 1", got.State)
	}
	if body := r.gh.comment(t, second.StatusCommentID); !strings.Contains(body, "Request 2 on host gfx1151, commit 01234567 (the default branch). Next in the queue, behind a running request") {
		t.Errorf("the status comment of request 2 was not refreshed with its new place:\n%s", body)
	}
	if n := counted(t, r.dp.dispatches, map[string]string{"host": testHost, "result": "sent"}); n != 1 {
		t.Errorf("perfbot_dispatches_total{result=sent} = %v, want 1", n)
	}
	r.dp.pass(context.Background(), testHost, false)
	if got := r.dispatched(t); len(got) != 1 {
		t.Errorf("a second pass while request 1 runs dispatched %q", got)
	}
}

func TestRefusedDispatchFailsTheRequestAndDispatchesTheNext(t *testing.T) {
	r := newDispatcherRig(t)
	first := r.queuedWithStatus(t, 41)
	r.queuedWithStatus(t, 42)
	r.gh.dispatchErr = &gh.APIError{Op: "dispatching perfbot.yml", Status: 422, Message: "Unexpected inputs provided"}
	r.dp.pass(context.Background(), testHost, false)
	got := state(t, r.q, first.ID)
	if got.State != queue.Failed || !strings.Contains(got.Error, "GitHub refused to start workflow perfbot.yml for request 1") {
		t.Errorf("request 1 is %s (%q), want failed with GitHub's refusal", got.State, got.Error)
	}
	wantIn(t, "the status comment", r.gh.comment(t, first.StatusCommentID), "failed.", "Unexpected inputs provided")
	if len(r.gh.reactions) != 1 || r.gh.reactions[0] != "41:confused" {
		t.Errorf("reactions %q, want confused on comment 41", r.gh.reactions)
	}
	if ids := r.dispatched(t); len(ids) != 1 || ids[0] != "2" {
		t.Errorf("dispatched %q, want request 2 in the same pass: the host is free", ids)
	}
}

func TestLostDispatchIsFoundInsteadOfSentAgain(t *testing.T) {
	r := newDispatcherRig(t)
	req := r.lost(t)
	ctx := context.Background()
	r.dp.pass(ctx, testHost, true)
	if len(r.gh.dispatches) != 0 {
		t.Fatal("the dispatch was sent again before dispatch.confirm_secs passed")
	}
	r.gh.runs = []gh.WorkflowRun{{ID: 9001, DisplayTitle: RunName(req.ID) + ": profile", Status: "in_progress", URL: "https://github.com/octo/engine/actions/runs/9001"}}
	r.clk.add(confirmAfter + time.Second)
	r.dp.pass(ctx, testHost, false)
	if len(r.gh.dispatches) != 0 {
		t.Errorf("dispatched again although the run exists: %v", r.gh.dispatches)
	}
	if got := state(t, r.q, req.ID); got.State != queue.Running || got.RunID != 9001 {
		t.Errorf("request 1 is %s with run %d, want running with the run found", got.State, got.RunID)
	}
}

func TestLostDispatchWithoutARunIsSentAgain(t *testing.T) {
	r := newDispatcherRig(t)
	req := r.lost(t)
	r.clk.add(confirmAfter + time.Second)
	r.dp.pass(context.Background(), testHost, false)
	if ids := r.dispatched(t); len(ids) != 1 || ids[0] != "1" {
		t.Errorf("dispatched %q, want request 1 sent again once no run was found", ids)
	}
	if got := state(t, r.q, req.ID); got.State != queue.Dispatched || got.Tries != 2 {
		t.Errorf("request 1 is %s after %d tries, want dispatched after 2", got.State, got.Tries)
	}
}

// runPayload is a workflow_run delivery of the run of a request.
func runPayload(requestID, runID int64, path, conclusion string, created time.Time) []byte {
	return fmt.Appendf(nil, `{"action":"completed","repository":{"full_name":%q},"installation":{"id":1},
		"workflow_run":{"id":%d,"display_title":"perfbot request %d: profile at %s","event":"workflow_dispatch","path":%q,
		"status":"completed","conclusion":%q,"html_url":"https://github.com/octo/engine/actions/runs/%d",
		"created_at":%q,"run_started_at":%q,"updated_at":%q}}`,
		testRepo, runID, requestID, testSHA, path, conclusion, runID,
		created.Format(time.RFC3339), created.Format(time.RFC3339), created.Add(10*time.Minute).Format(time.RFC3339))
}

func TestRunThatEndsWithoutPublishingFailsTheRequest(t *testing.T) {
	r := newDispatcherRig(t)
	req := r.started(t, 41)
	r.runEnded(t, req, ".github/workflows/perfbot.yml", "failure")
	got := state(t, r.q, req.ID)
	if got.State != queue.Failed || got.RunID != 9001 || got.Conclusion != "failure" {
		t.Errorf("request 1 is %s (run %d, %q), want failed with run 9001's conclusion", got.State, got.RunID, got.Conclusion)
	}
	wantIn(t, "the status comment", r.gh.comment(t, req.StatusCommentID),
		"failed.", "the workflow run ended (failure) without publishing its results", "https://github.com/octo/engine/actions/runs/9001")
	if len(r.gh.reactions) != 1 || r.gh.reactions[0] != "41:confused" {
		t.Errorf("reactions %q, want confused on comment 41", r.gh.reactions)
	}
	times, err := r.q.RunTimes(context.Background(), testHost, 5)
	if err != nil || len(times) != 1 || times[0] != 10*time.Minute {
		t.Errorf("run times %v (%v), want the run's own 10 min", times, err)
	}
}

func TestRunOfAnotherWorkflowFileEndsNothing(t *testing.T) {
	r := newDispatcherRig(t)
	req := r.started(t, 41)
	r.runEnded(t, req, ".github/workflows/other.yml", "success")
	if got := state(t, r.q, req.ID); got.State != queue.Dispatched || got.RunID != 0 {
		t.Errorf("a run of other.yml titled after request 1 made it %s (run %d)", got.State, got.RunID)
	}
}

func TestCheckEndsARunWhoseCompletionWasMissed(t *testing.T) {
	r := newDispatcherRig(t)
	req := r.started(t, 41)
	ctx := context.Background()
	next := r.queuedWithStatus(t, 42)
	r.gh.runs = []gh.WorkflowRun{{ID: 9001, DisplayTitle: RunName(req.ID), Status: "completed", Conclusion: "success",
		URL: "https://github.com/octo/engine/actions/runs/9001"}}
	// The publisher finished the status comment: it is left alone.
	if _, _, err := r.gh.UpdateComment(ctx, gh.Repo{}, req.StatusCommentID, "**Profile**: done.\n\nresults"); err != nil {
		t.Fatal(err)
	}
	r.dp.pass(ctx, testHost, false)
	if got := state(t, r.q, req.ID); got.State != queue.Dispatched {
		t.Fatalf("a pass without reconcile asked GitHub about the run: request 1 is %s", got.State)
	}
	r.clk.add(confirmAfter + time.Second)
	r.dp.pass(ctx, testHost, true)
	if got := state(t, r.q, req.ID); got.State != queue.Done || got.RunID != 9001 {
		t.Errorf("request 1 is %s (run %d), want done with run 9001", got.State, got.RunID)
	}
	if body := r.gh.comment(t, req.StatusCommentID); body != "**Profile**: done.\n\nresults" {
		t.Errorf("the published status comment was rewritten:\n%s", body)
	}
	if len(r.gh.reactions) != 0 {
		t.Errorf("a published run got reactions %q", r.gh.reactions)
	}
	if ids := r.dispatched(t); len(ids) != 2 || ids[1] != fmt.Sprint(next.ID) {
		t.Errorf("dispatched %q, want request 2 next once the host is free", ids)
	}
}

func TestCheckDropsARequestThatCouldNotBeQueued(t *testing.T) {
	r := newDispatcherRig(t)
	ctx := context.Background()
	sc, _, _ := r.gh.UpsertComment(ctx, gh.Repo{}, 7, requestMarker(1), "**Profile**: queued.")
	req, _, err := r.q.Add(ctx, queue.Request{Delivery: "d-41", Repo: testRepo, Installation: 1, Issue: 7, CommentID: 41,
		Requester: "alice", Kind: "profile", Command: "/profile rocm", SHA: testSHA, Host: testHost, Workflow: "perfbot.yml", Ref: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.q.SetStatusComment(ctx, req.ID, sc.ID); err != nil {
		t.Fatal(err)
	}
	r.deliveries["d-41"] = inbox.Delivery{ID: "d-41", State: inbox.Received}
	r.dp.check(ctx)
	if got := state(t, r.q, req.ID); got.State != queue.Accepting {
		t.Fatalf("a request whose delivery is still being retried was dropped (%s)", got.State)
	}
	r.deliveries["d-41"] = inbox.Delivery{ID: "d-41", State: inbox.Failed, Error: "GitHub answered 502"}
	r.dp.check(ctx)
	got := state(t, r.q, req.ID)
	if got.State != queue.Failed || !strings.Contains(got.Error, "Request 1 could not be queued: GitHub answered 502. Post the command again.") {
		t.Errorf("request 1 is %s (%q), want failed saying why", got.State, got.Error)
	}
	wantIn(t, "the status comment", r.gh.comment(t, sc.ID), "failed.", "could not be queued")
}
