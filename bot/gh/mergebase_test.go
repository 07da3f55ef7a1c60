package gh

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/fakegithub"
)

func TestMergeBase(t *testing.T) {
	t.Parallel()
	const (
		head = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
		base = "9fceb02d0ae598e95dc970b74767f19372d61af8"
	)
	t.Run("found", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", "/repos/lablup/mlxcel/compare/main..."+head+"?per_page=1",
			e.s.Example(200, "commit-comparison", map[string]any{"status": "diverged", "merge_base_commit.sha": base}))
		got, err := e.c.MergeBase(context.Background(), testRepo, "main", head)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "merge base", got, base)
	})
	t.Run("branch or commit unknown", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", "/repos/lablup/mlxcel/compare/gone..."+head, fakegithub.JSON(404, map[string]string{"message": "Not Found"}))
		if _, err := e.c.MergeBase(context.Background(), testRepo, "gone", head); !errors.Is(err, ErrNotFound) {
			t.Errorf("error %v, want ErrNotFound", err)
		}
	})
	t.Run("an answer that is not a SHA", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", "/repos/lablup/mlxcel/compare/main..."+head,
			e.s.Example(200, "commit-comparison", map[string]any{"merge_base_commit.sha": "../../etc"}))
		if _, err := e.c.MergeBase(context.Background(), testRepo, "main", head); err == nil || !strings.Contains(err.Error(), "unexpected merge base") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("refs are checked before asking", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		if _, err := e.c.MergeBase(context.Background(), testRepo, "main", "a b"); err == nil {
			t.Error("a ref with a space was sent")
		}
	})
}
