package server_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestReadyzAsksGitHubAgainOnlyAfter30s: /readyz keeps GitHub's answer for 30 s: a
// probe exactly 30 s after the last ask answers from it, one a nanosecond later asks
// GET /app again (and a failure there makes the server not ready).
func TestReadyzAsksGitHubAgainOnlyAfter30s(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	clk := server.NewClock(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	addr, _ := serveBare(t, ctx, stub, settings(t, stub.URL()), server.Options{Now: clk.Now, LiveEvery: time.Hour}, cancel)
	probe := func() int {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/readyz")
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
	asked := func() int { return countRequests(stub, "GET", "/app") }
	before := asked()
	clk.Add(30 * time.Second)
	if code := probe(); code != 200 {
		t.Errorf("probe 30 s after the ask: %d, want 200 from the kept answer", code)
	}
	if n := asked(); n != before {
		t.Errorf("a probe exactly 30 s after the last ask asked GitHub again (%d asks, want %d)", n, before)
	}
	// Past 30 s the probe asks again, and GitHub failing now shows.
	stub.Expect("GET", "/app", fakegithub.Status(500)).Times(1)
	clk.Add(time.Nanosecond)
	if code := probe(); code != http.StatusServiceUnavailable {
		t.Errorf("probe 30 s and 1 ns after the ask, GitHub failing: %d, want 503", code)
	}
}
