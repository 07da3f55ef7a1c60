package server

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
)

// TestNewRetriesFailedDeliveriesOnTheDefaultSchedule: `perfbot serve` makes its server
// without RetryBase and RetryMax, so a delivery whose processing failed is tried again
// after 10 s, the wait doubling per attempt up to 15 min. Close closes the database.
func TestNewRetriesFailedDeliveriesOnTheDefaultSchedule(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), 0o600); err != nil {
		t.Fatal(err)
	}
	stub := fakegithub.New(t)
	stub.Expect("GET", "/app", fakegithub.JSONFileWith(200, testfix.Path(t, "github", "rest-openapi-examples", "integration.json"), map[string]any{"id": 1, "slug": "perfbot"}))
	set := DefaultSettings()
	set.Database, set.APIURL, set.AppID, set.KeyFile = filepath.Join(dir, "perfbot.db"), stub.URL(), 1, keyFile
	set.Hosts = []Host{{Label: testHost, Backend: "rocm", Workflow: "perfbot.yml"}}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := New(context.Background(), set, Options{Secret: []byte("s3cret"), Now: func() time.Time { return now }, GitHub: gh.Options{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	failed := errors.New("GitHub answered 502")
	for attempts, wait := range map[int]time.Duration{0: 10 * time.Second, 1: 20 * time.Second, 6: 640 * time.Second, 7: 15 * time.Minute, 30: 15 * time.Minute} {
		if got := s.pool.retryAt(failed, attempts).Sub(now); got != wait {
			t.Errorf("after %d failed attempts the next is in %s, want %s", attempts+1, got, wait)
		}
	}
	// Close (which Serve calls when it stops) closes the database: nothing is written
	// after it.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if err := s.db.Writable(context.Background()); err == nil {
		t.Error("the database takes writes after Close")
	}
}
