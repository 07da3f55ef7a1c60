package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/prometheus/client_golang/prometheus"
)

// pool drains the inbox with a fixed number of workers, each delivery going to its
// event's handler, and records what came of it: done, retried later, or failed. A delivery just stored is
// handed over at once while there is room (its payload is in memory); everything else
// (a backlog, retries, what a restart finds) is read from the database by one
// goroutine. The database, not a channel, is the queue: a restart resumes where the
// last process stopped.
type pool struct {
	workers     int
	maxAttempts int // attempts of a delivery before it is failed
	inbox       *inbox.Inbox
	handlers    map[string]func(context.Context, inbox.Delivery) error // by event
	log         *slog.Logger
	now         func() time.Time
	// retryBase is the first wait before a failed delivery is processed again; it
	// doubles per attempt up to retryMax.
	retryBase, retryMax time.Duration
	onSettled           func(d inbox.Delivery, err error) // Options.OnSettled
	// processed and seconds are perfbot_deliveries_processed_total and
	// perfbot_delivery_processing_seconds.
	processed *prometheus.CounterVec
	seconds   *prometheus.HistogramVec

	wake chan struct{}
	jobs chan inbox.Delivery

	mu      sync.Mutex
	busy    map[string]bool      // handed over and not yet settled
	missed  bool                 // a stored delivery found no room: read the database
	stopped bool                 // run has returned and closed jobs: nothing is handed over
	working map[string]time.Time // being processed by a worker, since
	pruned  time.Time            // the last prune of old deliveries
}

// init makes the pool's channels and maps once its fields are set.
func (p *pool) init() *pool {
	p.wake = make(chan struct{}, 1)
	p.jobs = make(chan inbox.Delivery, 2*p.workers)
	p.busy, p.working = map[string]bool{}, map[string]time.Time{}
	return p
}

// handled lists the events the pool has a handler for.
func (p *pool) handled() []string {
	events := make([]string, 0, len(p.handlers))
	for e := range p.handlers {
		events = append(events, e)
	}
	return events
}

// oldest returns how many deliveries workers are processing, the one they have been
// on longest and since when.
func (p *pool) oldest() (n int, id string, since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for d, at := range p.working {
		if id == "" || at.Before(since) {
			id, since = d, at
		}
	}
	return len(p.working), id, since
}

// stuck says why the pool cannot take work: every worker has been on its delivery for
// longer than after (a GitHub call that hangs, or a handler that does). "" when not.
func (p *pool) stuck(now time.Time, after time.Duration) string {
	if after <= 0 {
		after = DefaultSettings().StuckAfter
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.working) < p.workers {
		return ""
	}
	var id string
	var oldest time.Time
	for d, at := range p.working {
		if now.Sub(at) <= after {
			return ""
		}
		if id == "" || at.Before(oldest) {
			id, oldest = d, at
		}
	}
	return fmt.Sprintf("all %d workers have been on their deliveries for over %s (the oldest, delivery %s, for %s); new deliveries are stored but not processed",
		len(p.working), after, id, now.Sub(oldest).Round(time.Second))
}

// collectors are the pool's gauges, read at scrape time.
func (p *pool) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "perfbot_workers_busy", Help: "Workers processing a delivery now.",
		}, func() float64 { n, _, _ := p.oldest(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "perfbot_oldest_processing_seconds", Help: "How long the delivery processed longest now has been; 0 when the workers are idle.",
		}, func() float64 {
			n, _, since := p.oldest()
			if n == 0 {
				return 0
			}
			return p.now().Sub(since).Seconds()
		}),
	}
}

// offer hands a delivery just stored to the workers when there is room, and otherwise
// leaves it to the reader. Once the pool has stopped (a shutdown, while the HTTP server
// still answers the deliveries in flight) it hands nothing over: the delivery stays
// received and is done after a restart.
func (p *pool) offer(d inbox.Delivery) {
	p.mu.Lock()
	if p.stopped || p.busy[d.ID] || len(p.busy) >= cap(p.jobs) {
		p.missed = true
		p.mu.Unlock()
		return
	}
	p.busy[d.ID] = true
	p.mu.Unlock()
	p.jobs <- d // never blocks: the channel holds at most len(busy) deliveries
}

// wakeUp tells the reader that something may be due now.
func (p *pool) wakeUp() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *pool) run(ctx context.Context) {
	var wg sync.WaitGroup
	for range p.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range p.jobs {
				p.work(ctx, d)
			}
		}()
	}
	defer func() {
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
		close(p.jobs)
		wg.Wait()
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-timer.C:
		}
		p.fill(ctx)
		timer.Reset(p.nextWait(ctx))
	}
}

// fill hands out due deliveries while there is room, so a worker never waits on the
// database and the jobs channel never blocks.
func (p *pool) fill(ctx context.Context) {
	p.mu.Lock()
	p.missed = false
	room := cap(p.jobs) - len(p.busy)
	busy := make(map[string]bool, len(p.busy))
	for id := range p.busy {
		busy[id] = true
	}
	p.mu.Unlock()
	if room <= 0 {
		return
	}
	ds, err := p.inbox.Due(ctx, room, busy)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Error("server: reading due deliveries failed", logkey.Error, err)
		}
		return
	}
	for _, d := range ds {
		p.mu.Lock()
		// An offer may have taken it, or the room, since the query.
		if p.busy[d.ID] || len(p.busy) >= cap(p.jobs) {
			p.mu.Unlock()
			continue
		}
		p.busy[d.ID] = true
		p.mu.Unlock()
		p.jobs <- d
	}
}

// nextWait is how long the reader may sleep: until the next retry is due, at most a
// second (a wake-up comes sooner when a delivery arrives).
func (p *pool) nextWait(ctx context.Context) time.Duration {
	at, ok, err := p.inbox.NextDue(ctx)
	if err != nil || !ok {
		return time.Second
	}
	return min(max(at.Sub(p.now()), 5*time.Millisecond), time.Second)
}

func (p *pool) work(ctx context.Context, d inbox.Delivery) {
	defer func() {
		p.mu.Lock()
		delete(p.busy, d.ID)
		missed := p.missed
		p.mu.Unlock()
		if missed {
			p.wakeUp()
		}
	}()
	if ctx.Err() != nil {
		return
	}
	log := p.log.With(logkey.Delivery, d.ID, logkey.Event, d.Event, logkey.Repo, d.Repo)
	start := p.now()
	p.mu.Lock()
	p.working[d.ID] = start
	p.mu.Unlock()
	err := p.process(ctx, d)
	p.mu.Lock()
	delete(p.working, d.ID)
	p.mu.Unlock()
	p.seconds.WithLabelValues(d.Event).Observe(p.now().Sub(start).Seconds())
	// A shutdown cuts work short: leave the delivery received, to be done after a
	// restart, without counting an attempt.
	if ctx.Err() != nil {
		log.Info("server: processing interrupted by shutdown; the delivery stays received")
		return
	}
	if p.onSettled != nil {
		defer p.onSettled(d, err)
	}
	bg := context.WithoutCancel(ctx)
	var perm permanent
	switch {
	case err == nil:
		if serr := p.inbox.Done(bg, d.ID); serr != nil {
			log.Error("server: recording a processed delivery failed", logkey.Error, serr)
		}
		p.processed.WithLabelValues(d.Event, "done").Inc()
	case errors.As(err, &perm) || d.Attempts+1 >= p.maxAttempts:
		log.Error("server: processing failed for good; a redelivery will process it again", logkey.Error, err, "attempts", d.Attempts+1)
		if serr := p.inbox.Fail(bg, d.ID, err); serr != nil {
			log.Error("server: recording a failed delivery failed", logkey.Error, serr)
		}
		p.processed.WithLabelValues(d.Event, "failed").Inc()
	default:
		next := p.retryAt(err, d.Attempts)
		log.Warn("server: processing failed; retrying", logkey.Error, err, "attempts", d.Attempts+1, "retry_at", next.UTC().Format(time.RFC3339))
		if serr := p.inbox.Retry(bg, d.ID, err, next); serr != nil {
			log.Error("server: recording a retry failed", logkey.Error, serr)
		}
		p.processed.WithLabelValues(d.Event, "retry").Inc()
	}
}

// process runs the handler of the delivery's event.
func (p *pool) process(ctx context.Context, d inbox.Delivery) error {
	h, ok := p.handlers[d.Event]
	if !ok {
		return nil // an event stored by an older version that handled it
	}
	return h(ctx, d)
}

// permanent marks a processing error that another attempt cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// retryAt says when a failed delivery may be tried again: after GitHub's rate-limit
// time, or after an exponential backoff.
func (p *pool) retryAt(err error, attempts int) time.Time {
	wait := p.retryBase << min(attempts, 20)
	if wait <= 0 || wait > p.retryMax {
		wait = p.retryMax
	}
	at := p.now().Add(wait)
	var rl *gh.RateLimitError
	if errors.As(err, &rl) && rl.RetryAt.After(at) {
		at = rl.RetryAt
	}
	return at
}

// prune deletes done deliveries older than retention, at most once a day.
func (p *pool) prune(ctx context.Context, retention time.Duration) {
	p.mu.Lock()
	due := p.now().Sub(p.pruned) > 24*time.Hour
	if due {
		p.pruned = p.now()
	}
	p.mu.Unlock()
	if !due {
		return
	}
	if n, err := p.inbox.Prune(ctx, p.now().Add(-retention)); err != nil {
		p.log.Warn("server: pruning old deliveries failed", logkey.Error, err)
	} else if n > 0 {
		p.log.Info("server: pruned old deliveries", "count", n)
	}
}
