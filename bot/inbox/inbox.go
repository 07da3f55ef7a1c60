// Package inbox owns the durable record of webhook deliveries, keyed by GitHub's
// X-GitHub-Delivery id: a delivery is stored before it is answered, then moves from
// received to done, or to failed with its error and attempt count.
//
// The rules that make a delivery count once (docs/server.md §3): a new id is stored as
// received; a redelivery of a failed id is received again and processed again; a
// redelivery of a received or done id changes nothing. The inbox must not interpret
// payloads or talk to GitHub: the server decides what a delivery means.
package inbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lablup/perfbot/bot/store"
)

// State is where a delivery is in its processing.
type State string

// The states of a delivery.
const (
	Received State = "received" // stored, not yet processed (or waiting to be retried)
	Done     State = "done"     // processed; a redelivery is ignored
	Failed   State = "failed"   // gave up; a redelivery is processed again
)

// Delivery is one webhook delivery as stored.
type Delivery struct {
	ID           string // X-GitHub-Delivery
	Event        string // X-GitHub-Event
	Action       string
	Installation int64
	Repo         string // owner/name, "" when the event has none
	Payload      []byte // the JSON body
	State        State
	Attempts     int    // processing attempts that failed
	Error        string // the last processing error
	ReceivedAt   time.Time
	NextAt       time.Time // when a received delivery is due
	Times        int       // how often GitHub sent this id
}

// Outcome says what Put did.
type Outcome int

// The outcomes of Put.
const (
	Stored    Outcome = iota // a new id, now received
	Requeued                 // a failed id delivered again, received again
	Duplicate                // an id already received or done: nothing to do
)

func (o Outcome) String() string {
	switch o {
	case Stored:
		return "stored"
	case Requeued:
		return "requeued"
	}
	return "duplicate"
}

// Inbox is the deliveries table.
type Inbox struct {
	db      *store.DB
	now     func() time.Time
	pending atomic.Int64
	// Statements of the hot path, prepared once.
	insert, requeue, seen, done, fail, retry, body *store.Stmt
	due, nextDue                                   *sql.Stmt
}

var writes = []string{
	`INSERT INTO deliveries (id, event, action, installation, repo, state, received_at, next_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 'received', ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING seq`,
	`UPDATE deliveries SET state = 'received', attempts = 0, next_at = ?, updated_at = ?,
		times = times + 1 WHERE id = ? AND state = 'failed' RETURNING seq`,
	`UPDATE deliveries SET times = times + 1 WHERE id = ?`,
	`UPDATE deliveries SET state = 'done', error = '', updated_at = ? WHERE id = ? AND state = 'received'`,
	`UPDATE deliveries SET state = 'failed', attempts = attempts + 1, error = ?, updated_at = ? WHERE id = ? AND state = 'received'`,
	`UPDATE deliveries SET attempts = attempts + 1, error = ?, next_at = ?, updated_at = ? WHERE id = ? AND state = 'received'`,
	`INSERT OR REPLACE INTO payloads (seq, body) VALUES (?, ?)`,
}

// New opens the inbox in db (opened with bot/store, whose migrations make its table)
// and counts what is pending.
func New(ctx context.Context, db *store.DB, now func() time.Time) (*Inbox, error) {
	if now == nil {
		now = time.Now
	}
	ib := &Inbox{db: db, now: now}
	for i, st := range []**store.Stmt{&ib.insert, &ib.requeue, &ib.seen, &ib.done, &ib.fail, &ib.retry, &ib.body} {
		var err error
		if *st, err = db.Prepare(ctx, writes[i]); err != nil {
			return nil, err
		}
	}
	var err error
	// The busy ids come as a JSON array, so the statement's text stays the same.
	if ib.due, err = db.Read().PrepareContext(ctx, `SELECT `+columns+from+`
		WHERE d.state = 'received' AND d.next_at <= ? AND d.id NOT IN (SELECT value FROM json_each(?)) ORDER BY d.next_at, d.seq LIMIT ?`); err != nil {
		return nil, fmt.Errorf("preparing the inbox queries: %w", err)
	}
	if ib.nextDue, err = db.Read().PrepareContext(ctx, `SELECT min(next_at) FROM deliveries WHERE state = 'received'`); err != nil {
		return nil, fmt.Errorf("preparing the inbox queries: %w", err)
	}
	var n int64
	if err := db.Read().QueryRowContext(ctx, `SELECT count(*) FROM deliveries WHERE state = 'received'`).Scan(&n); err != nil {
		return nil, fmt.Errorf("counting pending deliveries: %w", err)
	}
	ib.pending.Store(n)
	return ib, nil
}

// Pending is the number of received deliveries: the backlog.
func (ib *Inbox) Pending() int64 { return ib.pending.Load() }

// Put stores a delivery that was just received. It returns once the row is committed.
func (ib *Inbox) Put(ctx context.Context, d Delivery) (Outcome, error) {
	if d.ID == "" || d.Event == "" {
		return 0, errors.New("storing a delivery: the delivery id and the event are required")
	}
	now := ib.now().UnixMilli()
	var out Outcome
	err := ib.db.Write(ctx, func(tx *sql.Tx) error {
		var seq int64
		err := ib.insert.QueryRow(tx, d.ID, d.Event, d.Action, d.Installation, d.Repo, now, now, now).Scan(&seq)
		if err == nil {
			out = Stored
			_, err = ib.body.Exec(tx, seq, d.Payload)
			return err
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		err = ib.requeue.QueryRow(tx, now, now, d.ID).Scan(&seq)
		if err == nil {
			out = Requeued
			_, err = ib.body.Exec(tx, seq, d.Payload)
			return err
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		out = Duplicate
		_, err = ib.seen.Exec(tx, d.ID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("storing delivery %s: %w", d.ID, err)
	}
	if out != Duplicate {
		ib.pending.Add(1)
	}
	return out, nil
}

// columns are read from deliveries d joined with payloads p.
const columns = `d.id, d.event, d.action, d.installation, d.repo, coalesce(p.body, x''), d.state, d.attempts, d.error, d.received_at, d.next_at, d.times`

const from = ` FROM deliveries d LEFT JOIN payloads p ON p.seq = d.seq`

func scan(sc interface{ Scan(...any) error }) (Delivery, error) {
	var d Delivery
	var recv, next int64
	err := sc.Scan(&d.ID, &d.Event, &d.Action, &d.Installation, &d.Repo, &d.Payload, &d.State, &d.Attempts, &d.Error, &recv, &next, &d.Times)
	d.ReceivedAt, d.NextAt = time.UnixMilli(recv), time.UnixMilli(next)
	return d, err
}

// Due returns up to limit received deliveries whose time has come, oldest first,
// leaving out the ids in busy (the ones being processed now).
func (ib *Inbox) Due(ctx context.Context, limit int, busy map[string]bool) ([]Delivery, error) {
	if limit <= 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(busy))
	for id := range busy {
		ids = append(ids, id)
	}
	skip, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := ib.due.QueryContext(ctx, ib.now().UnixMilli(), string(skip), limit)
	if err != nil {
		return nil, fmt.Errorf("listing due deliveries: %w", err)
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() && len(out) < limit {
		d, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("listing due deliveries: %w", err)
		}
		if !busy[d.ID] {
			out = append(out, d)
		}
	}
	return out, rows.Err()
}

// NextDue is when the earliest received delivery is due; ok is false when none waits.
func (ib *Inbox) NextDue(ctx context.Context) (at time.Time, ok bool, err error) {
	var next sql.NullInt64
	if err := ib.nextDue.QueryRowContext(ctx).Scan(&next); err != nil {
		return time.Time{}, false, fmt.Errorf("finding the next due delivery: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(next.Int64), true, nil
}

// Get returns one delivery; ok is false when the id is not held.
func (ib *Inbox) Get(ctx context.Context, id string) (d Delivery, ok bool, err error) {
	d, err = scan(ib.db.Read().QueryRowContext(ctx, `SELECT `+columns+from+` WHERE d.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, false, nil
	}
	if err != nil {
		return Delivery{}, false, fmt.Errorf("reading delivery %s: %w", id, err)
	}
	return d, true, nil
}

// Held returns which of ids the inbox holds, in any state.
func (ib *Inbox) Held(ctx context.Context, ids []string) (map[string]bool, error) {
	held := make(map[string]bool, len(ids))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := ib.db.Read().QueryContext(ctx, `SELECT id FROM deliveries WHERE id IN (?`+strings.Repeat(",?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("looking up delivery ids: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("looking up delivery ids: %w", err)
			}
			held[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("looking up delivery ids: %w", err)
		}
	}
	return held, nil
}

// Done marks a received delivery processed.
func (ib *Inbox) Done(ctx context.Context, id string) error {
	return ib.settle(ctx, id, ib.done, ib.now().UnixMilli(), id)
}

// Fail marks a received delivery failed for good; only a redelivery brings it back.
func (ib *Inbox) Fail(ctx context.Context, id string, cause error) error {
	return ib.settle(ctx, id, ib.fail, errText(cause), ib.now().UnixMilli(), id)
}

// Retry records a failed attempt and makes the delivery due again at next.
func (ib *Inbox) Retry(ctx context.Context, id string, cause error, next time.Time) error {
	err := ib.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := ib.retry.Exec(tx, errText(cause), next.UnixMilli(), ib.now().UnixMilli(), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("recording a retry of delivery %s: %w", id, err)
	}
	return nil
}

func (ib *Inbox) settle(ctx context.Context, id string, st *store.Stmt, args ...any) error {
	var changed bool
	err := ib.db.Write(ctx, func(tx *sql.Tx) error {
		res, err := st.Exec(tx, args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n == 1
		return nil
	})
	if err != nil {
		return fmt.Errorf("settling delivery %s: %w", id, err)
	}
	if changed {
		ib.pending.Add(-1)
	}
	return nil
}

// maxErrorText bounds a stored error: it is shown, not parsed.
const maxErrorText = 4096

func errText(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if len(s) > maxErrorText {
		s = s[:maxErrorText]
	}
	return s
}

// Prune deletes done deliveries received before the given time. GitHub offers
// redelivery for a few days only; an id older than that cannot come back.
func (ib *Inbox) Prune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := ib.db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`DELETE FROM payloads WHERE seq IN (SELECT seq FROM deliveries WHERE state = 'done' AND received_at < ?)`, before.UnixMilli()); err != nil {
			return err
		}
		res, err := tx.Exec(`DELETE FROM deliveries WHERE state = 'done' AND received_at < ?`, before.UnixMilli())
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("pruning old deliveries: %w", err)
	}
	return n, nil
}
