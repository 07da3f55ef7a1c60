package publish

import (
	"path/filepath"
	"testing"

	"github.com/lablup/perfbot/bot/report"
)

// The workflow run's links (Options.RunLinks) end up in the final status comment and
// the check run's summary.
func TestRunLinks(t *testing.T) {
	t.Parallel()
	const run = "https://github.com/lablup/mlxcel/actions/runs/77"
	_, _, out := dryProfile(t, profile{date: "2026-09-30", tests: allPassed, trace: true}, true, func(o *Options) {
		o.CheckRunID, o.StatusCommentID = 5, 6
		o.RunLinks = []report.Link{{Text: "workflow run", URL: run}, {Text: "traces artifact", URL: run + "/artifacts/9"}}
	})
	wantIn(t, readFile(t, filepath.Join(out, DryStatus)), "[workflow run]("+run+")", "[traces artifact]("+run+"/artifacts/9)")
	wantIn(t, readFile(t, filepath.Join(out, DryCheckRun)), "workflow run: "+run, "traces artifact: "+run+"/artifacts/9")
}
