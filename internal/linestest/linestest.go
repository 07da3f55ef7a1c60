// Package linestest collects what a test's processes print, line by line, and lets the
// test wait for a line that matches, with a deadline that turns a hang into a failure
// (nothing is asserted about time). It is for tests only and must not be imported by
// production code.
package linestest

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Lines collects written output and lets a test wait for a line.
type Lines struct {
	// Limit bounds each wait; 0 means two minutes. A test of something that answers in
	// milliseconds sets it to seconds, so that a hang fails the test quickly.
	Limit time.Duration

	mu      sync.Mutex
	cond    *sync.Cond
	partial []byte
	all     []string
	cursor  int // wait looks only at lines after its previous match
	expired bool
}

// New returns an empty collector.
func New() *Lines {
	l := &Lines{}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// Write takes output; complete lines become visible to the waits.
func (l *Lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := strings.IndexByte(string(l.partial), '\n')
		if i < 0 {
			break
		}
		l.all = append(l.all, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	l.cond.Broadcast()
	return len(p), nil
}

// Wait blocks until a line after the previous match matches re and returns its
// submatches. The limit only turns a hang into a failure; nothing is asserted about time.
func (l *Lines) Wait(t testing.TB, re string) []string {
	t.Helper()
	return l.search(t, re, true)
}

// WaitAny is Wait over all lines so far, for output whose order is not fixed.
func (l *Lines) WaitAny(t testing.TB, re string) []string {
	t.Helper()
	return l.search(t, re, false)
}

func (l *Lines) search(t testing.TB, re string, ordered bool) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	limit := l.Limit
	if limit <= 0 {
		limit = 2 * time.Minute
	}
	timer := time.AfterFunc(limit, func() {
		l.mu.Lock()
		l.expired = true
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer timer.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		from := 0
		if ordered {
			from = l.cursor
		}
		for i := from; i < len(l.all); i++ {
			if m := rx.FindStringSubmatch(l.all[i]); m != nil {
				if ordered {
					l.cursor = i + 1
				}
				return m
			}
		}
		if l.expired {
			t.Fatalf("no line matched %q; got:\n%s", re, strings.Join(l.all, "\n"))
		}
		l.cond.Wait()
	}
}

// Text is every complete line so far.
func (l *Lines) Text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}
