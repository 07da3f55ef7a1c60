package store_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lablup/perfbot/bot/store"
)

func open(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.OpenWith(context.Background(), filepath.Join(t.TempDir(), "t.db"), store.Migrations(), "CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestGroupCommitIsolatesFailures: many concurrent writes share transactions; a failing
// one (a constraint violation, a panic) undoes only itself, alone or in a batch.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 200)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Write(ctx, func(tx *sql.Tx) error {
				if _, err := tx.Exec(`INSERT INTO kv VALUES (?, ?)`, i, i); err != nil {
					return err
				}
				switch i % 10 {
				case 3:
					_, err := tx.Exec(`INSERT INTO kv VALUES (?, ?)`, i, i) // duplicate key
					return err
				case 7:
					panic("boom")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if bad := i%10 == 3 || i%10 == 7; bad != (err != nil) {
			t.Errorf("write %d: err %v", i, err)
		}
	}
	var n int
	if err := db.Read().QueryRow(`SELECT count(*) FROM kv`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 160 {
		t.Errorf("%d rows, want the 160 good writes", n)
	}
	if err := db.Writable(ctx); err != nil {
		t.Errorf("Writable: %v", err)
	}
}

func TestClosed(t *testing.T) {
	t.Parallel()
	db := open(t)
	db.Close()
	if err := db.Write(context.Background(), func(*sql.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Errorf("write after Close: %v, want ErrClosed", err)
	}
}

func TestOpenRefusesMissingFolder(t *testing.T) {
	t.Parallel()
	_, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "no", "t.db"))
	if err == nil {
		t.Fatal("opened a database in a folder that does not exist")
	}
}

func TestOneServerPerDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "in use by another perfbot serve") {
		t.Fatalf("second Open: %v, want a refusal", err)
	}
	db.Close()
	db2, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	db2.Close()
}

// TestOneServerPerDatabaseThroughSymlinks: one database named by its path, a symlink
// to it, a symlink to its folder and a dangling symlink (the file not made yet) is
// one lock; the data and the WAL sit at the real file.
func TestOneServerPerDatabaseThroughSymlinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	real := filepath.Join(dir, "data", "t.db")
	if err := os.Mkdir(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	// The link is made before the file: the first server creates it through the link.
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink("data/t.db", link); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder")
	if err := os.Symlink("data", folder); err != nil {
		t.Fatal(err)
	}
	chain := filepath.Join(dir, "chain.db")
	if err := os.Symlink(link, chain); err != nil {
		t.Fatal(err)
	}
	db, err := store.OpenWith(ctx, link, store.Migrations(), "CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY)")
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{real, filepath.Join(folder, "t.db"), chain} {
		if _, err := store.Open(ctx, other); err == nil || !strings.Contains(err.Error(), "in use by another perfbot serve") {
			t.Errorf("Open(%s) while %s is open: %v, want a refusal", other, link, err)
		}
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error { _, err := tx.Exec(`INSERT INTO kv VALUES ('a')`); return err }); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{real, real + "-wal", real + ".lock"} {
		if st, err := os.Lstat(f); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s: %v, want a regular file beside the real database", f, err)
		}
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	db.Close()
	loop := filepath.Join(dir, "loop.db")
	if err := os.Symlink("loop.db", loop); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(ctx, loop); err == nil || !strings.Contains(err.Error(), "symlinks") {
		t.Errorf("a symlink loop: %v, want a refusal naming it", err)
	}
}
