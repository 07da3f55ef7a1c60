package webhook_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/webhook"
)

// post sends a signed issue_comment delivery and returns the answer's status and
// headers.
func post(t *testing.T, r *rig, id string, body []byte) (int, http.Header) {
	t.Helper()
	return postAs(t, r, id, "application/json", body)
}

// postAs is post with a Content-Type ("" sends none).
func postAs(t *testing.T, r *rig, id, contentType string, body []byte) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest("POST", r.srv.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set(webhook.HeaderEvent, "issue_comment")
	req.Header.Set(webhook.HeaderDelivery, id)
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(secret, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// The edges a sender sees: a delivery of exactly MaxBody bytes (declared) is read and
// stored, one byte more is 413 before it is read; an installation id of 0 is no App
// delivery; a delivery without a Content-Type is read as JSON, one whose Content-Type
// cannot be parsed is refused; every answer is plain text, and only a 503 asks to retry after a minute.
func TestDeliveryEdges(t *testing.T) {
	t.Parallel()
	comment := withInstallation(t, readFile(t, "github", "webhooks", "issue_comment.created.json"), 42)
	limit := int64(len(comment)) + 100
	r := newRig(t, limit)
	exact := append(bytes.Clone(comment), bytes.Repeat([]byte(" "), 100)...)
	status, hdr := post(t, r, "aaaaaaaa-0000-11ef-8000-000000000001", exact)
	if status != http.StatusAccepted || hdr.Get("Retry-After") != "" || hdr.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("exactly MaxBody: %d, %v", status, hdr)
	}
	if status, _ := post(t, r, "aaaaaaaa-0000-11ef-8000-000000000002", append(exact, ' ')); status != http.StatusRequestEntityTooLarge {
		t.Errorf("MaxBody + 1: %d, want 413", status)
	}
	if status, _ := post(t, r, "aaaaaaaa-0000-11ef-8000-000000000003", withInstallation(t, readFile(t, "github", "webhooks", "issue_comment.created.json"), 0)); status != http.StatusBadRequest {
		t.Errorf("installation 0: %d, want 400", status)
	}
	// No Content-Type is JSON; one that cannot be parsed is refused.
	if status, _ := postAs(t, r, "aaaaaaaa-0000-11ef-8000-000000000005", "", comment); status != http.StatusAccepted {
		t.Errorf("no Content-Type: %d, want 202", status)
	}
	if status, _ := postAs(t, r, "aaaaaaaa-0000-11ef-8000-000000000006", "application/json; charset", comment); status != http.StatusBadRequest {
		t.Errorf("an unreadable Content-Type: %d, want 400", status)
	}
	r.admit = false
	status, hdr = post(t, r, "aaaaaaaa-0000-11ef-8000-000000000004", comment)
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "60" || hdr.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("backlog full: %d, %v", status, hdr)
	}
}

// A delivery id is 8 to 64 hex digits and hyphens, of either case: the edges of each.
func TestDeliveryIDEdges(t *testing.T) {
	t.Parallel()
	comment := withInstallation(t, readFile(t, "github", "webhooks", "issue_comment.created.json"), 42)
	r := newRig(t, 0)
	for id, ok := range map[string]bool{
		"0189abef":              true,
		"ABCDEF09-":             true,
		strings.Repeat("f", 64): true,
		"0189abe":               false, // 7
		strings.Repeat("F", 65): false,
		"0189abeg":              false,
		"0189abeG":              false,
		"0189abe/":              false, // the byte before '0'
		"0189abe:":              false, // after '9'
		"0189abe`":              false, // before 'a'
		"0189abe@":              false, // before 'A'
		"0189abe_":              false,
		"0189abe\u00e9":         false,
	} {
		status, _ := post(t, r, id, comment)
		if got := status == http.StatusAccepted || status == http.StatusOK; got != ok {
			t.Errorf("delivery id %q: %d", id, status)
		}
	}
}
