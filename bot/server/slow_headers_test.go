package server_test

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestSlowHeadersAreCutOff: a client that opens a connection and sends its request's
// headers a few bytes at a time, never finishing them, holds a connection and a
// goroutine of the server for no more than the 10 s the headers may take; it is not
// served and its connection is closed. (Without that limit the connection would be
// held for the body's 2 min: a few hundred such clients would keep the server from
// answering GitHub.) The test waits the 10 s, beside the package's other tests.
func TestSlowHeadersAreCutOff(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	r := start(t, stub, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	began := time.Now()
	if _, err := io.WriteString(conn, "POST /webhook HTTP/1.1\r\nHost: perfbot\r\n"); err != nil {
		t.Fatal(err)
	}
	// One more header line every 2 s keeps the client active, as a slow attacker is:
	// only the deadline on the whole of the headers ends it.
	closed := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, conn)
		closed <- err
	}()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	limit := time.After(30 * time.Second)
	for {
		select {
		case err := <-closed:
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !isNetError(err) {
				t.Fatalf("reading the answer: %v", err)
			}
			if took := time.Since(began); took < 9*time.Second {
				t.Errorf("the connection was closed after %s, before its 10 s for the headers", took.Round(time.Millisecond))
			}
			return
		case <-tick.C:
			// The server may close the connection in between; a write error is the
			// answer then.
			_, _ = io.WriteString(conn, "X-Slow: 1\r\n")
		case <-limit:
			t.Fatal("a client that never finishes its headers still holds its connection after 30 s (the server allows 10 s)")
		}
	}
}

func isNetError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}
