package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/store"
)

func open(t *testing.T, clk *clock) *inbox.Inbox {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ib, err := inbox.New(ctx, db, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	return ib
}

func mustGet(t *testing.T, ib *inbox.Inbox, id string) inbox.Delivery {
	t.Helper()
	d, ok, err := ib.Get(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("Get(%s): %v %v", id, ok, err)
	}
	return d
}

// TestRedeliveryCountsOnce: a delivery's payload is stored with it; GitHub sending a
// received or done id again changes nothing but the count of sends (the first payload
// stays, nothing more is pending); a failed id sent again is received afresh with the
// new payload and its attempts reset.
func TestRedeliveryCountsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}
	ib := open(t, clk)
	put := func(id, payload string, want inbox.Outcome) {
		t.Helper()
		out, err := ib.Put(ctx, inbox.Delivery{ID: id, Event: "issue_comment", Action: "created", Installation: 5, Repo: "o/r", Payload: []byte(payload)})
		if err != nil || out != want {
			t.Fatalf("Put(%s): %v %v, want %v", id, out, err, want)
		}
	}
	put("d-1", `{"n":1}`, inbox.Stored)
	d := mustGet(t, ib, "d-1")
	if string(d.Payload) != `{"n":1}` || d.State != inbox.Received || d.Event != "issue_comment" || d.Action != "created" ||
		d.Installation != 5 || d.Repo != "o/r" || d.Times != 1 || !d.ReceivedAt.Equal(clk.now()) || ib.Pending() != 1 {
		t.Fatalf("stored delivery %+v, pending %d", d, ib.Pending())
	}

	put("d-1", `{"n":2}`, inbox.Duplicate)
	if d := mustGet(t, ib, "d-1"); string(d.Payload) != `{"n":1}` || d.State != inbox.Received || d.Times != 2 || ib.Pending() != 1 {
		t.Errorf("received delivery sent again: %+v, pending %d", d, ib.Pending())
	}
	if err := ib.Done(ctx, "d-1"); err != nil {
		t.Fatal(err)
	}
	put("d-1", `{"n":3}`, inbox.Duplicate)
	if d := mustGet(t, ib, "d-1"); string(d.Payload) != `{"n":1}` || d.State != inbox.Done || ib.Pending() != 0 {
		t.Errorf("done delivery sent again: %+v, pending %d", d, ib.Pending())
	}

	put("d-2", `{"n":1}`, inbox.Stored)
	if err := ib.Fail(ctx, "d-2", errors.New("the config is broken")); err != nil {
		t.Fatal(err)
	}
	if d := mustGet(t, ib, "d-2"); d.State != inbox.Failed || d.Attempts != 1 || d.Error != "the config is broken" || ib.Pending() != 0 {
		t.Errorf("failed delivery %+v, pending %d", d, ib.Pending())
	}
	// A failed delivery is not settled twice: the backlog does not go below zero.
	if err := ib.Done(ctx, "d-2"); err != nil || ib.Pending() != 0 || mustGet(t, ib, "d-2").State != inbox.Failed {
		t.Errorf("Done of a failed delivery: %v, pending %d", err, ib.Pending())
	}
	clk.add(time.Hour)
	put("d-2", `{"n":2}`, inbox.Requeued)
	if d := mustGet(t, ib, "d-2"); string(d.Payload) != `{"n":2}` || d.State != inbox.Received || d.Attempts != 0 ||
		d.Times != 2 || !d.NextAt.Equal(clk.now()) || ib.Pending() != 1 {
		t.Errorf("failed delivery sent again: %+v, pending %d", d, ib.Pending())
	}
	if due, err := ib.Due(ctx, 10, nil); err != nil || len(due) != 1 || due[0].ID != "d-2" || string(due[0].Payload) != `{"n":2}` {
		t.Errorf("due %v %v, want d-2 with its new payload", ids(due), err)
	}
	for _, o := range []struct {
		o    inbox.Outcome
		want string
	}{{inbox.Stored, "stored"}, {inbox.Requeued, "requeued"}, {inbox.Duplicate, "duplicate"}} {
		if o.o.String() != o.want {
			t.Errorf("%d.String() = %q, want %q", o.o, o.o.String(), o.want)
		}
	}
}

// TestPendingSurvivesRestart: the backlog counted by a new inbox over the same database
// is the received deliveries, done and failed ones left out.
func TestPendingSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	clk := &clock{t: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ib, err := inbox.New(ctx, db, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := ib.Put(ctx, inbox.Delivery{ID: fmt.Sprintf("d-%d", i), Event: "ping", Payload: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ib.Done(ctx, "d-0"); err != nil {
		t.Fatal(err)
	}
	if err := ib.Fail(ctx, "d-1", errors.New("x")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ib, err = inbox.New(ctx, db, clk.now)
	if err != nil || ib.Pending() != 2 {
		t.Fatalf("pending after reopening %d (%v), want 2", ib.Pending(), err)
	}
}

// TestHeldAcrossChunks: Held answers for more ids than one query takes.
func TestHeldAcrossChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ib := open(t, &clock{t: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)})
	var ask []string
	for i := range 1203 {
		id := fmt.Sprintf("d-%04d", i)
		ask = append(ask, id)
		if i%100 == 7 {
			if _, err := ib.Put(ctx, inbox.Delivery{ID: id, Event: "ping", Payload: []byte("{}")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	held, err := ib.Held(ctx, ask)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for id := range held {
		got = append(got, id)
	}
	if len(got) != 12 || !held["d-0007"] || !held["d-1107"] || held["d-0008"] || held["d-1202"] {
		t.Errorf("held %d ids: %v", len(got), strings.Join(got, " "))
	}
}
