package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/inbox"
	"github.com/prometheus/client_golang/prometheus"
)

// gaugeValue reads the gauge named name among cs.
func gaugeValue(t *testing.T, cs []prometheus.Collector, name string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// TestPoolOfFourWorkersAtWork: a pool of four workers (the default) takes four
// deliveries at once as they are stored; while they are processed the gauges say how
// many and for how long the oldest has been, and /readyz's stuck check fires only once
// every worker has been on its delivery for longer than stuck_secs (or its 5 min
// default when none is set).
func TestPoolOfFourWorkersAtWork(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	clk := NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	_, db := openQueue(t, clk.Now)
	ib, err := inbox.New(ctx, db, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan string, 8), make(chan struct{})
	settled := make(chan string, 8)
	m := newMetrics()
	p := (&pool{
		workers: 4, maxAttempts: 3, inbox: ib, log: quiet(), now: clk.Now,
		retryBase: 10 * time.Second, retryMax: 15 * time.Minute,
		onSettled: func(d inbox.Delivery, _ error) { settled <- d.ID },
		processed: m.processed, seconds: m.processSeconds,
		handlers: map[string]func(context.Context, inbox.Delivery) error{
			"issue_comment": func(ctx context.Context, d inbox.Delivery) error {
				started <- d.ID
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			},
		},
	}).init()
	done := make(chan struct{})
	go func() { p.run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	wait := func(ch chan string, what string) string {
		t.Helper()
		select {
		case id := <-ch:
			return id
		case <-time.After(10 * time.Second):
			t.Fatalf("no delivery %s within 10 s", what)
		}
		return ""
	}
	store := func(id string) {
		t.Helper()
		d := inbox.Delivery{ID: id, Event: "issue_comment", Payload: []byte("{}")}
		if _, err := ib.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
		p.offer(d)
	}
	cs := p.collectors()
	if got := gaugeValue(t, cs, "perfbot_oldest_processing_seconds"); got != 0 {
		t.Errorf("idle: perfbot_oldest_processing_seconds = %v, want 0", got)
	}
	store("d-1")
	wait(started, "started")
	clk.Add(10 * time.Second)
	for i := 2; i <= 4; i++ {
		store(fmt.Sprintf("d-%d", i))
	}
	for range 3 {
		wait(started, "started")
	}
	clk.Add(80 * time.Second)
	if got := gaugeValue(t, cs, "perfbot_workers_busy"); got != 4 {
		t.Errorf("perfbot_workers_busy = %v, want 4", got)
	}
	if got := gaugeValue(t, cs, "perfbot_oldest_processing_seconds"); got != 90 {
		t.Errorf("perfbot_oldest_processing_seconds = %v, want 90 (d-1's)", got)
	}
	now := clk.Now()
	if got := p.stuck(now, 80*time.Second); got != "" {
		t.Errorf("a worker has been on its delivery for exactly stuck_secs, and the pool is called stuck: %s", got)
	}
	if got := p.stuck(now, 0); got != "" {
		t.Errorf("no stuck_secs set: the 5 min default is not used: %s", got)
	}
	got := p.stuck(now, 80*time.Second-time.Nanosecond)
	for _, want := range []string{"all 4 workers have been on their deliveries for over 1m19.999999999s", "the oldest, delivery d-1, for 1m30s"} {
		if !strings.Contains(got, want) {
			t.Errorf("stuck: %q, want it to say %q", got, want)
		}
	}
	close(release)
	for range 4 {
		wait(settled, "settled")
	}
	if got := gaugeValue(t, cs, "perfbot_oldest_processing_seconds"); got != 0 {
		t.Errorf("idle again: perfbot_oldest_processing_seconds = %v, want 0", got)
	}
}

// TestOfferNeverBlocks: a delivery just stored is handed to the workers at once while
// there is room (twice the workers), and beyond that left to the reader: the webhook's
// answer to GitHub never waits for a worker.
func TestOfferNeverBlocks(t *testing.T) {
	p := (&pool{workers: 1}).init() // no worker runs: nothing is taken from the jobs
	for i := 1; i <= 3; i++ {
		offered := make(chan struct{})
		go func() {
			p.offer(inbox.Delivery{ID: fmt.Sprintf("d-%d", i), Event: "issue_comment"})
			close(offered)
		}()
		select {
		case <-offered:
		case <-time.After(10 * time.Second):
			t.Fatalf("offering delivery %d blocked", i)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.jobs) != 2 || !p.missed || len(p.busy) != 2 {
		t.Errorf("%d handed over (%d busy), missed %v: want 2 handed over and the third left to the reader", len(p.jobs), len(p.busy), p.missed)
	}
}

// TestPoolLogsEachOutcome: what came of each delivery is logged as an operator needs
// it: nothing above info for one processed, one error naming the attempt for one that
// failed for good, a warning with the attempt and the retry time for one tried again;
// never an error about recording an outcome that was recorded.
func TestPoolLogsEachOutcome(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	_, db := openQueue(t, clk.now)
	ib, err := inbox.New(ctx, db, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]error{"ok": nil, "broken": permanent{errors.New("the payload means nothing")}, "flaky": errors.New("GitHub answered 502")}
	log, lines := capture()
	m := newMetrics()
	p := (&pool{
		workers: 1, maxAttempts: 3, inbox: ib, log: log, now: clk.now,
		retryBase: 10 * time.Second, retryMax: 15 * time.Minute,
		processed: m.processed, seconds: m.processSeconds,
		handlers: map[string]func(context.Context, inbox.Delivery) error{
			"issue_comment": func(_ context.Context, d inbox.Delivery) error { return answers[d.ID] },
		},
	}).init()
	process := func(id string) {
		t.Helper()
		d, ok, err := ib.Get(ctx, id)
		if err != nil || !ok {
			t.Fatalf("delivery %s: %v (held %v)", id, err, ok)
		}
		p.work(ctx, d)
	}
	for id := range answers {
		if _, err := ib.Put(ctx, inbox.Delivery{ID: id, Event: "issue_comment", Payload: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
	}
	process("ok")
	wantLogged(t, lines, "ERROR")
	wantLogged(t, lines, "WARN")
	process("broken")
	wantLogged(t, lines, "ERROR", "server: processing failed for good")
	if got := lines.lines("ERROR"); len(got) == 1 && !strings.Contains(got[0], "attempts=1") {
		t.Errorf("the first attempt's failure does not say attempts=1:\n%s", got[0])
	}
	process("flaky")
	process("flaky")
	wantLogged(t, lines, "WARN", "server: processing failed; retrying", "server: processing failed; retrying")
	if got := lines.lines("WARN"); len(got) == 2 && (!strings.Contains(got[1], "attempts=2") || !strings.Contains(got[1], "retry_at=2026-03-01T12:00:20Z")) {
		t.Errorf("the second retry does not say attempts=2 and its time:\n%s", got[1])
	}
	process("flaky")
	wantLogged(t, lines, "ERROR", "server: processing failed for good", "server: processing failed for good")
	if got := lines.lines("ERROR"); len(got) == 2 && !strings.Contains(got[1], "attempts=3") {
		t.Errorf("the last attempt's failure does not say attempts=3:\n%s", got[1])
	}
}

// TestReaderSleepsUntilTheNextRetry: the reader of the inbox sleeps until the next
// retry is due, at least 5 ms and at most a second (a stored delivery wakes it
// sooner); with nothing to retry, a second.
func TestReaderSleepsUntilTheNextRetry(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	_, db := openQueue(t, clk.now)
	ib, err := inbox.New(ctx, db, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	p := (&pool{workers: 1, inbox: ib, now: clk.now}).init()
	if got := p.nextWait(ctx); got != time.Second {
		t.Errorf("nothing to retry: the reader sleeps %s, want 1s", got)
	}
	if _, err := ib.Put(ctx, inbox.Delivery{ID: "d-1", Event: "issue_comment", Payload: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ due, want time.Duration }{
		{200 * time.Millisecond, 200 * time.Millisecond},
		{time.Minute, time.Second},
		{-time.Minute, 5 * time.Millisecond},
	} {
		if err := ib.Retry(ctx, "d-1", errors.New("GitHub answered 502"), clk.now().Add(c.due)); err != nil {
			t.Fatal(err)
		}
		if got := p.nextWait(ctx); got != c.want {
			t.Errorf("a retry due in %s: the reader sleeps %s, want %s", c.due, got, c.want)
		}
	}
}

// TestPruneAtMostOnceADay: done deliveries older than retention_days are deleted by the
// periodic check at most once a day: not again exactly 24 h after the last prune, and
// again just after, keeping those within the retention, and logging how many it
// deleted.
func TestPruneAtMostOnceADay(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	_, db := openQueue(t, clk.now)
	ib, err := inbox.New(ctx, db, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	log, lines := capture()
	p := (&pool{workers: 1, inbox: ib, log: log, now: clk.now}).init()
	p.prune(ctx, time.Hour) // the first check prunes
	if _, err := ib.Put(ctx, inbox.Delivery{ID: "d-1", Event: "issue_comment", Payload: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if err := ib.Done(ctx, "d-1"); err != nil {
		t.Fatal(err)
	}
	held := func(id string) bool {
		t.Helper()
		_, ok, err := ib.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	clk.add(24 * time.Hour)
	if _, err := ib.Put(ctx, inbox.Delivery{ID: "d-2", Event: "issue_comment", Payload: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if err := ib.Done(ctx, "d-2"); err != nil {
		t.Fatal(err)
	}
	p.prune(ctx, time.Hour)
	if !held("d-1") {
		t.Error("pruned again exactly 24 h after the last prune")
	}
	clk.add(time.Millisecond)
	p.prune(ctx, time.Hour)
	if held("d-1") {
		t.Error("a done delivery older than the retention was kept past a day after the last prune")
	}
	if !held("d-2") {
		t.Error("a done delivery within the retention was pruned")
	}
	wantLogged(t, lines, "WARN")
	wantLogged(t, lines, "INFO", "server: pruned old deliveries")
	if got := lines.lines("INFO"); len(got) == 1 && !strings.Contains(got[0], "count=1") {
		t.Errorf("the prune's line does not say it deleted one delivery:\n%s", got[0])
	}
}
