package server

import (
	"context"
	"sync"
)

// hostLoops runs passes over each host's queue, one host on one goroutine of its own
// (started by the host's first kick), one pass at a time. Kicks that arrive during a
// pass become one more pass, and a kick that asks for reconciliation is not lost to one
// that does not.
type hostLoops struct {
	pass func(ctx context.Context, host string, reconcile bool)

	mu    sync.Mutex
	ctx   context.Context // the server's work context; nil before start
	wg    sync.WaitGroup
	hosts map[string]*hostLoop
}

type hostLoop struct {
	wake      chan struct{}
	reconcile bool // guarded by hostLoops.mu
}

func newHostLoops(pass func(ctx context.Context, host string, reconcile bool)) *hostLoops {
	return &hostLoops{pass: pass, hosts: map[string]*hostLoop{}}
}

// start lets kicks run passes until ctx ends.
func (l *hostLoops) start(ctx context.Context) {
	l.mu.Lock()
	l.ctx = ctx
	l.mu.Unlock()
}

// wait returns when every host's goroutine has stopped (after the context ended).
func (l *hostLoops) wait() {
	l.mu.Lock() // no kick is between its check of the context and wg.Add
	l.mu.Unlock()
	l.wg.Wait()
}

// kick asks for a pass of host's queue and returns at once. Before start, or after
// the context ended, it does nothing: the periodic check at the next start passes
// over every host.
func (l *hostLoops) kick(host string, reconcile bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx == nil || l.ctx.Err() != nil {
		return
	}
	h, ok := l.hosts[host]
	if !ok {
		h = &hostLoop{wake: make(chan struct{}, 1)}
		l.hosts[host] = h
		l.wg.Add(1)
		go l.loop(l.ctx, host, h)
	}
	h.reconcile = h.reconcile || reconcile
	select {
	case h.wake <- struct{}{}:
	default: // a pass is due already and will see this change
	}
}

func (l *hostLoops) loop(ctx context.Context, host string, h *hostLoop) {
	defer l.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		}
		l.mu.Lock()
		reconcile := h.reconcile
		h.reconcile = false
		l.mu.Unlock()
		l.pass(ctx, host, reconcile)
	}
}
