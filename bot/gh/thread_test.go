package gh

import (
	"context"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/fakegithub"
)

// Thread tells a pull request (the issues API's answer has pull_request) from an issue,
// with its state; a missing one is an error that names it, and a bad number asks
// nothing.
func TestThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	closedPR := issue(t, 1900, "maintainer", "rocm: fused SSM state update", "", true)
	closedPR["state"] = "closed"
	e.s.Expect("GET", issuesPath+"/1900", fakegithub.JSON(200, closedPR))
	e.s.Expect("GET", issuesPath+"/1814", fakegithub.JSON(200, issue(t, 1814, "maintainer", "epic", "", false)))
	e.s.Expect("GET", issuesPath+"/7", fakegithub.JSON(404, map[string]any{"message": "Not Found"}))
	got, err := e.c.Thread(ctx, testRepo, 1900)
	if err != nil || !got.PullRequest || got.State != "closed" || got.Number != 1900 {
		t.Errorf("#1900: %+v %v, want a closed pull request", got, err)
	}
	got, err = e.c.Thread(ctx, testRepo, 1814)
	if err != nil || got.PullRequest || got.State != "open" || got.URL != "https://github.com/lablup/mlxcel/issues/1814" {
		t.Errorf("#1814: %+v %v, want an open issue", got, err)
	}
	if _, err := e.c.Thread(ctx, testRepo, 7); err == nil || !strings.Contains(err.Error(), "lablup/mlxcel#7") {
		t.Errorf("#7: %v, want an error naming it", err)
	}
	if _, err := e.c.Thread(ctx, testRepo, 0); err == nil {
		t.Error("#0: no error")
	}
}
