package guard

import "time"

// Clock is the guard's only source of time, so idle-window and sampling tests can step
// it instead of waiting out real seconds.
type Clock interface {
	Now() time.Time
	// After delivers the time once d has passed.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns the current time.
func (RealClock) Now() time.Time { return time.Now() }

// After waits for d on the wall clock.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
