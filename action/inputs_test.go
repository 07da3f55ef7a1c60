package action

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/job"
)

func TestReadInputs(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"job": "profile", "github-token": "ghs_abc", "models": "llama, qwen3", "sampling": "greedy,t0.7-p0.95",
		"ref": "929c80ab", "request-id": "req-1.a_b", "status-comment-id": "12", "trigger-comment-id": "13",
		"check-run-id": "0", "epic": "1814", "config": ".github/perfbot.yml",
	}
	e := newStepEnv(t, good)
	rt := e.runtime(t)
	in, err := readInputs(rt)
	if err != nil {
		t.Fatal(err)
	}
	want := Inputs{Job: "profile", Token: "ghs_abc", Config: ".github/perfbot.yml", Models: []string{"llama", "qwen3"},
		Sampling: []string{"greedy", "t0.7-p0.95"}, Ref: "929c80ab", RequestID: "req-1.a_b",
		StatusCommentID: 12, TriggerCommentID: 13, CheckRunID: 0, Epic: 1814}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}

	// A bench compare may name its models.
	e = newStepEnv(t, map[string]string{"job": "bench", "ref": "929c80ab", "base-ref": strings.Repeat("a", 40), "models": "llama"})
	if rt, err = NewRuntime(io.Discard, e.getenv); err != nil {
		t.Fatal(err)
	}
	if in, err := readInputs(rt); err != nil || in.BaseRef != strings.Repeat("a", 40) || len(in.Models) != 1 {
		t.Errorf("a bench compare's inputs: %v %+v", err, in)
	}

	// A compare's cap of repeats and the name of its CSV pair.
	e = newStepEnv(t, map[string]string{"job": "bench", "ref": "929c80ab", "base-ref": "9fceb02d", "repeats": "20", "label": "pr-1900"})
	if rt, err = NewRuntime(io.Discard, e.getenv); err != nil {
		t.Fatal(err)
	}
	if in, err := readInputs(rt); err != nil || in.Repeats != 20 || in.Label != "pr-1900" {
		t.Errorf("a compare's repeats and label: %v %+v", err, in)
	}

	for _, c := range []struct {
		inputs map[string]string
		want   string
	}{
		{map[string]string{}, "input job: missing"},
		{map[string]string{"job": "deploy"}, `input job: "deploy" is not a job`},
		{map[string]string{"job": "gate", "github-token": "token ghs_x"}, "input github-token: the token holds whitespace"},
		{map[string]string{"job": "gate", "app-id": "7"}, "app-id and app-private-key go together"},
		{map[string]string{"job": "gate", "app-private-key": "-----BEGIN"}, "app-id and app-private-key go together"},
		{map[string]string{"job": "gate", "app-id": "-7", "app-private-key": "k"}, `input app-id: want a positive number (or 0 for none), got "-7"`},
		{map[string]string{"job": "publish", "check-run-id": "x1"}, `input check-run-id: want a positive number (or 0 for none), got "x1"`},
		{map[string]string{"job": "bench", "models": "llama"}, "the bench job runs the repository's harnesses over all their models"},
		{map[string]string{"job": "profile", "config": "../etc/passwd"}, "input config: \"../etc/passwd\" is not a path inside the checkout"},
		{map[string]string{"job": "profile", "config": "/etc/passwd"}, "is not a path inside the checkout"},
		{map[string]string{"job": "profile", "models": "llama,../x"}, `input models: "../x" is not a model name`},
		{map[string]string{"job": "profile", "models": strings.Repeat("m,", 40)}, "input models: 40 names, more than 32"},
		{map[string]string{"job": "profile", "sampling": "hot"}, "input sampling: sampling \"hot\""},
		{map[string]string{"job": "profile", "ref": "main"}, `input ref: "main" is not a commit SHA`},
		{map[string]string{"job": "profile", "ref": "ABCDEF0"}, "is not a commit SHA"},
		{map[string]string{"job": "profile", "base-ref": "main"}, `input base-ref: "main" is not a commit SHA`},
		{map[string]string{"job": "profile", "base-ref": "-c x=y"}, "input base-ref"},
		{map[string]string{"job": "gemm-tests", "base-ref": "929c80ab"}, "input base-ref: applies to the profile and bench jobs only"},
		{map[string]string{"job": "bench", "base-ref": "929c80ab", "sampling": "greedy"}, "input sampling: a bench compare measures"},
		{map[string]string{"job": "profile", "request-id": "a b"}, "input request-id"},
		{map[string]string{"job": "bench", "base-ref": "929c80ab", "repeats": "4"}, "input repeats: want a whole number from 5 to 100"},
		{map[string]string{"job": "bench", "base-ref": "929c80ab", "repeats": "101"}, "input repeats: want a whole number from 5 to 100"},
		{map[string]string{"job": "bench", "base-ref": "929c80ab", "repeats": "1e1"}, `got "1e1"`},
		{map[string]string{"job": "bench", "repeats": "10"}, "input repeats: applies to a compare only"},
		{map[string]string{"job": "profile", "base-ref": "929c80ab", "label": "pr_1900"}, `input label: "pr_1900" names no CSV pair`},
		{map[string]string{"job": "profile", "base-ref": "929c80ab", "label": "../x"}, "input label"},
		{map[string]string{"job": "profile", "base-ref": "929c80ab", "label": strings.Repeat("a", 65)}, "input label"},
		{map[string]string{"job": "profile", "label": "pr-1"}, "input label: applies to a compare only"},
		{map[string]string{"job": "publish", "epic": "99999999999"}, "input epic: 99999999999 is not an issue number"},
		{map[string]string{"job": "publish", "dry-run": "yes"}, `input dry-run: want true or false, got "yes"`},
		{map[string]string{"job": "profile", "dry-run": "true"}, "input dry-run: applies to the publish and gate jobs only"},
		{map[string]string{"job": "profile", "models": strings.Repeat("x", 5000)}, "input models: 5000 bytes, more than the 4096"},
		{map[string]string{"job": "patch", "results": "/tmp/r"}, "input results: applies to the publish job only, not patch"},
		{map[string]string{"job": "publish", "results": "/tmp/r"}, "input ref: publishing results from another job needs the pinned commit's full SHA"},
		{map[string]string{"job": "publish", "results": "/tmp/r", "ref": "929c80ab"}, "needs the pinned commit's full SHA"},
		{map[string]string{"job": "publish", "results": "/tmp/r\n::x", "ref": strings.Repeat("a", 40)}, "input results: the folder's path holds a control character"},
	} {
		e := newStepEnv(t, c.inputs)
		rt := e.runtime(t)
		if _, err := readInputs(rt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("inputs %v: %v, want %q", c.inputs, err, c.want)
		}
	}
}

// A compare's cap is the repeats input within the config's limits.max_repeats, else
// that limit; its label is the input, else pr-N from a pull request's comment event,
// else empty (the two short SHAs).
func TestCompareCapAndLabel(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Limits.MaxRepeats = 20
	for _, c := range []struct{ repeats, want int }{{0, 20}, {5, 5}, {20, 20}} {
		if got, err := compareCap(c.repeats, cfg); err != nil || got != c.want {
			t.Errorf("compareCap(%d) = %d, %v; want %d", c.repeats, got, err, c.want)
		}
	}
	if _, err := compareCap(21, cfg); !errors.Is(err, job.ErrBadRequest) || !strings.Contains(err.Error(), "limits.max_repeats (20)") {
		t.Errorf("compareCap over the limit: %v", err)
	}
	// A config without limits.max_repeats (0) takes the default's.
	cfg.Limits.MaxRepeats = 0
	if got, err := compareCap(0, cfg); err != nil || got != config.Default().Limits.MaxRepeats {
		t.Errorf("compareCap without a limit = %d, %v; want the default's %d", got, err, config.Default().Limits.MaxRepeats)
	}

	dir := t.TempDir()
	event := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pr := event("pr.json", `{"issue": {"number": 1900, "pull_request": {"url": "https://api.github.com/repos/o/r/pulls/1900"}}}`)
	issue := event("issue.json", `{"issue": {"number": 12, "pull_request": null}}`)
	for _, c := range []struct {
		name, eventName, eventPath, input, want string
	}{
		{"a pull request's comment", "issue_comment", pr, "", "pr-1900"},
		{"the input wins", "issue_comment", pr, "rc1", "rc1"},
		{"an issue's comment", "issue_comment", issue, "", ""},
		{"a dispatch", "workflow_dispatch", pr, "", ""},
		{"no event file", "issue_comment", filepath.Join(dir, "missing.json"), "", ""},
	} {
		e := newStepEnv(t, nil)
		e.vars["GITHUB_EVENT_NAME"], e.vars["GITHUB_EVENT_PATH"] = c.eventName, c.eventPath
		rt := e.runtime(t)
		s := &step{rt: rt, in: Inputs{Label: c.input}}
		if got := s.compareLabel(); got != c.want {
			t.Errorf("%s: label %q, want %q", c.name, got, c.want)
		}
	}
}
