package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lablup/perfbot/bot/publish"
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

// publish publishes the results folder the host jobs left through bot/publish, as
// `perfbot publish` does: the commit on the bot branch, the pull request, the epic
// ranking comment, the status comment, check run and reaction.
func (s *step) publish(ctx context.Context) error {
	commit, _, cfg, folder, err := s.laterStep(ctx)
	if err != nil {
		return err
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
	if s.in.DryRun {
		po.DryRunDir = filepath.Join(s.root, publishFolder)
	} else {
		if s.repo.Owner == "" {
			return errors.New("GITHUB_REPOSITORY is not set: publish needs the repository to open the pull request in (or set dry-run: true)")
		}
		c, err := s.client(ctx, s.repo)
		if err != nil {
			return err
		}
		// git pushes as the same identity: an App's token opens a pull request whose CI
		// runs.
		if po.GitToken, err = c.GitToken(ctx); err != nil {
			return fmt.Errorf("getting a token for git: %w", err)
		}
		s.rt.Mask(po.GitToken)
		po.GH = c
	}
	var sum publish.Summary
	perr := s.rt.Quiet("perfbot: publish", func(w io.Writer) error {
		var err error
		sum, err = publish.Publish(ctx, po)
		fmt.Fprintf(w, "published %s: commit %s on %s (%s), pull request %s %s\n",
			sum.Results, sum.Git.Commit, sum.Git.Branch, sum.Git.Action, sum.PR.Action, sum.PR.URL)
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
		rk, err := rank.Dir(folder, rules)
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
