package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/bot/webhook"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/prometheus/client_golang/prometheus"
)

var secret = []byte("test secret for perfbot deliveries")

func readFile(t testing.TB, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(testfix.Path(t, elem...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withInstallation is a real payload with an installation id set, as GitHub sends it
// to an App (the octokit examples were captured from repository hooks).
func withInstallation(t testing.TB, payload []byte, id int64) []byte {
	t.Helper()
	b, err := fakegithub.Payload(payload, map[string]any{"installation": map[string]any{"id": id, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyDocsVector(t *testing.T) {
	t.Parallel()
	s := readFile(t, "github", "webhook-delivery", "signature-test-vector.secret.txt")
	p := readFile(t, "github", "webhook-delivery", "signature-test-vector.payload.txt")
	h := strings.TrimSpace(string(readFile(t, "github", "webhook-delivery", "signature-test-vector.x-hub-signature-256.txt")))
	if err := webhook.Verify(s, p, h); err != nil {
		t.Fatalf("the docs' vector does not verify: %v", err)
	}
	if got := webhook.Sign(s, p); got != h {
		t.Errorf("Sign = %s, want %s", got, h)
	}
	var gg struct {
		Secret  string `json:"secret"`
		Payload string `json:"payload"`
		SHA256  string `json:"x_hub_signature_256"`
		SHA1    string `json:"x_hub_signature"`
	}
	if err := json.Unmarshal(readFile(t, "github", "webhook-delivery", "go-github-v62-messages_test-vectors.json"), &gg); err != nil {
		t.Fatal(err)
	}
	if err := webhook.Verify([]byte(gg.Secret), []byte(gg.Payload), gg.SHA256); err != nil {
		t.Errorf("go-github's vector does not verify: %v", err)
	}
	bad := []struct{ name, secret, payload, header string }{
		{"one byte more", string(s), string(p) + "\n", h},
		{"other secret", "It's a Secret to Nobody", string(p), h},
		{"sha1 header", gg.Secret, gg.Payload, gg.SHA1},
		{"upper-case prefix", string(s), string(p), "SHA256=" + strings.TrimPrefix(h, "sha256=")},
		{"short digest", string(s), string(p), h[:len(h)-2]},
		{"not hex", string(s), string(p), "sha256=" + strings.Repeat("zz", 32)},
		{"empty secret", "", string(p), h},
		{"empty header", string(s), string(p), ""},
	}
	for _, c := range bad {
		if err := webhook.Verify([]byte(c.secret), []byte(c.payload), c.header); err == nil {
			t.Errorf("%s: verified, want an error", c.name)
		}
	}
}

func TestNewRefusesEmptySecret(t *testing.T) {
	t.Parallel()
	_, err := webhook.New(webhook.Options{Store: nopStore{}})
	if err == nil || !strings.Contains(err.Error(), "webhook secret is empty") {
		t.Fatalf("New with an empty secret: %v, want a refusal naming the secret", err)
	}
}

type nopStore struct{}

func (nopStore) Put(context.Context, inbox.Delivery) (inbox.Outcome, error) { return inbox.Stored, nil }

type rig struct {
	srv   *httptest.Server
	ib    *inbox.Inbox
	reg   *prometheus.Registry
	admit bool
}

func newRig(t *testing.T, maxBody int64, mods ...func(*webhook.Options)) *rig {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "perfbot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ib, err := inbox.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{ib: ib, reg: prometheus.NewRegistry(), admit: true}
	o := webhook.Options{
		Secret: secret, Store: ib, Handled: []string{"issue_comment", "workflow_run", "check_run"},
		Admit: func() bool { return r.admit }, MaxBody: maxBody, Registerer: r.reg,
	}
	for _, m := range mods {
		m(&o)
	}
	h, err := webhook.New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewServer(h)
	t.Cleanup(r.srv.Close)
	return r
}

type delivery struct {
	method, event, id, sig, contentType string
	body                                []byte
}

func (r *rig) send(t *testing.T, d delivery) (int, string) {
	t.Helper()
	if d.method == "" {
		d.method = http.MethodPost
	}
	if d.contentType == "" {
		d.contentType = "application/json"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, d.method, r.srv.URL+"/webhook", bytes.NewReader(d.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", d.contentType)
	req.Header.Set("User-Agent", "GitHub-Hookshot/044aadd")
	if d.event != "" {
		req.Header.Set(webhook.HeaderEvent, d.event)
	}
	if d.id != "" {
		req.Header.Set(webhook.HeaderDelivery, d.id)
	}
	if d.sig != "" {
		req.Header.Set(webhook.HeaderSignature, d.sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func signed(event, id string, body []byte) delivery {
	return delivery{event: event, id: id, sig: webhook.Sign(secret, body), body: body}
}

func TestIngressAnswers(t *testing.T) {
	t.Parallel()
	comment := withInstallation(t, readFile(t, "github", "webhooks", "issue_comment.created.json"), 42)
	noInst := readFile(t, "github", "webhooks", "issue_comment.created.json")
	rerequested := readFile(t, "github", "webhooks", "check_run.rerequested.json")
	ping := readFile(t, "github", "webhooks", "ping.with-app_id.json")
	pr := readFile(t, "github", "webhooks", "pull_request.opened.json")
	form := []byte("payload=" + url.QueryEscape(string(comment)))
	const id = "72d3162e-cc78-11e3-81ab-4c9367dc0958"

	cases := []struct {
		name       string
		d          delivery
		want       int
		wantReason string // rejection metric label, "" for a 2xx
		stored     bool
	}{
		{"signed comment", signed("issue_comment", id, comment), 202, "", true},
		{"form-encoded comment", func() delivery {
			d := signed("issue_comment", id, form)
			d.contentType = "application/x-www-form-urlencoded"
			return d
		}(), 202, "", true},
		{"no signature", delivery{event: "issue_comment", id: id, body: comment}, 401, "no_signature", false},
		{"signed with another secret", delivery{event: "issue_comment", id: id, body: comment, sig: webhook.Sign([]byte("x"), comment)}, 401, "bad_signature", false},
		{"body changed after signing", delivery{event: "issue_comment", id: id, body: append(bytes.Clone(comment), ' '), sig: webhook.Sign(secret, comment)}, 401, "bad_signature", false},
		{"unknown event", signed("no_such_event", id, comment), 400, "unknown_event", false},
		{"unreadable JSON", signed("issue_comment", id, []byte(`{"action": "created",`)), 400, "bad_payload", false},
		{"check_run.rerequested with non-RFC 3339 times", signed("check_run", id, rerequested), 400, "bad_payload", false},
		{"not an App delivery", signed("issue_comment", id, noInst), 400, "no_installation", false},
		{"missing delivery id", signed("issue_comment", "", comment), 400, "headers", false},
		{"delivery id with a newline", signed("issue_comment", "72d3162e-cc78-11e3-81ab-4c9367dc0958;drop", comment), 400, "delivery_id", false},
		{"GET", delivery{method: "GET", event: "issue_comment", id: id}, 405, "method", false},
		{"form without payload", func() delivery {
			d := signed("issue_comment", id, []byte("other=1"))
			d.contentType = "application/x-www-form-urlencoded"
			return d
		}(), 400, "bad_payload", false},
		{"xml", func() delivery {
			d := signed("issue_comment", id, comment)
			d.contentType = "application/xml"
			return d
		}(), 400, "content_type", false},
		{"ping", signed("ping", id, ping), 200, "", false},
		{"known event perfbot does not handle", signed("pull_request", id, pr), 200, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, 0)
			got, body := r.send(t, c.d)
			if got != c.want {
				t.Fatalf("status %d (%s), want %d", got, strings.TrimSpace(body), c.want)
			}
			if c.wantReason != "" {
				if n := counter(t, r.reg, "perfbot_webhook_rejections_total", c.wantReason); n != 1 {
					t.Errorf("rejections{reason=%q} = %v, want 1", c.wantReason, n)
				}
			}
			_, held, err := r.ib.Get(context.Background(), c.d.id)
			if err != nil {
				t.Fatal(err)
			}
			if held != c.stored {
				t.Errorf("held in the inbox: %v, want %v", held, c.stored)
			}
		})
	}
}

// counter is the value of the series of a counter vector that has a label of that
// value, or 0.
func counter(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func TestIngressStoresBeforeAnsweringAndOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, 0)
	ctx := context.Background()
	body := withInstallation(t, readFile(t, "github", "webhooks", "issue_comment.created.json"), 7)
	const id = "d1a7e1a0-0000-11ef-8000-000000000001"
	if got, msg := r.send(t, signed("issue_comment", id, body)); got != 202 {
		t.Fatalf("first delivery: %d %s", got, msg)
	}
	d, held, err := r.ib.Get(ctx, id)
	if err != nil || !held {
		t.Fatalf("the accepted delivery is not in the inbox: %v", err)
	}
	if d.State != inbox.Received || d.Event != "issue_comment" || d.Action != "created" || d.Installation != 7 || d.Repo != "Codertocat/Hello-World" || !bytes.Equal(d.Payload, body) {
		t.Errorf("stored %+v", d)
	}
	// A redelivery of a received (and later of a done) id is answered 200 and ignored.
	if got, _ := r.send(t, signed("issue_comment", id, body)); got != 200 {
		t.Errorf("duplicate of a received id: %d, want 200", got)
	}
	if err := r.ib.Done(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.send(t, signed("issue_comment", id, body)); got != 200 {
		t.Errorf("duplicate of a done id: %d, want 200", got)
	}
	if d, _, _ := r.ib.Get(ctx, id); d.State != inbox.Done || d.Times != 3 {
		t.Errorf("after two duplicates: state %s, times %d; want done, 3", d.State, d.Times)
	}
	if n := counter(t, r.reg, "perfbot_webhook_deliveries_total", "duplicate"); n != 2 {
		t.Errorf("deliveries{outcome=duplicate} = %v, want 2", n)
	}

	// A failed id comes back when GitHub delivers it again.
	const id2 = "d1a7e1a0-0000-11ef-8000-000000000002"
	if got, _ := r.send(t, signed("issue_comment", id2, body)); got != 202 {
		t.Fatal(got)
	}
	if err := r.ib.Fail(ctx, id2, io.ErrUnexpectedEOF); err != nil {
		t.Fatal(err)
	}
	if got, msg := r.send(t, signed("issue_comment", id2, body)); got != 202 || !strings.HasPrefix(msg, "requeued") {
		t.Errorf("redelivery of a failed id: %d %q, want 202 requeued", got, msg)
	}
	if d, _, _ := r.ib.Get(ctx, id2); d.State != inbox.Received || d.Attempts != 0 {
		t.Errorf("requeued delivery: %+v", d)
	}
	if n := r.ib.Pending(); n != 1 {
		t.Errorf("pending = %d, want 1", n)
	}
}

func TestIngressBacklogFull(t *testing.T) {
	t.Parallel()
	r := newRig(t, 0)
	r.admit = false
	body := withInstallation(t, readFile(t, "github", "webhooks", "issue_comment.created.json"), 7)
	const id = "d1a7e1a0-0000-11ef-8000-000000000003"
	if got, _ := r.send(t, signed("issue_comment", id, body)); got != 503 {
		t.Fatalf("status %d, want 503", got)
	}
	if _, held, _ := r.ib.Get(context.Background(), id); held {
		t.Error("a refused delivery was stored")
	}
}

func TestIngressBodyLimit(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte(" "), webhook.MaxBody+1)
	copy(big, `{"action":"created"}`)
	cases := []struct {
		name  string
		chunk bool // hide the length: the limit must hold while reading
	}{{"declared length", false}, {"chunked", true}}
	r := newRig(t, 0)
	for _, c := range cases {
		var body io.Reader = bytes.NewReader(big)
		if c.chunk {
			body = io.MultiReader(bytes.NewReader(big)) // no Len: sent chunked
		}
		req, err := http.NewRequest("POST", r.srv.URL, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(webhook.HeaderEvent, "issue_comment")
		req.Header.Set(webhook.HeaderDelivery, "d1a7e1a0-0000-11ef-8000-000000000004")
		req.Header.Set(webhook.HeaderSignature, webhook.Sign(secret, big))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: status %d, want 413", c.name, resp.StatusCode)
		}
	}
}
