package store_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lablup/perfbot/bot/store"
)

func open(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), "CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")
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
