package action

import (
	"context"
	"testing"

	"github.com/lablup/perfbot/bot/gh"
)

// TestRunLinksAtTheirEdges: a run id is linked from 1 up; 0, a negative id or one that
// is no number links nothing (a run that does not exist), and neither does a step
// without a repository. Without GITHUB_SERVER_URL the run is on github.com.
func TestRunLinksAtTheirEdges(t *testing.T) {
	t.Parallel()
	e := newStepEnv(t, nil)
	rt := e.runtime(t)
	ctx := context.Background()
	st := &step{rt: rt, repo: gh.Repo{Owner: "lablup", Name: "mlxcel"}}
	for _, id := range []string{"0", "-1", "-9223372036854775808", "1e3", " 7", "9223372036854775808"} {
		e.vars["GITHUB_RUN_ID"] = id
		if got := st.runLinks(ctx, nil); got != nil {
			t.Errorf("GITHUB_RUN_ID %q: links %+v, want none", id, got)
		}
	}
	e.vars["GITHUB_RUN_ID"] = "1"
	got := st.runLinks(ctx, nil)
	if len(got) != 1 || got[0].URL != "https://github.com/lablup/mlxcel/actions/runs/1" {
		t.Errorf("GITHUB_RUN_ID 1 without a server URL: %+v, want the run on github.com", got)
	}
	st.repo = gh.Repo{}
	if got := st.runLinks(ctx, nil); got != nil {
		t.Errorf("no repository: links %+v, want none", got)
	}
}
