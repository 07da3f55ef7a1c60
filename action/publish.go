package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/rank"
)

// Verdicts of the publish job.
const (
	VerdictSuccess = "success" // pushed, pull request and comments written
	VerdictDraft   = "draft"   // published as a draft pull request (verification failed)
	VerdictFailure = "failure"
)

// publishFolder is where a dry run writes the GitHub side, under the step's root.
const publishFolder = "dry-run"

// publish publishes what the host jobs of this GPU job left: a profile's results folder
// through bot/publish as `perfbot publish` does (the commit on the bot branch, the pull
// request, the epic ranking comment, the status comment, check run and reaction), or
// the nightly baseline's folder as `perfbot baseline publish` does.
func (s *step) publish(ctx context.Context) error {
	commit, cfgPath, err := s.checkout(ctx)
	if err != nil {
		return err
	}
	cfg, err := job.LoadConfig(cfgPath, s.workspace, false)
	if err != nil {
		return err
	}
	folder, err := s.resultsFolder(cfg.Results.Profiles, commit)
	if err != nil {
		nightly := filepath.Join(s.root, filepath.FromSlash(cfg.Results.Benchmarks))
		if found, _ := filepath.Glob(filepath.Join(nightly, "*"+job.NightlySuffix)); len(found) == 0 {
			return fmt.Errorf("%w; nor a nightly baseline in %s: run job: profile or job: bench earlier in the same job", err, nightly)
		}
		return s.publishBaseline(ctx, cfg, nightly)
	}
	rules, err := loadRules(s.workspace, cfg.Rules)
	if err != nil {
		return err
	}
	po := publish.Options{
		ResultsDir: folder, RepoDir: s.workspace, Config: cfg, Base: commit, Repo: s.repo, ServerURL: s.serverURL,
		CheckRunID: s.in.CheckRunID, StatusCommentID: s.in.StatusCommentID, TriggerCommentID: s.in.TriggerCommentID,
		Issue: s.eventIssue(), Epic: s.in.Epic,
	}
	var c *gh.Client
	if po.DryRunDir, c, po.GitToken, err = s.destination(ctx); err != nil {
		return err
	}
	if c != nil {
		po.GH = c
	}
	var sum publish.Summary
	perr := s.rt.Quiet("perfbot: publish", func(w io.Writer) error {
		var err error
		sum, err = publish.Publish(ctx, po)
		logPublished(w, sum.Results, sum.Git, sum.PR)
		return err
	})

	verdict := VerdictSuccess
	switch {
	case perr != nil || !sum.OK():
		verdict = VerdictFailure
	case sum.Draft:
		verdict = VerdictDraft
	}
	for _, why := range sum.Why {
		s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: draft pull request", Message: why})
	}
	for _, sk := range sum.Skipped {
		s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: file not committed",
			Message: sk + " in the results folder is not a results file perfbot commits; it stays out of the pull request"})
	}
	var rankJSON []byte
	errs := []error{perr}
	if len(sum.Runs) > 0 {
		rk, err := rank.DirWith(folder, rules, rank.Options{Headline: rank.HeadlineOf(cfg.SamplingTags)})
		if err == nil {
			rankJSON, err = rk.JSON()
		}
		errs = append(errs, err)
	}
	errs = append(errs, s.setOutputs("results-dir", folder, "report-path", sum.Report, "pr-url", sum.PR.URL,
		"pr-operation", sum.PR.Action, "ranking", string(rankJSON), "verdict", verdict))
	if sum.StepSummary != "" {
		errs = append(errs, s.rt.Summary(sum.StepSummary))
	}
	return errors.Join(errs...)
}

// destination is where publishing goes: a dry-run folder, or GitHub through a client
// with the token git pushes with (an App's token opens a pull request whose CI runs).
func (s *step) destination(ctx context.Context) (dryRun string, c *gh.Client, gitToken string, err error) {
	if s.in.DryRun {
		return filepath.Join(s.root, publishFolder), nil, "", nil
	}
	if s.repo.Owner == "" {
		return "", nil, "", errors.New("GITHUB_REPOSITORY is not set: publish needs the repository to open the pull request in (or set dry-run: true)")
	}
	if c, err = s.client(ctx, s.repo); err != nil {
		return "", nil, "", err
	}
	if gitToken, err = c.GitToken(ctx); err != nil {
		return "", nil, "", fmt.Errorf("getting a token for git: %w", err)
	}
	s.rt.Mask(gitToken)
	return "", c, gitToken, nil
}

// publishBaseline publishes the nightly baseline the bench job left: the CSVs and page
// on the baseline branch and its pull request, the one tracking comment (on the epic
// input's issue, else the config's epic), and an issue per confirmed regression.
func (s *step) publishBaseline(ctx context.Context, cfg config.Config, folder string) error {
	bo := publish.BaselineOptions{ResultsDir: folder, RepoDir: s.workspace, Config: cfg, Repo: s.repo, ServerURL: s.serverURL, Issue: s.in.Epic}
	var c *gh.Client
	var err error
	if bo.DryRunDir, c, bo.GitToken, err = s.destination(ctx); err != nil {
		return err
	}
	if c != nil {
		bo.GH = c
	}
	var sum publish.BaselineSummary
	perr := s.rt.Quiet("perfbot: publish the nightly baseline", func(w io.Writer) error {
		var err error
		sum, err = publish.PublishBaseline(ctx, bo)
		logPublished(w, sum.Stem, sum.Git, sum.PR)
		return err
	})
	verdict := VerdictSuccess
	if perr != nil || sum.Conclusion != "success" {
		verdict = VerdictFailure
	}
	errs := []error{perr, s.setOutputs("results-dir", folder, "report-path", sum.Page, "pr-url", sum.PR.URL,
		"pr-operation", sum.PR.Action, "verdict", verdict)}
	if sum.StepSummary != "" {
		errs = append(errs, s.rt.Summary(sum.StepSummary))
	}
	return errors.Join(errs...)
}

// logPublished says in the log what a publish did with the branch and the pull request.
func logPublished(w io.Writer, what string, g publish.Git, pr publish.Outcome) {
	fmt.Fprintf(w, "published %s: commit %s on %s (%s), pull request %s %s\n", what, g.Commit, g.Branch, g.Action, pr.Action, pr.URL)
}
