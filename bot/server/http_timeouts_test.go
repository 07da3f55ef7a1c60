package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/bot/webhook"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestHTTPTimeoutsAreTwoMinutes: the server New builds gives a request two minutes
// to arrive (a 25 MB delivery on a slow link) and its answer two minutes to be
// written; the tests below see each limit at work, shortened.
func TestHTTPTimeoutsAreTwoMinutes(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	stub.Expect("GET", "/app", fakegithub.JSONFileWith(200, example(t, "integration"), map[string]any{"id": appID, "slug": appSlug}))
	srv, err := server.New(context.Background(), settings(t, stub.URL()), server.Options{
		Secret: secret, Logger: slog.New(slog.DiscardHandler),
		GitHub: gh.Options{MaxRetries: -1, Sleep: noSleep},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	read, write := server.HTTPTimeouts(srv)
	if read != 2*time.Minute || write != 2*time.Minute {
		t.Errorf("the HTTP server's read and write timeouts are %s and %s, want 2m0s each", read, write)
	}
}

// serveWithTimeouts starts a server whose HTTP server has the read and write
// timeouts given, and returns its address.
func serveWithTimeouts(t *testing.T, read, write time.Duration) string {
	t.Helper()
	stub := fakegithub.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	addr, _ := serveBare(t, ctx, stub, settings(t, stub.URL()), server.Options{LiveEvery: time.Hour}, cancel,
		func(s *server.Server) { server.SetHTTPTimeouts(s, read, write) })
	return addr
}

// sendHead opens a connection and sends a signed delivery's request line and
// headers, announcing the whole body.
func sendHead(t *testing.T, addr, id string, body []byte) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := fmt.Sprintf("POST /webhook HTTP/1.1\r\nHost: perfbot\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s: issue_comment\r\n%s: %s\r\n%s: %s\r\n\r\n",
		len(body), webhook.HeaderEvent, webhook.HeaderDelivery, id, webhook.HeaderSignature, webhook.Sign(secret, body))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestADeliveryStalledPastTheReadTimeoutIsCutOff: a client that sends a delivery's
// headers and half its body, then nothing more, holds its connection no longer than
// the read timeout: the server stops waiting for the rest, does not take the
// delivery, and closes the connection. (Without that limit the connection, a
// goroutine and the body budget the delivery holds would stay taken for as long as
// the client likes.)
func TestADeliveryStalledPastTheReadTimeoutIsCutOff(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	addr := serveWithTimeouts(t, timeout, 2*time.Minute)
	body := commentEvent(t, 7201, "Codertocat", "Thanks, looks good.")
	began := time.Now()
	conn := sendHead(t, addr, "77777777-0000-4000-8000-000000000101", body)
	if _, err := conn.Write(body[:len(body)/2]); err != nil {
		t.Fatal(err)
	}
	// The test's own limit, far past the server's: a server without a read timeout
	// would wait for the rest of the body until then.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a delivery whose body stopped halfway still holds its connection after 30 s (the read timeout is %s)", timeout)
	}
	if err == nil {
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("a delivery whose body stopped halfway was answered %d %s, want it refused", resp.StatusCode, answer)
		}
		// The answer to a body not read to its end closes the connection.
		if _, err := br.ReadByte(); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the connection is still open 30 s after the server refused the stalled delivery (%d)", resp.StatusCode)
		}
	}
	if took := time.Since(began); took < timeout {
		t.Errorf("the stalled delivery was cut off after %s, before its read timeout of %s", took.Round(time.Millisecond), timeout)
	}
}

// TestAnAnswerDuePastTheWriteTimeoutIsNotSent: the write timeout runs from the end
// of a request's headers; a delivery whose body arrives only after it has passed is
// read, but its answer is not written: the connection closes without one. (The
// delivery is stored all the same; a redelivery of it is known by its id.) A server
// without the limit answers it 202.
func TestAnAnswerDuePastTheWriteTimeoutIsNotSent(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	addr := serveWithTimeouts(t, 2*time.Minute, timeout)
	body := commentEvent(t, 7202, "Codertocat", "Thanks, looks good.")
	conn := sendHead(t, addr, "77777777-0000-4000-8000-000000000102", body)
	// Past the write timeout, counted from when the headers were sent (the server
	// starts it later, when it has read them): the answer is due after it.
	time.Sleep(timeout + 500*time.Millisecond)
	if _, err := conn.Write(body); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("a delivery answered after the write timeout of %s got %d %s, want the connection closed without an answer", timeout, resp.StatusCode, answer)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("no answer and the connection still open 30 s after the delivery's body was sent")
	}
}
