package server

import (
	"context"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/queue"
)

const testBase = "9fceb02d0ae598e95dc970b74767f19372d61af8"

func compareRequest(models []string, repeats int) gate.Request {
	return gate.Request{Kind: command.Bench,
		Command: command.Command{Kind: command.Bench, Backend: "rocm", Compare: true, Text: "/bench rocm compare"},
		SHA:     testSHA, PinnedFrom: "the head of pull request #7", Requester: "alice", Permission: "write",
		Compare: true, Base: testBase, BasePinnedFrom: "the merge base of pull request #7 with main",
		Models: models, Repeats: repeats}
}

// A compare within the budget (here exactly at it) is stored with its A commit and
// repeats, marked and queued; its check run names A, its status comment both commits
// and the cap.
func TestAcceptOfACompareStoresBothCommits(t *testing.T) {
	r := newCommandsRig(t)
	r.cm.budget, r.cm.runTime = 100*time.Minute, 5*time.Minute // 1 x 2 x 10 x 5 min = 100 min: at the budget
	ev := commentOn(7, true, 41, "alice")
	if err := r.cm.accept(context.Background(), r.gh, "delivery-1", ev, compareRequest([]string{"llama"}, 10), quiet()); err != nil {
		t.Fatal(err)
	}
	got := state(t, r.q, 1)
	if got.State != queue.Queued || got.SHA != testSHA || got.Base != testBase || got.Repeats != 10 {
		t.Errorf("request %s sha %s base %q repeats %d; want queued, B %s, A %s, 10", got.State, got.SHA, got.Base, got.Repeats, testSHA, testBase)
	}
	if _, ok := r.gh.checkRuns[got.CheckRunID]; !ok || len(r.gh.checkSpecs) != 1 {
		t.Fatalf("check run %d recorded, %d made", got.CheckRunID, len(r.gh.checkSpecs))
	}
	wantIn(t, "the check run", r.gh.checkSpecs[0].Summary, "runs commit `"+testSHA+"`", "compared with commit `"+testBase+"` (A, up to 10 repeats per side)")
	wantIn(t, "the status comment", r.gh.comment(t, got.StatusCommentID), "**/bench rocm compare**: queued. Request 1 on host gfx1151, compare "+
		testBase[:8]+".."+testSHA[:8]+" (B: the head of pull request #7), at most 10 repeats per side.")
	if len(r.gh.replies) != 0 {
		t.Errorf("replies %q", r.gh.replies)
	}
}

// A compare whose worst case is over the budget is refused at acceptance with its
// estimate, from the configured time per run while the host has no history and from
// the host's past runs once it has; nothing is stored or queued.
func TestCompareOverBudgetIsRefusedWithTheEstimate(t *testing.T) {
	r := newCommandsRig(t)
	ctx := context.Background()
	r.cm.budget, r.cm.runTime = 90*time.Minute, 2*time.Minute
	// 3 models x 2 sides x 10 repeats = 60 runs of 2 min: 2 h.
	wantRefused(t, r, true, compareRequest([]string{"llama", "qwen3", "gemma"}, 10),
		"This compare was not queued: it could take 2 h 0 min (3 models x 2 sides x up to 10 repeats = 60 runs of 2 min, "+
			"the server's compare.run_mins, as no run has finished on this host yet), over the budget of 1 h 30 min of this perfbot server (compare.budget_mins). "+
			"Compare fewer models with `models=`, or fewer repeats with `repeats=`.", "a compare over budget")

	// The same compare at 5 repeats fits: 30 runs of 2 min.
	if err := r.cm.accept(ctx, r.gh, "delivery-2", commentOn(7, true, 42, "alice"), compareRequest([]string{"llama", "qwen3", "gemma"}, 5), quiet()); err != nil {
		t.Fatal(err)
	}
	if got := state(t, r.q, 1); got.State != queue.Queued || got.Repeats != 5 {
		t.Errorf("the smaller compare is %s, want queued", got.State)
	}

	// Once a plain run of one model took 20 min on the host, a run is 20 min: one
	// model at 5 repeats is 10 runs, 3 h 20 min.
	plain := queued(t, r.q, 43, "bob", 0)
	if _, err := r.q.Finish(ctx, plain.ID, queue.Done, "success", "", 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := r.cm.accept(ctx, r.gh, "delivery-3", commentOn(7, true, 44, "alice"), compareRequest([]string{"llama"}, 5), quiet()); err != nil {
		t.Fatal(err)
	}
	wantIn(t, "the reply", r.gh.lastReply(t), "it could take 3 h 20 min (1 model x 2 sides x up to 5 repeats = 10 runs of 20 min, the time per model of the last run on this host)")
}

// /perfbot status lists a compare as compare A..B, and /perfbot cancel drops it like
// any request.
func TestStatusAndCancelOfACompare(t *testing.T) {
	r := newCommandsRig(t)
	r.cm.budget, r.cm.runTime = 8*time.Hour, 5*time.Minute
	got := statusAndCancel(t, r, true, compareRequest([]string{"llama"}, 5), "| 1 | `/bench rocm compare` compare 9fceb02d..01234567 | `alice` | `gfx1151` | queued |")
	if got.State != queue.Cancelled || got.Base != testBase {
		t.Errorf("request is %s with base %q, want cancelled and A kept", got.State, got.Base)
	}
}

// statusAndCancel accepts req as request 1 from alice's comment on #7 (a pull request
// when isPR), checks /perfbot status lists it as row, cancels it by alice and checks
// the reply and the status comment say so; it returns the request as stored then.
func statusAndCancel(t *testing.T, r *commandsRig, isPR bool, req gate.Request, row string) queue.Request {
	t.Helper()
	ctx := context.Background()
	if err := r.cm.accept(ctx, r.gh, "delivery-1", commentOn(7, isPR, 41, "alice"), req, quiet()); err != nil {
		t.Fatal(err)
	}
	if err := r.cm.status(ctx, r.gh, commentOn(7, isPR, 42, "carol"), gate.Request{Kind: command.Status}); err != nil {
		t.Fatal(err)
	}
	wantIn(t, "the status reply", r.gh.lastReply(t), row)
	sc := state(t, r.q, 1).StatusCommentID
	if err := r.cm.cancel(ctx, r.gh, commentOn(7, isPR, 43, "alice"), gate.Request{Kind: command.Cancel, Requester: "alice", Permission: "write"}, quiet()); err != nil {
		t.Fatal(err)
	}
	if got := r.gh.lastReply(t); got != "Request 1 is cancelled; it had not started." {
		t.Errorf("reply %q", got)
	}
	wantIn(t, "the status comment", r.gh.comment(t, sc), "cancelled.")
	return state(t, r.q, 1)
}

// wantRefused accepts req from alice's comment on #7 (a pull request when isPR) and
// checks that it is refused with the reply want and leaves nothing: no request stored
// (what names it), no host kicked, no reaction.
func wantRefused(t *testing.T, r *commandsRig, isPR bool, req gate.Request, want, what string) {
	t.Helper()
	ctx := context.Background()
	if err := r.cm.accept(ctx, r.gh, "delivery-1", commentOn(7, isPR, 41, "alice"), req, quiet()); err != nil {
		t.Fatal(err)
	}
	if got := r.gh.lastReply(t); got != want {
		t.Errorf("reply %q", got)
	}
	if all, _ := r.q.List(ctx, queue.Filter{}); len(all) != 0 {
		t.Errorf("%s was stored: %+v", what, all)
	}
	if len(r.kicks.hosts) != 0 || len(r.gh.reactions) != 0 {
		t.Errorf("kicks %q reactions %q for %s", r.kicks.hosts, r.gh.reactions, what)
	}
}

// The dispatch of a compare carries A as base and its repeats; a plain request sends
// neither.
func TestInputsOfACompare(t *testing.T) {
	in := Inputs(queue.Request{ID: 3, Kind: "bench", SHA: testSHA, Base: testBase, Repeats: 7, Models: []string{"llama"}})
	if in["base"] != testBase || in["repeats"] != "7" || in["sha"] != testSHA || in["job"] != "bench" {
		t.Errorf("inputs %v", in)
	}
	plain := Inputs(queue.Request{ID: 4, Kind: "bench", SHA: testSHA})
	if _, ok := plain["base"]; ok {
		t.Errorf("a plain request sends base: %v", plain)
	}
	if _, ok := plain["repeats"]; ok {
		t.Errorf("a plain request sends repeats: %v", plain)
	}
}
