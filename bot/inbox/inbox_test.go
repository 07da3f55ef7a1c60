package inbox_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/store"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestDueRetryPrune: due deliveries come oldest first without the busy ones, a retry
// waits for its time, and pruning drops only old done deliveries.
func TestDueRetryPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clk := &clock{t: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}
	ib, err := inbox.New(ctx, db, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"aaaaaaaa-1", "aaaaaaaa-2", "aaaaaaaa-3"} {
		if out, err := ib.Put(ctx, inbox.Delivery{ID: id, Event: "issue_comment", Payload: []byte("{}")}); err != nil || out != inbox.Stored {
			t.Fatalf("Put %s: %v %v", id, out, err)
		}
		clk.add(time.Second)
	}
	due, err := ib.Due(ctx, 10, map[string]bool{"aaaaaaaa-1": true})
	if err != nil || len(due) != 2 || due[0].ID != "aaaaaaaa-2" || due[1].ID != "aaaaaaaa-3" {
		t.Fatalf("Due = %v, %v; want 2 then 3", ids(due), err)
	}
	if err := ib.Retry(ctx, "aaaaaaaa-2", errors.New("GitHub answered 502"), clk.now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if due, _ := ib.Due(ctx, 10, nil); len(due) != 2 || due[0].ID != "aaaaaaaa-1" || due[1].ID != "aaaaaaaa-3" {
		t.Errorf("after the retry: due %v, want 1 and 3", ids(due))
	}
	if at, ok, _ := ib.NextDue(ctx); !ok || !at.Equal(clk.now().Add(-3*time.Second)) {
		t.Errorf("NextDue = %v %v", at, ok)
	}
	clk.add(time.Minute)
	d, _, _ := ib.Get(ctx, "aaaaaaaa-2")
	if d.Attempts != 1 || d.Error != "GitHub answered 502" {
		t.Errorf("retried delivery: %+v", d)
	}
	for _, id := range []string{"aaaaaaaa-1", "aaaaaaaa-2"} {
		if err := ib.Done(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if ib.Pending() != 1 {
		t.Errorf("pending %d, want 1", ib.Pending())
	}
	n, err := ib.Prune(ctx, clk.now())
	if err != nil || n != 2 {
		t.Errorf("Prune = %d, %v; want the 2 done", n, err)
	}
	if _, held, _ := ib.Get(ctx, "aaaaaaaa-3"); !held {
		t.Error("a received delivery was pruned")
	}
}

func ids(ds []inbox.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}
