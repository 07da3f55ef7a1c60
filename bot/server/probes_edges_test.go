package server_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// TestReadyzAsksGitHubAtMostEvery30s: /readyz's check of GitHub (GET /app) is kept
// for 30 s, so a load balancer probing every few seconds does not spend the App's
// rate limit: two probes in a row make one call.
func TestReadyzAsksGitHubAtMostEvery30s(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	r := start(t, stub, nil)
	stub.Expect("GET", "/app", fakegithub.JSONFileWith(200, example(t, "integration"), map[string]any{"id": appID, "slug": appSlug})).Times(1)
	for i := range 2 {
		if code, body := r.get("/readyz"); code != 200 || body != "ready\n" {
			t.Errorf("probe %d: /readyz %d %q, want 200 ready", i+1, code, body)
		}
	}
}

// TestDefaultsAreTheDocumentedOnes: a settings file that leaves every optional key out
// gets the values docs/server.md §1 gives (a lost dispatch is looked for after 30 s,
// not sent again at once; deliveries are kept 30 days).
func TestDefaultsAreTheDocumentedOnes(t *testing.T) {
	t.Parallel()
	got, err := server.ParseSettings([]byte(`version: 1
database: /var/lib/perfbot/perfbot.db
github: {app_id: 1, private_key_file: k.pem}
hosts: [{label: gfx1151, backend: rocm, workflow: perfbot.yml}]
`), "serve.yml")
	if err != nil {
		t.Fatal(err)
	}
	want := server.Settings{
		Listen: "127.0.0.1:8080", Database: "/var/lib/perfbot/perfbot.db", APIURL: "https://api.github.com/", AppID: 1, KeyFile: "k.pem",
		SecretEnv: "PERFBOT_WEBHOOK_SECRET", Hosts: []server.Host{{Label: "gfx1151", Backend: "rocm", Workflow: "perfbot.yml"}},
		Workers: 4, Backlog: 10000, MaxAttempts: 8, SweepEvery: 300 * time.Second, SweepWindow: 259200 * time.Second,
		ConfirmAfter: 30 * time.Second, CheckEvery: 60 * time.Second, Retention: 30 * 24 * time.Hour,
		APITimeout: 30 * time.Second, StuckAfter: 300 * time.Second, BodyBudget: 64 << 20,
		CompareBudget: 480 * time.Minute, CompareRunTime: 5 * time.Minute,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("defaults (-documented +got):\n%s", d)
	}
}
