package gh

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/fakegithub"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	const (
		good = "9fceb02d0ae598e95dc970b74767f19372d61af8"
		bad  = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	)
	t.Run("ahead, with the counts", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", "/repos/lablup/mlxcel/compare/"+good+"..."+bad+"?per_page=1",
			e.s.Example(200, "commit-comparison", map[string]any{"status": "ahead", "ahead_by": 12, "behind_by": 0}))
		got, err := e.c.Compare(context.Background(), testRepo, good, bad)
		if err != nil {
			t.Fatal(err)
		}
		if got != (Comparison{Status: "ahead", AheadBy: 12}) {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("behind", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", "/repos/lablup/mlxcel/compare/"+bad+"..."+good,
			e.s.Example(200, "commit-comparison", map[string]any{"status": "behind", "ahead_by": 0, "behind_by": 3}))
		got, err := e.c.Compare(context.Background(), testRepo, bad, good)
		if err != nil || got != (Comparison{Status: "behind", BehindBy: 3}) {
			t.Errorf("got %+v, %v", got, err)
		}
	})
	t.Run("unknown commit", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", "/repos/lablup/mlxcel/compare/"+good+"..."+bad, fakegithub.JSON(404, map[string]string{"message": "Not Found"}))
		if _, err := e.c.Compare(context.Background(), testRepo, good, bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("error %v, want ErrNotFound", err)
		}
	})
	for _, bogus := range []map[string]any{{"status": "sideways"}, {"status": "ahead", "ahead_by": -1}} {
		t.Run("a bogus answer", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.s.Expect("GET", "/repos/lablup/mlxcel/compare/"+good+"..."+bad,
				e.s.Example(200, "commit-comparison", bogus).Unchecked())
			if _, err := e.c.Compare(context.Background(), testRepo, good, bad); err == nil || !strings.Contains(err.Error(), "GitHub answered") {
				t.Errorf("%v: error %v", bogus, err)
			}
		})
	}
	t.Run("refs are checked before asking", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		if _, err := e.c.Compare(context.Background(), testRepo, "a b", bad); err == nil {
			t.Error("a ref with a space was sent")
		}
	})
}
