package action

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/results"
)

// The bisect job holds to the pinned config's limits, as the gate counts them, when it
// is dispatched by hand too: a range longer than limits.max_bisect_commits is refused
// before anything runs, and a bisection within it spends at most limits.max_bisect_runs
// (recorded as its budget).
func TestHostJobsBisectKeepsTheConfigsLimits(t *testing.T) {
	t.Parallel()
	h, commits := bisectTarget(t, jobsConfig+"limits: {max_bisect_commits: 3, max_bisect_runs: 8}\n", "")
	_, _, log, err := h.step(t, map[string]string{"job": "bisect", "ref": commits[3], "good-ref": commits[0], "models": "llama"})
	if err == nil || !strings.Contains(log, "holds 4 commits, more than 3") {
		t.Errorf("a range of 4 commits under max_bisect_commits 3: %v\n%s", err, log)
	}
	_, e, log, err := h.step(t, map[string]string{"job": "bisect", "ref": commits[3], "good-ref": commits[1], "models": "llama"})
	if err != nil {
		t.Fatalf("a range of 3 commits: %v\n%s", err, log)
	}
	b, err := results.ReadBisect(filepath.Join(readOutputs(t, e.output)["results-dir"], results.BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	if b.Params.Budget != 8 || b.Runs > 8 || len(b.Commits) != 3 {
		t.Errorf("a bisection under max_bisect_runs 8: budget %d, %d runs over %d commits", b.Params.Budget, b.Runs, len(b.Commits))
	}
}
