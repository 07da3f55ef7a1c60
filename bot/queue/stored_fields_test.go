package queue_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lablup/perfbot/bot/queue"
)

// TestRequestComesBackAsAdded: every field of an accepted request is read back as it
// was stored, the lists of models and sampling tags included, and a request without
// either has empty lists rather than one empty name (which would run a model named "").
func TestRequestComesBackAsAdded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	q := openQueue(t, &now)
	in := queue.Request{
		Delivery: "d-1", Repo: "o/r", Installation: 9, Issue: 42, IsPR: true, CommentID: comments.Add(1),
		Requester: "alice", Kind: "bench", Command: "/bench rocm models=llama,qwen3", SHA: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
		PinnedFrom: "the head of pull request #42", Models: []string{"llama", "qwen3"}, Sampling: []string{"greedy", "t0.7-p0.95"},
		Epic: 7, Host: "gfx1151", Workflow: "perfbot.yml", Ref: "main",
		Base: "9fceb02d0ae598e95dc970b74767f19372d61af8", Repeats: 12,
	}
	r, created, err := q.Add(ctx, in)
	if err != nil || !created {
		t.Fatalf("Add: %v %v", created, err)
	}
	for _, got := range []queue.Request{r, get(t, q, r.ID)} {
		want := in
		want.ID, want.State, want.CreatedAt = r.ID, queue.Accepting, now
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read back\n %+v\nwant\n %+v", got, want)
		}
	}

	bare := request("d-2", comments.Add(1))
	r, _, err = q.Add(ctx, bare)
	if err != nil {
		t.Fatal(err)
	}
	if g := get(t, q, r.ID); len(g.Models) != 0 || len(g.Sampling) != 0 {
		t.Errorf("models %q sampling %q, want none", g.Models, g.Sampling)
	}
}

// TestFinishKeepsAnErrorOfUpTo4096Bytes: the cause stored with a finished request is
// cut to its first 4096 bytes; one of exactly 4096 is kept whole. The cut never splits
// a UTF-8 character: one that ends at byte 4096 stays whole, one that the cut would
// split is left out whole, so the stored error is always valid UTF-8.
func TestFinishKeepsAnErrorOfUpTo4096Bytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	q := openQueue(t, &now)
	whole := strings.Repeat("e", 4095) + "!"
	euroAtEnd := strings.Repeat("e", 4093) + "€"  // € is 3 bytes: bytes 4094 to 4096
	euroAcross := strings.Repeat("e", 4094) + "€" // € is bytes 4095 to 4097
	cases := []struct{ cause, want string }{
		{whole, whole},
		{whole + "x", whole},
		{"", ""},
		{euroAtEnd + "x", euroAtEnd},
		{euroAcross, strings.Repeat("e", 4094)},
	}
	ids := add(t, q, "gfx1151", len(cases))
	for i, c := range cases {
		if ok, err := q.Finish(ctx, ids[i], queue.Failed, "failure", c.cause, 0); err != nil || !ok {
			t.Fatalf("Finish: %v %v", ok, err)
		}
		got := get(t, q, ids[i]).Error
		if got != c.want {
			t.Errorf("cause of %d bytes stored as %d bytes (ending %q), want %d", len(c.cause), len(got), got[max(len(got)-4, 0):], len(c.want))
		}
		if !utf8.ValidString(got) {
			t.Errorf("cause of %d bytes stored as invalid UTF-8 (ending %q)", len(c.cause), got[max(len(got)-4, 0):])
		}
	}
}
