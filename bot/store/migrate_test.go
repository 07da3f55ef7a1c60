package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/store"
)

// v0 copies testdata/v0.db, a database written before there were schema versions,
// into a folder of the test and returns its path.
func v0(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "v0.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "perfbot.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// withSteps is the real migration set plus the files given.
func withSteps(t *testing.T, steps map[string]string) fs.FS {
	t.Helper()
	set := fstest.MapFS{}
	real, err := fs.ReadDir(store.Migrations(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range real {
		b, err := fs.ReadFile(store.Migrations(), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		set[e.Name()] = &fstest.MapFile{Data: b}
	}
	for name, sql := range steps {
		set[name] = &fstest.MapFile{Data: []byte(sql)}
	}
	return set
}

// firstStep is the first migration alone: a database at version 1.
func firstStep(t *testing.T) fs.FS {
	t.Helper()
	b, err := fs.ReadFile(store.Migrations(), "0001_initial.sql")
	if err != nil {
		t.Fatal(err)
	}
	return fstest.MapFS{"0001_initial.sql": &fstest.MapFile{Data: b}}
}

// latest is the version the real migration set brings a database to.
func latest(t *testing.T) int {
	t.Helper()
	all, err := fs.ReadDir(store.Migrations(), ".")
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

// raw opens the file with the driver alone, for looking at it from outside the store.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// dump is the content of a database as text: its version, its schema, and every row
// of every table.
func dump(t *testing.T, db querier) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	rowsOf := func(q string) [][]string {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out [][]string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			row := make([]string, len(vals))
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				row[i] = fmt.Sprintf("%v", v)
			}
			out = append(out, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	fmt.Fprintf(&b, "user_version %v\n", rowsOf("PRAGMA user_version"))
	for _, r := range rowsOf("SELECT type, name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name") {
		fmt.Fprintf(&b, "%s %s: %s\n", r[0], r[1], r[2])
		if r[0] == "table" {
			for _, row := range rowsOf("SELECT * FROM " + r[1] + " ORDER BY rowid") {
				fmt.Fprintf(&b, "  %q\n", row)
			}
		}
	}
	return b.String()
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenAdoptsAV0Database: a database perfbot serve wrote before schema versions
// is adopted as version 1 with every row as it was (the first step alone changes
// nothing but the version), then migrated to the latest; its pending deliveries and
// its queued and running requests read back through the inbox and the queue, and new
// writes go through. Opened again, it is not migrated again.
func TestOpenAdoptsAV0Database(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := v0(t)
	before := dump(t, raw(t, path))
	if !strings.HasPrefix(before, "user_version [[0]]") || !strings.Contains(before, "table requests") {
		t.Fatalf("the fixture is not a v0 database:\n%s", before)
	}
	first, err := store.OpenWith(ctx, v0(t), firstStep(t))
	if err != nil {
		t.Fatal(err)
	}
	after := dump(t, first.Read())
	first.Close()
	if want := strings.Replace(before, "user_version [[0]]", "user_version [[1]]", 1); after != want {
		t.Errorf("adopting changed more than the version:\n got %s\nwant %s", after, want)
	}
	db, err := store.Open(ctx, path) // as perfbot serve opens it
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if from, to := db.Migrated(); from != 0 || to != latest(t) {
		t.Errorf("Migrated() = %d, %d; want 0, %d", from, to, latest(t))
	}

	later := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ib, err := inbox.New(ctx, db, func() time.Time { return later })
	if err != nil {
		t.Fatal(err)
	}
	if n := ib.Pending(); n != 3 {
		t.Errorf("%d pending deliveries, want 3", n)
	}
	due, err := ib.Due(ctx, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range due {
		got = append(got, fmt.Sprintf("%s %s attempts=%d times=%d error=%q payload=%s",
			d.ID[len(d.ID)-2:], d.State, d.Attempts, d.Times, d.Error, d.Payload))
	}
	want := []string{
		`03 received attempts=0 times=2 error="" payload={"action":"created","comment":{"id":1003,"body":"/profile rocm"},"issue":{"number":7}}`,
		`04 received attempts=0 times=1 error="" payload={"action":"created","comment":{"id":1004,"body":"/profile rocm"},"issue":{"number":7}}`,
		`05 received attempts=1 times=1 error="GitHub answered 502" payload={"action":"created","comment":{"id":1005,"body":"/profile rocm"},"issue":{"number":7}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("due deliveries:\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	q := queue.New(db, func() time.Time { return later })
	open, err := q.List(ctx, queue.Filter{States: queue.Open})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, r := range open {
		got = append(got, fmt.Sprintf("%d %s %s comment=%d status=%d check=%d run=%d tries=%d models=%v sha=%s",
			r.ID, r.State, r.Host, r.CommentID, r.StatusCommentID, r.CheckRunID, r.RunID, r.Tries, r.Models, r.SHA[:7]))
	}
	want = []string{
		"2 running gfx1151 comment=2002 status=3002 check=4002 run=5002 tries=1 models=[qwen3-0.6b llama3.2-1b] sha=6113728",
		"3 queued gfx1151 comment=2003 status=3003 check=4003 run=0 tries=0 models=[qwen3-0.6b llama3.2-1b] sha=6113728",
		"4 queued gfx1151 comment=2004 status=3004 check=4004 run=0 tries=0 models=[qwen3-0.6b llama3.2-1b] sha=6113728",
		"5 dispatching gfx1201 comment=2005 status=3005 check=4005 run=0 tries=1 models=[qwen3-0.6b llama3.2-1b] sha=6113728",
		"6 accepting gfx1151 comment=2006 status=3006 check=0 run=0 tries=0 models=[qwen3-0.6b llama3.2-1b] sha=6113728",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("open requests:\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The queue goes on where it was: request 2 still holds its host; once it ends,
	// request 3 is next.
	if r, ok, err := q.Claim(ctx, "gfx1151"); err != nil || ok {
		t.Fatalf("Claim while request 2 runs: %d %v %v", r.ID, ok, err)
	}
	if ok, err := q.Finish(ctx, 2, queue.Done, "success", "", time.Minute); err != nil || !ok {
		t.Fatalf("Finish(2): %v %v", ok, err)
	}
	if r, ok, err := q.Claim(ctx, "gfx1151"); err != nil || !ok || r.ID != 3 {
		t.Fatalf("Claim after request 2 ended: %d %v %v, want 3", r.ID, ok, err)
	}
	if out, err := ib.Put(ctx, inbox.Delivery{ID: "new", Event: "ping", Payload: []byte("{}")}); err != nil || out != inbox.Stored {
		t.Fatalf("Put after the migration: %v %v", out, err)
	}
	if err := ib.Done(ctx, due[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	again, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if from, to := again.Migrated(); from != latest(t) || to != latest(t) {
		t.Errorf("opened again: Migrated() = %d, %d; want %d, %d", from, to, latest(t), latest(t))
	}
}

// TestAdoptedSchemaIsTheNewSchema: a v0 database, once adopted, has the schema that
// migrating a new file makes, so every later migration meets one schema.
func TestAdoptedSchemaIsTheNewSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := func(path string) string {
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var b strings.Builder
		for _, line := range strings.Split(dump(t, db.Read()), "\n") {
			if !strings.HasPrefix(line, "  ") { // the rows differ; the schema must not
				b.WriteString(line + "\n")
			}
		}
		return b.String()
	}
	adopted := schema(v0(t))
	made := schema(filepath.Join(t.TempDir(), "new.db"))
	if adopted != made {
		t.Errorf("adopted schema:\n%s\nnew schema:\n%s", adopted, made)
	}
}

const addPriority = `ALTER TABLE requests ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
UPDATE requests SET priority = 2 WHERE state = 'queued';`

// TestALaterMigration: a third step, given as a test's migration set, runs on a v0
// database together with the others (in one transaction) and on a version 2 database
// alone; the rows survive, the column is there, and the version moves to 3.
func TestALaterMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := withSteps(t, map[string]string{"0003_request_priority.sql": addPriority})
	check := func(path string, from int) {
		t.Helper()
		db, err := store.OpenWith(ctx, path, set)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if f, to := db.Migrated(); f != from || to != 3 {
			t.Errorf("Migrated() = %d, %d; want %d, 3", f, to, from)
		}
		all, err := queue.New(db, nil).List(ctx, queue.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 6 {
			t.Errorf("%d requests after the migration, want 6", len(all))
		}
		rows, err := db.Read().QueryContext(ctx, `SELECT id, priority FROM requests ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var id, p int
			if err := rows.Scan(&id, &p); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d:%d", id, p))
		}
		if g := strings.Join(got, " "); g != "1:0 2:0 3:2 4:2 5:0 6:0" {
			t.Errorf("priorities %s, want the queued requests (3, 4) at 2", g)
		}
	}
	path := v0(t)
	check(path, 0)
	check(path, 3) // nothing left to do

	// A database already at version 2.
	path = v0(t)
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	check(path, 2)
}

// TestFailedMigrationLeavesTheDatabaseUntouched: a step that fails half-way undoes
// the steps before it, its own first statements and the adoption: the file keeps its
// bytes, and opens afterwards with a set that works.
func TestFailedMigrationLeavesTheDatabaseUntouched(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := v0(t)
	before := fileBytes(t, path)
	set := withSteps(t, map[string]string{"0003_broken.sql": addPriority + "\nINSERT INTO nowhere VALUES (1);"})
	_, err := store.OpenWith(ctx, path, set)
	if err == nil || !strings.Contains(err.Error(), "0003_broken.sql failed") || !strings.Contains(err.Error(), "left at version 0, unchanged") {
		t.Fatalf("a failing step: %v, want an error naming it and the version kept", err)
	}
	if !bytes.Equal(fileBytes(t, path), before) {
		t.Error("the failed migration changed the database file")
	}
	if d := dump(t, raw(t, path)); !strings.HasPrefix(d, "user_version [[0]]") || strings.Contains(d, "priority") {
		t.Errorf("after the failed migration:\n%s", d)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatalf("opening after a failed migration: %v", err)
	}
	defer db.Close()
	if from, to := db.Migrated(); from != 0 || to != 2 {
		t.Errorf("Migrated() = %d, %d; want 0, 2", from, to)
	}
}

// TestNewerDatabaseIsRefused: a database a newer perfbot migrated is refused with both
// versions named and what to do, and left as it was; the newer set still opens it.
func TestNewerDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := v0(t)
	set := withSteps(t, map[string]string{"0003_request_priority.sql": addPriority})
	db, err := store.OpenWith(ctx, path, set)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileBytes(t, path)
	_, err = store.Open(ctx, path)
	if err == nil {
		t.Fatal("a database at version 3 opened with a binary that knows version 2")
	}
	for _, s := range []string{"schema version 3", "knows versions up to 2", "newer perfbot", "restore the copy", "left this one as it was"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal %q lacks %q", err, s)
		}
	}
	if !bytes.Equal(fileBytes(t, path), before) {
		t.Error("the refusal changed the database file")
	}
	db, err = store.OpenWith(ctx, path, set)
	if err != nil {
		t.Fatalf("the newer set after a refusal: %v", err)
	}
	defer db.Close()
	if from, to := db.Migrated(); from != 3 || to != 3 {
		t.Errorf("Migrated() = %d, %d; want 3, 3", from, to)
	}
}

// deliveriesV2 rebuilds the deliveries table with a new column the way SQLite
// documents for changes ALTER TABLE cannot make: a new table, the rows copied, the old
// one dropped and the new one renamed.
const deliveriesV2 = `CREATE TABLE deliveries_new (
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
	times        INTEGER NOT NULL DEFAULT 1,
	note         TEXT NOT NULL DEFAULT ''
);
INSERT INTO deliveries_new (seq, id, event, action, installation, repo, state, attempts, error, received_at, next_at, updated_at, times)
	SELECT seq, id, event, action, installation, repo, state, attempts, error, received_at, next_at, updated_at, times FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
CREATE INDEX deliveries_due ON deliveries (state, next_at);`

// TestTableRebuildKeepsReferringRows: dropping a table during a rebuild does not
// cascade into the rows that refer to it (the payloads), foreign keys are back on
// afterwards, and a step that leaves a dangling reference is refused.
func TestTableRebuildKeepsReferringRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := v0(t)
	db, err := store.OpenWith(ctx, path, withSteps(t, map[string]string{"0003_delivery_note.sql": deliveriesV2}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func() (n int) {
		t.Helper()
		if err := db.Read().QueryRow(`SELECT count(*) FROM payloads`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 5 {
		t.Fatalf("%d payloads after rebuilding deliveries, want the 5 there were", n)
	}
	ib, err := inbox.New(ctx, db, func() time.Time { return time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	if d, ok, err := ib.Get(ctx, "0b7e4c50-0000-11f1-8000-000000000004"); err != nil || !ok || !strings.Contains(string(d.Payload), `"id":1004`) {
		t.Fatalf("a delivery after the rebuild: %+v %v %v", d, ok, err)
	}
	// Foreign keys are on again: deleting a delivery takes its payload with it.
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`DELETE FROM deliveries WHERE id = '0b7e4c50-0000-11f1-8000-000000000001'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 4 {
		t.Errorf("%d payloads after deleting a delivery, want 4 (foreign keys on)", n)
	}

	path = v0(t)
	before := fileBytes(t, path)
	_, err = store.OpenWith(ctx, path, withSteps(t, map[string]string{"0003_orphans.sql": `DELETE FROM deliveries WHERE state = 'done'`}))
	if err == nil || !strings.Contains(err.Error(), "table payloads refers to a row of deliveries that does not exist") {
		t.Fatalf("a step leaving a payload without its delivery: %v, want a refusal", err)
	}
	if !bytes.Equal(fileBytes(t, path), before) {
		t.Error("the refused step changed the database file")
	}
}

// TestMigrationSetIsChecked: a set with a gap, a repeat, a misnamed file or nothing in
// it is refused before the database file is made.
func TestMigrationSetIsChecked(t *testing.T) {
	t.Parallel()
	first, err := fs.ReadFile(store.Migrations(), "0001_initial.sql")
	if err != nil {
		t.Fatal(err)
	}
	f := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, c := range []struct {
		name string
		set  fstest.MapFS
		want string
	}{
		{"empty", fstest.MapFS{}, "no migrations"},
		{"gap", fstest.MapFS{"0001_initial.sql": f(string(first)), "0003_x.sql": f("SELECT 1")}, "0003_x.sql has version 3 where 2 is next"},
		{"repeat", fstest.MapFS{"0001_initial.sql": f(string(first)), "0001_again.sql": f("SELECT 1")}, "has version 1 where 2 is next"},
		{"no first", fstest.MapFS{"0002_x.sql": f("SELECT 1")}, "0002_x.sql has version 2 where 1 is next"},
		{"misnamed", fstest.MapFS{"0001_initial.sql": f(string(first)), "2_x.sql": f("SELECT 1")}, `migration "2_x.sql": want a file named NNNN_what.sql`},
		{"not sql", fstest.MapFS{"0001_initial.sql": f(string(first)), "0002_x.txt": f("SELECT 1")}, `migration "0002_x.txt"`},
		{"folder", fstest.MapFS{"0001_initial.sql": f(string(first)), "0002_x.sql/a": f("SELECT 1")}, `migration "0002_x.sql"`},
	} {
		path := filepath.Join(t.TempDir(), "t.db")
		_, err := store.OpenWith(context.Background(), path, c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: the database file was made: %v", c.name, err)
		}
	}
}

// TestForeignDatabaseIsRefused: a file without a version whose tables are not those of
// version 1 (another program's, or an older perfbot's) is refused, naming what
// differs, and left as it was.
func TestForeignDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	initial, err := fs.ReadFile(store.Migrations(), "0001_initial.sql")
	if err != nil {
		t.Fatal(err)
	}
	requests := string(initial[strings.Index(string(initial), "CREATE TABLE IF NOT EXISTS requests"):])
	oldRequests := strings.Replace(strings.Split(requests, ";")[0], ",\n\trun_ms            INTEGER NOT NULL DEFAULT 0", "", 1)
	if !strings.Contains(requests, "run_ms") || strings.Contains(oldRequests, "run_ms") {
		t.Fatalf("the requests table of migration 1 no longer ends with run_ms:\n%s", oldRequests)
	}
	for _, c := range []struct {
		name, schema string
		want         []string
	}{
		{"another program's", `CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)`, []string{"table users is not one of perfbot's"}},
		{"an older perfbot's", oldRequests, []string{`table requests lacks column "run_ms INTEGER NOT NULL DEFAULT 0"`}},
		{"a changed column", `CREATE TABLE probe(id INTEGER PRIMARY KEY, at TEXT)`, []string{`table probe lacks column "at INTEGER"`, `table probe has column "at TEXT"`}},
	} {
		path := filepath.Join(t.TempDir(), "t.db")
		db := raw(t, path)
		if _, err := db.ExecContext(ctx, c.schema); err != nil {
			t.Fatal(err)
		}
		db.Close()
		before := fileBytes(t, path)
		_, err := store.Open(ctx, path)
		if err == nil {
			t.Errorf("%s: opened", c.name)
			continue
		}
		for _, w := range append(c.want, "has no schema version", "left as it was") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
		if !bytes.Equal(fileBytes(t, path), before) {
			t.Errorf("%s: the refusal changed the file", c.name)
		}
	}
}

// TestNegativeVersionIsRefused: a version below 0 is no perfbot's.
func TestNegativeVersionIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t.db")
	db := raw(t, path)
	if _, err := db.Exec("CREATE TABLE probe(id INTEGER PRIMARY KEY, at INTEGER); PRAGMA user_version = -3"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := fileBytes(t, path)
	if _, err := store.Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "schema version -3, which no perfbot writes") {
		t.Fatalf("version -3: %v, want a refusal", err)
	}
	if !bytes.Equal(fileBytes(t, path), before) {
		t.Error("the refusal changed the file")
	}
}
