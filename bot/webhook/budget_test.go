package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/webhook"
	"github.com/prometheus/client_golang/prometheus"
)

// gauge is the value of a gauge without labels, or -1 when it is not there.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

// waitGauge waits until a gauge has a value; the limit only turns a hang into a failure.
func waitGauge(t *testing.T, reg *prometheus.Registry, name string, want float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for gauge(t, reg, name) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed %v, want %v", name, gauge(t, reg, name), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// countingReader counts what the client sent of a body.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestBodyBudget: large bodies with forged signatures, held open, use the share of the
// body budget large bodies may use; then every further large delivery is answered 503
// with Retry-After without its body being read (the client, asking 100-continue, never
// sends it), while a signed small delivery is still stored and a forged small one
// still checked. Once the held bodies end (401), the budget is free and a signed large
// delivery is stored.
func TestBodyBudget(t *testing.T) {
	t.Parallel()
	const (
		maxBody = 3 << 20
		budget  = 8 << 20 // large bodies may hold 6 MiB: three of 2 MiB
		size    = 2 << 20
		held    = 3
	)
	r := newRig(t, maxBody, func(o *webhook.Options) { o.BodyBudget = budget })
	forged := "sha256=" + strings.Repeat("ab", 32)
	large := make([]byte, size)
	for i := range large {
		large[i] = ' '
	}

	// Three forged large bodies whose senders stop after their first bytes.
	var wg sync.WaitGroup
	rest := make([]*io.PipeWriter, held)
	codes := make([]int, held)
	for i := range held {
		pr, pw := io.Pipe()
		rest[i] = pw
		req, err := http.NewRequest("POST", r.srv.URL, pr)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = size
		req.Header.Set(webhook.HeaderEvent, "issue_comment")
		req.Header.Set(webhook.HeaderDelivery, fmt.Sprintf("d1a7e1a0-0000-11ef-8000-0000000001%02d", i))
		req.Header.Set(webhook.HeaderSignature, forged)
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("held body %d: %v", i, err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
		if _, err := pw.Write(large[:1000]); err != nil {
			t.Fatal(err)
		}
	}
	waitGauge(t, r.reg, "perfbot_webhook_unverified_body_bytes", held*size)

	// Many more forged large bodies at once: each refused unread.
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Hour}}
	var refused sync.WaitGroup
	for i := range 10 {
		refused.Add(1)
		go func() {
			defer refused.Done()
			body := &countingReader{r: bytes.NewReader(large)}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", r.srv.URL, body)
			req.ContentLength = size
			req.Header.Set("Expect", "100-continue")
			req.Header.Set(webhook.HeaderEvent, "issue_comment")
			req.Header.Set(webhook.HeaderDelivery, fmt.Sprintf("d1a7e1a0-0000-11ef-8000-0000000002%02d", i))
			req.Header.Set(webhook.HeaderSignature, forged)
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("refused body %d: %v", i, err)
				return
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
				t.Errorf("refused body %d: %d (Retry-After %q) %s, want 503 with Retry-After", i, resp.StatusCode, resp.Header.Get("Retry-After"), msg)
			}
			if n := body.n.Load(); n != 0 {
				t.Errorf("refused body %d: %d bytes were sent, want none (the server must answer before reading)", i, n)
			}
		}()
	}
	refused.Wait()
	if got := counter(t, r.reg, "perfbot_webhook_rejections_total", "busy"); got != 10 {
		t.Errorf("busy rejections %v, want 10", got)
	}

	// Small deliveries still find room: a signed one is stored, a forged one checked.
	small := withInstallation(t, readFile(t, "github", "webhooks", "issue_comment.created.json"), 7)
	if got, msg := r.send(t, signed("issue_comment", "d1a7e1a0-0000-11ef-8000-000000000301", small)); got != http.StatusAccepted {
		t.Errorf("signed small delivery while the budget is held: %d %s, want 202", got, msg)
	}
	if got, msg := r.send(t, delivery{event: "issue_comment", id: "d1a7e1a0-0000-11ef-8000-000000000302", sig: forged, body: small}); got != http.StatusUnauthorized {
		t.Errorf("forged small delivery: %d %s, want 401", got, msg)
	}

	// The held bodies end; their signatures are wrong.
	for _, pw := range rest {
		if _, err := pw.Write(large[1000:]); err != nil {
			t.Fatal(err)
		}
		pw.Close()
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusUnauthorized {
			t.Errorf("held body %d: %d, want 401", i, c)
		}
	}
	waitGauge(t, r.reg, "perfbot_webhook_unverified_body_bytes", 0)

	// A signed large delivery (a real payload padded to 2 MiB) fits again.
	big := append(append([]byte{}, small...), large[:size-len(small)]...)
	if got, msg := r.send(t, signed("issue_comment", "d1a7e1a0-0000-11ef-8000-000000000303", big)); got != http.StatusAccepted {
		t.Errorf("signed large delivery: %d %s, want 202", got, msg)
	}
	// The same sent chunked (no Content-Length) reserves as it grows, past the
	// small-body share, and is stored whole.
	req, err := http.NewRequest("POST", r.srv.URL, io.MultiReader(bytes.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	const chunked = "d1a7e1a0-0000-11ef-8000-000000000304"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.HeaderEvent, "issue_comment")
	req.Header.Set(webhook.HeaderDelivery, chunked)
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(secret, big))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("chunked signed large delivery: %d, want 202", resp.StatusCode)
	}
	d, ok, err := r.ib.Get(context.Background(), chunked)
	if err != nil || !ok || !bytes.Equal(d.Payload, big) {
		t.Errorf("the chunked delivery was not stored whole (held %v, %d bytes, err %v)", ok, len(d.Payload), err)
	}
	waitGauge(t, r.reg, "perfbot_webhook_unverified_body_bytes", 0)
}

// TestBodyBudgetMustHoldOneDelivery: a budget whose large share cannot hold a
// MaxBody delivery is refused at construction.
func TestBodyBudgetMustHoldOneDelivery(t *testing.T) {
	t.Parallel()
	_, err := webhook.New(webhook.Options{Secret: secret, Store: nopStore{}, BodyBudget: webhook.MinBodyBudget - 1})
	if err == nil || !strings.Contains(err.Error(), "cannot hold a 26214400-byte delivery") {
		t.Fatalf("New: %v", err)
	}
	if _, err := webhook.New(webhook.Options{Secret: secret, Store: nopStore{}, BodyBudget: webhook.MinBodyBudget}); err != nil {
		t.Fatalf("New with the smallest budget: %v", err)
	}
}
