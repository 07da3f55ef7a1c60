package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// runningRequest accepts a pull request's /profile rocm as request 1 and starts its run
// (id runID): the status comment and the check run move to in progress. It returns
// the accepted request and the status comment's body as the server wrote it.
func runningRequest(t *testing.T, stub *fakegithub.Stub, r *rig, base string, commentID, runID int64) (accepted, string) {
	t.Helper()
	expectToken(t, stub)
	expectGate(t, stub, prRepo, "spxtr", "write", false)
	expectPull(t, stub)
	a := expectAccepted(t, stub, prRepo, prNum, true, commentID, 1, gatetest.PRSHA, map[string]any{"ref": "master"})
	if err := r.deliver("issue_comment", base+"1", prCommentEvent(t, commentID, "spxtr", "/profile rocm")); err != nil {
		t.Fatal(err)
	}
	r.waitDispatched(1)
	queued := "<!-- perfbot:status -->\n**/profile rocm**: queued. Request 1 on host gfx1151.\n\n<!-- perfbot:request 1 -->\n"
	expectStatusComment(t, stub, prRepo, a.statusID, queued, 2)
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/issues/comments/%d", prRepo, a.statusID),
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": a.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "**/profile rocm**: in progress."))
	stub.Expect("GET", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "queued", "conclusion": nil}))
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "in_progress", "conclusion": nil}))
	if err := r.deliver("workflow_run", base+"2", runEvent(t, prRepo, "requested", runID, 1, "queued", nil)); err != nil {
		t.Fatal(err)
	}
	var shown string
	for _, req := range stub.Requests() {
		if req.Method == "PATCH" && strings.HasSuffix(req.Path, fmt.Sprintf("/comments/%d", a.statusID)) {
			m, _ := req.JSON()
			shown, _ = m["body"].(string)
		}
	}
	if shown == "" {
		t.Fatal("the status comment was not moved to in progress")
	}
	return a, shown
}

// TestLiveRefreshKeepsPublishersEnd: the publish job writes its final status comment
// between the refresh's read and its write. The refresh reads the comment again right
// before writing, sees the publisher's end and writes nothing (the stub fails on any
// PATCH of the comment); the run then ends with success and the server leaves the
// publisher's comment and check run alone: no "failed", no confused reaction.
func TestLiveRefreshKeepsPublishersEnd(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	r := start(t, stub, &set)
	a, _ := runningRequest(t, stub, r, "25000000-0000-4000-8000-00000000000", 2501, 8501)

	// The refresh reads an older text (it wants to write), then the publisher's end.
	stale := "<!-- perfbot:status -->\n**/profile rocm**: queued. Request 1 on host gfx1151.\n\n<!-- perfbot:request 1 -->\n"
	published := "<!-- perfbot:status -->\n**/profile rocm**: done. 2 run(s) of gfx1151 at 6dcb09b5; ranked port order #2067.\n\n[pull request](https://github.com/kubernetes/test-infra/pull/1901)\n"
	expectStatusComment(t, stub, prRepo, a.statusID, stale, 1)
	expectStatusComment(t, stub, prRepo, a.statusID, published, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	server.Live(r.srv, ctx)
	// A later refresh sees the end at once.
	expectStatusComment(t, stub, prRepo, a.statusID, published, 1)
	server.Live(r.srv, ctx)

	// The run succeeds: the publisher's marks stay.
	stub.Expect("GET", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "completed", "conclusion": "success"}))
	expectStatusComment(t, stub, prRepo, a.statusID, published, 1)
	if err := r.deliver("workflow_run", "25000000-0000-4000-8000-000000000003", runEvent(t, prRepo, "completed", 8501, 1, "completed", "success")); err != nil {
		t.Fatal(err)
	}
}

// TestSucceededRunIsNeverFailed: the window GitHub leaves open (the publisher's end
// landed between the refresh's last read and its write, so the comment shows the
// run in progress when the run ends). The run concluded success, so the publish job
// published: the server writes "done" with the run's, the traces artifact's and the
// check run's links, not "failed", and reacts with nothing.
func TestSucceededRunIsNeverFailed(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	r := start(t, stub, &set)
	a, shown := runningRequest(t, stub, r, "26000000-0000-4000-8000-00000000000", 2601, 8601)
	run := runURL(prRepo, 8601)
	checkPage := "https://github.com/kubernetes/test-infra/runs/7001"

	stub.Expect("GET", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "completed", "conclusion": "success", "html_url": checkPage}))
	expectStatusComment(t, stub, prRepo, a.statusID, shown, 2) // read, then read again by the update
	expectArtifacts(t, stub, prRepo, 8601, "perfbot-traces-1")
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/issues/comments/%d", prRepo, a.statusID),
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": a.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "**/profile rocm**: done.", "the workflow run succeeded and its publish job published the results",
			"[workflow run]("+run+")", "[traces artifact]("+run+"/artifacts/8000)", "[check run]("+checkPage+")", "and the check run for the publisher's summary", "<!-- perfbot:request 1 -->"))
	if err := r.deliver("workflow_run", "26000000-0000-4000-8000-000000000003", runEvent(t, prRepo, "completed", 8601, 1, "completed", "success")); err != nil {
		t.Fatal(err)
	}
	for _, req := range stub.Requests() {
		if req.Method == "PATCH" && strings.Contains(req.Path, "/comments/") {
			if m, _ := req.JSON(); strings.Contains(fmt.Sprint(m["body"]), "failed") {
				t.Errorf("a succeeded run's status comment was written as failed: %v", m["body"])
			}
		}
	}
}
