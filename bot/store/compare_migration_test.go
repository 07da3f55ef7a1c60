package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/store"
)

// TestVersion1GainsTheCompareColumns: a version 1 database (a v0 one adopted by the
// first step alone, as a perfbot of version 1 left it) opens at version 2 with the
// requests' base and repeats columns; every row it held keeps its values and reads ""
// and 0 in them, and a new row can set them.
func TestVersion1GainsTheCompareColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := v0(t)
	v1, err := store.OpenWith(ctx, path, firstStep(t))
	if err != nil {
		t.Fatal(err)
	}
	before := requestRows(t, v1)
	if err := v1.Close(); err != nil {
		t.Fatal(err)
	}
	if len(before) != 6 {
		t.Fatalf("%d requests in the version 1 database, want the fixture's 6", len(before))
	}

	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if from, to := db.Migrated(); from != 1 || to != 2 {
		t.Errorf("Migrated() = %d, %d; want 1, 2", from, to)
	}
	after := requestRows(t, db)
	if len(after) != len(before) {
		t.Fatalf("%d requests after the migration, want %d", len(after), len(before))
	}
	for i := range before {
		// The new columns come last, in the order the migration adds them.
		want := strings.TrimSuffix(before[i], "]") + ` "" "0"]`
		if after[i] != want {
			t.Errorf("request row %d:\n got %s\nwant %s", i+1, after[i], want)
		}
	}
	var cols []string
	rows, err := db.Read().QueryContext(ctx, `SELECT name, type, "notnull", dflt_value FROM pragma_table_info('requests') WHERE name IN ('base', 'repeats') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ, dflt string
		var notnull int
		if err := rows.Scan(&name, &typ, &notnull, &dflt); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, fmt.Sprintf("%s %s notnull=%d default=%s", name, typ, notnull, dflt))
	}
	if got := strings.Join(cols, "; "); got != "base TEXT notnull=1 default=''; repeats INTEGER notnull=1 default=0" {
		t.Errorf("the new columns: %s", got)
	}
}

// requestRows are the requests table's rows as text, in id order.
func requestRows(t *testing.T, db *store.DB) []string {
	t.Helper()
	var out []string
	in := false
	for _, line := range strings.Split(dump(t, db.Read()), "\n") {
		switch {
		case strings.HasPrefix(line, "table "), strings.HasPrefix(line, "index "):
			in = strings.HasPrefix(line, "table requests:")
		case in && strings.HasPrefix(line, "  ["):
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}
