package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/runner/results"
)

// expectArtifacts declares the listing of a run's artifacts (GitHub's documented
// shape, checked by the stub) with the given names; the artifact ids are 8000 + i.
func expectArtifacts(t testing.TB, s *fakegithub.Stub, repo string, runID int64, names ...string) {
	t.Helper()
	list := []any{}
	for i, n := range names {
		url := fmt.Sprintf("https://api.github.com/repos/%s/actions/artifacts/%d", repo, 8000+i)
		list = append(list, map[string]any{
			"id": 8000 + i, "node_id": "MDg6QXJ0aWZhY3QxMQ==", "name": n, "size_in_bytes": 556, "url": url,
			"archive_download_url": url + "/zip", "expired": false,
			"created_at": "2026-12-03T18:00:00Z", "updated_at": "2026-12-03T18:00:00Z", "expires_at": "2027-03-03T18:00:00Z",
		})
	}
	s.Expect("GET", fmt.Sprintf("/repos/%s/actions/runs/%d/artifacts", repo, runID), fakegithub.JSON(200, map[string]any{"total_count": len(list), "artifacts": list}))
}

// checkRunPatch matches a check run update: its status, details URL and the words of
// its output summary.
func checkRunPatch(status, details string, summary ...string) fakegithub.Matcher {
	return fakegithub.MatchFunc("check run update", func(req fakegithub.Request) error {
		m, err := req.JSON()
		if err != nil {
			return err
		}
		if m["status"] != status || m["details_url"] != details {
			return fmt.Errorf("status %v, details_url %v; want %s, %s", m["status"], m["details_url"], status, details)
		}
		out, _ := m["output"].(map[string]any)
		got, _ := out["summary"].(string)
		for _, s := range summary {
			if !strings.Contains(got, s) {
				return fmt.Errorf("summary %q lacks %q", got, s)
			}
		}
		return nil
	})
}

// TestLiveStatus follows a pull request's request through its run: when the run
// starts, the status comment and the check run move to in progress with the run's
// link (and a delivery of the same start processed again writes nothing); while it
// runs, the status comment shows the progress file the GPU job wrote in the host's
// progress folder; when the run ends without publishing, both link the run and the
// traces artifact by URL.
func TestLiveStatus(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	progressDir := t.TempDir()
	set.Hosts[0].ProgressDir = progressDir
	// The startup check's reconcile pass may run after the dispatch on a busy machine;
	// with confirm_secs past, it would look the run up. This test is about the events.
	set.ConfirmAfter = time.Hour
	r := start(t, stub, &set)
	expectToken(t, stub)
	expectGate(t, stub, prRepo, "spxtr", "write", false)
	expectPull(t, stub)
	a := expectAccepted(t, stub, prRepo, prNum, true, 2301, 1, gatetest.PRSHA, map[string]any{"ref": "master"})
	if err := r.deliver("issue_comment", "23000000-0000-4000-8000-000000000001", prCommentEvent(t, 2301, "spxtr", "/profile rocm")); err != nil {
		t.Fatal(err)
	}
	r.waitDispatched(1)
	run := runURL(prRepo, 8301)
	queued := "<!-- perfbot:status -->\n**/profile rocm**: queued. Request 1 on host gfx1151.\n\n<!-- perfbot:request 1 -->\n"

	// The run is requested: in progress, with its link, on both.
	expectStatusComment(t, stub, prRepo, a.statusID, queued, 2) // read, then read again by the update
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/issues/comments/%d", prRepo, a.statusID),
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": a.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "**/profile rocm**: in progress. Request 1 on host gfx1151, commit 6dcb09b5, running for 1 min.", "[workflow run]("+run+")", "<!-- perfbot:request 1 -->"))
	stub.Expect("GET", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "queued", "conclusion": nil}))
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "in_progress", "conclusion": nil})).
		Match(checkRunPatch("in_progress", run, "Request 1 runs on host gfx1151", "workflow run "+run))
	if err := r.deliver("workflow_run", "23000000-0000-4000-8000-000000000002", runEvent(t, prRepo, "requested", 8301, 1, "queued", nil)); err != nil {
		t.Fatal(err)
	}
	// The same start again under another delivery id (in_progress): the comment and
	// the check run already say it, so nothing is written.
	var shown string
	for _, req := range stub.Requests() {
		if req.Method == "PATCH" && strings.HasSuffix(req.Path, fmt.Sprintf("/comments/%d", a.statusID)) {
			m, _ := req.JSON()
			shown, _ = m["body"].(string)
		}
	}
	expectStatusComment(t, stub, prRepo, a.statusID, shown, 1)
	stub.Expect("GET", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "in_progress", "conclusion": nil}))
	if err := r.deliver("workflow_run", "23000000-0000-4000-8000-000000000003", runEvent(t, prRepo, "in_progress", 8301, 1, "in_progress", nil)); err != nil {
		t.Fatal(err)
	}

	// The GPU job wrote its progress: the next refresh shows it.
	if err := results.WriteProgress(progressDir, results.Progress{RequestID: "1", Phase: results.PhaseProfile, Done: 2, Planned: 5,
		Model: "qwen3-8b *bold*", ETASecs: 600, WrittenAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	expectStatusComment(t, stub, prRepo, a.statusID, shown, 2)
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/issues/comments/%d", prRepo, a.statusID),
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": a.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "**/profile rocm**: running model 3/5.", "2 of 5 models done; now qwen3-8b \\*bold\\*; about 10 min left (progress as of", "[workflow run]("+run+")"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	server.Live(r.srv, ctx)

	// The run fails before publishing: both end with the run's and the traces' links.
	traces := run + "/artifacts/8001"
	expectStatusComment(t, stub, prRepo, a.statusID, shown, 2)
	stub.Expect("GET", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "in_progress", "conclusion": nil}))
	expectArtifacts(t, stub, prRepo, 8301, "perfbot-results-1", "perfbot-traces-1")
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/issues/comments/%d", prRepo, a.statusID),
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": a.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "**/profile rocm**: failed.", "[workflow run]("+run+")", "[traces artifact]("+traces+")"))
	stub.Expect("PATCH", fmt.Sprintf("/repos/%s/check-runs/%d", prRepo, a.checkRunID),
		fakegithub.JSONFileWith(200, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "completed", "conclusion": "failure"})).
		Match(checkRunPatch("completed", run, "Workflow run: "+run, "Traces artifact: "+traces))
	stub.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", prRepo, 2301), fakegithub.JSONFile(201, example(t, "reaction"))).
		JSONBody(map[string]any{"content": "confused"})
	if err := r.deliver("workflow_run", "23000000-0000-4000-8000-000000000004", runEvent(t, prRepo, "completed", 8301, 1, "completed", "failure")); err != nil {
		t.Fatal(err)
	}
	// Nothing runs any more: a refresh asks GitHub nothing.
	server.Live(r.srv, ctx)
	if _, err := os.Stat(filepath.Join(progressDir, "1.json")); err != nil {
		t.Fatal(err) // the server only reads the folder
	}
}
