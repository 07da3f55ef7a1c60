package examples

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/testfix"
)

// The App asks for exactly what perfbot uses, no more: docs/install.md says why for
// each.
var (
	wantPermissions = map[string]string{
		"actions": "write", "checks": "write", "contents": "write",
		"issues": "write", "metadata": "read", "pull_requests": "write",
	}
	wantEvents = []string{"check_run", "issue_comment", "workflow_run"}
)

type manifest struct {
	Name           string `json:"name"`
	Description    string `json:"description"`
	URL            string `json:"url"`
	HookAttributes struct {
		URL    string `json:"url"`
		Active bool   `json:"active"`
	} `json:"hook_attributes"`
	RedirectURL        string            `json:"redirect_url"`
	Public             bool              `json:"public"`
	DefaultPermissions map[string]string `json:"default_permissions"`
	DefaultEvents      []string          `json:"default_events"`
}

func readManifest(t *testing.T, file string) manifest {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var m manifest
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

func TestAppManifest(t *testing.T) {
	t.Parallel()
	m := readManifest(t, filepath.Join(testfix.RepoRoot(t), "examples", "github-app", "manifest.json"))
	if !maps.Equal(m.DefaultPermissions, wantPermissions) {
		t.Errorf("permissions %v, want exactly %v", m.DefaultPermissions, wantPermissions)
	}
	if got := slices.Sorted(slices.Values(m.DefaultEvents)); !slices.Equal(got, wantEvents) || len(m.DefaultEvents) != len(wantEvents) {
		t.Errorf("events %v, want exactly %v", m.DefaultEvents, wantEvents)
	}
	if m.Public {
		t.Error("the App is public: anyone could install it and send it webhooks; set public to false")
	}
	if !m.HookAttributes.Active || !strings.HasPrefix(m.HookAttributes.URL, "https://") || !strings.HasSuffix(m.HookAttributes.URL, "/webhook") {
		t.Errorf("hook_attributes %+v: want an active https URL ending in /webhook (the path perfbot serve answers)", m.HookAttributes)
	}
	if m.Name == "" || m.URL == "" || m.RedirectURL == "" {
		t.Errorf("name %q, url %q, redirect_url %q: all three are needed by the manifest flow", m.Name, m.URL, m.RedirectURL)
	}
}

// docs/install.md explains each permission and event the manifest asks for, and no
// other.
func TestInstallDocsExplainTheManifest(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	perms := tableRows(string(doc), "| permission | access | why |")
	got := map[string]string{}
	for _, r := range perms {
		if len(r) == 3 {
			got[strings.Trim(r[0], "`")] = strings.Trim(r[1], "`")
		}
	}
	if !maps.Equal(got, wantPermissions) {
		t.Errorf("docs/install.md's permission table says %v, the manifest %v", got, wantPermissions)
	}
	var events []string
	for _, r := range tableRows(string(doc), "| event | why |") {
		events = append(events, strings.Trim(r[0], "`"))
	}
	slices.Sort(events)
	if !slices.Equal(events, wantEvents) {
		t.Errorf("docs/install.md's event table lists %v, the manifest %v", events, wantEvents)
	}
}

// tableRows returns the cells of the rows of the Markdown table with that header.
func tableRows(doc, header string) [][]string {
	var rows [][]string
	in := false
	for l := range strings.SplitSeq(doc, "\n") {
		switch {
		case strings.HasPrefix(l, header):
			in = true
		case in && strings.HasPrefix(l, "| ---"):
		case in && strings.HasPrefix(l, "|"):
			var cells []string
			for c := range strings.SplitSeq(strings.Trim(l, "|"), " | ") {
				cells = append(cells, strings.TrimSpace(c))
			}
			rows = append(rows, cells)
		default:
			in = false
		}
	}
	return rows
}

// unit is a systemd unit file: section -> key -> values in order (a key may repeat).
type unit map[string]map[string][]string

// parseUnit reads a unit file the way systemd does for these purposes: [Section]
// lines, Key=Value lines, # and ; comments, a trailing backslash continuing a line.
func parseUnit(text string) (unit, error) {
	u := unit{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	n, pending := 0, ""
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if pending != "" {
			line = pending + " " + line
			pending = ""
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSuffix(line, `\`)
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("line %d: a section header without its ]", n)
			}
			section = line[1 : len(line)-1]
			if u[section] != nil {
				return nil, fmt.Errorf("line %d: section [%s] twice", n, section)
			}
			u[section] = map[string][]string{}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			return nil, fmt.Errorf("line %d: want Key=Value in a section, got %q", n, line)
		}
		k = strings.TrimSpace(k)
		u[section][k] = append(u[section][k], strings.TrimSpace(v))
	}
	if pending != "" {
		return nil, fmt.Errorf("the last line ends in a backslash")
	}
	return u, sc.Err()
}

// one is the single value of a key, "" when absent or repeated.
func (u unit) one(section, key string) string {
	if vs := u[section][key]; len(vs) == 1 {
		return vs[0]
	}
	return ""
}

// checkServeUnit returns what is wrong with a unit that runs perfbot serve.
func checkServeUnit(u unit) []string {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	for _, s := range []string{"Unit", "Service", "Install"} {
		if u[s] == nil {
			bad("no [%s] section", s)
		}
	}
	want := map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "PrivateTmp": "yes", "ProtectHome": "yes",
		"Restart": "on-failure", "Type": "simple", "CapabilityBoundingSet": "",
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if vs := u["Service"][k]; len(vs) != 1 || vs[0] != want[k] {
			bad("[Service] %s=%q, want %s=%s", k, vs, k, want[k])
		}
	}
	if usr := u.one("Service", "User"); usr == "" || usr == "root" || usr == "0" {
		bad("[Service] User=%q: run as a dedicated user, not root", usr)
	}
	if u.one("Service", "RestartSec") == "" {
		bad("[Service] no RestartSec: a crash loop would restart at once")
	}
	if m := regexp.MustCompile(`^([0-9]+)([MG])$`).FindStringSubmatch(u.one("Service", "MemoryMax")); m == nil || m[2] == "M" && len(m[1]) < 3 {
		bad("[Service] MemoryMax=%q: cap the service's memory (at least 100M: the server holds up to body_budget_mb of unverified bodies)", u.one("Service", "MemoryMax"))
	}
	argv := strings.Fields(u.one("Service", "ExecStart"))
	if len(argv) < 4 || !path.IsAbs(argv[0]) || path.Base(argv[0]) != "perfbot" || argv[1] != "serve" ||
		argv[2] != "--config" || !path.IsAbs(argv[3]) {
		bad("[Service] ExecStart=%q, want /path/to/perfbot serve --config /absolute/settings.yml", argv)
	}
	env := u.one("Service", "EnvironmentFile")
	if !path.IsAbs(env) {
		bad("[Service] EnvironmentFile=%q: the webhook secret comes from an absolute, required file (no leading -)", env)
	}
	for _, e := range u["Service"]["Environment"] {
		if regexp.MustCompile(`(?i)secret|token|key`).MatchString(e) {
			bad("[Service] Environment=%s: a secret in the unit file is readable by every user; put it in the EnvironmentFile", e)
		}
	}
	state := u.one("Service", "StateDirectory")
	rw := strings.Fields(strings.Join(u["Service"]["ReadWritePaths"], " "))
	if state == "" || !slices.Contains(rw, "/var/lib/"+state) {
		bad("[Service] StateDirectory=%q, ReadWritePaths=%q: the database folder /var/lib/<StateDirectory> must be the writable path", state, rw)
	}
	if len(rw) != 1 {
		bad("[Service] ReadWritePaths=%q: only the database folder may be writable", rw)
	}
	if !strings.Contains(strings.Join(u["Unit"]["After"], " "), "network-online.target") {
		bad("[Unit] After=%q: start after network-online.target (it calls GitHub at start)", u["Unit"]["After"])
	}
	if u.one("Install", "WantedBy") != "multi-user.target" {
		bad("[Install] WantedBy=%q, want multi-user.target", u.one("Install", "WantedBy"))
	}
	return problems
}

func TestServeUnit(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "examples", "systemd", "perfbot-serve.service"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := parseUnit(string(data))
	if err != nil {
		t.Fatalf("perfbot-serve.service: %v", err)
	}
	for _, p := range checkServeUnit(u) {
		t.Errorf("perfbot-serve.service: %s", p)
	}
}

// The unit checks fail on the mistakes they exist to catch.
func TestServeUnitChecksCatchMistakes(t *testing.T) {
	t.Parallel()
	const good = "[Unit]\nAfter=network-online.target\n[Service]\nType=simple\nUser=perfbot\n" +
		"ExecStart=/usr/local/bin/perfbot serve \\\n  --config /etc/perfbot/server.yml\nEnvironmentFile=/etc/perfbot/perfbot.env\n" +
		"StateDirectory=perfbot\nReadWritePaths=/var/lib/perfbot\nNoNewPrivileges=yes\nProtectSystem=strict\n" +
		"ProtectHome=yes\nPrivateTmp=yes\nRestart=on-failure\nRestartSec=5s\nMemoryMax=512M\nCapabilityBoundingSet=\n[Install]\nWantedBy=multi-user.target\n"
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"as it should be", "", "", ""},
		{"root", "User=perfbot", "User=root", "dedicated user"},
		{"no user", "User=perfbot\n", "", "dedicated user"},
		{"a secret inline", "EnvironmentFile=/etc/perfbot/perfbot.env", "EnvironmentFile=/etc/perfbot/perfbot.env\nEnvironment=PERFBOT_WEBHOOK_SECRET=x", "readable by every user"},
		{"an optional env file", "EnvironmentFile=/", "EnvironmentFile=-/", "absolute, required file"},
		{"writable /", "ProtectSystem=strict", "ProtectSystem=full", "ProtectSystem"},
		{"more writable", "ReadWritePaths=/var/lib/perfbot", "ReadWritePaths=/var/lib/perfbot /home", "only the database folder"},
		{"another database folder", "ReadWritePaths=/var/lib/perfbot", "ReadWritePaths=/srv/perfbot", "must be the writable path"},
		{"shared tmp", "PrivateTmp=yes", "PrivateTmp=no", "PrivateTmp"},
		{"no config", " \\\n  --config /etc/perfbot/server.yml", "", "ExecStart"},
		{"another command", "perfbot serve", "perfbot run", "ExecStart"},
		{"no restart", "Restart=on-failure\n", "", "Restart"},
		{"setuid allowed", "NoNewPrivileges=yes", "NoNewPrivileges=no", "NoNewPrivileges"},
		{"no memory cap", "MemoryMax=512M\n", "", "MemoryMax"},
		{"a memory cap below the body budget", "MemoryMax=512M", "MemoryMax=64M", "MemoryMax"},
	} {
		u, err := parseUnit(strings.Replace(good, c.from, c.to, 1))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := strings.Join(checkServeUnit(u), "\n")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want one with %q", c.name, got, c.want)
		}
	}
	for _, broken := range []string{"Key=Value\n", "[Service\nA=b\n", "[Service]\nA\n", "[Service]\n[Service]\n", "[Service]\nA=b \\\n"} {
		if _, err := parseUnit(broken); err == nil {
			t.Errorf("parseUnit(%q) took it", broken)
		}
	}
}

// The server settings docs/install.md gives for the unit are valid settings of perfbot
// serve and fit the unit: the database in its one writable folder, the key where
// LoadCredential puts it, a loopback address behind the proxy.
func TestInstallDocsSettingsFitTheUnit(t *testing.T) {
	t.Parallel()
	root := testfix.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "examples", "systemd", "perfbot-serve.service"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := parseUnit(string(data))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "A `server.yml` for this unit")
	block, ok2 := yamlBlock(rest)
	if !ok || !ok2 {
		t.Fatal("docs/install.md has no ```yaml block after \"A `server.yml` for this unit\"")
	}
	set, err := server.ParseSettings([]byte(block), "docs/install.md")
	if err != nil {
		t.Fatalf("the server.yml of docs/install.md does not parse: %v", err)
	}
	if rw := u["Service"]["ReadWritePaths"]; len(rw) != 1 || path.Dir(set.Database) != rw[0] {
		t.Errorf("database %q is not in the unit's one writable folder %q", set.Database, rw)
	}
	name, _, _ := strings.Cut(u.one("Service", "LoadCredential"), ":")
	if want := "/run/credentials/perfbot-serve.service/" + name; set.KeyFile != want {
		t.Errorf("private_key_file %q, want %q (where the unit's LoadCredential puts the key)", set.KeyFile, want)
	}
	if host, _, _ := strings.Cut(set.Listen, ":"); host != "127.0.0.1" {
		t.Errorf("listen %q: the unit's server sits behind a proxy, on 127.0.0.1", set.Listen)
	}
	argv := strings.Fields(u.one("Service", "ExecStart"))
	if len(argv) < 4 || !strings.Contains(string(doc), argv[3]) || !strings.Contains(string(doc), u.one("Service", "EnvironmentFile")) {
		t.Errorf("docs/install.md does not name the unit's settings file and environment file (%q)", argv)
	}
}

// yamlBlock returns the first ```yaml fenced block of md.
func yamlBlock(md string) (string, bool) {
	_, after, ok := strings.Cut(md, "```yaml\n")
	if !ok {
		return "", false
	}
	block, _, ok := strings.Cut(after, "\n```")
	return block, ok
}
