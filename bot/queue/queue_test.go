package queue_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/store"
)

func add(t *testing.T, q *queue.Queue, host string, n int) []int64 {
	t.Helper()
	var ids []int64
	for i := range n {
		r, created, err := q.Add(context.Background(), queue.Request{
			Delivery: fmt.Sprintf("%s-%d", host, i), Repo: "o/r", Installation: 1, Issue: 1, CommentID: int64(i + 1),
			Requester: "alice", Kind: "profile", Command: "/profile rocm", SHA: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
			Host: host, Workflow: "perfbot.yml", Ref: "main",
		})
		if err != nil || !created || r.State != queue.Accepting {
			t.Fatalf("Add: %+v %v %v", r, created, err)
		}
		if err := q.MarkQueued(context.Background(), r.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// TestOneActivePerHost: many claims at once give each host one request, the oldest;
// the next one only after it ended.
func TestOneActivePerHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "q.db"), queue.Schema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := queue.New(db, nil)
	a := add(t, q, "gfx1151", 5)
	b := add(t, q, "gfx1201", 5)

	var mu sync.Mutex
	claimed := map[string][]int64{}
	var wg sync.WaitGroup
	for range 20 {
		for _, host := range []string{"gfx1151", "gfx1201"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, ok, err := q.Claim(ctx, host)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					claimed[host] = append(claimed[host], r.ID)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(claimed["gfx1151"]) != 1 || claimed["gfx1151"][0] != a[0] || len(claimed["gfx1201"]) != 1 || claimed["gfx1201"][0] != b[0] {
		t.Fatalf("claims %v, want one per host: %d and %d", claimed, a[0], b[0])
	}
	if _, ok, _ := q.Claim(ctx, "gfx1151"); ok {
		t.Fatal("a second claim while the host is busy")
	}
	// The same delivery again is the same request.
	if r, created, err := q.Add(ctx, queue.Request{Delivery: "gfx1151-1", Repo: "o/r", Host: "gfx1151"}); err != nil || created || r.ID != a[1] {
		t.Errorf("Add of a known delivery: id %d created %v %v, want %d, false", r.ID, created, err, a[1])
	}
	if pos, _ := q.Position(ctx, queue.Request{ID: a[3], Host: "gfx1151"}); pos != 2 {
		t.Errorf("position of the fourth: %d ahead, want 2", pos)
	}
	if ok, err := q.CancelQueued(ctx, a[1], "bob"); !ok || err != nil {
		t.Fatalf("CancelQueued: %v %v", ok, err)
	}
	if ok, err := q.Finish(ctx, a[0], queue.Done, "success", "", 0); !ok || err != nil {
		t.Fatalf("Finish: %v %v", ok, err)
	}
	if ok, _ := q.Finish(ctx, a[0], queue.Failed, "failure", "", 0); ok {
		t.Error("a finished request finished again")
	}
	r, ok, err := q.Claim(ctx, "gfx1151")
	if err != nil || !ok || r.ID != a[2] || r.State != queue.Dispatching || r.Tries != 1 {
		t.Fatalf("claim after the end: %+v %v %v; want request %d dispatching (the cancelled one skipped)", r, ok, err, a[2])
	}
}
