package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/prometheus/client_golang/prometheus"
)

// Bounds of one sweep: GitHub lists at most 100 attempts a page.
const (
	sweepPageSize = 100
	sweepMaxPages = 100
	// sweepMaxAttempts stops asking for a delivery GitHub has failed to make this
	// many times: something other than downtime is wrong with it.
	sweepMaxAttempts = 5
)

// sweeper asks GitHub to send again the deliveries it failed to make (GitHub does not
// retry a failed delivery by itself): those sent while the server was down, or
// answered 503 while its backlog was full.
type sweeper struct {
	log    *slog.Logger
	now    func() time.Time
	window time.Duration // how far back the App's deliveries are read
	hooks  hookDeliveries
	inbox  heldChecker
	// sweeps and redeliveries are perfbot_sweeps_total and
	// perfbot_redeliveries_requested_total.
	sweeps       *prometheus.CounterVec
	redeliveries prometheus.Counter
}

// hookDeliveries is what the sweep asks GitHub as the App (*gh.AppTransport
// implements it).
type hookDeliveries interface {
	HookDeliveries(ctx context.Context, cursor string, perPage int) ([]gh.HookDelivery, string, error)
	Redeliver(ctx context.Context, id int64) error
}

// heldChecker says which delivery ids the inbox holds (bot/inbox implements it).
type heldChecker interface {
	Held(ctx context.Context, ids []string) (map[string]bool, error)
}

// run sweeps once, counts the sweep and logs what it did.
func (sw *sweeper) run(ctx context.Context) {
	n, err := sw.sweep(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil:
		sw.sweeps.WithLabelValues("error").Inc()
		sw.log.Warn("sweep: failed; trying again at the next sweep", logkey.Error, err)
	default:
		sw.sweeps.WithLabelValues("ok").Inc()
		if n > 0 {
			sw.log.Info("sweep: asked GitHub to redeliver failed deliveries", "count", n)
		}
	}
}

// guid is what the sweep learns of one delivery from its attempts.
type guid struct {
	ok       bool  // some attempt was answered 2xx
	refused  bool  // some attempt was answered 4xx: perfbot refused it on purpose
	attempts int   // attempts seen
	latest   int64 // the newest attempt, whose id redelivery takes
	event    string
}

// sweep pages through the App's recent deliveries (newest first, stopping at the
// sweep window), groups the attempts by GUID and asks GitHub to redeliver each GUID
// that no attempt delivered and the inbox does not hold. GUIDs perfbot refused (4xx:
// a bad signature, an unknown event, an unreadable payload) are left alone: sending
// them again would fail the same way. It returns how many redeliveries it asked for.
func (sw *sweeper) sweep(ctx context.Context) (int, error) {
	cutoff := sw.now().Add(-sw.window)
	groups := map[string]*guid{}
	var order []string
	cursor := ""
	for page := 0; page < sweepMaxPages; page++ {
		list, next, err := sw.hooks.HookDeliveries(ctx, cursor, sweepPageSize)
		if err != nil {
			return 0, fmt.Errorf("sweeping failed deliveries: %w", err)
		}
		done := false
		for _, d := range list {
			if d.DeliveredAt.Before(cutoff) {
				done = true // newest first: the rest are older still
				continue
			}
			g := groups[d.GUID]
			if g == nil {
				g = &guid{event: d.Event}
				groups[d.GUID] = g
				order = append(order, d.GUID)
			}
			g.attempts++
			g.ok = g.ok || d.OK()
			g.refused = g.refused || (d.StatusCode >= 400 && d.StatusCode < 500)
			if d.ID > g.latest {
				g.latest = d.ID
			}
		}
		if done || next == "" || len(list) == 0 {
			break
		}
		cursor = next
	}
	var want []string
	for _, id := range order {
		g := groups[id]
		if !g.ok && !g.refused && g.attempts < sweepMaxAttempts && g.latest > 0 {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return 0, nil
	}
	held, err := sw.inbox.Held(ctx, want)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range want {
		if held[id] {
			continue
		}
		g := groups[id]
		if err := sw.hooks.Redeliver(ctx, g.latest); err != nil {
			return n, err
		}
		n++
		sw.redeliveries.Inc()
		sw.log.Info("sweep: redelivery asked", logkey.Delivery, id, logkey.Event, g.event, "attempt", g.latest)
	}
	return n, nil
}
