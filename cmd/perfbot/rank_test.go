package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/attrib"
)

func rankFixtureDir(t *testing.T) string {
	return testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
}

func runPerfbot(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRankCommandOnFixtures(t *testing.T) {
	t.Parallel()
	dir := rankFixtureDir(t)
	code, out, errs := runPerfbot("rank", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"**Ranked port order: #2065, #2068, #2063, #2064, #2067**", "Ranked on kernel time alone", "| 1 | #2065 (item 5) |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Flags after DIR work as well as before it.
	code, out, errs = runPerfbot("rank", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	var r struct {
		Order []string `json:"order"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || strings.Join(r.Order, " ") != "2065 2068 2063 2064 2067" {
		t.Errorf("json output %v: %s", err, out)
	}
}

func TestRankCommandWithRulesFile(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	src := strings.Replace(string(attrib.DefaultRulesYAML()),
		"  - unit: \"2068\"\n    action: before\n    other: \"2063\"\n",
		"  - unit: \"2067\"\n    action: pin\n    position: 1\n", 1)
	rules := filepath.Join(tmp, "rules.yml")
	if err := os.WriteFile(rules, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runPerfbot("rank", "--rules", rules, rankFixtureDir(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "**Ranked port order: #2067, #2065, #2063, #2064, #2068**") ||
		!strings.Contains(out, "- #2067 pinned at place 1: it has a path, batched serving") {
		t.Errorf("output:\n%s", out)
	}
	bad := filepath.Join(tmp, "bad.yml")
	if err := os.WriteFile(bad, []byte("version: 1\nclasses: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runPerfbot("rank", "--rules", bad, rankFixtureDir(t)); code != 1 || !strings.Contains(errs, bad+":2:") {
		t.Errorf("bad rules: exit %d, stderr %q", code, errs)
	}
}

func TestRankCommandErrors(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"rank"}, 2, "give the results folder"},
		{[]string{"rank", empty, "--format", "xml"}, 2, `--format "xml": want md or json`},
		{[]string{"rank", empty, "extra"}, 2, "unexpected arguments"},
		{[]string{"rank", empty}, 1, "no *_summary.json in"},
		{[]string{"rank", filepath.Join(empty, "missing")}, 1, "reading results folder"},
	}
	for _, c := range cases {
		code, _, errs := runPerfbot(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}
