package server

import (
	"context"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/queue"
)

func bisectRequest(model string, maxRuns int) gate.Request {
	return gate.Request{Kind: command.Bisect,
		Command: command.Command{Kind: command.Bisect, Backend: "rocm", Text: "/bench rocm bisect good=9fceb02 bad=0123456", Models: []string{model}},
		SHA:     testSHA, PinnedFrom: "commit " + testSHA + " (bad=)", Requester: "alice", Permission: "write",
		Base: testBase, BasePinnedFrom: "commit " + testBase + " (good=)",
		Models: []string{model}, Commits: 12, MaxRuns: maxRuns, MinRuns: 20}
}

// A bisection within the budget is stored as kind bisect with its good end as base,
// its bad end as the pinned commit and its budget of runs; its status comment names the
// range and the model. Asked on a pull request it gets no check run: its commits are
// the default branch's.
func TestAcceptOfABisectStoresTheRange(t *testing.T) {
	r := newCommandsRig(t)
	r.cm.budget, r.cm.runTime = 5*time.Hour, 5*time.Minute // 60 x 5 min = 5 h: at the budget
	ev := commentOn(7, true, 41, "alice")
	if err := r.cm.accept(context.Background(), r.gh, "delivery-1", ev, bisectRequest("llama", 60), quiet()); err != nil {
		t.Fatal(err)
	}
	got := state(t, r.q, 1)
	if got.State != queue.Queued || got.Kind != "bisect" || got.SHA != testSHA || got.Base != testBase || got.Repeats != 60 || len(got.Models) != 1 || got.Models[0] != "llama" {
		t.Errorf("request %+v; want a queued bisect of llama, bad %s, good %s, 60 runs", got, testSHA, testBase)
	}
	if len(r.gh.checkSpecs) != 0 || got.CheckRunID != 0 {
		t.Errorf("a bisection made %d check runs (recorded %d)", len(r.gh.checkSpecs), got.CheckRunID)
	}
	wantIn(t, "the status comment", r.gh.comment(t, got.StatusCommentID), "queued. Request 1 on host gfx1151, bisect "+
		testBase[:8]+".."+testSHA[:8]+" (llama), at most 60 runs.")
	in := Inputs(got)
	if in["job"] != "bisect" || in["base"] != testBase || in["sha"] != testSHA || in["models"] != "llama" {
		t.Errorf("dispatch inputs %v", in)
	}
	if _, ok := in["repeats"]; ok {
		t.Errorf("a bisection sends repeats: %v", in)
	}
}

// A bisection whose budget of runs would take longer than the server's budget is
// refused at acceptance with the estimate; nothing is stored.
func TestBisectOverBudgetIsRefusedWithTheEstimate(t *testing.T) {
	r := newCommandsRig(t)
	r.cm.budget, r.cm.runTime = 5*time.Hour, 5*time.Minute
	// 61 runs of 5 min: 5 h 5 min.
	wantRefused(t, r, false, bisectRequest("llama", 61),
		"This bisection was not queued: it could take 5 h 5 min (up to 61 single-model runs of 5 min, the config's limits.max_bisect_runs; "+
			"the range `9fceb02d..01234567` of 12 commits needs at least 20; the server's compare.run_mins, as no run has finished on this host yet), "+
			"over the budget of 5 h 0 min of this perfbot server (compare.budget_mins). Lower limits.max_bisect_runs in the config, or ask the server's operator for a larger budget.",
		"a bisection over budget")
}

// /perfbot status lists a bisection as bisect good..bad (model), and /perfbot cancel
// drops it like any request, keeping its range.
func TestStatusAndCancelOfABisect(t *testing.T) {
	r := newCommandsRig(t)
	r.cm.budget, r.cm.runTime = 8*time.Hour, 5*time.Minute
	got := statusAndCancel(t, r, false, bisectRequest("qwen3", 60), "| 1 | `/bench rocm bisect good=9fceb02 bad=0123456` bisect 9fceb02d..01234567 (qwen3) | `alice` | `gfx1151` | queued |")
	if got.State != queue.Cancelled || got.Base != testBase || got.Kind != "bisect" {
		t.Errorf("request is %s %s with base %q, want a cancelled bisect with its good end kept", got.State, got.Kind, got.Base)
	}
}
