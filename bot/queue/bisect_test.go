package queue_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/queue"
)

// TestBisectComesBackAsAdded: a bisection is stored in the columns a compare uses
// (kind bisect, its good end as base, its bad end as the pinned commit, its budget of
// runs as repeats, its one model) and read back whole by Get, List and Claim; it is
// not a plain run, so its time does not count in ModelRunTimes.
func TestBisectComesBackAsAdded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	q := openQueue(t, &now)
	in := request("d-bisect", comments.Add(1))
	in.Kind, in.Command, in.Models = "bisect", "/bench rocm bisect good=9fceb02 bad=6113728", []string{"qwen3"}
	in.Base, in.Repeats, in.PinnedFrom = "9fceb02d0ae598e95dc970b74767f19372d61af8", 60, "commit 6113728f27ae82c7b1a177c8d03f9e96e0adf246 (bad=)"
	r := addQueued(t, q, in)
	want := in
	want.ID, want.State, want.CreatedAt = r.ID, queue.Queued, now
	for how, got := range map[string]queue.Request{"Get": get(t, q, r.ID), "List": listQueued(t, q, 1)[0]} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n %+v\nwant\n %+v", how, got, want)
		}
	}
	claimed, ok, err := q.Claim(ctx, "gfx1151")
	if err != nil || !ok {
		t.Fatalf("Claim: %v %v", ok, err)
	}
	if claimed.Kind != "bisect" || claimed.Base != in.Base || claimed.SHA != in.SHA || claimed.Repeats != 60 || !reflect.DeepEqual(claimed.Models, []string{"qwen3"}) {
		t.Errorf("Claim: %+v", claimed)
	}
	if ok, err := q.Finish(ctx, r.ID, queue.Done, "success", "", 3*time.Hour); err != nil || !ok {
		t.Fatalf("Finish: %v %v", ok, err)
	}
	if times, err := q.ModelRunTimes(ctx, "gfx1151", 5); err != nil || len(times) != 0 {
		t.Errorf("ModelRunTimes after a bisection: %v %v, want none", times, err)
	}
}
