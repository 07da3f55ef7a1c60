package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestSweep: the App's delivery list (two pages, newest first) holds a delivery that
// failed twice (redelivered: the newest attempt), one that failed then succeeded,
// one perfbot refused with 400, one the inbox already holds, one that failed only
// before the window, and a ping that succeeded. Only the first is asked again.
func TestSweep(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	set.SweepWindow = 48 * time.Hour
	r := start(t, stub, &set)

	const held = "44444444-0000-4000-8000-000000000004"
	expectToken(t, stub)
	expectGate(t, stub, issueRepo, "Codertocat", "read", false)
	expectReply(t, stub, issueRepo, issueNum, 4001, "has the `read` permission")
	if err := r.deliver("issue_comment", held, commentEvent(t, 4001, "Codertocat", "/profile rocm")); err != nil {
		t.Fatal(err)
	}

	now := time.Now().UTC()
	at := func(ago time.Duration) string { return now.Add(-ago).Format(time.RFC3339) }
	item := func(id int64, guid string, ago time.Duration, code int, redelivery bool) map[string]any {
		status := "OK"
		if code >= 300 || code == 0 {
			status = "failed"
		}
		return map[string]any{
			"id": id, "guid": guid, "delivered_at": at(ago), "redelivery": redelivery, "duration": 0.1,
			"status": status, "status_code": code, "event": "issue_comment", "action": "created",
			"installation_id": installationID, "repository_id": 1296269,
		}
	}
	const (
		lost    = "44444444-0000-4000-8000-000000000001"
		healed  = "44444444-0000-4000-8000-000000000002"
		refused = "44444444-0000-4000-8000-000000000003"
		old     = "44444444-0000-4000-8000-000000000005"
	)
	page1 := []any{
		item(109, lost, time.Hour, 502, true),
		item(108, healed, 2*time.Hour, 202, true),
		item(107, "44444444-0000-4000-8000-000000000006", 3*time.Hour, 200, false),
		item(106, refused, 4*time.Hour, 400, false),
	}
	page2 := []any{
		item(105, held, 5*time.Hour, 0, false),
		item(104, healed, 6*time.Hour, 503, false),
		item(103, lost, 7*time.Hour, 0, false),
		item(102, old, 50*time.Hour, 502, false),
		item(101, "44444444-0000-4000-8000-000000000007", 60*time.Hour, 502, false),
	}
	stub.Expect("GET", "/app/hook/deliveries?per_page=100", fakegithub.JSON(200, page1).
		Header("Link", fmt.Sprintf(`<%s>; rel="next"`, stub.AbsURL("/app/hook/deliveries?per_page=100&cursor=v1_104"))))
	stub.Expect("GET", "/app/hook/deliveries?per_page=100&cursor=v1_104", fakegithub.JSON(200, page2))
	stub.Expect("POST", "/app/hook/deliveries/109/attempts", fakegithub.JSON(202, map[string]any{}).Unchecked())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := r.srv.Sweep(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1 redelivery", n, err)
	}
}

// TestProbesAndMetrics: /healthz, /readyz (database and API), /metrics in the
// Prometheus text format, and the ingress refusing an unreadable payload without a
// panic.
func TestProbesAndMetrics(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	r := start(t, stub, nil)
	if code, body := r.get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	stub.Expect("GET", "/app", fakegithub.JSONFileWith(200, example(t, "integration"), map[string]any{"id": appID, "slug": appSlug}))
	if code, body := r.get("/readyz"); code != 200 {
		t.Errorf("/readyz: %d %q", code, body)
	}
	// check_run.rerequested carries times go-github cannot read: 400, and the server
	// keeps serving.
	rerequested := edit(t, payload(t, "github", "webhooks", "check_run.rerequested.json"), nil)
	if code, msg := r.post("check_run", "55555555-0000-4000-8000-000000000001", rerequested); code != http.StatusBadRequest {
		t.Errorf("check_run.rerequested: %d %s, want 400", code, msg)
	}
	if code, msg := r.post("issue_comment", "55555555-0000-4000-8000-000000000002", []byte("{")); code != http.StatusBadRequest {
		t.Errorf("truncated JSON: %d %s, want 400", code, msg)
	}
	r.wantMetrics(
		"# TYPE perfbot_webhook_rejections_total counter",
		`perfbot_webhook_rejections_total{reason="bad_payload"} 2`,
		`perfbot_queue_depth{host="gfx1151",state="queued"} 0`,
		"perfbot_inbox_backlog 0",
		"go_goroutines ",
	)
}

// TestBacklogFull: with the backlog at its bound, a delivery is answered 503 and not
// stored, so GitHub records a failure the sweep can redeliver later.
func TestBacklogFull(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	set.Backlog = 1
	set.Workers = 1
	r := start(t, stub, &set)
	// Hold the only worker: its permission lookup answers only when released.
	release := make(chan struct{})
	expectToken(t, stub)
	stub.Expect("GET", "/repos/"+issueRepo+"/contents/.github/perfbot.yml?ref=master", fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
		<-release
		return fakegithub.Response{Status: 404, Body: []byte(`{"message":"Not Found"}`)}
	}))
	expectReply(t, stub, issueRepo, issueNum, 6001, "has no `.github/perfbot.yml`")
	const first = "66666666-0000-4000-8000-000000000001"
	if code, msg := r.post("issue_comment", first, commentEvent(t, 6001, "Codertocat", "/profile rocm")); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	code, msg := r.post("issue_comment", "66666666-0000-4000-8000-000000000002", commentEvent(t, 6002, "Codertocat", "/profile rocm"))
	close(release)
	if code != http.StatusServiceUnavailable {
		t.Errorf("over the backlog: %d %s, want 503", code, msg)
	}
	if err := r.wait(first); err != nil {
		t.Fatal(err)
	}
}

// TestRefusesToStart: the server says which setting is wrong and does not start.
func TestRefusesToStart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		secret []byte
		app    fakegithub.Responder // GET /app; nil: not called
		want   string
	}{
		{"empty secret", nil, fakegithub.Responder{}, "the webhook secret is empty: set the environment variable " + secretEnv},
		{"key refused", secret, fakegithub.JSON(401, map[string]string{"message": "A JSON web token could not be decoded"}),
			"GitHub refused the App's credentials (github.app_id 1, github.private_key_file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			stub := fakegithub.New(t)
			if c.secret != nil {
				stub.Expect("GET", "/app", c.app)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := server.New(ctx, settings(t, stub.URL()), server.Options{Secret: c.secret, GitHub: gh.Options{MaxRetries: -1, Sleep: noSleep}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v\nwant an error containing %q", err, c.want)
			}
		})
	}
}
