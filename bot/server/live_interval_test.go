package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestLiveStatusIsRefreshedEveryLiveEvery: a server with a running request reads its
// status comment at start and then every Options.LiveEvery; left unset, the interval
// is the documented minute, never a busy loop.
func TestLiveStatusIsRefreshedEveryLiveEvery(t *testing.T) {
	t.Parallel()
	t.Run("every 20 ms", func(t *testing.T) {
		t.Parallel()
		reads := serveARunningRequest(t, 20*time.Millisecond)
		deadline := time.Now().Add(10 * time.Second)
		for reads() < 4 {
			if time.Now().After(deadline) {
				t.Fatalf("the status comment was read %d times in 10 s with LiveEvery 20 ms, want 4 or more", reads())
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	t.Run("unset", func(t *testing.T) {
		t.Parallel()
		reads := serveARunningRequest(t, 0)
		deadline := time.Now().Add(10 * time.Second)
		for reads() < 1 {
			if time.Now().After(deadline) {
				t.Fatal("the status comment was not read at start within 10 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		if n := reads(); n != 1 {
			t.Errorf("with LiveEvery unset the status comment was read %d times within a second of the start, want 1 (the next refresh is a minute later)", n)
		}
	})
}

// serveARunningRequest starts a server whose database holds a running request with a
// status comment the publisher is writing (so a refresh only reads it), and returns
// how many times the server has read that comment.
func serveARunningRequest(t *testing.T, liveEvery time.Duration) (reads func() int) {
	t.Helper()
	const statusID, runID = 5071, 8371
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	set.ConfirmAfter = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	db, err := store.Open(ctx, set.Database)
	if err != nil {
		t.Fatal(err)
	}
	q := queue.New(db, time.Now)
	req, _, err := q.Add(ctx, queue.Request{Delivery: "71000000-0000-4000-8000-000000000001", Repo: issueRepo, Installation: installationID,
		Issue: issueNum, CommentID: 7171, Requester: "Codertocat", Kind: "profile", Command: "/profile rocm",
		SHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", Host: hostLabel, Workflow: workflow, Ref: "master"})
	if err == nil {
		err = q.MarkQueued(ctx, req.ID)
	}
	if err == nil {
		_, _, err = q.Claim(ctx, hostLabel)
	}
	if err == nil {
		err = q.MarkDispatched(ctx, req.ID)
	}
	if err == nil {
		_, err = q.SetRun(ctx, req.ID, runID, runURL(issueRepo, runID), time.Now())
	}
	if err == nil {
		err = q.SetStatusComment(ctx, req.ID, statusID)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	stub.Expect("POST", fmt.Sprintf("/app/installations/%d/access_tokens", installationID),
		fakegithub.JSONFileWith(201, example(t, "installation-token"), map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})).AnyTimes()
	// The start's check asks about the run: still in progress.
	stub.Expect("GET", fmt.Sprintf("/repos/%s/actions/runs/%d", issueRepo, runID), fakegithub.JSONFileWith(200, example(t, "workflow-run"),
		map[string]any{"id": runID, "status": "in_progress", "conclusion": nil, "html_url": runURL(issueRepo, runID)})).AnyTimes()
	comment := fmt.Sprintf("/repos/%s/issues/comments/%d", issueRepo, statusID)
	stub.Expect("GET", comment, fakegithub.JSONFileWith(200, example(t, "issue-comment"),
		map[string]any{"id": statusID, "body": "<!-- perfbot:status -->\n**/profile rocm**: publishing the results.\n", "user.login": appSlug + "[bot]"})).AnyTimes()

	serveBare(t, ctx, stub, set, server.Options{LiveEvery: liveEvery}, cancel)
	return func() int { return countRequests(stub, "GET", comment) }
}
