// Package queue owns the accepted requests and their per-host queues in the bot's
// SQLite file: a request waits as queued until its GPU host has no run, is claimed for
// dispatch (at most one active request per host, decided inside one transaction), and
// ends done, failed or cancelled (docs/server.md §5).
//
// It keeps state only: it must not talk to GitHub or decide who may do what; the
// server does, and records each step here before or after the call, so that a restart
// knows which calls may already have happened.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/prometheus/client_golang/prometheus"
)

// State is where a request is.
type State string

// The states, in order. Dispatching, Dispatched and Running are active: a host has at
// most one active request.
const (
	Accepting   State = "accepting"   // stored; reaction, status comment and check run being made
	Queued      State = "queued"      // waiting for its host
	Dispatching State = "dispatching" // claimed; the dispatch is being sent (or its answer was lost)
	Dispatched  State = "dispatched"  // GitHub accepted the dispatch; the run is not known yet
	Running     State = "running"     // the run is known
	Done        State = "done"
	Failed      State = "failed"
	Cancelled   State = "cancelled"
)

// Final reports whether a request in state s has ended.
func (s State) Final() bool { return s == Done || s == Failed || s == Cancelled }

// Active reports whether s holds its host.
func (s State) Active() bool { return s == Dispatching || s == Dispatched || s == Running }

// DuplicatePrefix marks the delivery of a request that was a second request of a
// comment already holding one, made before one request per comment was a rule of the
// table (bot/store's first migration marks them). GitHub's delivery ids are hex digits and hyphens, so no real
// delivery starts with it.
const DuplicatePrefix = "duplicate:"

// Request is one accepted /profile or /bench command.
type Request struct {
	ID           int64
	Delivery     string // the delivery that carried the command: one request per delivery
	Repo         string
	Installation int64
	Issue        int
	IsPR         bool
	CommentID    int64 // the trigger comment
	Requester    string
	Kind         string // profile, bench or bisect
	Command      string // the command line as written
	SHA          string // pinned at acceptance; the only commit ever run (B of a compare, the bad end of a bisection)
	// Base is A of a compare (/bench rocm compare, /profile rocm compare), or the last
	// good commit of a bisection (/bench rocm bisect, Kind bisect), pinned at acceptance
	// like SHA; "" for any other request. Repeats is a compare's most repeats per side,
	// a bisection's most runs in all, 0 otherwise.
	Base       string
	Repeats    int
	PinnedFrom string
	Models     []string
	Sampling   []string
	Epic       int
	Host       string // the runner label of the GPU host
	Workflow   string // the workflow file dispatched
	Ref        string // the branch the workflow definition is taken from (the default branch)

	State           State
	StatusCommentID int64
	CheckRunID      int64
	RunID           int64
	RunURL          string
	Conclusion      string // the run's conclusion once it completed
	CancelBy        string // who asked to cancel
	Error           string
	Tries           int // dispatch attempts
	CreatedAt       time.Time
	DispatchedAt    time.Time
	StartedAt       time.Time
	FinishedAt      time.Time
	NextTryAt       time.Time
}

// Queue is the requests table.
type Queue struct {
	db  *store.DB
	now func() time.Time
}

// New returns the queue in db (opened with bot/store, whose migrations make its table).
func New(db *store.DB, now func() time.Time) *Queue {
	if now == nil {
		now = time.Now
	}
	return &Queue{db: db, now: now}
}

const columns = `id, delivery, repo, installation, issue, is_pr, comment_id, requester, kind, command, sha, pinned_from,
	models, sampling, epic, host, workflow, ref, state, status_comment_id, check_run_id, run_id, run_url, conclusion,
	cancel_by, error, tries, created_at, dispatched_at, started_at, finished_at, next_try_at, base, repeats`

func scan(sc interface{ Scan(...any) error }) (Request, error) {
	var r Request
	var models, sampling string
	var created, dispatched, started, finished, next int64
	err := sc.Scan(&r.ID, &r.Delivery, &r.Repo, &r.Installation, &r.Issue, &r.IsPR, &r.CommentID, &r.Requester, &r.Kind,
		&r.Command, &r.SHA, &r.PinnedFrom, &models, &sampling, &r.Epic, &r.Host, &r.Workflow, &r.Ref, &r.State,
		&r.StatusCommentID, &r.CheckRunID, &r.RunID, &r.RunURL, &r.Conclusion, &r.CancelBy, &r.Error, &r.Tries,
		&created, &dispatched, &started, &finished, &next, &r.Base, &r.Repeats)
	r.Models, r.Sampling = split(models), split(sampling)
	r.CreatedAt, r.DispatchedAt, r.StartedAt, r.FinishedAt, r.NextTryAt = ms(created), ms(dispatched), ms(started), ms(finished), ms(next)
	return r, err
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func ms(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// Add stores a request in state accepting, unless one already exists for its
// delivery or for its comment (repository and comment id); either way it returns the
// stored request. created is false for an existing one: a delivery processed again
// after a failure (same Delivery), or another delivery of the same comment (another
// Delivery: GitHub's duplicate, or the comment's edit). One request per comment is a
// rule of the table (a unique index), so two deliveries processed at once cannot both
// create one.
func (q *Queue) Add(ctx context.Context, r Request) (Request, bool, error) {
	if r.Delivery == "" || r.Repo == "" || r.Host == "" {
		return Request{}, false, errors.New("adding a request: the delivery, repository and host are required")
	}
	if strings.HasPrefix(r.Delivery, DuplicatePrefix) {
		return Request{}, false, fmt.Errorf("adding a request: %q is not a delivery id", r.Delivery)
	}
	var created bool
	var out Request
	err := q.db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO requests (delivery, repo, installation, issue, is_pr, comment_id, requester, kind, command,
			sha, pinned_from, models, sampling, epic, host, workflow, ref, state, created_at, base, repeats)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'accepting', ?, ?, ?) ON CONFLICT DO NOTHING`,
			r.Delivery, r.Repo, r.Installation, r.Issue, r.IsPR, r.CommentID, r.Requester, r.Kind, r.Command,
			r.SHA, r.PinnedFrom, strings.Join(r.Models, ","), strings.Join(r.Sampling, ","), r.Epic, r.Host, r.Workflow, r.Ref,
			q.now().UnixMilli(), r.Base, r.Repeats)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		created = n == 1
		out, err = scan(tx.QueryRow(`SELECT `+columns+` FROM requests WHERE delivery = ?`, r.Delivery))
		if errors.Is(err, sql.ErrNoRows) {
			out, err = scan(tx.QueryRow(`SELECT `+columns+` FROM requests
				WHERE repo = ? AND comment_id = ? AND substr(delivery, 1, 10) <> 'duplicate:'`, r.Repo, r.CommentID))
		}
		return err
	})
	if err != nil {
		return Request{}, false, fmt.Errorf("adding the request of delivery %s: %w", r.Delivery, err)
	}
	return out, created, nil
}

// Get returns a request; ok is false when there is none with that id.
func (q *Queue) Get(ctx context.Context, id int64) (r Request, ok bool, err error) {
	r, err = scan(q.db.Read().QueryRowContext(ctx, `SELECT `+columns+` FROM requests WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Request{}, false, nil
	}
	if err != nil {
		return Request{}, false, fmt.Errorf("reading request %d: %w", id, err)
	}
	return r, true, nil
}

// Filter selects requests for List. Zero fields select all.
type Filter struct {
	Repo      string
	Issue     int
	CommentID int64
	Host      string
	States    []State
}

// List returns the requests matching f, oldest first.
func (q *Queue) List(ctx context.Context, f Filter) ([]Request, error) {
	where, args := []string{"1 = 1"}, []any{}
	if f.Repo != "" {
		where, args = append(where, "repo = ?"), append(args, f.Repo)
	}
	if f.Issue != 0 {
		where, args = append(where, "issue = ?"), append(args, f.Issue)
	}
	if f.CommentID != 0 {
		where, args = append(where, "comment_id = ?"), append(args, f.CommentID)
	}
	if f.Host != "" {
		where, args = append(where, "host = ?"), append(args, f.Host)
	}
	if len(f.States) > 0 {
		where = append(where, "state IN (?"+strings.Repeat(",?", len(f.States)-1)+")")
		for _, s := range f.States {
			args = append(args, string(s))
		}
	}
	rows, err := q.db.Read().QueryContext(ctx, `SELECT `+columns+` FROM requests WHERE `+strings.Join(where, " AND ")+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("listing requests: %w", err)
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("listing requests: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Open are the states of requests that have not ended.
var Open = []State{Accepting, Queued, Dispatching, Dispatched, Running}

// update changes one request inside the writer; fn returns whether it applies.
func (q *Queue) update(ctx context.Context, id int64, what string, query string, args ...any) (bool, error) {
	var changed bool
	err := q.db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(query, args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n > 0
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("%s of request %d: %w", what, id, err)
	}
	return changed, nil
}

// SetStatusComment records the request's status comment.
func (q *Queue) SetStatusComment(ctx context.Context, id, commentID int64) error {
	_, err := q.update(ctx, id, "recording the status comment", `UPDATE requests SET status_comment_id = ? WHERE id = ?`, commentID, id)
	return err
}

// SetCheckRun records the request's check run.
func (q *Queue) SetCheckRun(ctx context.Context, id, checkRunID int64) error {
	_, err := q.update(ctx, id, "recording the check run", `UPDATE requests SET check_run_id = ? WHERE id = ?`, checkRunID, id)
	return err
}

// MarkQueued moves an accepting request into its host's queue.
func (q *Queue) MarkQueued(ctx context.Context, id int64) error {
	_, err := q.update(ctx, id, "queueing", `UPDATE requests SET state = 'queued' WHERE id = ? AND state = 'accepting'`, id)
	return err
}

// Claim returns the request to dispatch next on host, marked dispatching, when the
// host has no active request and one is queued (oldest first); ok is false otherwise.
// The check and the claim are one transaction: two callers never claim the same host.
func (q *Queue) Claim(ctx context.Context, host string) (r Request, ok bool, err error) {
	now := q.now().UnixMilli()
	err = q.db.Write(ctx, func(tx *sql.Tx) error {
		var busy int
		if err := tx.QueryRow(`SELECT count(*) FROM requests WHERE host = ? AND state IN ('dispatching', 'dispatched', 'running')`, host).Scan(&busy); err != nil {
			return err
		}
		if busy > 0 {
			return nil
		}
		var id int64
		err := tx.QueryRow(`SELECT id FROM requests WHERE host = ? AND state = 'queued' ORDER BY id LIMIT 1`, host).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE requests SET state = 'dispatching', dispatched_at = ?, tries = tries + 1, next_try_at = 0 WHERE id = ?`, now, id); err != nil {
			return err
		}
		r, err = scan(tx.QueryRow(`SELECT `+columns+` FROM requests WHERE id = ?`, id))
		ok = err == nil
		return err
	})
	if err != nil {
		return Request{}, false, fmt.Errorf("claiming the next request of host %s: %w", host, err)
	}
	return r, ok, nil
}

// Retry records a dispatch attempt that has to be made again (or checked, when its
// answer was lost) at next.
func (q *Queue) Retry(ctx context.Context, id int64, cause error, next time.Time) error {
	msg := ""
	if cause != nil {
		msg = cause.Error()
	}
	_, err := q.update(ctx, id, "recording a dispatch retry", `UPDATE requests SET error = ?, next_try_at = ? WHERE id = ? AND state = 'dispatching'`,
		clip(msg), unix(next), id)
	return err
}

// Redispatch records that a dispatch is sent again now.
func (q *Queue) Redispatch(ctx context.Context, id int64) error {
	_, err := q.update(ctx, id, "recording a dispatch", `UPDATE requests SET dispatched_at = ?, tries = tries + 1, next_try_at = 0 WHERE id = ? AND state = 'dispatching'`,
		q.now().UnixMilli(), id)
	return err
}

// MarkDispatched records that GitHub accepted the dispatch.
func (q *Queue) MarkDispatched(ctx context.Context, id int64) error {
	_, err := q.update(ctx, id, "recording the dispatch", `UPDATE requests SET state = 'dispatched', error = '', next_try_at = 0 WHERE id = ? AND state = 'dispatching'`, id)
	return err
}

// SetRun records the request's workflow run; a dispatching or dispatched request
// becomes running. It reports whether anything changed.
func (q *Queue) SetRun(ctx context.Context, id, runID int64, url string, started time.Time) (bool, error) {
	return q.update(ctx, id, "recording the run", `UPDATE requests SET run_id = ?, run_url = ?,
		started_at = CASE WHEN started_at = 0 THEN ? ELSE started_at END,
		state = CASE WHEN state IN ('dispatching', 'dispatched') THEN 'running' ELSE state END
		WHERE id = ? AND state IN ('dispatching', 'dispatched', 'running') AND (run_id = 0 OR run_id = ?)`,
		runID, url, unix(started), id, runID)
}

// SetCancel records who asked to cancel an active request.
func (q *Queue) SetCancel(ctx context.Context, id int64, by string) error {
	_, err := q.update(ctx, id, "recording the cancel", `UPDATE requests SET cancel_by = ? WHERE id = ?`, by, id)
	return err
}

// Finish ends a request that has not ended yet; it reports whether it did. took is
// how long its run took by GitHub's clock (0 when it had no run); it feeds RunTimes.
func (q *Queue) Finish(ctx context.Context, id int64, state State, conclusion, cause string, took time.Duration) (bool, error) {
	if !state.Final() {
		return false, fmt.Errorf("finishing request %d: %s is not a final state", id, state)
	}
	return q.update(ctx, id, "finishing", `UPDATE requests SET state = ?, conclusion = ?, error = ?, finished_at = ?, next_try_at = 0, run_ms = ?
		WHERE id = ? AND state NOT IN ('done', 'failed', 'cancelled')`, string(state), conclusion, clip(cause), q.now().UnixMilli(), took.Milliseconds(), id)
}

// CancelQueued cancels a request that is still waiting; it reports whether it was.
func (q *Queue) CancelQueued(ctx context.Context, id int64, by string) (bool, error) {
	return q.update(ctx, id, "cancelling", `UPDATE requests SET state = 'cancelled', cancel_by = ?, finished_at = ?
		WHERE id = ? AND state IN ('accepting', 'queued')`, by, q.now().UnixMilli(), id)
}

// Position is the number of queued requests ahead of r on its host.
func (q *Queue) Position(ctx context.Context, r Request) (int, error) {
	var n int
	err := q.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM requests WHERE host = ? AND state IN ('accepting', 'queued') AND id < ?`, r.Host, r.ID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("finding the queue position of request %d: %w", r.ID, err)
	}
	return n, nil
}

// RunTimes returns how long the last n finished runs of host took, newest first.
func (q *Queue) RunTimes(ctx context.Context, host string, n int) ([]time.Duration, error) {
	rows, err := q.db.Read().QueryContext(ctx, `SELECT run_ms FROM requests
		WHERE host = ? AND state IN ('done', 'failed') AND run_ms > 0 ORDER BY finished_at DESC LIMIT ?`, host, n)
	if err != nil {
		return nil, fmt.Errorf("reading past run times of host %s: %w", host, err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, time.Duration(v)*time.Millisecond)
	}
	return out, rows.Err()
}

// ModelRunTimes returns, for the last n plain requests (not compares) of host that
// ended done with a run, how long the run took per model it ran (the run's time over
// its number of models, at least one), newest first: what one measured run of a model
// costs on that host, for the budget of a compare.
func (q *Queue) ModelRunTimes(ctx context.Context, host string, n int) ([]time.Duration, error) {
	rows, err := q.db.Read().QueryContext(ctx, `SELECT run_ms, models FROM requests
		WHERE host = ? AND state = 'done' AND run_ms > 0 AND base = '' ORDER BY finished_at DESC LIMIT ?`, host, n)
	if err != nil {
		return nil, fmt.Errorf("reading past run times of host %s: %w", host, err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var v int64
		var models string
		if err := rows.Scan(&v, &models); err != nil {
			return nil, err
		}
		out = append(out, time.Duration(v)*time.Millisecond/time.Duration(max(len(split(models)), 1)))
	}
	return out, rows.Err()
}

// maxError is how many bytes of a request's error are stored.
const maxError = 4096

// clip cuts a stored error to maxError bytes without splitting a UTF-8 character.
func clip(s string) string { return strs.Clip(s, maxError, "") }

// Collector reports the depth of each host's queue (queued, and active) at scrape
// time, read from the database, so the metric cannot drift from the table.
func (q *Queue) Collector(hosts []string) prometheus.Collector {
	return &depth{q: q, hosts: hosts, desc: prometheus.NewDesc("perfbot_queue_depth",
		"Requests per GPU host: queued (waiting, including those being accepted) and active (dispatched or running, at most 1).",
		[]string{"host", "state"}, nil)}
}

type depth struct {
	q     *Queue
	hosts []string
	desc  *prometheus.Desc
}

func (d *depth) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc }

func (d *depth) Collect(ch chan<- prometheus.Metric) {
	counts := map[[2]string]float64{}
	for _, h := range d.hosts {
		counts[[2]string{h, "queued"}] = 0
		counts[[2]string{h, "active"}] = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := d.q.db.Read().QueryContext(ctx, `SELECT host, CASE WHEN state IN ('accepting', 'queued') THEN 'queued' ELSE 'active' END, count(*)
		FROM requests WHERE state IN ('accepting', 'queued', 'dispatching', 'dispatched', 'running') GROUP BY 1, 2`)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(d.desc, err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var host, state string
		var n float64
		if err := rows.Scan(&host, &state, &n); err != nil {
			ch <- prometheus.NewInvalidMetric(d.desc, err)
			return
		}
		counts[[2]string{host, state}] = n
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, n, k[0], k[1])
	}
}
