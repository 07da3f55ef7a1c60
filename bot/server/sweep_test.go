package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
)

// fakeHooks is the App's delivery log in memory, newest first, served in pages.
type fakeHooks struct {
	pages         [][]gh.HookDelivery
	asked         int     // pages asked for
	redelivered   []int64 // attempt ids asked to be sent again
	failRedeliver error
}

func (f *fakeHooks) HookDeliveries(_ context.Context, cursor string, _ int) ([]gh.HookDelivery, string, error) {
	i := 0
	if cursor != "" {
		i, _ = strconv.Atoi(cursor)
	}
	f.asked++
	next := ""
	if i+1 < len(f.pages) {
		next = strconv.Itoa(i + 1)
	}
	return f.pages[i], next, nil
}

func (f *fakeHooks) Redeliver(_ context.Context, id int64) error {
	if f.failRedeliver != nil {
		return f.failRedeliver
	}
	f.redelivered = append(f.redelivered, id)
	return nil
}

// heldIDs is the inbox's set of delivery ids.
type heldIDs map[string]bool

func (h heldIDs) Held(_ context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = h[id]
	}
	return out, nil
}

func newSweeper(now time.Time, hooks *fakeHooks, held heldIDs) *sweeper {
	m := newMetrics()
	return &sweeper{log: quiet(), now: func() time.Time { return now }, window: 72 * time.Hour,
		hooks: hooks, inbox: held, sweeps: m.sweeps, redeliveries: m.redeliveries}
}

func attempt(id int64, guid string, status int, at time.Time) gh.HookDelivery {
	return gh.HookDelivery{ID: id, GUID: guid, StatusCode: status, DeliveredAt: at, Event: "issue_comment"}
}

func TestSweeperRedeliversOnlyWhatWasNeverDelivered(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ago := func(h int) time.Time { return now.Add(-time.Duration(h) * time.Hour) }
	hooks := &fakeHooks{pages: [][]gh.HookDelivery{{
		attempt(20, "down", 0, ago(1)), // the server was down: no answer
		attempt(19, "busy", 503, ago(1)),
		attempt(18, "later-ok", 202, ago(2)),
		attempt(17, "refused", 401, ago(2)),
		attempt(16, "held", 503, ago(2)),
	}, {
		attempt(15, "busy", 503, ago(3)), // an older attempt of busy: 19 is redelivered
		attempt(14, "later-ok", 503, ago(3)),
		attempt(13, "given-up", 503, ago(4)), attempt(12, "given-up", 503, ago(4)), attempt(11, "given-up", 503, ago(4)),
		attempt(10, "given-up", 503, ago(4)), attempt(9, "given-up", 503, ago(4)),
	}}}
	sw := newSweeper(now, hooks, heldIDs{"held": true})
	n, err := sw.sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{20, 19}; n != 2 || !slices.Equal(hooks.redelivered, want) {
		t.Errorf("redelivered attempts %v (n=%d), want %v: not the delivered, refused, held or given-up ones", hooks.redelivered, n, want)
	}
	if got := counted(t, sw.redeliveries, nil); got != 2 {
		t.Errorf("perfbot_redeliveries_requested_total = %v, want 2", got)
	}
}

func TestSweeperStopsAtTheWindow(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var pages [][]gh.HookDelivery
	for p := range 5 {
		// Page 2 reaches past the window; the pages after it are never read.
		at := now.Add(-time.Duration(p*40) * time.Hour)
		pages = append(pages, []gh.HookDelivery{attempt(int64(100-p), fmt.Sprintf("g%d", p), 503, at)})
	}
	hooks := &fakeHooks{pages: pages}
	sw := newSweeper(now, hooks, heldIDs{})
	if _, err := sw.sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if hooks.asked != 3 {
		t.Errorf("read %d pages, want 3: the third reaches past the 72 h window", hooks.asked)
	}
	if want := []int64{100, 99}; !slices.Equal(hooks.redelivered, want) {
		t.Errorf("redelivered %v, want %v (the attempts within the window)", hooks.redelivered, want)
	}
}

func TestSweeperCountsAFailedSweep(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hooks := &fakeHooks{pages: [][]gh.HookDelivery{{attempt(1, "g", 503, now)}}, failRedeliver: errors.New("GitHub answered 500")}
	sw := newSweeper(now, hooks, heldIDs{})
	sw.run(context.Background())
	if got := counted(t, sw.sweeps, map[string]string{"result": "error"}); got != 1 {
		t.Errorf("perfbot_sweeps_total{result=error} = %v, want 1", got)
	}
	hooks.failRedeliver = nil
	sw.run(context.Background())
	if got := counted(t, sw.sweeps, map[string]string{"result": "ok"}); got != 1 {
		t.Errorf("perfbot_sweeps_total{result=ok} = %v, want 1", got)
	}
}
