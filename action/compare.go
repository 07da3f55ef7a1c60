package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/abrun"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// Verdicts of a compare (the profile or bench job with base-ref).
const (
	VerdictInterrupted = "interrupted" // stopped by a signal: the partial compare is kept
)

// compare runs the compare session of base-ref (A) against the pinned commit (B)
// through runner/job, as the profile or bench job does when base-ref is set. It leaves
// the compare folder (compare.json, the CSV pair, a/ and b/ with the differences) for
// the publish job; its verdict is complete, contended (the guard refused a run more
// often than allowed), interrupted or failed.
func (s *step) compare(ctx context.Context, kind results.CompareKind) error {
	commit, cfgPath, err := s.checkout(ctx)
	if err != nil {
		return err
	}
	base, err := s.baseCommit(ctx)
	if err != nil {
		return err
	}
	var rep job.CompareReport
	what := "perfbot: " + string(kind) + " compare"
	jobErr := s.rt.Quiet(what, func(w io.Writer) error {
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
		capRuns, err := compareCap(s.in.Repeats, cfg)
		if err != nil {
			return err
		}
		o := job.CompareOptions{
			Kind: kind, Host: s.host, RepoDir: s.workspace, ShaA: base, ShaB: commit, Label: s.compareLabel(), Config: cfg,
			Models: s.in.Models, OutDir: s.root, TraceDir: filepath.Join(s.root, "traces"), Guard: g,
			Sandbox: &sb, Progress: s.progressOut(w), Cap: capRuns,
		}
		for _, tag := range s.in.Sampling {
			smp, err := results.ParseSampling(tag)
			if err != nil {
				return err
			}
			o.Sampling = append(o.Sampling, smp)
		}
		if kind == results.CompareProfile {
			if o.Rules, err = loadRules(s.workspace, cfg.Rules); err != nil {
				return err
			}
		}
		rep, err = job.Compare(ctx, o)
		return err
	})
	if errors.Is(jobErr, job.ErrBadRequest) || errors.Is(jobErr, config.ErrMissing) {
		return fmt.Errorf("the compare cannot run: %w", jobErr)
	}
	c := rep.Compare
	verdict := VerdictComplete
	switch {
	case jobErr != nil && c.State == results.SessionInterrupted:
		verdict = VerdictInterrupted
	case jobErr != nil && c.Rejected > 0 && c.State == results.SessionFailed && len(c.Runs) < c.Planned:
		verdict = VerdictContended
	case jobErr != nil:
		verdict = VerdictFailed
	}
	d := report.JobSummaryData{Job: s.in.Job + " compare", GFX: c.GFX, Date: c.Date, Commit: commit, Verdict: verdict, Folder: filepath.Base(rep.Folder)}
	d.Lines = append(d.Lines, report.Row{Label: "A (base)", Value: strs.ShortSHA(base)}, report.Row{Label: "B", Value: strs.ShortSHA(commit)},
		report.Row{Label: "runs", Value: fmt.Sprintf("%d measured, %d rejected by the guard and redone", len(c.Runs), c.Rejected)})
	for _, m := range c.Models {
		for _, r := range m.Results {
			d.Lines = append(d.Lines, report.Row{Label: m.Model + ", " + r.Metric, Value: r.Text()})
		}
	}
	if c.Rejected > 0 {
		s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: guard rejections",
			Message: fmt.Sprintf("the guard rejected %d run(s); each was redone in place (guard.log has the evidence)", c.Rejected)})
	}
	var errs []error
	if jobErr != nil {
		errs = append(errs, jobErr)
		d.Errors = append(d.Errors, jobErr.Error())
	}
	if rep.Folder != "" {
		errs = append(errs, s.setOutputs("results-dir", rep.Folder, "traces-dir", filepath.Join(s.root, "traces")))
	}
	errs = append(errs, s.setOutputs("verdict", verdict), s.summary(d))
	return errors.Join(errs...)
}

// baseCommit makes the base-ref commit present in the checkout (fetching it by SHA
// when the checkout is shallow) and returns its full SHA.
func (s *step) baseCommit(ctx context.Context) (string, error) {
	ref := s.in.BaseRef
	if _, err := s.git(ctx, "cat-file", "-e", ref+"^{commit}"); err != nil {
		if len(ref) != 40 {
			return "", fmt.Errorf("the base commit %s is not in the checkout: pass its full SHA as base-ref, or check out with fetch-depth: 0", ref)
		}
		if _, err := s.git(ctx, "fetch", "--quiet", "--no-tags", "--depth=1", "origin", ref); err != nil {
			return "", fmt.Errorf("fetching the base commit %s: %w", ref, err)
		}
	}
	full, err := s.git(ctx, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("reading the base commit %s: %w", ref, err)
	}
	if !abrun.IsFullSHA(full) {
		return "", fmt.Errorf("the base commit %s resolved to %q", ref, full)
	}
	return full, nil
}

// compareCap is the most repeats per side of a compare: the repeats input, which may
// not pass the config's limits.max_repeats, or that limit.
func compareCap(repeats int, cfg config.Config) (int, error) {
	limit := cfg.Limits.MaxRepeats
	if limit <= 0 {
		limit = config.Default().Limits.MaxRepeats
	}
	if repeats == 0 {
		return limit, nil
	}
	if repeats > limit {
		return 0, fmt.Errorf("%w: repeats %d is more than the config's limits.max_repeats (%d)", job.ErrBadRequest, repeats, limit)
	}
	return repeats, nil
}

// compareLabel names a compare's CSV pair: the label input, else pr-N when the
// command came from a pull request (the issue_comment event's), else "" - the two
// short SHAs.
func (s *step) compareLabel() string {
	if s.in.Label != "" {
		return s.in.Label
	}
	if n := s.eventPR(); n > 0 {
		return "pr-" + strconv.Itoa(n)
	}
	return ""
}
