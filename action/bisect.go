package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// bisect runs the bisection of good-ref..bad-ref (bad-ref defaults to the pinned
// commit) for the one model of the models input, through runner/job, with the pinned
// commit's config and its limits (limits.max_bisect_commits, limits.max_bisect_runs). It leaves the bisection folder (bisect.json, guard.log,
// hostinfo.json) as results-dir; its verdict is complete (the bisection ended: found,
// undecided or not reproduced), contended (the guard refused a run more often than
// allowed), interrupted (the partial bisect.json is kept) or failed.
func (s *step) bisect(ctx context.Context) error {
	commit, cfgPath, err := s.checkout(ctx)
	if err != nil {
		return err
	}
	bad := s.in.BadRef
	if bad == "" {
		bad = commit
	}
	var rep job.BisectReport
	jobErr := s.rt.Quiet("perfbot: bisect", func(w io.Writer) error {
		cfg, err := config.LoadRepo(cfgPath, s.workspace, true)
		if err != nil {
			return err
		}
		g, err := job.GuardFromConfig(cfg, s.host, s.rt.Getenv)
		if err != nil {
			return err
		}
		sb, err := sandbox.FromEnv(s.rt.Getenv)
		if err != nil {
			return err
		}
		// The config's limits, as the gate counted them: the job holds to them even
		// when it was dispatched by hand.
		rep, err = job.BisectSession(ctx, job.BisectOptions{
			Host: s.host, RepoDir: s.workspace, Good: s.in.GoodRef, Bad: bad, Config: cfg, Model: s.in.Models[0],
			Params: gate.BisectParams(cfg), MaxCommits: gate.MaxBisectCommits(cfg),
			OutDir: s.root, Guard: g, Sandbox: &sb, Progress: w,
		})
		return err
	})
	if errors.Is(jobErr, job.ErrBadRequest) || errors.Is(jobErr, config.ErrMissing) {
		return fmt.Errorf("the bisection cannot run: %w", jobErr)
	}
	b := rep.Bisect
	verdict := VerdictComplete
	switch {
	case jobErr != nil && b.State == results.SessionInterrupted:
		verdict = VerdictInterrupted
	case jobErr != nil && b.Rejected > 0 && b.State == results.SessionFailed:
		verdict = VerdictContended
	case jobErr != nil:
		verdict = VerdictFailed
	}
	d := report.JobSummaryData{Job: JobBisect, GFX: b.GFX, Date: b.Date, Commit: commit, Verdict: verdict, Folder: filepath.Base(rep.Folder)}
	d.Lines = append(d.Lines, report.Row{Label: "range", Value: fmt.Sprintf("%s..%s (%d commits)", strs.ShortSHA(s.in.GoodRef), strs.ShortSHA(bad), len(b.Commits))},
		report.Row{Label: "model", Value: b.Model},
		report.Row{Label: "runs", Value: fmt.Sprintf("%d measured, %d rejected by the guard and redone", b.Runs, b.Rejected)})
	if o := b.Outcome; o != nil {
		d.Lines = append(d.Lines, report.Row{Label: "outcome", Value: o.Outcome})
		if o.FirstBad != "" {
			d.Lines = append(d.Lines, report.Row{Label: "first bad commit", Value: fmt.Sprintf("%s (posterior %.3f)", o.FirstBad, o.Confidence)})
		}
	}
	if b.Culprit != "" || b.CulpritReason != "" {
		v := "profile A/B against its parent in " + b.Culprit + "/"
		if b.CulpritReason != "" {
			v = b.CulpritReason
		}
		d.Lines = append(d.Lines, report.Row{Label: "culprit", Value: v})
	}
	var errs []error
	if jobErr != nil {
		errs = append(errs, jobErr)
		d.Errors = append(d.Errors, jobErr.Error())
	}
	if rep.Folder != "" {
		errs = append(errs, s.setOutputs("results-dir", rep.Folder))
	}
	errs = append(errs, s.setOutputs("verdict", verdict), s.summary(d))
	return errors.Join(errs...)
}
