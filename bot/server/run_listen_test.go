package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestRunListensOnTheSettingsAddress: Run serves on listen: until its context ends and
// then returns nil; an address another process holds is an error that names the
// setting, returned at once.
func TestRunListensOnTheSettingsAddress(t *testing.T) {
	t.Parallel()
	newServer := func(t *testing.T, listen string) *server.Server {
		stub := fakegithub.New(t)
		stub.Expect("GET", "/app", fakegithub.JSONFileWith(200, example(t, "integration"), map[string]any{"id": appID, "slug": appSlug}))
		set := settings(t, stub.URL())
		set.Listen = listen
		srv, err := server.New(context.Background(), set, server.Options{
			Secret: secret, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LiveEvery: time.Hour,
			GitHub: gh.Options{MaxRetries: -1, Sleep: noSleep},
		})
		if err != nil {
			t.Fatal(err)
		}
		// The first sweep asks for the App's deliveries when the server runs.
		stub.Expect("GET", "/app/hook/deliveries", fakegithub.JSON(200, []any{})).AnyTimes()
		return srv
	}
	t.Run("address in use", func(t *testing.T) {
		t.Parallel()
		held, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		srv := newServer(t, held.Addr().String())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = srv.Run(ctx)
		if err == nil || !strings.Contains(err.Error(), "listening on "+held.Addr().String()+" (listen:)") {
			t.Errorf("Run on an address in use: %v, want an error naming listen: and the address", err)
		}
		if ctx.Err() != nil {
			t.Error("Run on an address in use waited for its context to end")
		}
	})
	t.Run("free address", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, "127.0.0.1:0")
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- srv.Run(ctx) }()
		select {
		case err := <-ran:
			cancel()
			t.Fatalf("Run returned before its context ended: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
		cancel()
		select {
		case err := <-ran:
			if err != nil {
				t.Errorf("Run after its context ended: %v, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10 s of its context ending")
		}
	})
}
