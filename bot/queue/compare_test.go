package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/queue"
)

// TestCompareComesBackThroughEveryRead: a compare's A commit and repeats are read back
// by Get, List and Claim (what the dispatcher sends), and a plain request beside it
// has none.
func TestCompareComesBackThroughEveryRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	q := openQueue(t, &now)
	const base = "9fceb02d0ae598e95dc970b74767f19372d61af8"
	cmp := request("d-compare", comments.Add(1))
	cmp.Kind, cmp.Command, cmp.Base, cmp.Repeats = "bench", "/bench rocm compare repeats=7", base, 7
	r, created, err := q.Add(ctx, cmp)
	if err != nil || !created {
		t.Fatalf("Add: %v %v", created, err)
	}
	plain, _, err := q.Add(ctx, request("d-plain", comments.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{r.ID, plain.ID} {
		if err := q.MarkQueued(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	check := func(how string, got queue.Request, base string, repeats int) {
		t.Helper()
		if got.Base != base || got.Repeats != repeats {
			t.Errorf("%s: base %q repeats %d, want %q %d", how, got.Base, got.Repeats, base, repeats)
		}
	}
	check("Add", r, base, 7)
	check("Get", get(t, q, r.ID), base, 7)
	check("Get of the plain request", get(t, q, plain.ID), "", 0)
	all, err := q.List(ctx, queue.Filter{States: []queue.State{queue.Queued}})
	if err != nil || len(all) != 2 {
		t.Fatalf("List: %d %v", len(all), err)
	}
	check("List", all[0], base, 7)
	check("List of the plain request", all[1], "", 0)
	claimed, ok, err := q.Claim(ctx, "gfx1151")
	if err != nil || !ok || claimed.ID != r.ID {
		t.Fatalf("Claim: %d %v %v", claimed.ID, ok, err)
	}
	check("Claim", claimed, base, 7)
}
