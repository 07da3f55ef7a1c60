package guard

import (
	"testing"
	"time"
)

// On Linux the guard waits on a timerfd: the clock is made, its waits fire through the
// descriptor (not a runtime timer), a wait of zero or less fires at once, and a wait
// re-armed before the earlier one expired replaces it.
func TestFDClock(t *testing.T) {
	t.Parallel()
	c := newFDClock()
	if c == nil {
		t.Fatal("newFDClock: no timerfd clock on Linux")
	}
	defer c.close()
	for _, d := range []time.Duration{0, -time.Second} {
		select {
		case <-c.After(d):
		case <-time.After(waitLimit):
			t.Fatalf("After(%v) did not fire", d)
		}
	}
	start := time.Now()
	ch := c.After(20 * time.Millisecond)
	c.mu.Lock()
	pending := c.ch
	c.mu.Unlock()
	if pending == nil || (<-chan time.Time)(pending) != ch {
		t.Fatal("After(20ms) did not arm the timerfd: its channel is not the pending wait")
	}
	select {
	case at := <-ch:
		if at.Sub(start) < 20*time.Millisecond {
			t.Errorf("After(20ms) fired after %v", at.Sub(start))
		}
	case <-time.After(waitLimit):
		t.Fatal("After(20ms) did not fire")
	}
	first := c.After(time.Hour)
	second := c.After(time.Millisecond)
	select {
	case <-second:
	case <-time.After(waitLimit):
		t.Fatal("a re-armed wait did not fire")
	}
	select {
	case <-first:
		t.Error("the replaced wait fired")
	default:
	}
}
