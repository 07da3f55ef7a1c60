package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/results"
)

func TestReadInputsBisect(t *testing.T) {
	t.Parallel()
	good, bad := strings.Repeat("a", 40), strings.Repeat("b", 40)
	e := newStepEnv(t, map[string]string{"job": "bisect", "good-ref": good, "bad-ref": bad, "models": "llama"})
	rt := e.runtime(t)
	if in, err := readInputs(rt); err != nil || in.GoodRef != good || in.BadRef != bad || len(in.Models) != 1 {
		t.Errorf("a bisection's inputs: %v %+v", err, in)
	}
	for _, c := range []struct {
		inputs map[string]string
		want   string
	}{
		{map[string]string{"job": "bisect", "models": "llama"}, "input good-ref: missing"},
		{map[string]string{"job": "bisect", "good-ref": good[:12], "models": "llama"}, "input good-ref: \"aaaaaaaaaaaa\" is not a full commit SHA"},
		{map[string]string{"job": "bisect", "good-ref": good, "bad-ref": "main", "models": "llama"}, "input bad-ref: \"main\" is not a full commit SHA"},
		{map[string]string{"job": "bisect", "good-ref": good}, "input models: the bisect job measures one model"},
		{map[string]string{"job": "bisect", "good-ref": good, "models": "llama,qwen3"}, "give exactly one, got 2"},
		{map[string]string{"job": "bisect", "good-ref": good, "models": "llama", "sampling": "greedy"}, "input sampling: a bisection measures"},
		{map[string]string{"job": "bisect", "good-ref": good, "models": "llama", "base-ref": good}, "input base-ref: applies to the profile and bench jobs only"},
		{map[string]string{"job": "profile", "good-ref": good}, "input good-ref: applies to the bisect job only"},
		{map[string]string{"job": "bench", "bad-ref": bad}, "input bad-ref: applies to the bisect job only"},
	} {
		e := newStepEnv(t, c.inputs)
		rt := e.runtime(t)
		if _, err := readInputs(rt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("inputs %v: %v, want %q", c.inputs, err, c.want)
		}
	}
}

// The bisect job on the fake host: three commits after the base, the second planting
// a 7 % decode slowdown; the job names it in bisect.json and the summary, with the
// bisection folder as results-dir and the culprit's profile A/B against its parent in
// it. A reversed range is refused before anything runs.
func TestHostJobsBisect(t *testing.T) {
	t.Parallel()
	h, commits := bisectTarget(t, jobsConfig, "decode 0.93\n")
	_, e, log, err := h.step(t, map[string]string{"job": "bisect", "ref": commits[3], "good-ref": commits[0], "models": "llama"})
	if err != nil {
		t.Fatalf("bisect: %v\n%s", err, log)
	}
	outs := readOutputs(t, e.output)
	b, err := results.ReadBisect(filepath.Join(outs["results-dir"], results.BisectFile))
	if err != nil {
		t.Fatalf("outputs %v: %v", outs, err)
	}
	if outs["verdict"] != VerdictComplete || b.State != results.SessionComplete || b.Bad != commits[3] || len(b.Commits) != 4 ||
		b.Outcome == nil || b.Outcome.Outcome != results.BisectFound || b.Outcome.FirstBad != commits[2] {
		t.Errorf("outputs %v, bisection %+v, outcome %+v", outs, b, b.Outcome)
	}
	// The culprit's profile A/B against its parent is in the bisection folder.
	if _, err := results.ReadCulprit(outs["results-dir"], b); err != nil {
		t.Errorf("the culprit's profile A/B: %v (%s)\n%s", err, b.CulpritReason, log)
	}
	if sum := e.summaryText(t); !strings.Contains(sum, commits[2]) || !strings.Contains(sum, "found") || !strings.Contains(sum, "profile A/B against its parent in culprit/") {
		t.Errorf("summary:\n%s", sum)
	}

	_, e, log, err = h.step(t, map[string]string{"job": "bisect", "ref": commits[3], "good-ref": commits[3], "bad-ref": commits[1], "models": "llama"})
	if err == nil || !strings.Contains(log, "not an ancestor") {
		t.Errorf("a reversed range: %v\n%s", err, log)
	}
}

// bisectTarget is the host jobs' target with the fake harness and three commits after
// the base; the second plants change (a fake-change.txt), when given. It returns the
// base and the three, oldest first.
func bisectTarget(t *testing.T, config, change string) (*hostJobs, []string) {
	t.Helper()
	harness, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "harness", "bench_decode.sh"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHostJobs(t, config, map[string]string{
		"scripts/bench_decode.sh":                                   string(harness),
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/fake-bench.txt": "mlxcel 35.41 1065.78\n",
	})
	home := h.vars["HOME"]
	commits := []string{h.base}
	for i := 1; i <= 3; i++ {
		if err := os.WriteFile(filepath.Join(h.repo, "history.txt"), []byte(fmt.Sprintf("commit %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 2 && change != "" {
			if err := os.WriteFile(filepath.Join(h.repo, "fake-change.txt"), []byte(change), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		hosttest.Git(t, home, h.repo, "add", "-A")
		hosttest.Git(t, home, h.repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "-m", fmt.Sprintf("commit %d", i))
		commits = append(commits, hosttest.Git(t, home, h.repo, "rev-parse", "HEAD"))
	}
	return h, commits
}
