package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/runner/results"
)

// isBisection says the results folder is a bisection's: it holds bisect.json.
func isBisection(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, results.BisectFile))
	return err == nil
}

// runPublishBisect is `perfbot publish --results DIR` for a bisection folder:
// publish.PublishBisect with the same destination and authentication as a profile's
// publish. Nothing is committed.
func runPublishBisect(ctx context.Context, o publishOptions, stdout, stderr io.Writer) error {
	cfg, err := abPublishConfig(o, "a bisection needs --repo, a clone holding the culprit's parent")
	if err != nil {
		return err
	}
	bo := publish.BisectOptions{
		Target: publish.Target{ResultsDir: o.results, RepoDir: o.repo, Config: cfg, Remote: o.remote, ServerURL: os.Getenv("GITHUB_SERVER_URL")},
		Marks:  o.marks(),
		Issue:  o.issue, WorkflowRun: o.workflowRun,
	}
	if bo.Repo, bo.GitToken, bo.Sink, err = publishDest(ctx, o); err != nil {
		return err
	}
	sum, perr := publish.PublishBisect(ctx, bo)
	return publishDone(o, "publish", sum.StepSummary, sum, sum.Model != "", func() { printBisectSummary(stdout, sum, o.dryRun, perr != nil) }, perr, stdout, stderr)
}

func printBisectSummary(w io.Writer, s publish.BisectSummary, dryRun string, failed bool) {
	var b strings.Builder
	b.WriteString(summaryHead(failed, "bisection of "+s.Model, "", s.DryRun, dryRun))
	fmt.Fprintf(&b, ": %s from %s to %s\n", s.Outcome, s.Good, s.Bad)
	if s.FirstBad != "" {
		fmt.Fprintf(&b, "  first bad %s\n", s.FirstBad)
	}
	printOutcomes(&b, 9, []outcomeRow{{"comment", s.Comment}, {"status", s.Status}, {"check run", s.CheckRun}, {"reaction", s.Reaction}}, s.Notes)
	io.WriteString(w, b.String())
}
