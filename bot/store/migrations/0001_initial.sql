-- Schema version 1: the tables of perfbot serve as they were before the database had a
-- schema version. Every statement is idempotent (IF NOT EXISTS, a guarded UPDATE), so
-- the same file creates a new database and adopts one those servers left behind.

-- The store's own table: /readyz writes here to check that a commit goes through.
CREATE TABLE IF NOT EXISTS probe(id INTEGER PRIMARY KEY, at INTEGER);

-- The inbox (bot/inbox): one row per webhook delivery id.
CREATE TABLE IF NOT EXISTS deliveries (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	id           TEXT NOT NULL UNIQUE,
	event        TEXT NOT NULL,
	action       TEXT NOT NULL DEFAULT '',
	installation INTEGER NOT NULL DEFAULT 0,
	repo         TEXT NOT NULL DEFAULT '',
	state        TEXT NOT NULL CHECK (state IN ('received', 'done', 'failed')),
	attempts     INTEGER NOT NULL DEFAULT 0,
	error        TEXT NOT NULL DEFAULT '',
	received_at  INTEGER NOT NULL,
	next_at      INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	times        INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (state, next_at);
-- Payloads live apart so that a state change rewrites a small row, not the payload's
-- overflow pages.
CREATE TABLE IF NOT EXISTS payloads (
	seq  INTEGER PRIMARY KEY REFERENCES deliveries (seq) ON DELETE CASCADE,
	body BLOB NOT NULL
);

-- The request queue (bot/queue).
CREATE TABLE IF NOT EXISTS requests (
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
CREATE INDEX IF NOT EXISTS requests_repo_state ON requests (repo, state, id);
-- A database made before one request per comment was a rule of the table holds several
-- requests of one comment: the oldest stays; the others get 'duplicate:' before their
-- delivery, and those not dispatched yet are cancelled, saying why, so the unique index
-- below can be built. It does nothing once that index exists.
UPDATE requests SET
	delivery = 'duplicate:' || delivery,
	state = CASE WHEN state IN ('accepting', 'queued') THEN 'cancelled' ELSE state END,
	finished_at = CASE WHEN state IN ('accepting', 'queued') THEN CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) ELSE finished_at END,
	error = CASE WHEN state IN ('accepting', 'queued')
		THEN 'dropped: a second request of comment ' || comment_id || ' (request ' ||
			(SELECT min(o.id) FROM requests o WHERE o.repo = requests.repo AND o.comment_id = requests.comment_id) || ' is its request)'
		ELSE error END
	WHERE substr(delivery, 1, 10) <> 'duplicate:'
	AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'requests_comment')
	AND EXISTS (SELECT 1 FROM requests o WHERE o.repo = requests.repo AND o.comment_id = requests.comment_id
		AND o.id < requests.id AND substr(o.delivery, 1, 10) <> 'duplicate:');
CREATE UNIQUE INDEX IF NOT EXISTS requests_comment ON requests (repo, comment_id)
	WHERE substr(delivery, 1, 10) <> 'duplicate:';
