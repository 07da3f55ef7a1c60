package server

import (
	"context"
	"sync"
	"time"
)

// SetFault makes the server ask f at its fault-injection steps (StepCheckRunCreated):
// an error f returns stops the delivery at that step, as a kill would.
func SetFault(s *Server, f func(step string) error) { s.commands.fault.Store(&f) }

// Live refreshes the status comments of the running requests now, as the server does
// every Options.LiveEvery.
func Live(s *Server, ctx context.Context) { s.runs.live(ctx) }

// Clock is a test's clock, moved by hand, safe to read from the server's goroutines.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a Clock showing t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the time the clock shows.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
