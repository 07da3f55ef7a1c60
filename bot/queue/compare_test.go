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
	r := addQueued(t, q, cmp)
	plain := addQueued(t, q, request("d-plain", comments.Add(1)))
	check := func(how string, got queue.Request, base string, repeats int) {
		t.Helper()
		if got.Base != base || got.Repeats != repeats {
			t.Errorf("%s: base %q repeats %d, want %q %d", how, got.Base, got.Repeats, base, repeats)
		}
	}
	check("Add", r, base, 7)
	check("Get", get(t, q, r.ID), base, 7)
	check("Get of the plain request", get(t, q, plain.ID), "", 0)
	all := listQueued(t, q, 2)
	check("List", all[0], base, 7)
	check("List of the plain request", all[1], "", 0)
	claimed, ok, err := q.Claim(ctx, "gfx1151")
	if err != nil || !ok || claimed.ID != r.ID {
		t.Fatalf("Claim: %d %v %v", claimed.ID, ok, err)
	}
	check("Claim", claimed, base, 7)
}

// TestModelRunTimes: the time of each past run over its models, newest first, from
// plain requests that ended done; failed runs and compares do not count.
func TestModelRunTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	q := openQueue(t, &now)
	finish := func(r queue.Request, state queue.State, took time.Duration) {
		t.Helper()
		r, _, err := q.Add(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
		if ok, err := q.Finish(ctx, r.ID, state, "", "", took); err != nil || !ok {
			t.Fatalf("Finish: %v %v", ok, err)
		}
	}
	two := request("d-1", comments.Add(1))
	two.Models = []string{"llama", "qwen3"}
	finish(two, queue.Done, 40*time.Minute)
	none := request("d-2", comments.Add(1)) // the config's default models: counted as one
	finish(none, queue.Done, 12*time.Minute)
	failed := request("d-3", comments.Add(1))
	finish(failed, queue.Failed, time.Minute)
	cmp := request("d-4", comments.Add(1))
	cmp.Base, cmp.Repeats, cmp.Models = "9fceb02d0ae598e95dc970b74767f19372d61af8", 5, []string{"llama"}
	finish(cmp, queue.Done, 3*time.Hour)
	other := request("d-5", comments.Add(1))
	other.Host = "gfx1201"
	finish(other, queue.Done, time.Hour)

	got, err := q.ModelRunTimes(ctx, "gfx1151", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 12*time.Minute || got[1] != 20*time.Minute {
		t.Errorf("ModelRunTimes = %v, want [12m 20m]", got)
	}
	if got, _ := q.ModelRunTimes(ctx, "gfx1151", 1); len(got) != 1 || got[0] != 12*time.Minute {
		t.Errorf("the last one: %v, want [12m]", got)
	}
}
