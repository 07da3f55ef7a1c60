package webhook

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net/http/httptest"
	"testing"
)

// The budget admits a reservation that fills it exactly and refuses one byte more;
// bodies over smallBody may fill their three quarters exactly, and the quarter kept
// for small deliveries still takes a small one then.
func TestBudgetAdmitsAnExactFill(t *testing.T) {
	t.Parallel()
	b := newBudget(4 << 20)
	if !b.take(4<<20, false) || b.take(1, false) {
		t.Fatal("a reservation of the whole budget, then one byte more")
	}
	b.give(4<<20, false)
	if !b.take(3<<20, true) || b.take(1, true) {
		t.Fatal("large bodies filling their three quarters, then one byte more")
	}
	if !b.take(1<<20, false) || b.take(1, false) || b.held() != 4<<20 {
		t.Fatalf("the small deliveries' quarter: held %d", b.held())
	}
	b.give(1<<20, false)
	b.give(3<<20, true)
	if b.held() != 0 || b.usedLarge != 0 {
		t.Fatalf("given back: held %d, large %d", b.held(), b.usedLarge)
	}
}

// A body of exactly smallBody bytes is a small one (the large share is untouched); the
// next byte is a large body's.
func TestBodyOfExactlySmallBodyIsSmall(t *testing.T) {
	t.Parallel()
	r := &body{b: newBudget(8 << 20)}
	if !r.reserve(smallBody) || r.small != smallBody || r.big != 0 || r.b.usedLarge != 0 {
		t.Fatalf("%d bytes: small %d, big %d", smallBody, r.small, r.big)
	}
	if !r.reserve(1) || r.big != 1 || r.b.usedLarge != 1 {
		t.Fatalf("one byte more: small %d, big %d", r.small, r.big)
	}
	r.release()
	if r.b.held() != 0 {
		t.Fatalf("released: held %d", r.b.held())
	}
}

func readOf(t *testing.T, h *Handler, payload []byte, declared int64) (*body, error) {
	t.Helper()
	req := httptest.NewRequest("POST", "/", io.NopCloser(bytes.NewReader(payload)))
	req.ContentLength = declared
	return h.readBody(req, sha256.New())
}

// A body of unknown length reserves whole chunks as it grows (three chunks and ten
// bytes hold four), is refused as busy when the budget has no room for its next chunk,
// and its chunks, once released, are the ones the next body reads into. MaxBody holds
// for it exactly, and a body that ends before its declared length is an error.
func TestUnknownLengthBodyReservesAsItGrows(t *testing.T) {
	t.Parallel()
	h := &Handler{o: Options{MaxBody: 1 << 20}, budget: newBudget(8 << 20)}
	payload := bytes.Repeat([]byte("x"), 3*chunkSize+10)
	r, err := readOf(t, h, payload, -1)
	if err != nil {
		t.Fatal(err)
	}
	if h.budget.held() != 4*chunkSize || r.reserved() != 4*chunkSize || len(r.chunks) != 4 || !bytes.Equal(r.bytes(), payload) {
		t.Fatalf("held %d, reserved %d in %d chunks", h.budget.held(), r.reserved(), len(r.chunks))
	}
	first := append([]*[]byte(nil), r.chunks...)
	r.release()
	if h.budget.held() != 0 {
		t.Fatalf("released: held %d", h.budget.held())
	}
	again, err := readOf(t, h, payload, int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again.chunks {
		found := false
		for _, f := range first {
			found = found || c == f
		}
		if !found {
			t.Error("the second body read into a new chunk, not a released one")
		}
	}
	again.release()

	// Two chunks' worth of budget: the third chunk of an unknown-length body has no room.
	tight := &Handler{o: Options{MaxBody: 1 << 20}, budget: newBudget(2 * chunkSize)}
	r, err = readOf(t, tight, payload, -1)
	if !errors.Is(err, errBusy) || r.reserved() != 2*chunkSize {
		t.Fatalf("over the budget: %v, reserved %d", err, r.reserved())
	}
	r.release()
	// Unknown length: a body of exactly MaxBody is read, one byte more is too large.
	small := &Handler{o: Options{MaxBody: 2 * chunkSize}, budget: newBudget(8 << 20)}
	r, err = readOf(t, small, payload[:2*chunkSize], -1)
	if err != nil || r.n != 2*chunkSize {
		t.Fatalf("exactly MaxBody: %v after %d bytes", err, r.n)
	}
	r.release()
	r, err = readOf(t, small, payload[:2*chunkSize+1], -1)
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("over MaxBody: %v", err)
	}
	r.release()
	// A body shorter than it declared ends in an error, not a short delivery.
	r, err = readOf(t, h, payload[:2*chunkSize], int64(len(payload)))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short of its declared length: %v", err)
	}
	r.release()
}
