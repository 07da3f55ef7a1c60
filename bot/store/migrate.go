package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// embedded holds the schema of the database file, one numbered step per file. The
// whole folder is embedded, not *.sql, so a misnamed file is refused, never skipped.
//
//go:embed migrations
var embedded embed.FS

// Migrations is the migration set this binary applies: the files of migrations/.
func Migrations() fs.FS {
	sub, err := fs.Sub(embedded, "migrations")
	if err != nil {
		panic(err) // the folder is embedded: cannot happen
	}
	return sub
}

// migration is one step of the schema: the file NNNN_what.sql brings a database at
// version NNNN-1 to version NNNN.
type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// maxMigration bounds the size of one migration file.
const maxMigration = 1 << 20

// loadMigrations reads a migration set: files named NNNN_what.sql at the root of fsys,
// numbered from 0001 without gaps or repeats. Anything else there is an error, so that
// a misnamed step is never skipped silently.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("reading the migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			return nil, fmt.Errorf("migration %q: want a file named NNNN_what.sql (four digits, lower-case letters, digits and _)", e.Name())
		}
		f, err := fsys.Open(e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", e.Name(), err)
		}
		b, err := io.ReadAll(io.LimitReader(f, maxMigration+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", e.Name(), err)
		}
		if len(b) > maxMigration {
			return nil, fmt.Errorf("migration %s is larger than %d bytes", e.Name(), maxMigration)
		}
		v, _ := strconv.Atoi(m[1])
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	if len(out) == 0 {
		return nil, errors.New("no migrations: the schema needs at least 0001_initial.sql")
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s has version %d where %d is next: versions start at 0001 and have no gaps or repeats", m.name, m.version, i+1)
		}
	}
	return out, nil
}

// migrate brings the database on w to the last version of migs in one transaction and
// returns the version it found. A database without a version (0) that already holds
// tables was made before there were versions: it is adopted when its tables are those
// of version 1, which then runs on it (its statements are idempotent). A database at a
// later version than migs knows is refused. On any error nothing is changed.
func migrate(ctx context.Context, w *sql.DB, path string, migs []migration) (found int, err error) {
	latest := len(migs)
	conn, err := w.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("opening the database %s: %w", path, err)
	}
	defer conn.Close()
	if found, err = version(ctx, conn); err != nil {
		return 0, fmt.Errorf("reading the schema version of %s: %w", path, err)
	}
	if err := unknown(path, found, latest); err != nil {
		return found, err
	}
	if found == latest {
		return found, nil
	}
	// A table rebuild (create, copy, drop, rename) must not cascade its drop into the
	// tables that refer to it: foreign keys are off while migrating (the pragma is a
	// no-op inside a transaction) and checked as a whole before the commit.
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		return found, fmt.Errorf("migrating %s: %w", path, err)
	}
	defer func() {
		if _, ferr := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON"); ferr != nil && err == nil {
			err = fmt.Errorf("migrating %s: turning foreign keys back on: %w", path, ferr)
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return found, fmt.Errorf("migrating %s: %w", path, err)
	}
	defer tx.Rollback()
	// Read again under the write lock: the version read before may be stale.
	if found, err = version(ctx, tx); err != nil {
		return 0, fmt.Errorf("reading the schema version of %s: %w", path, err)
	}
	if err := unknown(path, found, latest); err != nil {
		return found, err
	}
	if found == latest {
		return found, nil
	}
	if found == 0 {
		if err := adoptable(ctx, tx, migs[0]); err != nil {
			return found, fmt.Errorf("opening the database %s: it has no schema version, and %w; it was left as it was", path, err)
		}
	}
	for _, m := range migs[found:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return found, fmt.Errorf("migrating %s from schema version %d to %d: %s failed: %w; the database was left at version %d, unchanged",
				path, found, latest, m.name, err, found)
		}
	}
	if err := foreignKeyCheck(ctx, tx); err != nil {
		return found, fmt.Errorf("migrating %s from schema version %d to %d: %w; the database was left at version %d, unchanged",
			path, found, latest, err, found)
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(latest)); err != nil {
		return found, fmt.Errorf("migrating %s: recording schema version %d: %w", path, latest, err)
	}
	if err := tx.Commit(); err != nil {
		return found, fmt.Errorf("migrating %s from schema version %d to %d: committing: %w; the database was left at version %d, unchanged",
			path, found, latest, err, found)
	}
	return found, nil
}

// unknown refuses a version this binary cannot migrate from.
func unknown(path string, found, latest int) error {
	if found < 0 {
		return fmt.Errorf("the database %s has schema version %d, which no perfbot writes: it is another program's database; it was left as it was", path, found)
	}
	if found <= latest {
		return nil
	}
	return fmt.Errorf("the database %s has schema version %d, but this perfbot knows versions up to %d: "+
		"a newer perfbot has upgraded it. Run that newer perfbot (or a later one), or, to go back to this one, "+
		"restore the copy of the database taken before the upgrade; perfbot never downgrades a database, and left this one as it was",
		path, found, latest)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func version(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// tables describes the tables of a database: for each table, its columns as
// "name TYPE NOT NULL DEFAULT x PRIMARY KEY", in order.
func tables(ctx context.Context, q querier) (map[string][]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT m.name, p.name, p.type, p."notnull", coalesce(p.dflt_value, ''), p.pk
		FROM sqlite_schema m JOIN pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY m.name, p.cid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, name, typ, dflt string
		var notnull, pk int
		if err := rows.Scan(&table, &name, &typ, &notnull, &dflt, &pk); err != nil {
			return nil, err
		}
		col := name + " " + typ
		if notnull != 0 {
			col += " NOT NULL"
		}
		if dflt != "" {
			col += " DEFAULT " + dflt
		}
		if pk != 0 {
			col += " PRIMARY KEY"
		}
		out[table] = append(out[table], col)
	}
	return out, rows.Err()
}

// adoptable checks that the tables of a database without a version are those that
// first, the first migration, creates: each table it holds is one of them, with the
// same columns. Tables it lacks are fine: first creates them.
func adoptable(ctx context.Context, tx *sql.Tx, first migration) error {
	have, err := tables(ctx, tx)
	if err != nil {
		return fmt.Errorf("its tables cannot be read: %w", err)
	}
	if len(have) == 0 {
		return nil // a new database
	}
	// What the first migration makes, made in a database of its own in memory.
	mem, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return err
	}
	defer mem.Close()
	mem.SetMaxOpenConns(1)
	if _, err := mem.ExecContext(ctx, first.sql); err != nil {
		return fmt.Errorf("%s cannot be run to compare with it: %w", first.name, err)
	}
	want, err := tables(ctx, mem)
	if err != nil {
		return err
	}
	var bad []string
	for _, name := range slices.Sorted(maps.Keys(have)) {
		cols, ok := want[name]
		if !ok {
			bad = append(bad, fmt.Sprintf("table %s is not one of perfbot's", name))
			continue
		}
		for _, c := range cols {
			if !slices.Contains(have[name], c) {
				bad = append(bad, fmt.Sprintf("table %s lacks column %q", name, c))
			}
		}
		for _, c := range have[name] {
			if !slices.Contains(cols, c) {
				bad = append(bad, fmt.Sprintf("table %s has column %q, which version 1 does not", name, c))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("its tables are not those of schema version 1 (%s): it is another program's database, or one from a perfbot older than the tables of version 1",
			strings.Join(bad, "; "))
	}
	return nil
}

// foreignKeyCheck fails when a row refers to a row that does not exist.
func foreignKeyCheck(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return fmt.Errorf("checking foreign keys: %w", err)
	}
	defer rows.Close()
	if rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return fmt.Errorf("checking foreign keys: %w", err)
		}
		return fmt.Errorf("row %d of table %s refers to a row of %s that does not exist", rowid.Int64, table, parent)
	}
	return rows.Err()
}
