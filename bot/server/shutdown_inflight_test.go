package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/bot/webhook"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestShutdownLetsADeliveryInFlightFinish: a delivery whose body is still arriving
// when the server is told to stop is read, stored and answered 202 before Serve
// returns and the database closes, so GitHub does not record a failure for a delivery
// the server took: a shutdown gives the requests in flight five seconds. The workers
// have stopped by then, so the delivery is left received, for the next start.
func TestShutdownLetsADeliveryInFlightFinish(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, served := serveBare(t, ctx, stub, set, server.Options{LiveEvery: time.Hour}, nil)

	// A comment without a command: stored, then done by a worker without a call to
	// GitHub.
	body := commentEvent(t, 7101, "Codertocat", "Thanks, looks good.")
	const id = "77777777-0000-4000-8000-000000000001"
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	half := len(body) / 2
	head := fmt.Sprintf("POST /webhook HTTP/1.1\r\nHost: perfbot\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s: issue_comment\r\n%s: %s\r\n%s: %s\r\n\r\n",
		len(body), webhook.HeaderEvent, webhook.HeaderDelivery, id, webhook.HeaderSignature, webhook.Sign(secret, body))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(body[:half]); err != nil {
		t.Fatal(err)
	}
	// The handler is reading the body once it holds the body's bytes in its budget.
	metricsURL := "http://" + addr + "/metrics"
	held := fmt.Sprintf("perfbot_webhook_unverified_body_bytes %d\n", len(body))
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(metricsURL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), held) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start reading the delivery's body within 10 s (want %q)", held)
		}
		time.Sleep(10 * time.Millisecond)
	}

	cancel()
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) while a delivery was still being received", err)
	case <-time.After(2 * time.Second):
	}
	if _, err := conn.Write(body[half:]); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the delivery in flight: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("the delivery in flight at shutdown: %d %s, want 202", resp.StatusCode, answer)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop within 10 s of answering the last delivery")
	}
}
