package server_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

const (
	issueRepo = "Codertocat/Hello-World"
	issueNum  = 1
	prRepo    = "kubernetes/test-infra"
	prNum     = 947
)

func commentEvent(t testing.TB, commentID int64, user, body string) []byte {
	t.Helper()
	return edit(t, payload(t, "github", "webhooks", "issue_comment.created.json"), map[string]any{
		"comment.id": commentID, "comment.body": body, "comment.user.login": user, "sender.login": user,
	})
}

func prCommentEvent(t testing.TB, commentID int64, user, body string) []byte {
	t.Helper()
	return edit(t, payload(t, "github", "webhooks-pr-comments", "prow.issue_comment.created.pr.lgtm.json"), map[string]any{
		"comment.id": commentID, "comment.body": body, "comment.user.login": user, "sender.login": user,
	})
}

// runEvent is a real workflow_run payload for the run of a request.
func runEvent(t testing.TB, repo, action string, runID, requestID int64, status string, conclusion any) []byte {
	t.Helper()
	return edit(t, payload(t, "github", "webhooks", "workflow_run.completed.json"), map[string]any{
		"action": action, "repository.full_name": repo,
		"workflow_run.id": runID, "workflow_run.event": "workflow_dispatch",
		"workflow_run.path":          ".github/workflows/" + workflow,
		"workflow_run.display_title": fmt.Sprintf("perfbot request %d: profile", requestID),
		"workflow_run.status":        status, "workflow_run.conclusion": conclusion,
		"workflow_run.created_at":     time.Now().UTC().Format(time.RFC3339),
		"workflow_run.run_started_at": time.Now().UTC().Format(time.RFC3339),
		"workflow_run.html_url":       runURL(repo, runID),
	})
}

func runURL(repo string, runID int64) string {
	return fmt.Sprintf("https://github.com/%s/actions/runs/%d", repo, runID)
}

// expectGate declares what the gate asks for one command: the config, the
// commenter's permission and, for a run on an issue, the default branch's head.
func expectGate(t testing.TB, s *fakegithub.Stub, repo, user, perm string, head bool) {
	t.Helper()
	expectGateOn(t, s, repo, gatetest.DefaultBranch, user, perm, head)
}

// expectGateOn is expectGate for a repository whose default branch is branch.
func expectGateOn(t testing.TB, s *fakegithub.Stub, repo, branch, user, perm string, head bool) {
	t.Helper()
	s.Expect("GET", "/repos/"+repo+"/contents/.github/perfbot.yml?ref="+branch, s.Example(200, "content-file-response-if-content-is-a-file", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(gatetest.Config)), "encoding": "base64",
		"size": len(gatetest.Config), "name": "perfbot.yml", "path": ".github/perfbot.yml", "type": "file",
	}))
	s.Expect("GET", "/repos/"+repo+"/collaborators/"+user+"/permission",
		s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", map[string]any{"permission": perm, "role_name": perm}))
	if head {
		s.Expect("GET", "/repos/"+repo+"/git/ref/heads/"+branch,
			s.Example(200, "git-ref", map[string]any{"ref": "refs/heads/" + branch, "object.sha": gatetest.MasterSHA}))
	}
}

// expectStatusComment declares reads of a status comment with the given body.
func expectStatusComment(t testing.TB, s *fakegithub.Stub, repo string, id int64, body string, times int) {
	t.Helper()
	s.Expect("GET", fmt.Sprintf("/repos/%s/issues/comments/%d", repo, id), fakegithub.JSONFileWith(200, example(t, "issue-comment"),
		map[string]any{"id": id, "body": body, "user.login": appSlug + "[bot]"})).Times(times)
}

// TestQueueAndDispatch follows two requests on one host: the first is dispatched at
// once with its pinned SHA, the second waits behind it; a duplicate delivery changes
// nothing; the first run ends without publishing, so the server finishes its status
// comment as failed with the run's link and dispatches the second; the requester
// cancels the second, another writer may not, and the cancel reaches its run.
func TestQueueAndDispatch(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	r := start(t, stub, nil)
	expectToken(t, stub)
	const (
		c1, c2, c3, c4, c5 = 1001, 1002, 1003, 1004, 1005
		d1                 = "11111111-0000-4000-8000-000000000001"
	)

	expectGate(t, stub, issueRepo, "Codertocat", "write", true)
	a1 := expectAccepted(t, stub, issueRepo, issueNum, false, c1, 1, gatetest.MasterSHA, map[string]any{"ref": "master", "inputs.job": "profile"})
	if err := r.deliver("issue_comment", d1, commentEvent(t, c1, "Codertocat", "/profile rocm")); err != nil {
		t.Fatal(err)
	}
	r.waitDispatched(1)
	// The same delivery again (a redelivery, or GitHub's duplicate): 200, no new call.
	if code, msg := r.post("issue_comment", d1, commentEvent(t, c1, "Codertocat", "/profile rocm")); code != http.StatusOK || !strings.HasPrefix(msg, "duplicate") {
		t.Fatalf("duplicate: %d %q, want 200 duplicate", code, msg)
	}

	// A second request waits: no dispatch while the host has a run.
	expectGate(t, stub, issueRepo, "Codertocat", "write", true)
	a2 := expectAccepted(t, stub, issueRepo, issueNum, false, c2, 2, gatetest.MasterSHA, nil)
	if err := r.deliver("issue_comment", "11111111-0000-4000-8000-000000000002", commentEvent(t, c2, "Codertocat", "/profile rocm models=qwen3")); err != nil {
		t.Fatal(err)
	}

	// /perfbot status lists both.
	expectGate(t, stub, issueRepo, "Codertocat", "write", false)
	expectReply(t, stub, issueRepo, issueNum, c3, "| 1 | `/profile rocm` | `Codertocat` | `gfx1151` | dispatched |", "| 2 | `/profile rocm models=qwen3` | `Codertocat` | `gfx1151` | queued | Request 2 on host gfx1151")
	if err := r.deliver("issue_comment", "11111111-0000-4000-8000-000000000003", commentEvent(t, c3, "Codertocat", "/perfbot status")); err != nil {
		t.Fatal(err)
	}

	// The first run starts (its status comment moves to in progress with the run's
	// link), then fails before publishing: its status comment still shows the queue,
	// so the server ends it with the run's link, reacts confused and dispatches the
	// second request.
	expectStatusComment(t, stub, issueRepo, a1.statusID, "<!-- perfbot:status -->\n**/profile rocm**: queued. Request 1 on host gfx1151.\n\n<!-- perfbot:request 1 -->\n", 2)
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/issues/comments/%d", issueRepo, a1.statusID),
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": a1.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "**/profile rocm**: in progress.", runURL(issueRepo, 7001)))
	if err := r.deliver("workflow_run", "11111111-0000-4000-8000-000000000010", runEvent(t, issueRepo, "in_progress", 7001, 1, "in_progress", nil)); err != nil {
		t.Fatal(err)
	}
	expectStatusComment(t, stub, issueRepo, a1.statusID, "<!-- perfbot:status -->\n**/profile rocm**: queued. Request 1 on host gfx1151.\n\n<!-- perfbot:request 1 -->\n", 2)
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/issues/comments/%d", issueRepo, a1.statusID),
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": a1.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "**/profile rocm**: failed.", "without publishing", runURL(issueRepo, 7001)))
	expectArtifacts(t, stub, issueRepo, 7001)
	stub.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", issueRepo, c1), fakegithub.JSONFile(201, example(t, "reaction"))).
		JSONBody(map[string]any{"content": "confused"})
	stub.Expect("POST", fmt.Sprintf("/repos/%s/actions/workflows/%s/dispatches", issueRepo, workflow), fakegithub.Status(204)).
		JSONBody(map[string]any{"inputs.request_id": "2", "inputs.models": "qwen3", "inputs.sha": gatetest.MasterSHA, "inputs.status_comment_id": fmt.Sprint(a2.statusID)})
	if err := r.deliver("workflow_run", "11111111-0000-4000-8000-000000000011", runEvent(t, issueRepo, "completed", 7001, 1, "completed", "failure")); err != nil {
		t.Fatal(err)
	}
	r.waitDispatched(2)

	// Another writer may not cancel it; the requester may, before its run is known,
	// and the run is cancelled when it shows up.
	expectGate(t, stub, issueRepo, "octocat", "write", false)
	expectReply(t, stub, issueRepo, issueNum, c4, "Request 2 was made by `Codertocat`; only they")
	if err := r.deliver("issue_comment", "11111111-0000-4000-8000-000000000004", commentEvent(t, c4, "octocat", "/perfbot cancel 2")); err != nil {
		t.Fatal(err)
	}
	expectGate(t, stub, issueRepo, "Codertocat", "write", false)
	expectReply(t, stub, issueRepo, issueNum, c5, "Request 2 was dispatched; its run is cancelled as soon as GitHub lists it")
	if err := r.deliver("issue_comment", "11111111-0000-4000-8000-000000000005", commentEvent(t, c5, "Codertocat", "/perfbot cancel")); err != nil {
		t.Fatal(err)
	}
	stub.Expect("POST", fmt.Sprintf("/repos/%s/actions/runs/7002/cancel", issueRepo), fakegithub.Status(202).Unchecked())
	if err := r.deliver("workflow_run", "11111111-0000-4000-8000-000000000012", runEvent(t, issueRepo, "requested", 7002, 2, "queued", nil)); err != nil {
		t.Fatal(err)
	}
	expectStatusComment(t, stub, issueRepo, a2.statusID, "<!-- perfbot:status -->\n**/profile rocm models=qwen3**: queued. Request 2.\n\n<!-- perfbot:request 2 -->\n", 2)
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/issues/comments/%d", issueRepo, a2.statusID),
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": a2.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "cancelled.", "cancelled by Codertocat while it ran", runURL(issueRepo, 7002)))
	expectArtifacts(t, stub, issueRepo, 7002)
	if err := r.deliver("workflow_run", "11111111-0000-4000-8000-000000000013", runEvent(t, issueRepo, "completed", 7002, 2, "completed", "cancelled")); err != nil {
		t.Fatal(err)
	}

	// The metrics saw it all.
	r.wantMetrics(
		`perfbot_webhook_duplicates_total 1`,
		`perfbot_runs_finished_total{host="gfx1151",state="failed"} 1`,
		`perfbot_runs_finished_total{host="gfx1151",state="cancelled"} 1`,
		`perfbot_dispatches_total{host="gfx1151",result="sent"} 2`,
		`perfbot_queue_depth{host="gfx1151",state="queued"} 0`,
		`perfbot_queue_depth{host="gfx1151",state="active"} 0`,
		`perfbot_dispatch_latency_seconds_count{host="gfx1151"} 2`,
		`perfbot_commands_total{outcome="accepted",reason=""} 5`,
	)
}

// TestPublishedRunIsLeftAlone: a PR request whose run published (the check run is
// completed, the status comment says done) gets no further writes when its run ends.
func TestPublishedRunIsLeftAlone(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	r := start(t, stub, nil)
	expectToken(t, stub)
	expectGate(t, stub, prRepo, "spxtr", "write", false)
	stub.Expect("GET", fmt.Sprintf("/repos/%s/pulls/%d", prRepo, prNum), stub.Example(200, "pull-request", map[string]any{
		"number": prNum, "state": "open", "head.sha": gatetest.PRSHA, "head.ref": "topic",
		"head.repo.id": 1296269, "head.repo.full_name": prRepo, "head.repo.owner.login": "kubernetes",
		"base.repo.id": 1296269, "base.repo.full_name": prRepo,
	}))
	a := expectAccepted(t, stub, prRepo, prNum, true, 2001, 1, gatetest.PRSHA, map[string]any{"ref": "master"})
	if err := r.deliver("issue_comment", "22222222-0000-4000-8000-000000000001", prCommentEvent(t, 2001, "spxtr", "/profile rocm")); err != nil {
		t.Fatal(err)
	}
	r.waitDispatched(1)
	expectStatusComment(t, stub, prRepo, a.statusID, "<!-- perfbot:status -->\n**/profile rocm**: done. 2 run(s) of gfx1151 at 6dcb09b5.\n", 1)
	stub.Expect("GET", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "completed", "conclusion": "success"}))
	if err := r.deliver("workflow_run", "22222222-0000-4000-8000-000000000002", runEvent(t, prRepo, "completed", 8001, 1, "completed", "success")); err != nil {
		t.Fatal(err)
	}
}

// TestRetryAfterServerError: GitHub answers 502 to the permission lookup; the delivery
// stays in the inbox and is processed again after a backoff, once.
func TestRetryAfterServerError(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	r := start(t, stub, nil)
	expectToken(t, stub)
	stub.Expect("GET", "/repos/"+issueRepo+"/contents/.github/perfbot.yml?ref=master", stub.Example(200, "content-file-response-if-content-is-a-file", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(gatetest.Config)), "encoding": "base64",
		"size": len(gatetest.Config), "name": "perfbot.yml", "path": ".github/perfbot.yml", "type": "file",
	}))
	stub.Expect("GET", "/repos/"+issueRepo+"/collaborators/Codertocat/permission", fakegithub.JSON(502, map[string]string{"message": "Server Error"}))
	expectGate(t, stub, issueRepo, "Codertocat", "read", false)
	expectReply(t, stub, issueRepo, issueNum, 3001, "has the `read` permission")
	const id = "33333333-0000-4000-8000-000000000001"
	if code, msg := r.post("issue_comment", id, commentEvent(t, 3001, "Codertocat", "/profile rocm")); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	if err := r.wait(id); err == nil || !strings.Contains(err.Error(), "502") {
		t.Fatalf("first attempt: %v, want the 502", err)
	}
	if err := r.wait(id); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
}

// TestUnqueuedRequestIsDropped: acceptance fails for good (the reaction is refused and
// the delivery has one attempt); the periodic check ends the request instead of
// leaving it waiting forever.
func TestUnqueuedRequestIsDropped(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	set.MaxAttempts = 1
	r := start(t, stub, &set)
	expectToken(t, stub)
	expectGate(t, stub, issueRepo, "Codertocat", "write", true)
	stub.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", issueRepo, 7001),
		fakegithub.JSON(403, map[string]string{"message": "Resource not accessible by integration"}))
	if err := r.deliver("issue_comment", "77777777-0000-4000-8000-000000000001", commentEvent(t, 7001, "Codertocat", "/profile rocm")); err == nil {
		t.Fatal("acceptance succeeded, want the refused reaction")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.srv.Check(ctx)
	r.wantMetrics(
		`perfbot_runs_finished_total{host="gfx1151",state="failed"} 1`,
		`perfbot_queue_depth{host="gfx1151",state="queued"} 0`,
	)
}

// TestRunOfAnotherWorkflowIsIgnored: a workflow_run of another workflow file of the
// repository (the real payload's .github/workflows/test.yml) whose title names a
// dispatched request does not end it; the run of the dispatched workflow file does.
func TestRunOfAnotherWorkflowIsIgnored(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	r := start(t, stub, nil)
	expectToken(t, stub)
	expectGate(t, stub, issueRepo, "Codertocat", "write", true)
	a := expectAccepted(t, stub, issueRepo, issueNum, false, 9101, 1, gatetest.MasterSHA, map[string]any{"ref": "master"})
	if err := r.deliver("issue_comment", "99999999-0000-4000-8000-000000000001", commentEvent(t, 9101, "Codertocat", "/profile rocm")); err != nil {
		t.Fatal(err)
	}
	// Dispatched (active) before the other workflow's run arrives: the dispatch runs
	// apart from the delivery, and the metric below counts the request as active.
	r.waitDispatched(1)
	// The real payload as captured, but for its title (and times and repository):
	// its path stays .github/workflows/test.yml.
	other := edit(t, payload(t, "github", "webhooks", "workflow_run.completed.json"), map[string]any{
		"repository.full_name": issueRepo, "workflow_run.id": 7101, "workflow_run.event": "workflow_dispatch",
		"workflow_run.display_title": "perfbot request 1: profile",
		"workflow_run.created_at":    time.Now().UTC().Format(time.RFC3339),
		"workflow_run.html_url":      runURL(issueRepo, 7101),
	})
	if !strings.Contains(string(other), `".github/workflows/test.yml"`) {
		t.Fatal("the payload lost its workflow path")
	}
	if err := r.deliver("workflow_run", "99999999-0000-4000-8000-000000000002", other); err != nil {
		t.Fatal(err)
	}
	r.wantMetrics(`perfbot_queue_depth{host="gfx1151",state="active"} 1`)
	if b, _ := os.ReadFile(r.logs); !strings.Contains(string(b), "of another workflow file; ignored") {
		t.Error("the server did not log the run of another workflow as ignored")
	}
	// The run of perfbot.yml ends it (a failure without publishing: the server ends
	// the marks).
	expectStatusComment(t, stub, issueRepo, a.statusID, "<!-- perfbot:status -->\n**/profile rocm**: queued. Request 1 on host gfx1151.\n\n<!-- perfbot:request 1 -->\n", 2)
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/issues/comments/%d", issueRepo, a.statusID),
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": a.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "**/profile rocm**: failed.", runURL(issueRepo, 7102)))
	expectArtifacts(t, stub, issueRepo, 7102)
	stub.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", issueRepo, 9101), fakegithub.JSONFile(201, example(t, "reaction"))).
		JSONBody(map[string]any{"content": "confused"})
	if err := r.deliver("workflow_run", "99999999-0000-4000-8000-000000000003", runEvent(t, issueRepo, "completed", 7102, 1, "completed", "failure")); err != nil {
		t.Fatal(err)
	}
	r.wantMetrics(`perfbot_queue_depth{host="gfx1151",state="active"} 0`, `perfbot_runs_finished_total{host="gfx1151",state="failed"} 1`)
}

// expectPull declares the gate's read of the pull request of prCommentEvent.
func expectPull(t testing.TB, s *fakegithub.Stub) {
	t.Helper()
	s.Expect("GET", fmt.Sprintf("/repos/%s/pulls/%d", prRepo, prNum), s.Example(200, "pull-request", map[string]any{
		"number": prNum, "state": "open", "head.sha": gatetest.PRSHA, "head.ref": "topic",
		"head.repo.id": 1296269, "head.repo.full_name": prRepo, "head.repo.owner.login": "kubernetes",
		"base.repo.id": 1296269, "base.repo.full_name": prRepo,
	}))
}

// TestCheckRunCreatedThenCrash: the fault strikes right after GitHub created the
// request's check run and before its id is recorded. The delivery is processed again;
// the check run is found by its external id, not created a second time, and the
// dispatch carries its id.
func TestCheckRunCreatedThenCrash(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	r := start(t, stub, nil)
	var struck atomic.Int32
	server.SetFault(r.srv, func(step string) error {
		if step == server.StepCheckRunCreated && struck.Add(1) == 1 {
			return errors.New("killed after the check run was created")
		}
		return nil
	})
	expectToken(t, stub)
	expectGate(t, stub, prRepo, "spxtr", "write", false)
	expectPull(t, stub)
	a := expectAccepted(t, stub, prRepo, prNum, true, 2101, 1, gatetest.PRSHA, map[string]any{"ref": "master", "inputs.check_run_id": "6001"})
	// The second attempt: the gate again, the eyes again (GitHub keeps one), the status
	// comment recorded, and the check run found.
	expectGate(t, stub, prRepo, "spxtr", "write", false)
	expectPull(t, stub)
	stub.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", prRepo, 2101), fakegithub.JSONFile(200, example(t, "reaction"))).
		JSONBody(map[string]any{"content": "eyes"})
	expectCheckRuns(t, stub, prRepo, gatetest.PRSHA,
		map[string]any{"id": 6999, "external_id": "perfbot-request-10", "status": "completed"},
		map[string]any{"id": a.checkRunID, "external_id": "perfbot-request-1", "status": "queued", "conclusion": nil})
	const id = "22222222-0000-4000-8000-000000000101"
	if code, msg := r.post("issue_comment", id, prCommentEvent(t, 2101, "spxtr", "/profile rocm")); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	if err := r.wait(id); err == nil || !strings.Contains(err.Error(), "killed after the check run was created") {
		t.Fatalf("first attempt: %v, want the injected fault", err)
	}
	if err := r.wait(id); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
	r.waitDispatched(1)
	n := 0
	for _, req := range stub.Requests() {
		if req.Method == "POST" && strings.HasSuffix(req.Path, "/check-runs") {
			n++
		}
	}
	if n != 1 || struck.Load() != 2 {
		t.Errorf("%d check runs created, fault asked %d times; want 1 and 2", n, struck.Load())
	}
}

// TestOneRequestPerComment: two deliveries of one comment processed at the same time
// (two delivery ids of its creation; its creation and its edit 3 ms later) make one
// request, one status comment and one dispatch, whichever delivery wins.
func TestOneRequestPerComment(t *testing.T) {
	t.Parallel()
	const c = 9201
	created := func(t *testing.T) []byte { return commentEvent(t, c, "Codertocat", "/profile rocm") }
	edited := func(t *testing.T) []byte {
		return edit(t, payload(t, "github", "webhooks", "issue_comment.edited.json"), map[string]any{
			"comment.id": c, "comment.body": "/profile rocm models=qwen3", "changes.body.from": "/profile rocm",
		})
	}
	for _, tc := range []struct {
		name   string
		second func(*testing.T) []byte
		gap    time.Duration
	}{
		{"two deliveries of the creation at once", created, 0},
		{"creation and edit 3 ms apart", edited, 3 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stub := fakegithub.New(t)
			r := start(t, stub, nil)
			expectToken(t, stub)
			expectGate(t, stub, issueRepo, "Codertocat", "write", true)
			expectGate(t, stub, issueRepo, "Codertocat", "write", true)
			stub.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", issueRepo, c), fakegithub.JSONFile(201, example(t, "reaction"))).
				JSONBody(map[string]any{"content": "eyes"})
			stub.Expect("GET", fmt.Sprintf("/repos/%s/issues/%d/comments", issueRepo, issueNum), fakegithub.JSON(200, []any{})).AnyTimes()
			stub.Expect("POST", fmt.Sprintf("/repos/%s/issues/%d/comments", issueRepo, issueNum),
				fakegithub.JSONFileWith(201, example(t, "issue-comment"), map[string]any{"id": 5001, "user.login": appSlug + "[bot]"})).
				Match(bodyHas("body", "queued.", "<!-- perfbot:request 1 -->"))
			// When the creation wins, the edit is answered that it changes nothing.
			stub.Expect("POST", fmt.Sprintf("/repos/%s/issues/%d/comments", issueRepo, issueNum),
				fakegithub.JSONFileWith(201, example(t, "issue-comment"), map[string]any{"id": 5002, "user.login": appSlug + "[bot]"})).
				Match(bodyHas("body", "editing the comment does not change what runs", fmt.Sprintf("<!-- perfbot:reply %d -->", c))).AnyTimes()
			stub.Expect("POST", fmt.Sprintf("/repos/%s/actions/workflows/%s/dispatches", issueRepo, workflow), fakegithub.Status(204)).
				JSONBody(map[string]any{"inputs.request_id": "1", "inputs.status_comment_id": "5001", "inputs.trigger_comment_id": fmt.Sprint(c)})

			ids := []string{"92000000-0000-4000-8000-000000000001", "92000000-0000-4000-8000-000000000002"}
			bodies := [][]byte{created(t), tc.second(t)}
			var wg sync.WaitGroup
			for i := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(time.Duration(i) * tc.gap)
					if code, msg := r.post("issue_comment", ids[i], bodies[i]); code != http.StatusAccepted {
						t.Errorf("delivery %s: %d %s", ids[i], code, msg)
					}
				}()
			}
			wg.Wait()
			seen := map[string]bool{}
			for len(seen) < len(ids) {
				select {
				case s := <-r.settled:
					if s.err != nil {
						t.Errorf("delivery %s: %v", s.d.ID, s.err)
					}
					seen[s.d.ID] = true
				case <-time.After(15 * time.Second):
					t.Fatalf("deliveries not processed within 15 s: %v", seen)
				}
			}
			// Dispatch happens on the host's own goroutine, after the deliveries settle.
			r.waitDispatched(1)
			r.wantMetrics(
				`perfbot_dispatches_total{host="gfx1151",result="sent"} 1`,
				`perfbot_queue_depth{host="gfx1151",state="active"} 1`,
				`perfbot_queue_depth{host="gfx1151",state="queued"} 0`,
			)
		})
	}
}
