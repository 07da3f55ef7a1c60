package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/server"
)

// TestSettingsAtTheirEdges: each bounded key of the settings file takes its last
// valid value and refuses the next one, saying which key.
func TestSettingsAtTheirEdges(t *testing.T) {
	t.Parallel()
	base := `version: 1
database: /var/lib/perfbot/perfbot.db
hosts: [{label: gfx1151, backend: rocm, workflow: perfbot.yml}]
`
	gh := func(extra string) string { return "github: {app_id: 1, private_key_file: k.pem" + extra + "}\n" }
	for _, c := range []struct{ ok, bad, want string }{
		{gh("") + "dispatch: {confirm_secs: 0}\n", gh("") + "dispatch: {confirm_secs: -1}\n", "dispatch.confirm_secs: must be >= 0"},
		{gh("") + "dispatch: {check_secs: 1}\n", gh("") + "dispatch: {check_secs: 0}\n", "dispatch.check_secs: must be > 0"},
		{gh("") + "workers: 256\n", gh("") + "workers: 257\n", "workers: at most 256"},
		{gh("") + "workers: 1\n", gh("") + "workers: 0\n", "workers: must be > 0"},
		{gh("") + "backlog: 1\n", gh("") + "backlog: 0\n", "backlog: must be > 0"},
		{gh("") + "max_attempts: 1\n", gh("") + "max_attempts: 0\n", "max_attempts: must be > 0"},
		{gh("") + "sweep: {every_secs: 1, window_secs: 1}\n", gh("") + "sweep: {every_secs: 0}\n", "sweep.every_secs: must be > 0"},
		{gh("") + "sweep: {window_secs: 1}\n", gh("") + "sweep: {window_secs: 0}\n", "sweep.window_secs: must be > 0"},
		{gh("") + "retention_days: 1\n", gh("") + "retention_days: 0\n", "retention_days: must be > 0"},
		{gh("") + "stuck_secs: 1\n", gh("") + "stuck_secs: 0\n", "stuck_secs: must be > 0"},
		{gh(", timeout_secs: 3600"), gh(", timeout_secs: 3601"), "github.timeout_secs: at most 3600"},
		{gh(", timeout_secs: 1"), gh(", timeout_secs: 0"), "github.timeout_secs: must be > 0"},
		{gh("") + "body_budget_mb: 34\n", gh("") + "body_budget_mb: 33\n", "body_budget_mb: want 34 to 16384"},
		{gh("") + "body_budget_mb: 16384\n", gh("") + "body_budget_mb: 16385\n", "body_budget_mb: want 34 to 16384"},
		{"github: {app_id: 1, private_key_file: k.pem}\n", "github: {app_id: 0, private_key_file: k.pem}\n", "github.app_id: required"},
		{gh("") + "compare: {budget_mins: 1}\n", gh("") + "compare: {budget_mins: 0}\n", "compare.budget_mins: want 1 to 10080"},
		{gh("") + "compare: {budget_mins: 10080}\n", gh("") + "compare: {budget_mins: 10081}\n", "compare.budget_mins: want 1 to 10080"},
		{gh("") + "compare: {run_mins: 1}\n", gh("") + "compare: {run_mins: 0}\n", "compare.run_mins: want 1 to 1440"},
		{gh("") + "compare: {run_mins: 1440}\n", gh("") + "compare: {run_mins: 1441}\n", "compare.run_mins: want 1 to 1440"},
	} {
		if _, err := server.ParseSettings([]byte(base+c.ok), "serve.yml"); err != nil {
			t.Errorf("%q: %v, want it taken", strings.TrimSpace(c.ok), err)
		}
		if _, err := server.ParseSettings([]byte(base+c.bad), "serve.yml"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", strings.TrimSpace(c.bad), err, c.want)
		}
	}
}

// TestLoadSettingsReadsAFileOfUpTo1MiB: a settings file of exactly 1 MiB is read
// whole (its last key included), one byte more is refused before it is parsed.
func TestLoadSettingsReadsAFileOfUpTo1MiB(t *testing.T) {
	t.Parallel()
	head := "# padding\n"
	body := `version: 1
database: /var/lib/perfbot/perfbot.db
github: {app_id: 1, private_key_file: k.pem}
hosts: [{label: gfx1151, backend: rocm, workflow: perfbot.yml}]
retention_days: 31`
	pad := strings.Repeat("#", 1<<20-len(head)-len(body)-1) + "\n"
	dir := t.TempDir()
	exact := filepath.Join(dir, "exact.yml")
	if err := os.WriteFile(exact, []byte(head+pad+body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := server.LoadSettings(exact)
	if err != nil {
		t.Fatalf("a file of exactly 1 MiB: %v", err)
	}
	if got.Retention != 31*24*time.Hour {
		t.Errorf("retention %s, want the file's last key, 31 days, read whole", got.Retention)
	}
	over := filepath.Join(dir, "over.yml")
	if err := os.WriteFile(over, []byte(head+"#"+pad+body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := server.LoadSettings(over); err == nil || !strings.Contains(err.Error(), "1048577 bytes; at most 1048576 are read") {
		t.Errorf("a file of 1 MiB and a byte: %v, want it refused", err)
	}
}

// TestProgressDirAtItsEdges: hosts[].progress_dir takes an absolute path of up to 1024
// bytes, spaces included, and refuses one byte more, a control character or a relative
// path, naming the key.
func TestProgressDirAtItsEdges(t *testing.T) {
	t.Parallel()
	settings := func(dir string) string {
		return "version: 1\ndatabase: /var/lib/perfbot/perfbot.db\ngithub: {app_id: 1, private_key_file: k.pem}\n" +
			"hosts: [{label: gfx1151, backend: rocm, workflow: perfbot.yml, progress_dir: \"" + dir + "\"}]\n"
	}
	long := "/" + strings.Repeat("p", 1023)
	for _, ok := range []string{long, "/var/lib/perfbot progress"} {
		s, err := server.ParseSettings([]byte(settings(ok)), "serve.yml")
		if err != nil || s.Hosts[0].ProgressDir != ok {
			t.Errorf("progress_dir of %d bytes: %v, want it taken", len(ok), err)
		}
	}
	for _, bad := range []string{long + "p", "/var/lib/perfbot\\x1fprogress", "var/lib/perfbot-progress", "/var/lib/../perfbot", "/"} {
		if _, err := server.ParseSettings([]byte(settings(bad)), "serve.yml"); err == nil || !strings.Contains(err.Error(), "progress_dir") {
			t.Errorf("progress_dir %q: %v, want it refused", bad, err)
		}
	}
}
