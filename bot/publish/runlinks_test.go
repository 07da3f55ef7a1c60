package publish

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lablup/perfbot/bot/report"
)

// The workflow run's links (Options.RunLinks) end up in the final status comment and
// the check run's summary.
func TestRunLinks(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed, trace: true})
	out := filepath.Join(t.TempDir(), "dry")
	run := "https://github.com/lablup/mlxcel/actions/runs/77"
	o := Options{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out), CheckRunID: 5, StatusCommentID: 6,
		RunLinks: []report.Link{{Text: "workflow run", URL: run}, {Text: "traces artifact", URL: run + "/artifacts/9"}}}
	if _, err := Publish(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	wantIn(t, readFile(t, filepath.Join(out, DryStatus)), "[workflow run]("+run+")", "[traces artifact]("+run+"/artifacts/9)")
	wantIn(t, readFile(t, filepath.Join(out, DryCheckRun)), "workflow run: "+run, "traces artifact: "+run+"/artifacts/9")
}
