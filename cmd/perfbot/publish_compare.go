package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/config"
)

// compareFlags registers the flags of `perfbot publish --compare`.
func compareFlags(fs *flag.FlagSet, o *publishOptions) {
	fs.StringVar(&o.compare, "compare", "", "publish the A/B compare results `DIR` (compare.json and the CSV pair) instead of a profile: the CSV pair's pull request, the compare comment on --issue, the check run")
	fs.StringVar(&o.workflowRun, "workflow-run", workflowRunURL(), "`URL` of the workflow run that measured, linked from the compare comment (default: this Actions run)")
}

// workflowRunURL is this Actions run's page, "" outside Actions.
func workflowRunURL() string {
	server, repo, id := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	return strings.TrimRight(server, "/") + "/" + repo + "/actions/runs/" + id
}

// runPublishCompare is `perfbot publish --compare DIR`: publish.PublishCompare with the
// same destination and authentication as a profile's publish.
func runPublishCompare(ctx context.Context, o publishOptions, stdout, stderr io.Writer) error {
	if o.results != "" {
		return usageError("give --results (a profile) or --compare (an A/B compare), not both")
	}
	cfg, err := abPublishConfig(o, "--compare needs --repo, a clone holding A's commit")
	if err != nil {
		return err
	}
	co := publish.CompareOptions{
		Target: publish.Target{ResultsDir: o.compare, RepoDir: o.repo, Config: cfg, Branch: o.branch, BaseBranch: o.baseBranch, Remote: o.remote,
			Author: gitpub.Identity{Name: o.authorName, Email: o.authorEmail}, ServerURL: os.Getenv("GITHUB_SERVER_URL")},
		Marks:       o.marks(),
		PR:          o.issue,
		WorkflowRun: o.workflowRun,
	}
	if co.Repo, co.GitToken, co.Sink, err = publishDest(ctx, o); err != nil {
		return err
	}
	sum, perr := publish.PublishCompare(ctx, co)
	return publishDone(o, "publish", sum.StepSummary, sum, sum.Label != "", func() { printCompareSummary(stdout, sum, o.dryRun, perr != nil) }, perr, stdout, stderr)
}

// abPublishConfig checks the flags the publish of a compare and of a bisection share,
// a clone (--repo; needsRepo is the error without it) and ids that are not negative,
// and loads the config.
func abPublishConfig(o publishOptions, needsRepo string) (config.Config, error) {
	if o.repo == "" {
		return config.Config{}, usageError("%s (usage: perfbot publish %s)", needsRepo, publishUsage)
	}
	if o.checkRun < 0 || o.statusComment < 0 || o.triggerCmnt < 0 || o.issue < 0 {
		return config.Config{}, usageError("ids and issue numbers must be positive")
	}
	cfg, err := loadPublishConfig(o)
	if err != nil {
		return config.Config{}, usageError("%v", err)
	}
	return cfg, nil
}

// publishDest is where a publish writes: the repository on GitHub, the token git
// pushes with, and the sink of the other writes (GitHub, or the dry-run folder).
func publishDest(ctx context.Context, o publishOptions) (gh.Repo, string, publish.Sink, error) {
	r, c, token, err := publishTarget(ctx, o)
	if err != nil {
		return gh.Repo{}, "", nil, err
	}
	return r, token, publishSink(c, r, o.dryRun), nil
}

func printCompareSummary(w io.Writer, s publish.CompareSummary, dryRun string, failed bool) {
	var b strings.Builder
	b.WriteString(summaryHead(failed, "A/B "+s.Kind+" compare "+s.Label, "", s.DryRun, dryRun))
	fmt.Fprintf(&b, ": B %s against A %s\n", s.B, s.A)
	g := s.Git
	switch {
	case g.Error != "":
		fmt.Fprintf(&b, "  commit    not pushed: %s\n", g.Error)
	case g.Commit != "":
		fmt.Fprintf(&b, "  commit    %s on %s: %s (remote %s, pushed %t)\n", g.Commit, g.Branch, g.Action, g.Remote, g.Pushed)
	}
	for _, f := range s.Files {
		fmt.Fprintf(&b, "  file      %s\n", f)
	}
	for _, f := range s.Failing {
		fmt.Fprintf(&b, "  failing   %s\n", f)
	}
	printOutcomes(&b, 9, []outcomeRow{{"pr", s.PR}, {"comment", s.Comment}, {"status", s.Status}, {"check run", s.CheckRun}, {"reaction", s.Reaction}}, s.Notes)
	io.WriteString(w, b.String())
}
