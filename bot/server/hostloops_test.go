package server

import (
	"context"
	"testing"
	"time"
)

type passRun struct {
	host      string
	reconcile bool
}

// TestKicksDuringAPassBecomeOneMorePass: a host's passes run one at a time on its own
// goroutine; the kicks that arrive while one runs make one more pass, which reconciles
// when any of them asked to, and a kick before start or after the end runs nothing.
func TestKicksDuringAPassBecomeOneMorePass(t *testing.T) {
	passes := make(chan passRun, 10)
	release := make(chan struct{})
	l := newHostLoops(func(_ context.Context, host string, reconcile bool) {
		passes <- passRun{host, reconcile}
		<-release
	})
	l.kick(testHost, false)
	ctx, cancel := context.WithCancel(context.Background())
	l.start(ctx)
	next := func() passRun {
		t.Helper()
		select {
		case p := <-passes:
			return p
		case <-time.After(10 * time.Second):
			t.Fatal("no pass within 10 s")
		}
		return passRun{}
	}
	l.kick(testHost, false)
	if p := next(); p != (passRun{testHost, false}) {
		t.Errorf("first pass %+v, want %s without reconcile", p, testHost)
	}
	// The first pass is held: these three kicks wait for it.
	l.kick(testHost, false)
	l.kick(testHost, true)
	l.kick(testHost, false)
	l.kick("gfx942", false) // another host does not wait for gfx1151
	got := map[passRun]int{}
	got[next()]++
	close(release)
	got[next()]++
	select {
	case p := <-passes:
		t.Errorf("an extra pass ran: %+v", p)
	case <-time.After(200 * time.Millisecond):
	}
	if want := map[passRun]int{{testHost, true}: 1, {"gfx942", false}: 1}; len(got) != 2 || got[passRun{testHost, true}] != 1 || got[passRun{"gfx942", false}] != 1 {
		t.Errorf("passes after the held one: %v, want %v", got, want)
	}
	cancel()
	l.wait()
	l.kick(testHost, false)
	select {
	case p := <-passes:
		t.Errorf("a kick after the end ran a pass: %+v", p)
	case <-time.After(100 * time.Millisecond):
	}
}
