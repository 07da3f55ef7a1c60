package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/results"
)

// VerdictRegression is the bench job's verdict when the comparison confirmed a
// regression (besides complete, contended and failed).
const VerdictRegression = "regression"

// bench runs the nightly baseline on the checkout through runner/job, as `perfbot run
// bench` does: both harness sweeps under the guard, the CSV checks, the comparison with
// the nightly history and the re-measures. It leaves the folder for the publish job.
func (s *step) bench(ctx context.Context) error {
	if s.in.BaseRef != "" {
		return s.compare(ctx, results.CompareBench)
	}
	commit, cfgPath, err := s.checkout(ctx)
	if err != nil {
		return err
	}
	var rep job.BenchReport
	jobErr := s.rt.Quiet("perfbot: nightly baseline", func(w io.Writer) error {
		cfg, err := config.LoadRepo(cfgPath, s.workspace, true)
		if err != nil {
			return err
		}
		g, err := job.GuardFromConfig(cfg, s.host, s.rt.Getenv)
		if err != nil {
			return err
		}
		rep, err = job.Bench(ctx, job.BenchOptions{
			Host: s.host, RepoDir: s.workspace, Config: cfg, OutDir: s.root, Guard: g,
			Rules: baseline.DefaultRules(), Progress: s.progressOut(w),
		})
		return err
	})
	if errors.Is(jobErr, job.ErrBadRequest) || errors.Is(jobErr, config.ErrMissing) {
		return fmt.Errorf("the checkout cannot be benchmarked: %w", jobErr)
	}

	m := rep.Manifest
	problems, failed := rep.HarnessProblems(), rep.Failed()
	for _, p := range m.Problems {
		level := Warning
		if p.Severity == benchcsv.Error {
			level = Error
		}
		s.rt.Annotate(Annotation{Level: level, Title: "perfbot: " + p.File + " (" + p.Kind + ")", Message: p.Text})
	}
	for _, sw := range m.Sweeps {
		if sw.Status != results.SweepOK {
			st := string(sw.Status)
			s.rt.Annotate(Annotation{Level: Error, Title: "perfbot: the " + sw.Name + " sweep " + strings.ReplaceAll(st, "_", " "), Message: orText(sw.Reason, st)})
		}
	}
	for _, t := range m.Tenants {
		s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: guard rejections", Message: t})
	}
	regressions := 0
	d := report.JobSummaryData{Job: JobBench, GFX: m.GFX, Date: m.Date, Commit: orText(m.Commit, commit), Folder: filepath.Base(rep.Folder)}
	for _, sw := range m.Sweeps {
		d.Lines = append(d.Lines, report.Row{Label: sw.Name + " sweep", Value: string(sw.Status) + csvList(sw.CSVs)})
	}
	if c := m.Comparison; c != nil {
		for _, r := range c.Models {
			d.Lines = append(d.Lines, report.Row{Label: r.Model, Value: r.Text})
			if r.Verdict == baseline.Regression {
				regressions++
				s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: regression of " + r.Model, Message: r.Text})
			}
		}
	}

	for _, nb := range m.Bisects {
		d.Lines = append(d.Lines, report.Row{Label: "bisection of " + nb.Model, Value: orText(nb.Reason, nb.Dir+"/")})
	}

	verdict := VerdictComplete
	switch {
	case jobErr != nil || len(problems) > 0 || len(failed) > 0 && !rep.OnlyGuardGaveUp():
		verdict = VerdictFailed
	case len(failed) > 0:
		verdict = VerdictContended
	case regressions > 0:
		verdict = VerdictRegression
	}
	d.Verdict = verdict
	var errs []error
	if jobErr != nil {
		errs = append(errs, jobErr)
		d.Errors = append(d.Errors, jobErr.Error())
	}
	if rep.Folder != "" {
		errs = append(errs, s.setOutputs("results-dir", rep.Folder))
	}
	errs = append(errs, s.setOutputs("verdict", verdict), s.summary(d))
	// As `perfbot run bench`: a harness problem or a sweep without its result fails.
	if jobErr == nil && len(problems) > 0 {
		errs = append(errs, fmt.Errorf("%d harness problem(s) in the CSVs, first: %s", len(problems), problems[0].Text))
	}
	if jobErr == nil && len(failed) > 0 {
		errs = append(errs, fmt.Errorf("%s did not give a result", strings.Join(failed, ", ")))
	}
	return errors.Join(errs...)
}

func orText(s, alt string) string {
	if s != "" {
		return s
	}
	return alt
}

func csvList(csvs []string) string {
	if len(csvs) == 0 {
		return ""
	}
	return ": " + strings.Join(csvs, ", ")
}
