package webhook_test

import (
	"encoding/json"
	"testing"

	"github.com/lablup/perfbot/bot/webhook"
)

// Options.Actions narrows a handled event to some actions: check_run.created is
// checked, answered 200 and not stored; the same payload as rerequested is stored.
func TestHandledActions(t *testing.T) {
	t.Parallel()
	r := newRig(t, 0, func(o *webhook.Options) { o.Actions = map[string][]string{"check_run": {"rerequested"}} })
	created := withInstallation(t, readFile(t, "github", "webhooks", "check_run.created.json"), 42)
	var m map[string]any
	if err := json.Unmarshal(created, &m); err != nil {
		t.Fatal(err)
	}
	m["action"] = "rerequested"
	rerequested, _ := json.Marshal(m)
	if code, msg := r.send(t, signed("check_run", "72d3162e-cc78-11e3-81ab-4c9367dc0001", created)); code != 200 || msg != "ignored: perfbot does not act on check_run created events\n" {
		t.Errorf("check_run.created: %d %q, want 200 ignored", code, msg)
	}
	if r.ib.Pending() != 0 {
		t.Fatalf("%d deliveries stored, want none", r.ib.Pending())
	}
	if code, msg := r.send(t, signed("check_run", "72d3162e-cc78-11e3-81ab-4c9367dc0002", rerequested)); code != 202 {
		t.Errorf("check_run.rerequested: %d %q, want 202", code, msg)
	}
	if r.ib.Pending() != 1 {
		t.Errorf("%d deliveries stored, want the rerequested one", r.ib.Pending())
	}
	// An event without an entry is stored whatever its action.
	comment := withInstallation(t, readFile(t, "github", "webhooks", "issue_comment.deleted.json"), 42)
	if code, _ := r.send(t, signed("issue_comment", "72d3162e-cc78-11e3-81ab-4c9367dc0003", comment)); code != 202 {
		t.Errorf("issue_comment.deleted: %d, want 202", code)
	}
}
