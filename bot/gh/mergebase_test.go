package gh

import (
	"context"
	"strings"
	"testing"
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
		e.expectCompare("main..."+head+"?per_page=1", e.comparison(map[string]any{"status": "diverged", "merge_base_commit.sha": base}))
		got, err := e.c.MergeBase(context.Background(), testRepo, "main", head)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "merge base", got, base)
	})
	t.Run("an answer that is not a SHA", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.expectCompare("main..."+head, e.comparison(map[string]any{"merge_base_commit.sha": "../../etc"}))
		if _, err := e.c.MergeBase(context.Background(), testRepo, "main", head); err == nil || !strings.Contains(err.Error(), "unexpected merge base") {
			t.Errorf("error %v", err)
		}
	})
}
