package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/server"
)

func TestParseSettings(t *testing.T) {
	t.Parallel()
	good := `version: 1
database: /var/lib/perfbot/perfbot.db
github: {app_id: 42, private_key_file: /etc/perfbot/app.pem, api_url: "https://ghe.example.com/api/v3/"}
hosts:
  - {label: gfx1151, backend: rocm, workflow: perfbot.yml}
  - {label: gfx1201, backend: rocm, workflow: perfbot-gfx1201.yaml}
sweep: {every_secs: 60}
`
	got, err := server.ParseSettings([]byte(good), "serve.yml")
	if err != nil {
		t.Fatal(err)
	}
	want := server.DefaultSettings()
	want.Database, want.AppID, want.KeyFile, want.APIURL = "/var/lib/perfbot/perfbot.db", 42, "/etc/perfbot/app.pem", "https://ghe.example.com/api/v3/"
	want.Hosts = []server.Host{{Label: "gfx1151", Backend: "rocm", Workflow: "perfbot.yml"}, {Label: "gfx1201", Backend: "rocm", Workflow: "perfbot-gfx1201.yaml"}}
	want.SweepEvery = time.Minute
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("settings (-want +got):\n%s", d)
	}

	bad := []struct{ name, text, want string }{
		{"unknown key", good + "secret: x\n", `serve.yml:8: unknown key "secret"`},
		{"wrong version", strings.Replace(good, "version: 1", "version: 2", 1), "serve.yml:1: version: want 1"},
		{"no database", strings.Replace(good, "database: /var/lib/perfbot/perfbot.db\n", "", 1), "database: required"},
		{"no app", strings.Replace(good, "app_id: 42, ", "", 1), "github.app_id: required"},
		{"same host twice", strings.Replace(good, "gfx1201", "gfx1151", 2), `hosts.1.label: "gfx1151" is listed twice`},
		{"unknown backend", strings.Replace(good, "backend: rocm, workflow: perfbot.yml", "backend: cuda, workflow: perfbot.yml", 1), `hosts.0.backend: "cuda": want one of rocm`},
		{"workflow path", strings.Replace(good, "workflow: perfbot.yml", "workflow: ../x.yml", 1), `hosts.0.workflow`},
		{"secret variable", strings.Replace(good, "api_url:", "webhook_secret_env: \"X Y\", api_url:", 1), `github.webhook_secret_env: "X Y" is not an environment variable name`},
		{"listen", good + "listen: 8080\n", "listen: want host:port"},
		{"no hosts", strings.Split(good, "hosts:")[0], "hosts: list at least one GPU host"},
		{"zero workers", good + "workers: 0\n", "workers: must be > 0"},
		{"a string for a number", good + "backlog: many\n", "serve.yml:8"},
	}
	for _, c := range bad {
		if _, err := server.ParseSettings([]byte(c.text), "serve.yml"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestParseLoadSettings: the GitHub timeout, the stuck-worker threshold and the body
// budget, their defaults and their bounds.
func TestParseLoadSettings(t *testing.T) {
	t.Parallel()
	base := `version: 1
database: /var/lib/perfbot/perfbot.db
hosts: [{label: gfx1151, backend: rocm, workflow: perfbot.yml}]
`
	got, err := server.ParseSettings([]byte(base+"github: {app_id: 1, private_key_file: k.pem}\n"), "serve.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got.APITimeout != 30*time.Second || got.StuckAfter != 5*time.Minute || got.BodyBudget != 64<<20 {
		t.Errorf("defaults: timeout %s, stuck %s, budget %d", got.APITimeout, got.StuckAfter, got.BodyBudget)
	}
	if got.CompareBudget != 8*time.Hour || got.CompareRunTime != 5*time.Minute {
		t.Errorf("compare defaults: budget %s, run %s", got.CompareBudget, got.CompareRunTime)
	}
	got, err = server.ParseSettings([]byte(base+"github: {app_id: 1, private_key_file: k.pem}\ncompare: {budget_mins: 10080, run_mins: 1}\n"), "serve.yml")
	if err != nil || got.CompareBudget != 7*24*time.Hour || got.CompareRunTime != time.Minute {
		t.Errorf("compare set: %v, budget %s, run %s", err, got.CompareBudget, got.CompareRunTime)
	}
	got, err = server.ParseSettings([]byte(base+"github: {app_id: 1, private_key_file: k.pem, timeout_secs: 5}\nstuck_secs: 60\nbody_budget_mb: 40\n"), "serve.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got.APITimeout != 5*time.Second || got.StuckAfter != time.Minute || got.BodyBudget != 40<<20 {
		t.Errorf("set: timeout %s, stuck %s, budget %d", got.APITimeout, got.StuckAfter, got.BodyBudget)
	}
	for _, c := range []struct{ text, want string }{
		{"github: {app_id: 1, private_key_file: k.pem, timeout_secs: 0}\n", "github.timeout_secs: must be > 0"},
		{"github: {app_id: 1, private_key_file: k.pem, timeout_secs: 3601}\n", "github.timeout_secs: at most 3600"},
		{"github: {app_id: 1, private_key_file: k.pem}\nstuck_secs: -1\n", "stuck_secs: must be > 0"},
		{"github: {app_id: 1, private_key_file: k.pem}\nbody_budget_mb: 33\n", "body_budget_mb: want 34 to 16384"},
		{"github: {app_id: 1, private_key_file: k.pem}\ncompare: {budget_mins: 0}\n", "compare.budget_mins: want 1 to 10080"},
		{"github: {app_id: 1, private_key_file: k.pem}\ncompare: {budget_mins: 10081}\n", "compare.budget_mins: want 1 to 10080"},
		{"github: {app_id: 1, private_key_file: k.pem}\ncompare: {run_mins: 0}\n", "compare.run_mins: want 1 to 1440"},
		{"github: {app_id: 1, private_key_file: k.pem}\ncompare: {run_mins: 1441}\n", "compare.run_mins: want 1 to 1440"},
		{"github: {app_id: 1, private_key_file: k.pem}\ncompare: {budget: 5}\n", `unknown key "budget"`},
	} {
		if _, err := server.ParseSettings([]byte(base+c.text), "serve.yml"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.text, err, c.want)
		}
	}
}
