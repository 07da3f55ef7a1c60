package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

// gemmTests runs the three grouped_gemm numeric tests on the pinned commit through
// runner/job, as `perfbot run gemm-tests` does, and leaves their outcome in the results
// folder of the profile job for the publish job. A failed test is an outcome (the
// patch records it), not a failed job.
func (s *step) gemmTests(ctx context.Context) error {
	commit, cfgPath, _, folder, err := s.laterStep(ctx)
	if err != nil {
		return err
	}
	req := job.GemmRequest{
		Host: s.host, RepoDir: s.workspace, ConfigPath: cfgPath, GuardLog: filepath.Join(folder, results.GuardLogFile),
		LogDir: filepath.Join(s.root, "traces", "gemm-tests"), Getenv: s.rt.Getenv,
	}
	var outcome patch.Outcome
	jobErr := s.rt.Quiet("perfbot: grouped_gemm numeric tests", func(w io.Writer) error {
		req.Progress = w
		o, err := req.Options()
		if err != nil {
			return err
		}
		outcome, err = job.GemmTests(ctx, o)
		return err
	})
	var errs []error
	written := outcome.OverlayCommit != "" && outcome.Validate() == nil
	if written {
		errs = append(errs, job.WriteOutcome(filepath.Join(folder, results.GemmTestsFile), outcome))
		for _, t := range outcome.Tests {
			if t.Outcome != patch.Passed {
				s.rt.Annotate(Annotation{Level: Error, Title: fmt.Sprintf("perfbot: %s %s", t.Name, t.Outcome), Message: t.Detail})
			}
		}
	}
	verdict := VerdictFailed
	if written && jobErr == nil {
		verdict = string(outcome.Decide())
	}
	errs = append(errs, s.setOutputs("results-dir", folder, "verdict", verdict))
	d := report.JobSummaryData{Job: JobGemmTests, Commit: commit, Verdict: verdict, Folder: filepath.Base(folder)}
	if written {
		d.Gemm = &report.Gemm{OverlayCommit: outcome.OverlayCommit, Tests: outcome.Tests, Decision: string(outcome.Decide())}
	}
	if jobErr != nil {
		d.Errors = []string{jobErr.Error()}
	}
	errs = append(errs, s.summary(d))
	return errors.Join(append([]error{jobErr}, errs...)...)
}
