package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/bot/webhook"
)

// BenchmarkIngress is the answer path alone: signature, decode, durable store in a real
// SQLite file, for a real issue_comment payload, from parallel senders; then the
// worker's state change. It reports µs of the answer path per delivery.
func BenchmarkIngress(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ib, err := inbox.New(ctx, db, nil)
	if err != nil {
		b.Fatal(err)
	}
	h, err := webhook.New(webhook.Options{Secret: secret, Store: ib, Handled: []string{"issue_comment"}})
	if err != nil {
		b.Fatal(err)
	}
	body := withInstallation(b, readFile(b, "github", "webhooks", "issue_comment.created.json"), 1)
	sig := webhook.Sign(secret, body)
	var n atomic.Int64
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n.Add(1))
			req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(string(body)))
			req.Header.Set(webhook.HeaderEvent, "issue_comment")
			req.Header.Set(webhook.HeaderDelivery, id)
			req.Header.Set(webhook.HeaderSignature, sig)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusAccepted {
				b.Fatalf("status %d", rec.Code)
			}
			if err := ib.Done(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
