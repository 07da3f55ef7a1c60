package server

import (
	"context"
	"fmt"
	"time"

	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/lablup/perfbot/bot/queue"
)

// Bounds of one sweep: GitHub lists at most 100 attempts a page.
const (
	sweepPageSize = 100
	sweepMaxPages = 100
	// sweepMaxAttempts stops asking for a delivery GitHub has failed to make this
	// many times: something other than downtime is wrong with it.
	sweepMaxAttempts = 5
)

func (s *Server) sweepLoop(ctx context.Context) {
	for {
		if n, err := s.Sweep(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.m.sweeps.WithLabelValues("error").Inc()
			s.log.Warn("sweep: failed; trying again at the next sweep", logkey.Error, err)
		} else {
			s.m.sweeps.WithLabelValues("ok").Inc()
			if n > 0 {
				s.log.Info("sweep: asked GitHub to redeliver failed deliveries", "count", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.set.SweepEvery):
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

// Sweep pages through the App's recent deliveries (newest first, stopping at the
// sweep window), groups the attempts by GUID and asks GitHub to redeliver each GUID
// that no attempt delivered and the inbox does not hold. GUIDs perfbot refused (4xx:
// a bad signature, an unknown event, an unreadable payload) are left alone: sending
// them again would fail the same way. It returns how many redeliveries it asked for.
func (s *Server) Sweep(ctx context.Context) (int, error) {
	cutoff := s.o.Now().Add(-s.set.SweepWindow)
	groups := map[string]*guid{}
	var order []string
	cursor := ""
	for page := 0; page < sweepMaxPages; page++ {
		list, next, err := s.app.HookDeliveries(ctx, cursor, sweepPageSize)
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
	held, err := s.inbox.Held(ctx, want)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range want {
		if held[id] {
			continue
		}
		g := groups[id]
		if err := s.app.Redeliver(ctx, g.latest); err != nil {
			return n, err
		}
		n++
		s.m.redeliveries.Inc()
		s.log.Info("sweep: redelivery asked", logkey.Delivery, id, logkey.Event, g.event, "attempt", g.latest)
	}
	return n, nil
}

// checkLoop runs Check now and every dispatch.check_secs.
func (s *Server) checkLoop(ctx context.Context) {
	for {
		s.Check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.set.CheckEvery):
		}
	}
}

// Check reconciles every host's queue with GitHub (dispatches to retry or confirm,
// runs whose end was missed), drops requests that could not be queued, and prunes old
// deliveries once a day.
func (s *Server) Check(ctx context.Context) {
	s.dropUnqueued(ctx)
	for _, h := range s.set.Hosts {
		s.pump(ctx, h.Label, true)
	}
	s.mu.Lock()
	due := s.o.Now().Sub(s.pruned) > 24*time.Hour
	if due {
		s.pruned = s.o.Now()
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if n, err := s.inbox.Prune(ctx, s.o.Now().Add(-s.set.Retention)); err != nil {
		s.log.Warn("server: pruning old deliveries failed", logkey.Error, err)
	} else if n > 0 {
		s.log.Info("server: pruned old deliveries", "count", n)
	}
}

// dropUnqueued ends the requests whose acceptance failed for good (their delivery ran
// out of attempts before the request joined its queue), so they do not count as
// waiting forever, and says so on GitHub where it can.
func (s *Server) dropUnqueued(ctx context.Context) {
	stuck, err := s.queue.List(ctx, queue.Filter{States: []queue.State{queue.Accepting}})
	if err != nil {
		return
	}
	for _, r := range stuck {
		d, ok, err := s.inbox.Get(ctx, r.Delivery)
		if err != nil || !ok || d.State != inbox.Failed {
			continue
		}
		why := fmt.Sprintf("Request %d could not be queued: %s. Post the command again.", r.ID, d.Error)
		if changed, err := s.queue.Finish(ctx, r.ID, queue.Failed, "", why, 0); err != nil || !changed {
			continue
		}
		s.m.runs.WithLabelValues(r.Host, string(queue.Failed)).Inc()
		s.log.Warn("server: a request that could not be queued was dropped", logkey.Request, r.ID, logkey.Delivery, r.Delivery)
		r.State = queue.Failed
		if err := s.finishMarks(ctx, r, why, ""); err != nil {
			s.log.Warn("server: finishing the marks of a dropped request failed", logkey.Request, r.ID, logkey.Error, err)
		}
	}
}
