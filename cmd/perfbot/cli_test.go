package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// A mistyped command, member or flag is named with the nearest right one when one is
// close, and nothing is suggested when none is.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string // on stderr
		not  string
	}{
		{[]string{"anaylze"}, `unknown command "anaylze"; did you mean "analyze"?`, ""},
		{[]string{"serv"}, `did you mean "serve"?`, ""},
		{[]string{"frobnicate"}, `unknown command "frobnicate" (run`, "did you mean"},
		{[]string{"run", "profiel"}, `unknown job "profiel"; did you mean "profile"?`, ""},
		{[]string{"config", "chek"}, `did you mean "check"?`, ""},
		{[]string{"trend", "--histroy", "h"}, "perfbot trend: unknown flag --histroy; did you mean --history?\n", ""},
		{[]string{"run", "profile", "--rpeo", "x"}, "unknown flag --rpeo; did you mean --repo?", ""},
		{[]string{"trend", "--colour"}, "perfbot trend: unknown flag --colour\n", "did you mean"},
		{[]string{"rank", "--k"}, "unknown flag --k\n", "did you mean"}, // one letter: nothing is close
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) || (c.not != "" && strings.Contains(stderr, c.not)) {
			t.Errorf("perfbot %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"anaylze", "analyze", 1}, {"histroy", "history", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"trend", "trend", 0}} {
		if d := editDistance(c.a, c.b); d != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

// A bad flag prints one line and the synopsis: not the description of every flag, which
// --help is for.
func TestBadFlagPrintsOneLineAndTheUsage(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, "publish", "--resluts", "x")
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if code != 2 || stdout != "" || lines[0] != "perfbot publish: unknown flag --resluts; did you mean --results?" ||
		!strings.HasPrefix(lines[1], "usage: perfbot publish --results DIR") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "\n  --") || strings.Contains(stderr, "examples:") {
		t.Errorf("the flags' descriptions or the examples are printed for a bad flag:\n%s", stderr)
	}
	// Other flag errors keep their text, with the two dashes of the help.
	code, _, stderr = runCLI(t, "trend", "--window", "many")
	if first, _, _ := strings.Cut(stderr, "\n"); code != 2 || !strings.HasPrefix(first, `perfbot trend: invalid value "many" for flag --window`) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "patch", "verify", "--json=maybe")
	if first, _, _ := strings.Cut(stderr, "\n"); code != 2 || !strings.HasPrefix(first, `perfbot patch verify: invalid boolean value "maybe" for --json`) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "trend", "--out")
	if code != 2 || !strings.HasPrefix(stderr, "perfbot trend: flag needs an argument: --out\nusage: perfbot trend ") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// The flag listing of --help shows each value with the synopsis' placeholder, the one
// style of the whole command line.
func TestHelpFlagsUseTheSynopsisPlaceholders(t *testing.T) {
	t.Parallel()
	_, stdout, _ := runCLI(t, "help", "analyze")
	for _, want := range []string{"\n  --trace FILE\n", "\n  --out-dir DIR\n", "\n  --sampling TAG\n", "\n  --sample\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("perfbot help analyze lacks %q:\n%s", want, stdout)
		}
	}
	if got := synopsisPlaceholders("--a DIR [--b md|json] [--c CMD]... [--d 10m] [--e] [--f NAME,...] --g=OWNER/NAME"); fmt.Sprint(got) != "map[a:DIR b:md|json c:CMD f:NAME,... g:OWNER/NAME]" {
		t.Errorf("synopsisPlaceholders = %v", got)
	}
}

// `perfbot trend` on a folder without a harness CSV is an error and writes no page.
func TestTrendWithoutCSVFails(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	junk := t.TempDir()
	if err := os.WriteFile(filepath.Join(junk, "notes.csv"), []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{empty, "holds no harness CSV"},
		{junk, "holds no readable harness CSV (1 could not be read"},
	} {
		site := filepath.Join(t.TempDir(), "site")
		code, stdout, stderr := runCLI(t, "trend", "--history", c.dir, "--out", site)
		if code != 1 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.dir, code, stdout, stderr, c.want)
		}
		if _, err := os.Stat(filepath.Join(site, "index.html")); !os.IsNotExist(err) {
			t.Errorf("%s: a page was written (%v)", c.dir, err)
		}
	}
}

// writeServerFiles writes an App key and a server settings file into dir; key is the
// PEM to write, nil for a new RSA key.
func writeServerFiles(t *testing.T, dir, apiURL string, key []byte) (cfg, db string) {
	t.Helper()
	if key == nil {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		key = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	}
	keyFile := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(dir, "perfbot.db")
	cfg = filepath.Join(dir, "serve.yml")
	settings := fmt.Sprintf("version: 1\ndatabase: %s\ngithub: {api_url: %q, app_id: 7, private_key_file: %s}\nhosts:\n  - {label: gfx1151, backend: rocm, workflow: perfbot.yml}\n", db, apiURL, keyFile)
	if err := os.WriteFile(cfg, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, db
}

// `perfbot config check` reads the repository config and the server settings with the
// loaders themselves: the same line-numbered errors, exit 1 when any file is refused.
func TestConfigCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "perfbot.yml")
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(good, []byte(gatetest.Config), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(gatetest.Config+"limits: {max_models: 0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	serverCfg, _ := writeServerFiles(t, dir, "https://api.github.com/", nil)
	badServer := filepath.Join(dir, "bad-serve.yml")
	if err := os.WriteFile(badServer, []byte("version: 1\ndatabase: x.db\nworkers: -1\nhosts: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCLI(t, "config", "check", good, "--server", serverCfg)
	if code != 0 || stdout != good+": OK\n"+serverCfg+": OK\n" || stderr != "" {
		t.Errorf("good files: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "config", "check", "--server", serverCfg)
	if code != 0 || stdout != serverCfg+": OK\n" {
		t.Errorf("--server alone: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "config", "check", bad, "--server", badServer)
	if code != 1 || stdout != "" || !regexp.MustCompile(`(?m)^perfbot config check: `+regexp.QuoteMeta(bad)+`:8: limits\.max_models`).MatchString(stderr) ||
		!regexp.MustCompile(`(?m)^perfbot config check: .*`+regexp.QuoteMeta(badServer)+`:\d+: `).MatchString(stderr) {
		t.Errorf("bad files: exit %d, stdout %q; want both refused with file and line:\n%s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, "config", "check", good, bad)
	if code != 2 || !strings.Contains(stderr, "give one config file") {
		t.Errorf("two config files: exit %d, stderr %q", code, stderr)
	}
}

// Without FILE, `perfbot config check` reads .github/perfbot.yml of the current folder.
func TestConfigCheckDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, _, stderr := runCLI(t, "config", "check")
	if code != 1 || !strings.Contains(stderr, ".github/perfbot.yml") {
		t.Errorf("no config: exit %d, stderr %q", code, stderr)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".github", "perfbot.yml"), []byte(gatetest.Config), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, "config", "check"); code != 0 || stdout != ".github/perfbot.yml: OK\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// `perfbot serve --check` checks what would stop the server offline: the settings, the
// secret, the key (parsed; GitHub is not asked: the stub answers nothing) and the
// database (opened, locked and released), one OK line each, or exit 1 with the error.
func TestServeCheck(t *testing.T) {
	t.Setenv("PERFBOT_WEBHOOK_SECRET", "s3cret")
	stub := fakegithub.New(t) // no call is expected: any would fail the test
	dir := t.TempDir()
	cfg, db := writeServerFiles(t, dir, stub.URL(), nil)

	code, stdout, stderr := runCLI(t, "serve", "--config", cfg, "--check")
	want := regexp.MustCompile(`^settings \S+serve\.yml: OK.*\nwebhook secret PERFBOT_WEBHOOK_SECRET: OK \(6 bytes\)\nprivate key \S+app\.pem: OK.*\ndatabase \S+perfbot\.db: OK.*\n$`)
	if code != 0 || stderr != "" || !want.MatchString(stdout) {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	// Released: a server (here the store itself) can take the database now.
	held, err := store.Open(t.Context(), db)
	if err != nil {
		t.Fatalf("the check left the database locked: %v", err)
	}
	code, stdout, stderr = runCLI(t, "serve", "--config", cfg, "--check")
	if code != 1 || !strings.Contains(stderr, "in use by another perfbot serve") || !strings.HasSuffix(stdout, "private key "+filepath.Join(dir, "app.pem")+": OK (app 7; GitHub is asked at start)\n") {
		t.Errorf("a held database: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	held.Close()

	badKey, _ := writeServerFiles(t, t.TempDir(), stub.URL(), []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"))
	code, stdout, stderr = runCLI(t, "serve", "--config", badKey, "--check")
	if code != 1 || strings.Contains(stdout, "private key") || !strings.Contains(stderr, "parsing the GitHub App private key") {
		t.Errorf("a bad key: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	badSettings := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(badSettings, []byte("version: 1\nlisten: 127.0.0.1:8080\nbogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "serve", "--config", badSettings, "--check")
	if code != 1 || stdout != "" || !strings.Contains(stderr, badSettings+":3:") {
		t.Errorf("bad settings: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	t.Setenv("PERFBOT_WEBHOOK_SECRET", " \t")
	code, _, stderr = runCLI(t, "serve", "--config", cfg, "--check")
	if code != 1 || !strings.Contains(stderr, "the webhook secret is only white space (2 bytes)") {
		t.Errorf("a white-space secret: exit %d, stderr %q", code, stderr)
	}
}
