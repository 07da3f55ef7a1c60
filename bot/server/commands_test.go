package server

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
)

// commandsRig is commands alone: GitHub in memory, the queue on SQLite, the host
// queues recorded.
type commandsRig struct {
	cm    *commands
	gh    *fakeGitHub
	q     *queue.Queue
	kicks *kicks
}

func newCommandsRig(t *testing.T) *commandsRig {
	t.Helper()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	q, _ := openQueue(t, clk.now)
	f, k := newFakeGitHub(), &kicks{}
	m := newMetrics()
	return &commandsRig{gh: f, q: q, kicks: k, cm: &commands{
		log: quiet(), hosts: []Host{{Label: testHost, Backend: "rocm", Workflow: "perfbot.yml"}}, botLogin: "perfbot[bot]",
		queue: q, api: apiFor[commandAPI](f), marks: &marks{queue: q, api: apiFor[markAPI](f), now: clk.now},
		queues: k, decisions: m.decisions, finished: m.runs,
	}}
}

func commentOn(issue int, isPR bool, commentID int64, author string) gate.Event {
	return gate.Event{Action: "created", Repo: gh.Repo{Owner: "octo", Name: "engine"}, DefaultBranch: "main", InstallationID: 1,
		Issue: issue, IsPR: isPR, CommentID: commentID, Author: author}
}

func profile(backend string) gate.Request {
	return gate.Request{Kind: command.Profile, Command: command.Command{Kind: command.Profile, Backend: backend, Text: "/profile " + backend},
		SHA: testSHA, PinnedFrom: "the pull request's head", Requester: "alice", Permission: "write"}
}

func TestAcceptMarksTheRequestAndQueuesIt(t *testing.T) {
	r := newCommandsRig(t)
	ev := commentOn(7, true, 41, "alice")
	if err := r.cm.accept(context.Background(), r.gh, "delivery-1", ev, profile("rocm"), quiet()); err != nil {
		t.Fatal(err)
	}
	got := state(t, r.q, 1)
	if got.State != queue.Queued || got.Host != testHost || got.SHA != testSHA {
		t.Errorf("request 1 is %s on %q at %s, want queued on %s at the pinned SHA", got.State, got.Host, got.SHA, testHost)
	}
	if len(r.gh.reactions) != 1 || r.gh.reactions[0] != "41:eyes" {
		t.Errorf("reactions %q, want eyes on comment 41", r.gh.reactions)
	}
	wantIn(t, "the status comment", r.gh.comment(t, got.StatusCommentID),
		"queued.", "Request 1 on host gfx1151, commit 01234567", "Starting now.", "<!-- perfbot:request 1 -->")
	if cr, ok := r.gh.checkRuns[got.CheckRunID]; !ok || cr.Status != "queued" {
		t.Errorf("check run %d recorded, GitHub holds %+v: want a queued check run on the pull request", got.CheckRunID, r.gh.checkRuns)
	}
	if len(r.gh.replies) != 0 {
		t.Errorf("an accepted request got replies %q; its status comment is its answer", r.gh.replies)
	}
	if len(r.kicks.hosts) != 1 || r.kicks.hosts[0] != testHost {
		t.Errorf("host kicks %q, want one of %s", r.kicks.hosts, testHost)
	}
}

func TestAcceptOnAnIssueMakesNoCheckRun(t *testing.T) {
	r := newCommandsRig(t)
	if err := r.cm.accept(context.Background(), r.gh, "delivery-1", commentOn(7, false, 41, "alice"), profile("rocm"), quiet()); err != nil {
		t.Fatal(err)
	}
	if got := state(t, r.q, 1); got.State != queue.Queued || got.CheckRunID != 0 || len(r.gh.checkRuns) != 0 {
		t.Errorf("request %s with check run %d (GitHub holds %d): want queued without a check run", got.State, got.CheckRunID, len(r.gh.checkRuns))
	}
}

func TestAcceptWithoutAHostForTheBackendReplies(t *testing.T) {
	r := newCommandsRig(t)
	if err := r.cm.accept(context.Background(), r.gh, "delivery-1", commentOn(7, false, 41, "alice"), profile("cuda"), quiet()); err != nil {
		t.Fatal(err)
	}
	if got := r.gh.lastReply(t); !strings.Contains(got, "no GPU host for `cuda`") {
		t.Errorf("reply %q, want it to say there is no host for cuda", got)
	}
	if _, ok, _ := r.q.Get(context.Background(), 1); ok {
		t.Error("a request was stored for a backend without a host")
	}
	if len(r.kicks.hosts) != 0 {
		t.Errorf("hosts kicked: %q", r.kicks.hosts)
	}
}

func TestAcceptAfterAFaultResumesWithoutDoubling(t *testing.T) {
	r := newCommandsRig(t)
	struck := false
	fault := func(step string) error {
		if step == StepCheckRunCreated && !struck {
			struck = true
			return context.DeadlineExceeded
		}
		return nil
	}
	r.cm.fault.Store(&fault)
	ev := commentOn(7, true, 41, "alice")
	if err := r.cm.accept(context.Background(), r.gh, "delivery-1", ev, profile("rocm"), quiet()); err == nil {
		t.Fatal("the fault did not stop the delivery")
	}
	if got := state(t, r.q, 1); got.State != queue.Accepting || len(r.kicks.hosts) != 0 {
		t.Fatalf("after the fault the request is %s, kicks %q: want accepting, none", got.State, r.kicks.hosts)
	}
	if err := r.cm.accept(context.Background(), r.gh, "delivery-1", ev, profile("rocm"), quiet()); err != nil {
		t.Fatal(err)
	}
	if got := state(t, r.q, 1); got.State != queue.Queued {
		t.Errorf("processed again, the request is %s, want queued", got.State)
	}
	if len(r.gh.comments) != 1 {
		t.Errorf("GitHub holds %d status comments, want 1 (found again by its marker)", len(r.gh.comments))
	}
}

func TestEditOfAnAcceptedCommentChangesNothing(t *testing.T) {
	r := newCommandsRig(t)
	ctx := context.Background()
	if err := r.cm.accept(ctx, r.gh, "delivery-1", commentOn(7, false, 41, "alice"), profile("rocm"), quiet()); err != nil {
		t.Fatal(err)
	}
	edited := commentOn(7, false, 41, "alice")
	edited.Action = "edited"
	if err := r.cm.accept(ctx, r.gh, "delivery-2", edited, profile("rocm"), quiet()); err != nil {
		t.Fatal(err)
	}
	if got := r.gh.lastReply(t); !strings.Contains(got, "Request `1` was accepted from this comment as it was first written (commit `01234567`)") {
		t.Errorf("reply to the edit: %q", got)
	}
	if _, ok, _ := r.q.Get(ctx, 2); ok || len(r.gh.comments) != 1 || len(r.kicks.hosts) != 1 {
		t.Errorf("the edit made a second request (%v), status comment (%d) or kick (%d)", ok, len(r.gh.comments), len(r.kicks.hosts))
	}
}

func TestCancelOfAQueuedRequest(t *testing.T) {
	r := newCommandsRig(t)
	ctx := context.Background()
	sc, _, _ := r.gh.UpsertComment(ctx, gh.Repo{}, 7, requestMarker(1), "queued")
	req := queued(t, r.q, 41, "alice", sc.ID)
	cancel := gate.Request{Kind: command.Cancel, Requester: "alice", Permission: "write"}
	if err := r.cm.cancel(ctx, r.gh, commentOn(7, false, 42, "alice"), cancel, quiet()); err != nil {
		t.Fatal(err)
	}
	if got := r.gh.lastReply(t); got != "Request 1 is cancelled; it had not started." {
		t.Errorf("reply %q", got)
	}
	if got := state(t, r.q, req.ID); got.State != queue.Cancelled || got.CancelBy != "alice" {
		t.Errorf("request is %s (cancelled by %q), want cancelled by alice", got.State, got.CancelBy)
	}
	wantIn(t, "the status comment", r.gh.comment(t, sc.ID), "cancelled.", "Request 1 was cancelled by alice before it started.")
	if len(r.gh.reactions) != 0 {
		t.Errorf("a cancelled request got reactions %q", r.gh.reactions)
	}
}

func TestCancelByAnotherUserNeedsMaintain(t *testing.T) {
	r := newCommandsRig(t)
	ctx := context.Background()
	queued(t, r.q, 41, "alice", 0)
	cancel := gate.Request{Kind: command.Cancel, ID: "1", Requester: "bob", Permission: "write"}
	if err := r.cm.cancel(ctx, r.gh, commentOn(7, false, 42, "bob"), cancel, quiet()); err != nil {
		t.Fatal(err)
	}
	if got := r.gh.lastReply(t); !strings.Contains(got, "Request 1 was made by `alice`; only they, or someone with `maintain` or `admin` permission, can cancel it (`bob` has `write`).") {
		t.Errorf("reply %q", got)
	}
	if got := state(t, r.q, 1); got.State != queue.Queued {
		t.Errorf("request is %s, want still queued", got.State)
	}
	cancel.Permission = "maintain"
	if err := r.cm.cancel(ctx, r.gh, commentOn(7, false, 43, "bob"), cancel, quiet()); err != nil {
		t.Fatal(err)
	}
	if got := state(t, r.q, 1); got.State != queue.Cancelled || got.CancelBy != "bob" {
		t.Errorf("a maintainer's cancel left the request %s (by %q)", got.State, got.CancelBy)
	}
}

func TestCancelOfARunningRequestCancelsItsRun(t *testing.T) {
	r := newCommandsRig(t)
	ctx := context.Background()
	req := queued(t, r.q, 41, "alice", 0)
	if _, ok, err := r.q.Claim(ctx, testHost); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := r.q.SetRun(ctx, req.ID, 9001, "https://github.com/octo/engine/actions/runs/9001", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := r.cm.cancel(ctx, r.gh, commentOn(7, false, 42, "alice"), gate.Request{Kind: command.Cancel, ID: "1"}, quiet()); err != nil {
		t.Fatal(err)
	}
	if len(r.gh.cancelled) != 1 || r.gh.cancelled[0] != 9001 {
		t.Errorf("runs cancelled %v, want [9001]", r.gh.cancelled)
	}
	if got := r.gh.lastReply(t); got != "Asked GitHub to cancel the run of request 1: https://github.com/octo/engine/actions/runs/9001. Its status comment says when it has stopped." {
		t.Errorf("reply %q", got)
	}
	if got := state(t, r.q, 1); got.State != queue.Running || got.CancelBy != "alice" {
		t.Errorf("request is %s, cancel by %q: want running until the run ends, cancel by alice", got.State, got.CancelBy)
	}
}

func TestStatusListsTheOpenRequests(t *testing.T) {
	r := newCommandsRig(t)
	ctx := context.Background()
	queued(t, r.q, 41, "alice", 0)
	queued(t, r.q, 42, "bob", 0)
	if err := r.cm.status(ctx, r.gh, commentOn(7, false, 43, "carol"), gate.Request{Kind: command.Status}); err != nil {
		t.Fatal(err)
	}
	wantIn(t, "the status reply", r.gh.lastReply(t),
		"| request | command | by | host | state | where |",
		"| 1 | `/profile rocm` | `alice` | `gfx1151` | queued | Request 1 on host gfx1151",
		"| 2 | `/profile rocm` | `bob` | `gfx1151` | queued | Request 2 on host gfx1151, commit 01234567 (the default branch). Position 2 in the queue (1 ahead)")
	if err := r.cm.status(ctx, r.gh, commentOn(7, false, 44, "carol"), gate.Request{Kind: command.Status, ID: "99"}); err != nil {
		t.Fatal(err)
	}
	if got := r.gh.lastReply(t); got != "There is no perfbot request `99` in octo/engine. `/perfbot status` lists the open ones." {
		t.Errorf("reply to a status of an unknown request: %q", got)
	}
}

func TestStatusWithNothingOpen(t *testing.T) {
	r := newCommandsRig(t)
	if err := r.cm.status(context.Background(), r.gh, commentOn(7, false, 43, "carol"), gate.Request{Kind: command.Status}); err != nil {
		t.Fatal(err)
	}
	if got := r.gh.lastReply(t); got != "No perfbot request is queued or running in octo/engine." {
		t.Errorf("reply %q", got)
	}
}

// commentDelivery is a real issue_comment delivery with edits (dotted keys).
func commentDelivery(t *testing.T, edits map[string]any) inbox.Delivery {
	t.Helper()
	return delivery(t, "issue_comment", "issue_comment.created.json", edits)
}

// delivery is the real webhook payload file of event, edited, as the inbox hands it.
func delivery(t *testing.T, event, file string, edits map[string]any) inbox.Delivery {
	t.Helper()
	raw, err := os.ReadFile(testfix.Path(t, "github", "webhooks", file))
	if err != nil {
		t.Fatal(err)
	}
	body, err := fakegithub.Payload(raw, edits)
	if err != nil {
		t.Fatal(err)
	}
	return inbox.Delivery{ID: "d-1", Event: event, Payload: body}
}

func TestHandleIgnoresTheAppsOwnAndDeletedComments(t *testing.T) {
	r := newCommandsRig(t)
	own := commentDelivery(t, map[string]any{"installation": map[string]any{"id": 1},
		"comment.body": "/profile rocm", "comment.user.login": "perfbot[bot]", "comment.user.type": "Bot"})
	deleted := commentDelivery(t, map[string]any{"installation": map[string]any{"id": 1}, "action": "deleted", "comment.body": "/profile rocm"})
	for _, d := range []inbox.Delivery{own, deleted} {
		if err := r.cm.handle(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.gh.replies)+len(r.gh.reactions)+len(r.gh.comments) != 0 {
		t.Errorf("ignored comments were answered: replies %q, reactions %q, %d comments", r.gh.replies, r.gh.reactions, len(r.gh.comments))
	}
	if got := counted(t, r.cm.decisions, map[string]string{"outcome": "ignored"}); got != 2 {
		t.Errorf("perfbot_commands_total{outcome=ignored} = %v, want 2", got)
	}
}

func TestHandleRefusesADeliveryWithoutAnInstallation(t *testing.T) {
	r := newCommandsRig(t)
	err := r.cm.handle(context.Background(), commentDelivery(t, map[string]any{"comment.body": "/profile rocm"}))
	var perm permanent
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), "no installation") {
		t.Errorf("handle: %v, want a permanent error naming the missing installation", err)
	}
}
