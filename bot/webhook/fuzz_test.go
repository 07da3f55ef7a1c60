package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/bot/webhook"
)

// FuzzIngress sends the handler arbitrary deliveries: any event name, delivery id,
// content type and body, signed correctly or not. It must never panic, never answer
// 2xx to a delivery without the right signature, never fail to store (500), and
// whatever it stores must be the delivery's JSON payload. The seed corpus is real
// payloads (plus testdata/fuzz/FuzzIngress).
func FuzzIngress(f *testing.F) {
	seeds := []struct{ event, file string }{
		{"issue_comment", "issue_comment.created.with-installation.json"},
		{"check_run", "check_run.rerequested.json"},
		{"workflow_run", "workflow_run.completed.json"},
		{"ping", "ping.with-app_id.json"},
		{"issue_comment", "issue_comment.edited.json"},
	}
	for _, s := range seeds {
		b := readFile(f, "github", "webhooks", s.file)
		f.Add(s.event, "72d3162e-cc78-11e3-81ab-4c9367dc0958", "application/json", b, true, byte(0))
		f.Add(s.event, "72d3162e-cc78-11e3-81ab-4c9367dc0958", "application/x-www-form-urlencoded", []byte("payload="+url.QueryEscape(string(b))), true, byte(0))
		f.Add(s.event, "72d3162e-cc78-11e3-81ab-4c9367dc0958", "application/json", b, true, byte(7))
	}
	f.Add("issue_comment", "", "", []byte(`{"installation":{"id":1}}`), false, byte(0))
	f.Add("no_such_event", "0-0", "text/plain; charset=\x00", []byte{0xff, '{'}, true, byte(0))

	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	ib, err := inbox.New(ctx, db, nil)
	if err != nil {
		f.Fatal(err)
	}
	h, err := webhook.New(webhook.Options{Secret: secret, Store: ib, Handled: []string{"issue_comment", "workflow_run", "check_run"}, MaxBody: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, event, id, contentType string, body []byte, sign bool, mangle byte) {
		req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(string(body)))
		for _, kv := range [][2]string{{webhook.HeaderEvent, event}, {webhook.HeaderDelivery, id}, {"Content-Type", contentType}} {
			if kv[1] != "" {
				req.Header.Set(kv[0], kv[1])
			}
		}
		good := false
		if sign {
			sig := []byte(webhook.Sign(secret, body))
			if mangle != 0 {
				sig[7+int(mangle)%64] = "0123456789abcdef"[int(mangle)%16]
			}
			good = string(sig) == webhook.Sign(secret, body)
			req.Header.Set(webhook.HeaderSignature, string(sig))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		code := rec.Code
		switch code {
		case 200, 202, 400, 401, 405, 413:
		default:
			t.Fatalf("status %d: %s", code, rec.Body.String())
		}
		if code/100 == 2 && !good {
			t.Fatalf("answered %d to a delivery without the right signature", code)
		}
		if code == 202 {
			d, held, err := ib.Get(ctx, id)
			if err != nil || !held {
				t.Fatalf("answered 202 but the inbox does not hold %q: %v", id, err)
			}
			if !json.Valid(d.Payload) || d.Event != event {
				t.Fatalf("stored %q event %q, payload valid %v", id, d.Event, json.Valid(d.Payload))
			}
		}
	})
}
