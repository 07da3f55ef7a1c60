package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
)

// TestPoolSettlesEachOutcome: the pool records what came of a delivery: done, failed
// for good (a permanent error, or the last attempt), or received again after a
// doubling wait, or at the time GitHub's rate limit names.
func TestPoolSettlesEachOutcome(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	_, db := openQueue(t, clk.now)
	ib, err := inbox.New(ctx, db, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	limitedUntil := clk.t.Add(time.Hour)
	answers := map[string]error{
		"ok":      nil,
		"broken":  permanent{errors.New("the payload means nothing")},
		"flaky":   errors.New("GitHub answered 502"),
		"limited": &gh.RateLimitError{RetryAt: limitedUntil},
	}
	m := newMetrics()
	var settled []string
	p := (&pool{
		workers: 1, maxAttempts: 3, inbox: ib, log: quiet(), now: clk.now,
		retryBase: 10 * time.Second, retryMax: 15 * time.Minute,
		onSettled: func(d inbox.Delivery, _ error) { settled = append(settled, d.ID) },
		processed: m.processed, seconds: m.processSeconds,
		handlers: map[string]func(context.Context, inbox.Delivery) error{
			"issue_comment": func(_ context.Context, d inbox.Delivery) error { return answers[d.ID] },
		},
	}).init()
	process := func(id string) inbox.Delivery {
		t.Helper()
		d, ok, err := ib.Get(ctx, id)
		if err != nil || !ok {
			t.Fatalf("delivery %s: %v (held %v)", id, err, ok)
		}
		p.work(ctx, d)
		d, _, _ = ib.Get(ctx, id)
		return d
	}
	for id := range answers {
		if _, err := ib.Put(ctx, inbox.Delivery{ID: id, Event: "issue_comment", Payload: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
	}
	if d := process("ok"); d.State != inbox.Done {
		t.Errorf("a delivery processed without error is %s, want done", d.State)
	}
	if d := process("broken"); d.State != inbox.Failed || d.Error != "the payload means nothing" {
		t.Errorf("a delivery with a permanent error is %s (%q), want failed at once", d.State, d.Error)
	}
	if d := process("limited"); d.State != inbox.Received || !d.NextAt.Equal(limitedUntil) {
		t.Errorf("a rate-limited delivery is %s, due %s, want received, due when GitHub said (%s)", d.State, d.NextAt, limitedUntil)
	}
	for i, wait := range []time.Duration{10 * time.Second, 20 * time.Second} {
		if d := process("flaky"); d.State != inbox.Received || d.NextAt.Sub(clk.t) != wait || d.Attempts != i+1 {
			t.Errorf("attempt %d: the delivery is %s after %d attempts, due in %s; want received, due in %s", i+1, d.State, d.Attempts, d.NextAt.Sub(clk.t), wait)
		}
	}
	if d := process("flaky"); d.State != inbox.Failed || d.Attempts != 3 {
		t.Errorf("after max_attempts the delivery is %s (%d attempts), want failed", d.State, d.Attempts)
	}
	if len(settled) != 6 {
		t.Errorf("OnSettled was told %d times (%q), want once per processing", len(settled), settled)
	}
	if got := counted(t, m.processed, map[string]string{"result": "retry"}); got != 3 {
		t.Errorf("perfbot_deliveries_processed_total{result=retry} = %v, want 3", got)
	}
}
