package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/inbox"
)

// rerequestDelivery is the real check_run.rerequested delivery, edited.
func rerequestDelivery(t *testing.T, edits map[string]any) inbox.Delivery {
	t.Helper()
	// The example's app times are not RFC 3339 (GitHub's deliveries are).
	all := map[string]any{"check_run.app.created_at": "2018-04-25T20:42:10Z", "check_run.app.updated_at": "2018-04-25T20:42:10Z",
		"check_run.check_suite.app.created_at": "2018-04-25T20:42:10Z", "check_run.check_suite.app.updated_at": "2018-04-25T20:42:10Z"}
	for k, v := range edits {
		all[k] = v
	}
	return delivery(t, "check_run", "check_run.rerequested.json", all)
}

// The Re-run button of a check run that is not a perfbot request's (its external id
// names no request, or request 0) is ignored without a word at the info level, where
// a re-run naming a request it does not belong to is logged; one without an
// installation is refused as no App delivery. Neither is answered or queued.
func TestRerunOfAnotherAppsCheckRun(t *testing.T) {
	r := newCommandsRig(t)
	var logs bytes.Buffer
	r.cm.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for _, ext := range []string{"", "perfbot-request-0", "perfbot-request-x"} {
		if err := r.cm.rerun(context.Background(), rerequestDelivery(t, map[string]any{"check_run.external_id": ext})); err != nil {
			t.Errorf("external id %q: %v", ext, err)
		}
	}
	if logs.Len() != 0 {
		t.Errorf("another app's check runs were logged:\n%s", logs.String())
	}
	err := r.cm.rerun(context.Background(), rerequestDelivery(t, map[string]any{"check_run.external_id": "perfbot-request-1", "installation.id": 0}))
	var perm permanent
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), "not an App delivery") {
		t.Errorf("a re-run without an installation: %v, want it refused as no App delivery", err)
	}
	if len(r.gh.replies)+len(r.gh.comments) != 0 {
		t.Errorf("answered: replies %q, %d comments", r.gh.replies, len(r.gh.comments))
	}
	if _, ok, err := r.q.Get(context.Background(), 1); ok || err != nil {
		t.Errorf("request 1 stored (%v, %v)", ok, err)
	}
}
