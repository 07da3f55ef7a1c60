package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// rerequestEvent is the real check_run.rerequested payload for the check run of a
// request, pressed by sender. The example's app times are not RFC 3339 (GitHub's
// deliveries are), so they are set.
func rerequestEvent(t testing.TB, checkRunID, requestID int64, sha, sender string) []byte {
	t.Helper()
	return edit(t, payload(t, "github", "webhooks", "check_run.rerequested.json"), map[string]any{
		"repository.full_name": prRepo, "repository.default_branch": "master",
		"check_run.id": checkRunID, "check_run.external_id": fmt.Sprintf("perfbot-request-%d", requestID),
		"check_run.head_sha": sha, "check_run.name": "perfbot profile",
		"check_run.app.created_at": "2018-04-25T20:42:10Z", "check_run.app.updated_at": "2018-04-25T20:42:10Z",
		"check_run.check_suite.app.created_at": "2018-04-25T20:42:10Z", "check_run.check_suite.app.updated_at": "2018-04-25T20:42:10Z",
		"sender.login": sender, "sender.type": "User",
	})
}

// TestCheckRunRerun: the Re-run button of a finished request's check run queues the
// same request again, with the same pinned commit, on the same GPU host of the two
// the server has for its backend, for a sender with write access;
// a delivery processed twice queues it once; a reader is refused with a reply and
// nothing is queued; pressing the old button again points to the re-run.
func TestCheckRunRerun(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	// A second ROCm host, idle: the re-run still goes to the first one's workflow.
	set.Hosts = append(set.Hosts, server.Host{Label: "gfx1201", Backend: "rocm", Workflow: "perfbot-gfx1201.yml"})
	r := start(t, stub, &set)
	expectToken(t, stub)
	expectGate(t, stub, prRepo, "spxtr", "write", false)
	expectPull(t, stub)
	a := expectAccepted(t, stub, prRepo, prNum, true, 2401, 1, gatetest.PRSHA, map[string]any{"ref": "master"})
	if err := r.deliver("issue_comment", "24000000-0000-4000-8000-000000000001", prCommentEvent(t, 2401, "spxtr", "/profile rocm models=qwen3")); err != nil {
		t.Fatal(err)
	}
	r.waitDispatched(1)
	// The run published and ended.
	expectStatusComment(t, stub, prRepo, a.statusID, "<!-- perfbot:status -->\n**/profile rocm**: done.\n", 1)
	stub.Expect("GET", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "completed", "conclusion": "success"}))
	if err := r.deliver("workflow_run", "24000000-0000-4000-8000-000000000002", runEvent(t, prRepo, "completed", 8401, 1, "completed", "success")); err != nil {
		t.Fatal(err)
	}

	// The check run's events other than rerequested are answered and dropped.
	created := edit(t, payload(t, "github", "webhooks", "check_run.created.json"), nil)
	if code, msg := r.post("check_run", "24000000-0000-4000-8000-000000000009", created); code != http.StatusOK || !strings.HasPrefix(msg, "ignored") {
		t.Errorf("check_run.created: %d %q, want 200 ignored", code, msg)
	}

	// A writer (another one than the requester) presses Re-run: request 2, the same
	// command and commit, its own status comment and check run, dispatched on the
	// repository's default branch as it is now (renamed from master to main since).
	expectGateOn(t, stub, prRepo, "main", "octocat", "write", false)
	expectPull(t, stub)
	stub.Expect("GET", fmt.Sprintf("/repos/%s/issues/%d/comments", prRepo, prNum), fakegithub.JSON(200, []any{}))
	stub.Expect("POST", fmt.Sprintf("/repos/%s/issues/%d/comments", prRepo, prNum),
		fakegithub.JSONFileWith(201, example(t, "issue-comment"), map[string]any{"id": 5002, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "**/profile rocm models=qwen3**: queued.", "Request 2 on host gfx1151, commit 6dcb09b5 (re-run of request 1,", "<!-- perfbot:request 2 -->"))
	expectCheckRuns(t, stub, prRepo, gatetest.PRSHA)
	stub.Expect("POST", fmt.Sprintf("/repos/%s/check-runs", prRepo),
		fakegithub.JSONFileWith(201, example(t, "check-run"), map[string]any{"id": 6002, "status": "queued", "head_sha": gatetest.PRSHA})).
		JSONBody(map[string]any{"head_sha": gatetest.PRSHA, "status": "queued", "external_id": "perfbot-request-2", "name": "perfbot profile"})
	stub.Expect("POST", fmt.Sprintf("/repos/%s/actions/workflows/%s/dispatches", prRepo, workflow), fakegithub.Status(204)).
		JSONBody(map[string]any{"ref": "main", "inputs.request_id": "2", "inputs.sha": gatetest.PRSHA, "inputs.models": "qwen3",
			"inputs.status_comment_id": "5002", "inputs.check_run_id": "6002", "inputs.trigger_comment_id": "0"})
	const rerun = "24000000-0000-4000-8000-000000000003"
	renamed := edit(t, rerequestEvent(t, a.checkRunID, 1, gatetest.PRSHA, "octocat"), map[string]any{"repository.default_branch": "main"})
	if err := r.deliver("check_run", rerun, renamed); err != nil {
		t.Fatal(err)
	}
	r.waitDispatched(2)
	// The same delivery again: held, nothing new.
	if code, msg := r.post("check_run", rerun, renamed); code != http.StatusOK || !strings.HasPrefix(msg, "duplicate") {
		t.Fatalf("redelivery: %d %q, want 200 duplicate", code, msg)
	}

	// A reader may not: a reply on the pull request, nothing queued.
	expectGate(t, stub, prRepo, "reader1", "read", false)
	expectReply(t, stub, prRepo, prNum, a.checkRunID, "`reader1` pressed Re-run on the check run of request 1; it is not queued again.", "has the `read` permission")
	if err := r.deliver("check_run", "24000000-0000-4000-8000-000000000004", rerequestEvent(t, a.checkRunID, 1, gatetest.PRSHA, "reader1")); err != nil {
		t.Fatal(err)
	}
	// The old button pressed again by a writer (a new click, not a redelivery) points
	// to the re-run.
	expectGate(t, stub, prRepo, "octocat", "write", false)
	expectPull(t, stub)
	expectReply(t, stub, prRepo, prNum, a.checkRunID, "was re-run already: request 2")
	if err := r.deliver("check_run", "24000000-0000-4000-8000-000000000005", rerequestEvent(t, a.checkRunID, 1, gatetest.PRSHA, "octocat")); err != nil {
		t.Fatal(err)
	}
	r.wantMetrics(
		`perfbot_dispatches_total{host="gfx1151",result="sent"} 2`,
		`perfbot_queue_depth{host="gfx1151",state="active"} 1`,
		`perfbot_queue_depth{host="gfx1151",state="queued"} 0`,
	)
}
