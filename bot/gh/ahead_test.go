package gh

import (
	"context"
	"errors"
	"strings"
	"testing"
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
		e.expectCompare(good+"..."+bad+"?per_page=1", e.comparison(map[string]any{"status": "ahead", "ahead_by": 12, "behind_by": 0}))
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
		e.expectCompare(bad+"..."+good, e.comparison(map[string]any{"status": "behind", "ahead_by": 0, "behind_by": 3}))
		got, err := e.c.Compare(context.Background(), testRepo, bad, good)
		if err != nil || got != (Comparison{Status: "behind", BehindBy: 3}) {
			t.Errorf("got %+v, %v", got, err)
		}
	})
	for _, bogus := range []map[string]any{{"status": "sideways"}, {"status": "ahead", "ahead_by": -1}} {
		t.Run("a bogus answer", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.expectCompare(good+"..."+bad, e.comparison(bogus).Unchecked())
			if _, err := e.c.Compare(context.Background(), testRepo, good, bad); err == nil || !strings.Contains(err.Error(), "GitHub answered") {
				t.Errorf("%v: error %v", bogus, err)
			}
		})
	}
}

// The calls that ask GitHub's compare of two refs (Compare, MergeBase) answer a 404 with
// ErrNotFound and refuse a ref with a space before asking (the stub fails on any call
// not declared).
func TestCompareCallsRefuseUnknownAndBadRefs(t *testing.T) {
	t.Parallel()
	const (
		sha1 = "9fceb02d0ae598e95dc970b74767f19372d61af8"
		sha2 = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	)
	for _, c := range []struct {
		name string
		call func(c *Client, base, head string) error
		// unknown are the arguments GitHub answers 404 for; badRef has a space in one.
		unknown, badRef [2]string
	}{
		{"Compare", func(c *Client, base, head string) error {
			_, err := c.Compare(context.Background(), testRepo, base, head)
			return err
		}, [2]string{sha1, sha2}, [2]string{"a b", sha2}},
		{"MergeBase", func(c *Client, base, head string) error {
			_, err := c.MergeBase(context.Background(), testRepo, base, head)
			return err
		}, [2]string{"gone", sha2}, [2]string{"main", "a b"}},
	} {
		t.Run(c.name+": unknown", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.expectCompare(c.unknown[0]+"..."+c.unknown[1], notFound())
			if err := c.call(e.c, c.unknown[0], c.unknown[1]); !errors.Is(err, ErrNotFound) {
				t.Errorf("error %v, want ErrNotFound", err)
			}
		})
		t.Run(c.name+": refs are checked before asking", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if err := c.call(e.c, c.badRef[0], c.badRef[1]); err == nil {
				t.Error("a ref with a space was sent")
			}
		})
	}
}
