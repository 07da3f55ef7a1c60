package server_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// expectComparePull declares the read of the pull request of prCommentEvent: its head in the
// repository itself, targeting the default branch.
func expectComparePull(t testing.TB, s *fakegithub.Stub, head string) {
	t.Helper()
	s.Expect("GET", "/repos/"+prRepo+"/pulls/"+strconv.Itoa(prNum), s.Example(200, "pull-request", map[string]any{
		"number": prNum, "state": "open", "head.sha": head, "head.ref": "topic", "base.ref": gatetest.DefaultBranch,
		"head.repo.id": 1296269, "head.repo.full_name": prRepo, "base.repo.id": 1296269, "base.repo.full_name": prRepo,
	}))
}

// TestCompareFromCommentToDispatch follows a compare on a pull request through the
// whole server: the gate pins B to the head and A to the merge base with the target
// branch, the request is queued and dispatched with both (sha and base) and its
// repeats; /perfbot status lists it as compare A..B; a second compare whose estimate
// is over the server's budget is answered with the estimate and never queued; the
// requester cancels the first.
func TestCompareFromCommentToDispatch(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	// No run has finished on the host: a run is estimated at 5 min, so 1 model at 5
	// repeats (10 runs) is 50 min and fits; at the default 10 repeats it is 1 h 40 min.
	set.CompareBudget, set.CompareRunTime = time.Hour, 5*time.Minute
	r := start(t, stub, &set)
	expectToken(t, stub)
	const c1, c2, c3, c4 = 3001, 3002, 3003, 3004

	expectGate(t, stub, prRepo, "Codertocat", "write", false)
	expectComparePull(t, stub, gatetest.PRSHA)
	stub.Expect("GET", "/repos/"+prRepo+"/compare/"+gatetest.DefaultBranch+"..."+gatetest.PRSHA,
		stub.Example(200, "commit-comparison", map[string]any{"status": "ahead", "merge_base_commit.sha": gatetest.MasterSHA}))
	expectAccepted(t, stub, prRepo, prNum, true, c1, 1, gatetest.PRSHA, map[string]any{
		"ref": gatetest.DefaultBranch, "inputs.job": "bench", "inputs.sha": gatetest.PRSHA,
		"inputs.base": gatetest.MasterSHA, "inputs.repeats": "5", "inputs.models": "llama",
	})
	if err := r.deliver("issue_comment", "33333333-0000-4000-8000-000000000001", prCommentEvent(t, c1, "Codertocat", "/bench rocm compare repeats=5")); err != nil {
		t.Fatal(err)
	}
	r.waitDispatched(1)

	expectGate(t, stub, prRepo, "Codertocat", "write", false)
	expectReply(t, stub, prRepo, prNum, c2, "| 1 | `/bench rocm compare repeats=5` compare 6113728f..6dcb09b5 | `Codertocat` | `gfx1151` | dispatched |")
	if err := r.deliver("issue_comment", "33333333-0000-4000-8000-000000000002", prCommentEvent(t, c2, "Codertocat", "/perfbot status")); err != nil {
		t.Fatal(err)
	}

	expectGate(t, stub, prRepo, "Codertocat", "write", false)
	expectComparePull(t, stub, gatetest.PRSHA)
	stub.Expect("GET", "/repos/"+prRepo+"/compare/"+gatetest.DefaultBranch+"..."+gatetest.PRSHA,
		stub.Example(200, "commit-comparison", map[string]any{"status": "ahead", "merge_base_commit.sha": gatetest.MasterSHA}))
	expectReply(t, stub, prRepo, prNum, c3, "This compare was not queued: it could take 1 h 40 min (1 model x 2 sides x up to 10 repeats = 20 runs of 5 min, "+
		"the server's compare.run_mins")
	if err := r.deliver("issue_comment", "33333333-0000-4000-8000-000000000003", prCommentEvent(t, c3, "Codertocat", "/bench rocm compare")); err != nil {
		t.Fatal(err)
	}

	expectGate(t, stub, prRepo, "Codertocat", "write", false)
	expectReply(t, stub, prRepo, prNum, c4, "Request 1 was dispatched; its run is cancelled as soon as GitHub lists it")
	if err := r.deliver("issue_comment", "33333333-0000-4000-8000-000000000004", prCommentEvent(t, c4, "Codertocat", "/perfbot cancel 1")); err != nil {
		t.Fatal(err)
	}
	r.wantMetrics(
		`perfbot_dispatches_total{host="gfx1151",result="sent"} 1`,
		`perfbot_queue_depth{host="gfx1151",state="queued"} 0`,
		fmt.Sprintf(`perfbot_commands_total{outcome="accepted",reason=""} %d`, 4),
	)
}
