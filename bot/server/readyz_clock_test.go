package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// clock is a test's clock, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestReadyzAsksGitHubAgainOnlyAfter30s: /readyz keeps GitHub's answer for 30 s: a
// probe exactly 30 s after the last ask answers from it, one a nanosecond later asks
// GET /app again (and a failure there makes the server not ready).
func TestReadyzAsksGitHubAgainOnlyAfter30s(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	swept := expectApp(t, stub)
	clk := &clock{t: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, settings(t, stub.URL()), server.Options{
		Secret: secret, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clk.now,
		RetryBase: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, LiveEvery: time.Hour,
		GitHub: gh.Options{MaxRetries: -1, Sleep: noSleep},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop within 10 s")
		}
	})
	select {
	case <-swept:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not sweep at start within 10 s")
	}
	probe := func() int {
		t.Helper()
		resp, err := http.Get("http://" + ln.Addr().String() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.ReadAll(resp.Body)
		return resp.StatusCode
	}
	app := func() fakegithub.Responder {
		return fakegithub.JSONFileWith(200, example(t, "integration"), map[string]any{"id": appID, "slug": appSlug})
	}

	stub.Expect("GET", "/app", app()).Times(1)
	if code := probe(); code != 200 {
		t.Fatalf("first probe: %d, want 200", code)
	}
	asked := func() int {
		n := 0
		for _, req := range stub.Requests() {
			if req.Method == "GET" && req.Path == "/app" {
				n++
			}
		}
		return n
	}
	before := asked()
	clk.add(30 * time.Second)
	if code := probe(); code != 200 {
		t.Errorf("probe 30 s after the ask: %d, want 200 from the kept answer", code)
	}
	if n := asked(); n != before {
		t.Errorf("a probe exactly 30 s after the last ask asked GitHub again (%d asks, want %d)", n, before)
	}
	// Past 30 s the probe asks again, and GitHub failing now shows.
	stub.Expect("GET", "/app", fakegithub.Status(500)).Times(1)
	clk.add(time.Nanosecond)
	if code := probe(); code != http.StatusServiceUnavailable {
		t.Errorf("probe 30 s and 1 ns after the ask, GitHub failing: %d, want 503", code)
	}
}
