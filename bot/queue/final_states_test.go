package queue_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/store"
)

// openQueue opens a fresh queue whose clock the test moves.
func openQueue(t *testing.T, now *time.Time) *queue.Queue {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return queue.New(db, func() time.Time { return *now })
}

func get(t *testing.T, q *queue.Queue, id int64) queue.Request {
	t.Helper()
	r, ok, err := q.Get(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("Get(%d): %v %v", id, ok, err)
	}
	return r
}

// TestEndedRequestStaysEnded: a request that ended (cancelled while it waited, done or
// failed) keeps its state, conclusion, error and end time when something tries to
// finish it again - a late run event must not turn a cancelled request into a done one.
func TestEndedRequestStaysEnded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	q := openQueue(t, &now)
	ids := add(t, q, "gfx1151", 3)

	if ok, err := q.CancelQueued(ctx, ids[0], "alice"); err != nil || !ok {
		t.Fatalf("CancelQueued: %v %v", ok, err)
	}
	if ok, err := q.Finish(ctx, ids[1], queue.Done, "success", "", time.Minute); err != nil || !ok {
		t.Fatalf("Finish done: %v %v", ok, err)
	}
	if ok, err := q.Finish(ctx, ids[2], queue.Failed, "failure", "the run failed", 2*time.Minute); err != nil || !ok {
		t.Fatalf("Finish failed: %v %v", ok, err)
	}
	before := map[int64]queue.Request{}
	for _, id := range ids {
		before[id] = get(t, q, id)
	}
	if before[ids[0]].State != queue.Cancelled || before[ids[0]].CancelBy != "alice" || !before[ids[0]].FinishedAt.Equal(now) {
		t.Fatalf("cancelled request %+v", before[ids[0]])
	}

	now = now.Add(time.Hour)
	for _, id := range ids {
		for _, s := range []queue.State{queue.Done, queue.Failed, queue.Cancelled} {
			ok, err := q.Finish(ctx, id, s, "cancelled", "late", time.Hour)
			if err != nil || ok {
				t.Errorf("Finish(%d, %s) of an ended request: %v %v, want false and no error", id, s, ok, err)
			}
		}
		if ok, err := q.CancelQueued(ctx, id, "mallory"); err != nil || ok {
			t.Errorf("CancelQueued(%d) of an ended request: %v %v", id, ok, err)
		}
		after := get(t, q, id)
		b := before[id]
		if after.State != b.State || after.Conclusion != b.Conclusion || after.Error != b.Error ||
			after.CancelBy != b.CancelBy || !after.FinishedAt.Equal(b.FinishedAt) {
			t.Errorf("request %d changed after it ended:\n %+v\nwas\n %+v", id, after, b)
		}
	}
	times, err := q.RunTimes(ctx, "gfx1151", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 2 || times[0]+times[1] != 3*time.Minute {
		t.Errorf("run times %v, want the first finish's 1 and 2 minutes only", times)
	}
}

// TestFinishStates: only done, failed and cancelled end a request; any other state is
// an error and leaves the request as it was.
func TestFinishStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	q := openQueue(t, &now)
	for _, s := range []queue.State{queue.Accepting, queue.Queued, queue.Dispatching, queue.Dispatched, queue.Running, "bogus"} {
		id := add(t, q, "h-"+string(s), 1)[0]
		if ok, err := q.Finish(ctx, id, s, "", "", 0); err == nil || ok {
			t.Errorf("Finish with %s: %v %v, want an error", s, ok, err)
		}
		if r := get(t, q, id); r.State != queue.Queued || !r.FinishedAt.IsZero() {
			t.Errorf("after Finish with %s: %+v", s, r)
		}
	}
	for _, s := range []queue.State{queue.Done, queue.Failed, queue.Cancelled} {
		id := add(t, q, "f-"+string(s), 1)[0]
		if ok, err := q.Finish(ctx, id, s, "c", "e", time.Second); err != nil || !ok {
			t.Errorf("Finish with %s: %v %v", s, ok, err)
		}
		if r := get(t, q, id); r.State != s || r.Conclusion != "c" || r.Error != "e" || !r.FinishedAt.Equal(now) {
			t.Errorf("after Finish with %s: %+v", s, r)
		}
	}
}

func TestStatePredicates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s             queue.State
		final, active bool
	}{
		{queue.Accepting, false, false}, {queue.Queued, false, false},
		{queue.Dispatching, false, true}, {queue.Dispatched, false, true}, {queue.Running, false, true},
		{queue.Done, true, false}, {queue.Failed, true, false}, {queue.Cancelled, true, false},
	} {
		if c.s.Final() != c.final || c.s.Active() != c.active {
			t.Errorf("%s: Final %v Active %v, want %v %v", c.s, c.s.Final(), c.s.Active(), c.final, c.active)
		}
	}
}
