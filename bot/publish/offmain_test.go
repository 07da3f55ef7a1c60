package publish

import (
	"context"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
)

// A profile of a pull request's head, published from a workflow run: the results pull
// request links the run's traces artifact by URL (not "the workflow artifacts"), and
// the check run, the step summary and the status comment say, as the title does, that
// the commit is not on main and the patch is not committed. Without the artifact the
// body links the run whose artifacts hold the traces.
func TestPublishOffMainLinks(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	w := newWorld(t, tg)
	ctx := context.Background()
	head := w.pull(t, 1900, "feature-a")
	ask := w.ask(t, 1900)
	res := layPrepared(t, tg.at(head), profile{date: "2026-09-30", tests: allPassed})
	cr, err := w.c.CreateCheckRun(ctx, testRepo, gh.CheckRunSpec{Name: "perfbot", HeadSHA: head, ExternalID: "perfbot-request-7", Title: "Queued", Summary: "queued"})
	if err != nil {
		t.Fatal(err)
	}
	status, err := w.c.CreateComment(ctx, testRepo, 1900, "<!-- perfbot:status -->\n**/profile rocm**: in progress.\n")
	if err != nil {
		t.Fatal(err)
	}
	run := "https://github.com/lablup/mlxcel/actions/runs/77"
	traces := run + "/artifacts/9"
	o := w.options(res, 1900, ask)
	o.CheckRunID, o.StatusCommentID, o.Command = cr.ID, status.ID, "/profile rocm"
	o.RunLinks = []report.Link{{Text: RunLinkText, URL: run}, {Text: TracesLinkText, URL: traces}}
	sum, err := Publish(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	pr := botPulls(w)["perfbot/rocm-profile-pr-1900"]
	wantIn(t, pr.Body, "the full traces are in the [traces artifact]("+traces+")")
	if strings.Contains(pr.Body, "in the workflow artifacts") {
		t.Errorf("the body still points at the workflow artifacts:\n%s", pr.Body)
	}
	offMain := "**Measured at `" + head[:8] + "`, the head of #1900, not yet on `main`**; the patch is not committed."
	wantIn(t, sum.StepSummary, offMain)
	var output string
	for _, c := range w.s.CheckRuns() {
		if c.ID == cr.ID {
			output = c.Summary
		}
	}
	wantIn(t, output, offMain, "traces artifact: "+traces)
	cm, ok := w.s.Comment(status.ID)
	if !ok {
		t.Fatal("the status comment is gone")
	}
	wantIn(t, cm.Body, "**/profile rocm**: done.", "Measured at "+head[:8]+", the head of #1900, not yet on main; the patch is not committed.")

	// The run without a traces artifact: the body links the run.
	o.RunLinks = o.RunLinks[:1]
	if _, err := Publish(ctx, o); err != nil {
		t.Fatal(err)
	}
	pr = botPulls(w)["perfbot/rocm-profile-pr-1900"]
	wantIn(t, pr.Body, "the full traces are among the artifacts of the [workflow run]("+run+")")
}
