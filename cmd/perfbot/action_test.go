package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `perfbot action` takes no arguments, stops with a plain error outside a step, and
// after a failed job prints nothing but the step's annotations (on stdout) and exits 1.
func TestActionCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	if err := os.WriteFile(out, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		env    map[string]string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"extra"}, nil, 2, "", "unexpected argument \"extra\""},
		{nil, map[string]string{"GITHUB_OUTPUT": ""}, 1, "", "GITHUB_OUTPUT is not set"},
		{nil, map[string]string{"GITHUB_OUTPUT": out, "INPUT_JOB": "bench", "RUNNER_TEMP": dir, "GITHUB_WORKSPACE": dir, "PERFBOT_ROOT": ""},
			1, "::error title=perfbot bench failed::reading the checkout's commit", ""},
		{nil, map[string]string{"GITHUB_OUTPUT": out, "INPUT_JOB": "profile", "INPUT_REF": "x\n::set-output name=a::b"},
			1, "::error title=perfbot%3A the step cannot run::input ref: \"x\\n::set-output name=a::b\" is not a commit SHA", ""},
	} {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"action"}, c.args...), &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("perfbot action %v with %v: exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout %q, stderr %q",
				c.args, c.env, code, stdout.String(), stderr.String(), c.code, c.stdout, c.stderr)
		}
		if c.stderr == "" && stderr.Len() > 0 {
			t.Errorf("perfbot action %v printed to stderr after a failed job: %s", c.args, stderr.String())
		}
	}
}
