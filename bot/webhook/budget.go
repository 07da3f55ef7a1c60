package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"strings"
	"sync"
)

// DefaultBodyBudget bounds the body bytes held, across all requests, before their
// signatures are checked (Options.BodyBudget).
const DefaultBodyBudget = 64 << 20

// MinBodyBudget is the smallest budget a MaxBody delivery fits in: bodies over
// smallBody may use three quarters of the budget.
const MinBodyBudget = (MaxBody*4-4)/3 + 1

// smallBody is the size up to which a body may use the whole budget. GitHub's
// deliveries are tens of kilobytes; a quarter of the budget is kept for them, so
// large bodies, forged or not, never crowd them out.
const smallBody = 1 << 20

// chunkSize is the unit bodies over it are read in. Chunks are kept for reuse, at most
// the budget's worth, so forged large bodies cost no garbage: the garbage collector's
// goal would otherwise grow with every 24 MB body read and dropped.
const chunkSize = 64 << 10

// budget counts the body bytes reserved by requests whose signature is not checked yet.
type budget struct {
	mu              sync.Mutex
	limit, large    int64 // for all bodies; for the bytes of bodies over smallBody
	used, usedLarge int64
	free            []*[]byte // chunks to reuse
}

func newBudget(limit int64) *budget {
	return &budget{limit: limit, large: limit - limit/4}
}

// chunk returns a chunk to read into; it is given back with putChunk.
func (b *budget) chunk() *[]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := len(b.free); n > 0 {
		c := b.free[n-1]
		b.free = b.free[:n-1]
		return c
	}
	c := make([]byte, chunkSize)
	return &c
}

// putChunk keeps a chunk for reuse. Chunks in use never exceed the budget, so neither
// do the chunks kept.
func (b *budget) putChunk(c *[]byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if int64(len(b.free)) < b.limit/chunkSize {
		b.free = append(b.free, c)
	}
}

// take reserves n bytes, of a large body when big is set, or reports that the budget
// has no room.
func (b *budget) take(n int64, big bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit || big && b.usedLarge+n > b.large {
		return false
	}
	b.used += n
	if big {
		b.usedLarge += n
	}
	return true
}

func (b *budget) give(n int64, big bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if big {
		b.usedLarge -= n
	}
}

func (b *budget) held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// body is one request's body being read: what it reserved and where it went.
type body struct {
	b          *budget
	small, big int64 // bytes reserved
	buf        []byte
	chunks     []*[]byte
	n          int64
}

func (r *body) reserved() int64 { return r.small + r.big }

// reserve adds n bytes to the reservation: of a small body while the whole stays
// within smallBody, else of a large one.
func (r *body) reserve(n int64) bool {
	big := r.reserved()+n > smallBody
	if !r.b.take(n, big) {
		return false
	}
	if big {
		r.big += n
	} else {
		r.small += n
	}
	return true
}

// release gives back the chunks and the reservation.
func (r *body) release() {
	for _, c := range r.chunks {
		r.b.putChunk(c)
	}
	r.chunks = nil
	r.b.give(r.small, false)
	r.b.give(r.big, true)
	r.small, r.big = 0, 0
}

// bytes returns the body read, as one slice of its own.
func (r *body) bytes() []byte {
	if r.buf != nil {
		return r.buf[:r.n]
	}
	out := make([]byte, 0, r.n)
	left := r.n
	for _, c := range r.chunks {
		k := min(left, chunkSize)
		out = append(out, (*c)[:k]...)
		left -= k
	}
	return out
}

var errBusy = errors.New("busy")

// readBody reads a request's body within the budget, feeding mac as it goes. A body
// announced larger than the budget has room for is refused before a byte is read; one
// of unknown length reserves as it grows. It returns what it read and reserved; the
// caller releases it; bytes copies it out once the signature has been checked.
func (h *Handler) readBody(req *http.Request, mac hash.Hash) (*body, error) {
	r := &body{b: h.budget}
	limit, declared := h.o.MaxBody, req.ContentLength
	switch {
	case declared >= 0 && declared <= chunkSize:
		if !r.reserve(declared) {
			return r, errBusy
		}
		r.buf = make([]byte, declared)
		n, err := io.ReadFull(req.Body, r.buf)
		r.n = int64(n)
		if err != nil {
			return r, err
		}
		mac.Write(r.buf)
		return r, nil
	case declared > 0:
		// Chunks are whole: reserve what they hold.
		if !r.reserve((declared + chunkSize - 1) / chunkSize * chunkSize) {
			return r, errBusy
		}
	}
	for {
		if int64(len(r.chunks))*chunkSize == r.n {
			if r.n+chunkSize > r.reserved() && !r.reserve(chunkSize) {
				return r, errBusy
			}
			r.chunks = append(r.chunks, r.b.chunk())
		}
		c := *r.chunks[len(r.chunks)-1]
		k, err := req.Body.Read(c[r.n%chunkSize:])
		mac.Write(c[r.n%chunkSize : r.n%chunkSize+int64(k)])
		r.n += int64(k)
		if r.n > limit {
			return r, errTooLarge
		}
		if err == io.EOF {
			if declared >= 0 && r.n != declared {
				return r, io.ErrUnexpectedEOF
			}
			return r, nil
		}
		if err != nil {
			return r, err
		}
	}
}

var errTooLarge = errors.New("too large")

// signature parses an X-Hub-Signature-256 header ("sha256=" and 64 hex digits).
func signature(header string) ([]byte, error) {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return nil, errors.New(`the signature header is not "sha256=" followed by 64 hex digits`)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return nil, errors.New(`the signature header is not "sha256=" followed by 64 hex digits`)
	}
	return got, nil
}

var errMismatch = errors.New("the signature does not match the body: is the webhook secret the one set on the App?")

// checkMAC compares the HMAC fed with the body to the signature, in constant time.
func checkMAC(mac hash.Hash, sig []byte) error {
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return errMismatch
	}
	return nil
}
