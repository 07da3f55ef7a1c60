// Package store owns the bot's SQLite file: opening it in WAL mode with
// synchronous=NORMAL through the pure-Go modernc.org/sqlite driver, bringing its schema
// to the version this binary knows (numbered migrations in migrations/, applied in one
// transaction at open, the version kept in PRAGMA user_version), and one writer that
// commits many small writes together (group commit), so that hundreds of webhook
// deliveries a second each get a durable commit before they are answered.
//
// A transaction committed here survives the process being killed: WAL with
// synchronous=NORMAL loses committed work only when the operating system itself
// crashes (docs/server.md §4). The schema of every table lives in its migrations, the
// one place a table or column changes; what the rows mean it must not know: the inbox
// and the request queue own their queries.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("the database is closed")

// maxBatch bounds one group commit: a larger batch delays every member's answer.
const maxBatch = 256

// DB is an open SQLite file with one writer goroutine.
type DB struct {
	path string
	w    *sql.DB // one connection: SQLite has one writer at a time anyway
	r    *sql.DB // readers see committed data concurrently (WAL)
	ck   *sql.DB // checkpoints, off the writer's path
	lock *os.File
	// The savepoint statements, prepared once on the writer's connection.
	savepoint, rollbackTo, release *sql.Stmt
	ops                            chan *op
	quit                           chan struct{}
	done                           chan struct{}
	once                           sync.Once
	ckDone                         chan struct{}
	// The schema version the file had when opened, and the one it has now.
	found, version int
}

type op struct {
	fn  func(*sql.Tx) error
	res chan error
}

// Open opens (creating if needed) the database file at path and migrates it to the
// schema version this binary knows (docs/server.md §10). It refuses a file
// whose version is newer, and one without a version whose tables are not perfbot's;
// a migration that fails leaves the file as it was.
//
// Every table the server keeps is made by a migration.
func Open(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, Migrations(), nil)
}

// open is Open with a migration set and extra statements (tests: their own tables),
// each idempotent, run after the migrations outside their transaction.
func open(ctx context.Context, path string, migrations fs.FS, schema []string) (*DB, error) {
	if path == "" {
		return nil, errors.New("no database path: set database: in the server settings")
	}
	// A broken migration set is the binary's fault: say so before touching the file.
	migs, err := loadMigrations(migrations)
	if err != nil {
		return nil, fmt.Errorf("opening the database %s: %w", path, err)
	}
	if dir := filepath.Dir(path); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("opening the database %s: the folder %s does not exist; create it first", path, dir)
		}
	}
	// The lock and the file are taken at the path with every symlink resolved, so two
	// servers given one database by two names (a symlink and its target) meet at one
	// lock, and SQLite's -wal and -shm files sit beside the real file.
	real, err := resolve(path)
	if err != nil {
		return nil, fmt.Errorf("opening the database %s: %w", path, err)
	}
	if real != path {
		if st, err := os.Stat(filepath.Dir(real)); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("opening the database %s: it links to %s, whose folder does not exist", path, real)
		}
	}
	lock, err := lockFile(real+".lock", path)
	if err != nil {
		return nil, err
	}
	dsn := func(extra ...string) string {
		q := url.Values{}
		for _, p := range append([]string{"busy_timeout(10000)", "synchronous(NORMAL)", "foreign_keys(1)"}, extra...) {
			q.Add("_pragma", p)
		}
		q.Set("_txlock", "immediate")
		return "file:" + (&url.URL{Path: real}).EscapedPath() + "?" + q.Encode()
	}
	// The writer never checkpoints (its commits would wait for the copy and its
	// fsyncs); a background connection does, without blocking it.
	w, err := sql.Open("sqlite", dsn("wal_autocheckpoint(0)"))
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("opening the database %s: %w", path, err)
	}
	ok := false
	defer func() {
		if !ok {
			lock.Close()
		}
	}()
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	// The version is checked before anything is written, the journal mode (kept in the
	// file) included: a file refused is left exactly as it was.
	found, err := migrate(ctx, w, path, migs)
	if err != nil {
		w.Close()
		return nil, err
	}
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		w.Close()
		return nil, fmt.Errorf("opening the database %s: %w", path, err)
	}
	if mode != "wal" {
		w.Close()
		return nil, fmt.Errorf("opening the database %s: journal mode is %q, not wal (is it on a network file system?)", path, mode)
	}
	for _, s := range schema {
		if _, err := w.ExecContext(ctx, s); err != nil {
			w.Close()
			return nil, fmt.Errorf("creating the tables of %s: %w", path, err)
		}
	}
	r, err := sql.Open("sqlite", dsn("journal_mode(WAL)", "query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("opening the database %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	ck, err := sql.Open("sqlite", dsn("journal_mode(WAL)"))
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("opening the database %s: %w", path, err)
	}
	ck.SetMaxOpenConns(1)
	ok = true
	db := &DB{path: path, w: w, r: r, ck: ck, lock: lock, ops: make(chan *op, maxBatch), quit: make(chan struct{}), done: make(chan struct{}),
		found: found, version: len(migs)}
	db.ckDone = make(chan struct{})
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{{&db.savepoint, "SAVEPOINT op"}, {&db.rollbackTo, "ROLLBACK TO op"}, {&db.release, "RELEASE op"}} {
		if *p.st, err = w.PrepareContext(ctx, p.q); err != nil {
			ck.Close()
			r.Close()
			w.Close()
			lock.Close()
			return nil, fmt.Errorf("preparing statements on %s: %w", path, err)
		}
	}
	go db.writer()
	go db.checkpointer()
	return db, nil
}

// checkpointEvery is how often the WAL is copied back into the database file.
const checkpointEvery = 500 * time.Millisecond

// checkpointer copies committed WAL pages into the database file in PASSIVE mode,
// which never blocks the writer, so the WAL stays small and commits stay fast.
func (db *DB) checkpointer() {
	defer close(db.ckDone)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-db.quit:
			return
		case <-t.C:
			_, _ = db.ck.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		}
	}
}

// Migrated returns the schema version the file had when it was opened (0 for a new
// file and for one made before there were versions) and the one it has now.
func (db *DB) Migrated() (from, to int) { return db.found, db.version }

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Read returns the pool for queries; it refuses writes.
func (db *DB) Read() *sql.DB { return db.r }

// Write runs fn in a transaction shared with other writes arriving at the same time,
// and returns once that transaction is committed (nil) or fn's changes are rolled back
// (its error). fn must be quick and must not block on anything but the database: no
// network calls. A failing fn undoes only its own changes. When ctx ends before the
// answer, the write may still commit.
func (db *DB) Write(ctx context.Context, fn func(*sql.Tx) error) error {
	o := &op{fn: fn, res: make(chan error, 1)}
	select {
	case <-db.quit:
		return ErrClosed
	default:
	}
	select {
	case db.ops <- o:
	case <-db.quit:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-o.res:
		return err
	case <-db.done:
		// The writer has stopped; an op that slipped into the channel after its last
		// look was never run.
		select {
		case err := <-o.res:
			return err
		default:
			return ErrClosed
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (db *DB) writer() {
	defer close(db.done)
	batch := make([]*op, 0, maxBatch)
	for {
		select {
		case o := <-db.ops:
			batch = append(batch[:0], o)
		case <-db.quit:
			// Finish what was already handed over, so no Write waits forever.
			for {
				select {
				case o := <-db.ops:
					o.res <- ErrClosed
				default:
					return
				}
			}
		}
	more:
		for len(batch) < maxBatch {
			select {
			case o := <-db.ops:
				batch = append(batch, o)
			default:
				break more
			}
		}
		db.commit(batch)
	}
}

// commit runs a batch in one transaction, each op inside its own savepoint.
func (db *DB) commit(batch []*op) {
	errs := make([]error, len(batch))
	fail := func(err error) {
		for _, o := range batch {
			o.res <- err
		}
	}
	tx, err := db.w.Begin()
	if err != nil {
		fail(fmt.Errorf("starting a transaction on %s: %w", db.path, err))
		return
	}
	if len(batch) == 1 {
		// Alone in its transaction, a failing op rolls back the transaction itself:
		// no savepoint to pay for.
		if err := run(batch[0].fn, tx); err != nil {
			tx.Rollback()
			batch[0].res <- err
			return
		}
		if err := tx.Commit(); err != nil {
			fail(fmt.Errorf("committing to %s: %w", db.path, err))
			return
		}
		batch[0].res <- nil
		return
	}
	for i, o := range batch {
		if _, err := tx.Stmt(db.savepoint).Exec(); err != nil {
			tx.Rollback()
			fail(fmt.Errorf("writing to %s: %w", db.path, err))
			return
		}
		errs[i] = run(o.fn, tx)
		if errs[i] != nil {
			if _, err := tx.Stmt(db.rollbackTo).Exec(); err != nil {
				tx.Rollback()
				fail(fmt.Errorf("undoing a failed write on %s: %w", db.path, err))
				return
			}
		}
		if _, err := tx.Stmt(db.release).Exec(); err != nil {
			tx.Rollback()
			fail(fmt.Errorf("writing to %s: %w", db.path, err))
			return
		}
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("committing to %s: %w", db.path, err))
		return
	}
	for i, o := range batch {
		o.res <- errs[i]
	}
}

func run(fn func(*sql.Tx) error, tx *sql.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("a database write panicked: %v", p)
		}
	}()
	return fn(tx)
}

// Stmt is a statement prepared once for writes: modernc.org/sqlite parses the SQL of
// every unprepared Exec again, which costs more than running it.
type Stmt struct{ s *sql.Stmt }

// Prepare prepares a statement for use inside Write. Call it when setting up (it waits
// for the writer's connection), never from inside a Write.
func (db *DB) Prepare(ctx context.Context, query string) (*Stmt, error) {
	s, err := db.w.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("preparing a statement on %s: %w", db.path, err)
	}
	return &Stmt{s: s}, nil
}

// Exec runs the statement inside a Write's transaction.
func (s *Stmt) Exec(tx *sql.Tx, args ...any) (sql.Result, error) { return tx.Stmt(s.s).Exec(args...) }

// QueryRow runs the statement inside a Write's transaction.
func (s *Stmt) QueryRow(tx *sql.Tx, args ...any) *sql.Row { return tx.Stmt(s.s).QueryRow(args...) }

// Writable checks that a write can be committed now (for /readyz).
func (db *DB) Writable(ctx context.Context) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec("INSERT OR REPLACE INTO probe(id, at) VALUES (1, unixepoch())")
		return err
	})
}

// Close stops the writer and closes the file. Writes after Close fail with ErrClosed.
func (db *DB) Close() error {
	db.once.Do(func() { close(db.quit) })
	<-db.done
	<-db.ckDone
	// A last checkpoint leaves the data in the database file.
	_, _ = db.ck.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	err := errors.Join(db.r.Close(), db.ck.Close(), db.w.Close())
	db.lock.Close() // releases the lock
	return err
}

// lockFile takes an exclusive lock beside the database (path is the lock, db the
// database as it was named): two servers on one database would both dispatch. The
// kernel drops the lock when the process dies, even by SIGKILL, so a crash never
// leaves it behind.
func lockFile(path, db string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the database lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("the database %s is in use by another perfbot serve (it holds %s); run one server per database", db, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}

// maxLinks bounds the symlinks followed to the database file, as the kernel does.
const maxLinks = 40

// resolve returns path made absolute with every symlink resolved: those of its folders
// and, the file not having to exist yet, those of the file itself, a dangling link
// included (SQLite creates its target).
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for range maxLinks {
		dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
		if err != nil {
			return "", fmt.Errorf("resolving its folder: %w", err)
		}
		abs = filepath.Join(dir, filepath.Base(abs))
		st, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			return abs, nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return abs, nil
		}
		to, err := os.Readlink(abs)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(dir, to)
		}
		abs = filepath.Clean(to)
	}
	return "", fmt.Errorf("more than %d symlinks to follow", maxLinks)
}
