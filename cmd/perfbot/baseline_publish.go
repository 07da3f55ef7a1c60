package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/runner/baseline"
)

const baselinePublishUsage = `--results DIR --repo DIR [--dry-run DIR] [--config FILE] [--github-repo OWNER/NAME] [--issue N]
           [--branch NAME] [--base-branch NAME] [--remote NAME] [--max-spread PCT] [--bot-login LOGIN]
           [--author-name NAME] [--author-email EMAIL] [--app-id N --installation-id N --app-key-file FILE] [--json]

examples:
  perfbot baseline publish --results out/benchmarks --repo . --dry-run /tmp/nightly
  perfbot baseline publish --results out/benchmarks --repo . --github-repo lablup/mlxcel`

// runBaselinePublish is `perfbot baseline publish`: the nightly's PR, tracking comment
// and regression issues, with the same authentication as `perfbot publish`.
func runBaselinePublish(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o publishOptions
	fs := newFlags("baseline publish", baselinePublishUsage, stderr)
	fs.StringVar(&o.results, "results", "", "the `DIR` perfbot run bench wrote: <out>/<results.benchmarks>, with one *.nightly.json")
	fs.StringVar(&o.repo, "repo", "", "clone of the target repository holding the measured commit (its checkout is not touched)")
	fs.StringVar(&o.dryRun, "dry-run", "", "write the pull request, tracking comment and regression issues as files into this folder instead of GitHub; push only to a remote on this machine")
	fs.StringVar(&o.configPath, "config", "", "perfbot.yml (default: <repo>/.github/perfbot.yml when present, else the defaults)")
	fs.StringVar(&o.branch, "branch", "", "bot branch (default: branches.baseline of the configuration)")
	targetFlags(fs, &o)
	fs.IntVar(&o.issue, "issue", 0, "issue that carries the tracking comment (default: epic of the configuration)")
	maxSpread := fs.Float64("max-spread", baseline.DefaultMaxSpreadPct, "widest spread of a runtime's decode repeats, in `PCT` of their median, that still gives an mlxcel / mlx-lm ratio")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if o.results == "" || o.repo == "" {
		return usageError("--results and --repo are required (usage: perfbot baseline publish %s)", baselinePublishUsage)
	}
	if o.issue < 0 {
		return usageError("--issue must be positive")
	}
	if !(*maxSpread > 0) {
		return usageError("--max-spread must be a positive percentage")
	}
	cfg, err := loadPublishConfig(o)
	if err != nil {
		return usageError("%v", err)
	}
	bo := publish.BaselineOptions{
		Target: publish.Target{
			ResultsDir: o.results, RepoDir: o.repo, Config: cfg, Branch: o.branch, BaseBranch: o.baseBranch,
			Remote: o.remote,
			Author: gitpub.Identity{Name: o.authorName, Email: o.authorEmail}, ServerURL: os.Getenv("GITHUB_SERVER_URL"),
		},
		Issue: o.issue, MaxSpreadPct: *maxSpread,
	}
	var c *gh.Client
	if bo.Repo, c, bo.GitToken, err = publishTarget(ctx, o); err != nil {
		return err
	}
	bo.Sink = publishSink(c, bo.Repo, o.dryRun)
	sum, perr := publish.PublishBaseline(ctx, bo)
	return publishDone(o, "baseline publish", sum.StepSummary, sum, sum.Stem != "", func() { printBaselineSummary(stdout, sum, o.dryRun, perr != nil) }, perr, stdout, stderr)
}

func printBaselineSummary(w io.Writer, s publish.BaselineSummary, dryRun string, failed bool) {
	var b strings.Builder
	b.WriteString(summaryHead(failed, s.Stem, s.Date, s.DryRun, dryRun) + "\n")
	if g := s.Git; g.Error != "" {
		fmt.Fprintf(&b, "  commit     not pushed: %s\n", g.Error)
	} else if g.Commit != "" {
		fmt.Fprintf(&b, "  commit     %s on %s: %s (remote %s, pushed %t)\n", g.Commit, g.Branch, g.Action, g.Remote, g.Pushed)
	}
	if s.Page != "" {
		fmt.Fprintf(&b, "  page       %s\n", s.Page)
	}
	if line := trendLine(s.Trend); line != "" {
		fmt.Fprintf(&b, "  trend      %s\n", line)
	}
	rows := []outcomeRow{{"pr", s.PR}, {"tracking", s.Tracking}}
	for _, r := range s.Regressions {
		rows = append(rows, outcomeRow{"regression", r})
	}
	printOutcomes(&b, 10, rows, s.Notes)
	io.WriteString(w, b.String())
}

// trendLine says where the trend page went, "" before the planning got to it.
func trendLine(t publish.TrendOutcome) string {
	switch {
	case t.Publish == "":
		return ""
	case t.Skipped != "":
		return "none: " + t.Skipped
	case t.Error != "":
		return fmt.Sprintf("%s on %s: failed: %s", t.Page, t.Branch, t.Error)
	case t.Branch != "":
		line := fmt.Sprintf("%s on %s: %s", t.Page, t.Branch, t.Action)
		if t.Commit != "" {
			line += " " + t.Commit
		}
		return line + ", served at " + t.URL
	}
	return t.Page + " in the baseline commit"
}
