package server_test

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/server"
)

// TestParseProgressDir: hosts[].progress_dir is optional, and when set an absolute,
// clean folder path.
func TestParseProgressDir(t *testing.T) {
	t.Parallel()
	base := "version: 1\ndatabase: /var/lib/perfbot/perfbot.db\ngithub: {app_id: 1, private_key_file: k.pem}\n"
	got, err := server.ParseSettings([]byte(base+"hosts: [{label: gfx1151, backend: rocm, workflow: perfbot.yml, progress_dir: /var/lib/perfbot-progress}, {label: b, backend: rocm, workflow: perfbot.yml}]\n"), "serve.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got.Hosts[0].ProgressDir != "/var/lib/perfbot-progress" || got.Hosts[1].ProgressDir != "" {
		t.Errorf("hosts %+v", got.Hosts)
	}
	for _, dir := range []string{"relative/dir", "/var/../etc", "/var/lib/x/", "/", `"/tmp/a\nb"`} {
		_, err := server.ParseSettings([]byte(base+"hosts: [{label: gfx1151, backend: rocm, workflow: perfbot.yml, progress_dir: "+dir+"}]\n"), "serve.yml")
		if err == nil || !strings.Contains(err.Error(), "serve.yml:4: hosts.0.progress_dir") || !strings.Contains(err.Error(), "want an absolute, clean path") {
			t.Errorf("progress_dir %s: %v", dir, err)
		}
	}
}
