//go:build !linux

package guard

import "time"

// fdClock exists on Linux only; elsewhere the guard keeps RealClock.
type fdClock struct{}

func newFDClock() *fdClock { return nil }

func (c *fdClock) close()                                 {}
func (c *fdClock) Now() time.Time                         { return time.Now() }
func (c *fdClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
