package queue_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/store"
)

// comments numbers the trigger comments of add: one request per comment.
var comments atomic.Int64

func add(t *testing.T, q *queue.Queue, host string, n int) []int64 {
	t.Helper()
	var ids []int64
	for i := range n {
		r := request(fmt.Sprintf("%s-%d", host, i), comments.Add(1))
		r.Host = host
		ids = append(ids, addQueued(t, q, r).ID)
	}
	return ids
}

// addQueued adds the new request r, checks it was created accepting, marks it queued
// and returns it as Add did.
func addQueued(t *testing.T, q *queue.Queue, r queue.Request) queue.Request {
	t.Helper()
	r, created, err := q.Add(context.Background(), r)
	if err != nil || !created || r.State != queue.Accepting {
		t.Fatalf("Add: %+v %v %v", r, created, err)
	}
	if err := q.MarkQueued(context.Background(), r.ID); err != nil {
		t.Fatal(err)
	}
	return r
}

// listQueued lists the queued requests, which must be n.
func listQueued(t *testing.T, q *queue.Queue, n int) []queue.Request {
	t.Helper()
	all, err := q.List(context.Background(), queue.Filter{States: []queue.State{queue.Queued}})
	if err != nil || len(all) != n {
		t.Fatalf("List: %d %v", len(all), err)
	}
	return all
}

// TestOneActivePerHost: many claims at once give each host one request, the oldest;
// the next one only after it ended.
func TestOneActivePerHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := queue.New(db, nil)
	a := add(t, q, "gfx1151", 5)
	b := add(t, q, "gfx1201", 5)

	var mu sync.Mutex
	claimed := map[string][]int64{}
	var wg sync.WaitGroup
	for range 20 {
		for _, host := range []string{"gfx1151", "gfx1201"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, ok, err := q.Claim(ctx, host)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					claimed[host] = append(claimed[host], r.ID)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(claimed["gfx1151"]) != 1 || claimed["gfx1151"][0] != a[0] || len(claimed["gfx1201"]) != 1 || claimed["gfx1201"][0] != b[0] {
		t.Fatalf("claims %v, want one per host: %d and %d", claimed, a[0], b[0])
	}
	if _, ok, _ := q.Claim(ctx, "gfx1151"); ok {
		t.Fatal("a second claim while the host is busy")
	}
	// The same delivery again is the same request.
	if r, created, err := q.Add(ctx, queue.Request{Delivery: "gfx1151-1", Repo: "o/r", Host: "gfx1151"}); err != nil || created || r.ID != a[1] {
		t.Errorf("Add of a known delivery: id %d created %v %v, want %d, false", r.ID, created, err, a[1])
	}
	if pos, _ := q.Position(ctx, queue.Request{ID: a[3], Host: "gfx1151"}); pos != 2 {
		t.Errorf("position of the fourth: %d ahead, want 2", pos)
	}
	if ok, err := q.CancelQueued(ctx, a[1], "bob"); !ok || err != nil {
		t.Fatalf("CancelQueued: %v %v", ok, err)
	}
	if ok, err := q.Finish(ctx, a[0], queue.Done, "success", "", 0); !ok || err != nil {
		t.Fatalf("Finish: %v %v", ok, err)
	}
	if ok, _ := q.Finish(ctx, a[0], queue.Failed, "failure", "", 0); ok {
		t.Error("a finished request finished again")
	}
	r, ok, err := q.Claim(ctx, "gfx1151")
	if err != nil || !ok || r.ID != a[2] || r.State != queue.Dispatching || r.Tries != 1 {
		t.Fatalf("claim after the end: %+v %v %v; want request %d dispatching (the cancelled one skipped)", r, ok, err, a[2])
	}
}

func request(delivery string, comment int64) queue.Request {
	return queue.Request{
		Delivery: delivery, Repo: "o/r", Installation: 1, Issue: 1, CommentID: comment,
		Requester: "alice", Kind: "profile", Command: "/profile rocm", SHA: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
		Host: "gfx1151", Workflow: "perfbot.yml", Ref: "main",
	}
}

// TestOneRequestPerComment: sixteen deliveries of one comment (GitHub's duplicates,
// an edit) added at once make one request, which all of them get back; the same
// comment id in another repository is another request.
func TestOneRequestPerComment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := queue.New(db, nil)
	var wg sync.WaitGroup
	ids := make([]int64, 16)
	made := make([]bool, 16)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, created, err := q.Add(ctx, request(fmt.Sprintf("d-%d", i), 42))
			if err != nil {
				t.Error(err)
			}
			ids[i], made[i] = r.ID, created
		}()
	}
	wg.Wait()
	n := 0
	for i := range ids {
		if made[i] {
			n++
		}
		if ids[i] != ids[0] || ids[i] == 0 {
			t.Errorf("delivery %d got request %d, want %d", i, ids[i], ids[0])
		}
	}
	all, err := q.List(ctx, queue.Filter{Repo: "o/r", CommentID: 42})
	if n != 1 || err != nil || len(all) != 1 {
		t.Fatalf("%d created, %d stored (%v); want 1 and 1", n, len(all), err)
	}
	other := request("d-other", 42)
	other.Repo = "o/other"
	if r, created, err := q.Add(ctx, other); err != nil || !created || r.ID == ids[0] {
		t.Errorf("the same comment id in another repository: %+v %v %v", r, created, err)
	}
	if _, _, err := q.Add(ctx, request(queue.DuplicatePrefix+"d-1", 43)); err == nil {
		t.Error("a delivery id with the duplicate mark was taken")
	}
}

// oldSchema is the requests table as databases made before one request per comment
// was a rule of the table hold it (no requests_comment index).
const oldSchema = `CREATE TABLE IF NOT EXISTS requests (
	id                INTEGER PRIMARY KEY AUTOINCREMENT,
	delivery          TEXT NOT NULL UNIQUE,
	repo              TEXT NOT NULL,
	installation      INTEGER NOT NULL,
	issue             INTEGER NOT NULL,
	is_pr             INTEGER NOT NULL,
	comment_id        INTEGER NOT NULL,
	requester         TEXT NOT NULL,
	kind              TEXT NOT NULL,
	command           TEXT NOT NULL,
	sha               TEXT NOT NULL,
	pinned_from       TEXT NOT NULL,
	models            TEXT NOT NULL,
	sampling          TEXT NOT NULL,
	epic              INTEGER NOT NULL,
	host              TEXT NOT NULL,
	workflow          TEXT NOT NULL,
	ref               TEXT NOT NULL,
	state             TEXT NOT NULL,
	status_comment_id INTEGER NOT NULL DEFAULT 0,
	check_run_id      INTEGER NOT NULL DEFAULT 0,
	run_id            INTEGER NOT NULL DEFAULT 0,
	run_url           TEXT NOT NULL DEFAULT '',
	conclusion        TEXT NOT NULL DEFAULT '',
	cancel_by         TEXT NOT NULL DEFAULT '',
	error             TEXT NOT NULL DEFAULT '',
	tries             INTEGER NOT NULL DEFAULT 0,
	created_at        INTEGER NOT NULL,
	dispatched_at     INTEGER NOT NULL DEFAULT 0,
	started_at        INTEGER NOT NULL DEFAULT 0,
	finished_at       INTEGER NOT NULL DEFAULT 0,
	next_try_at       INTEGER NOT NULL DEFAULT 0,
	run_ms            INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS requests_host_state ON requests (host, state, id);
CREATE INDEX IF NOT EXISTS requests_repo_state ON requests (repo, state, id);`

// TestDuplicatesInAnOldDatabase: a database holding several requests of one comment
// (made before the rule) still opens. The oldest stays as it was; of the others, the
// one already running keeps running (its run is followed to its end), the queued one
// is cancelled, saying why, and both are marked. A new delivery of the comment gets
// the oldest; opening again changes nothing.
func TestDuplicatesInAnOldDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	// Written with the driver itself: store.Open now makes the current schema, unique
	// index included, before any row could be written.
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, oldSchema); err != nil {
		t.Fatal(err)
	}
	tx, err := old.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []struct {
		delivery string
		comment  int64
		state    string
	}{{"d-1", 7, "done"}, {"d-2", 7, "running"}, {"d-3", 7, "queued"}, {"d-4", 8, "queued"}, {"d-5", 7, "failed"}} {
		if _, err := tx.Exec(`INSERT INTO requests (delivery, repo, installation, issue, is_pr, comment_id, requester, kind, command,
				sha, pinned_from, models, sampling, epic, host, workflow, ref, state, created_at, error)
				VALUES (?, 'o/r', 1, 1, 0, ?, 'alice', 'profile', '/profile rocm', ?, 'main', '', '', 0, 'gfx1151', 'perfbot.yml', 'main', ?, 1, 'earlier')`,
			row.delivery, row.comment, "6113728f27ae82c7b1a177c8d03f9e96e0adf246", row.state); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	type row struct {
		Delivery string
		State    queue.State
		Error    string
		Finished bool
	}
	read := func() map[int64]row {
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatalf("opening a database with duplicates: %v", err)
		}
		defer db.Close()
		all, err := queue.New(db, nil).List(ctx, queue.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64]row{}
		for _, r := range all {
			out[r.ID] = row{r.Delivery, r.State, r.Error, !r.FinishedAt.IsZero()}
		}
		return out
	}
	got := read()
	want := map[int64]row{
		1: {"d-1", queue.Done, "earlier", false},
		2: {"duplicate:d-2", queue.Running, "earlier", false},
		3: {"duplicate:d-3", queue.Cancelled, "dropped: a second request of comment 7 (request 1 is its request)", true},
		4: {"d-4", queue.Queued, "earlier", false},
		5: {"duplicate:d-5", queue.Failed, "earlier", false},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after opening:\n got %v\nwant %v", got, want)
	}
	if again := read(); fmt.Sprint(again) != fmt.Sprint(want) {
		t.Fatalf("after opening again:\n got %v\nwant %v", again, want)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, created, err := queue.New(db, nil).Add(ctx, request("d-6", 7))
	if err != nil || created || r.ID != 1 {
		t.Errorf("a new delivery of comment 7: request %d, created %v, %v; want 1, false", r.ID, created, err)
	}
}
