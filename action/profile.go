package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
)

// Verdicts of the profile job.
const (
	VerdictComplete  = "complete"  // every run produced results
	VerdictPartial   = "partial"   // some runs did
	VerdictContended = "contended" // none did: the guard never found the GPU idle
	VerdictFailed    = "failed"    // none did, or the session stopped
)

// profile runs `/profile rocm`'s session on the pinned commit through runner/job, as
// `perfbot run profile` does. It fails only when no run produced results: a partial
// session is published with the failed runs named.
func (s *step) profile(ctx context.Context) error {
	if s.in.BaseRef != "" {
		return s.compare(ctx, results.CompareProfile)
	}
	_, cfgPath, err := s.checkout(ctx)
	if err != nil {
		return err
	}
	req := job.ProfileRequest{
		Host: s.host, RepoDir: s.workspace, ConfigPath: cfgPath, Models: s.in.Models, Sampling: s.in.Sampling,
		OutDir: s.root, TraceDir: filepath.Join(s.root, "traces"), Getenv: s.rt.Getenv,
	}
	var rep job.ProfileReport
	var po job.ProfileOptions
	jobErr := s.rt.Quiet("perfbot: profile session", func(w io.Writer) error {
		req.Progress = s.progressOut(w)
		var err error
		if po, err = req.Options(); err != nil {
			return err
		}
		if po.Rules, err = loadRules(s.workspace, po.Config.Rules); err != nil {
			return err
		}
		rep, err = job.Profile(ctx, po)
		return err
	})
	if errors.Is(jobErr, job.ErrBadRequest) {
		return fmt.Errorf("the request does not fit the config: %w", jobErr)
	}

	ok := 0
	for _, r := range rep.Session.Runs {
		s.annotateRun(r)
		if r.Status == results.StatusOK {
			ok++
		}
	}
	verdict := VerdictComplete
	switch {
	case jobErr != nil || len(rep.Session.Runs) == 0:
		verdict = VerdictFailed
	case ok == 0 && rep.OnlyGuardGaveUp():
		verdict = VerdictContended
	case ok == 0:
		verdict = VerdictFailed
	case ok < len(rep.Session.Runs):
		verdict = VerdictPartial
	}

	var rk *rank.Ranking
	var rankJSON []byte
	var errs []error
	if ok > 0 {
		if rk, err = rank.DirWith(rep.Folder, po.Rules, rank.Options{Headline: rank.HeadlineOf(po.Config.SamplingTags)}); err == nil {
			rankJSON, err = rk.JSON()
		}
		errs = append(errs, err)
	}
	if rep.Folder != "" {
		errs = append(errs, s.setOutputs("results-dir", rep.Folder, "traces-dir", po.TraceDir, "ranking", string(rankJSON)))
	}
	errs = append(errs, s.setOutputs("verdict", verdict))
	errs = append(errs, s.summary(jobSummary(rep, rk, verdict, jobErr)))
	if jobErr != nil {
		return errors.Join(append([]error{jobErr}, errs...)...)
	}
	if ok == 0 {
		errs = append(errs, fmt.Errorf("none of the %d runs produced results (%s): see the annotations and %s",
			len(rep.Session.Runs), verdict, filepath.Join(rep.Folder, results.SessionFile)))
	}
	return errors.Join(errs...)
}

// loadRules reads the config's rules file from the checkout (nil: perfbot's own).
func loadRules(workspace, rel string) (*attrib.Rules, error) {
	if rel == "" {
		return attrib.Default(), nil
	}
	p, err := insideCheckout(workspace, rel)
	if err != nil {
		return nil, fmt.Errorf("the config's rules file: %w", err)
	}
	if p == "" {
		return nil, fmt.Errorf("the config's rules file %s is not in the checkout", rel)
	}
	return attrib.Load(p)
}

// annotateRun turns a run that lost attempts or produced nothing into an annotation.
func (s *step) annotateRun(r results.RunRecord) {
	title := "perfbot: " + r.Name
	switch r.Status {
	case results.StatusOK, results.StatusRunning:
	case results.StatusNotRun:
		s.rt.Annotate(Annotation{Level: Warning, Title: title + " skipped", Message: orStatus(r)})
	case results.StatusGuardGaveUp:
		s.rt.Annotate(Annotation{Level: Error, Title: title + ": the GPU guard gave up", Message: orStatus(r)})
	default:
		s.rt.Annotate(Annotation{Level: Error, Title: title + " " + strings.ReplaceAll(string(r.Status), "_", " "), Message: orStatus(r)})
	}
	for _, ph := range []*results.Phase{r.Plain, r.Profiled} {
		if ph != nil && ph.Attempts > 1 {
			s.rt.Annotate(Annotation{Level: Warning, Title: title + ": guard rejections",
				Message: fmt.Sprintf("%s: the guard rejected %d attempt(s) because another GPU tenant or a compiler was seen; the run was repeated (guard.log has the evidence)",
					ph.Label, ph.Attempts-1)})
		}
	}
}

func orStatus(r results.RunRecord) string { return orText(r.Reason, string(r.Status)) }

// jobSummary is the step summary of a profile session: the headline figures of each
// run, the runs without results and the ranked port order.
func jobSummary(rep job.ProfileReport, rk *rank.Ranking, verdict string, jobErr error) report.JobSummaryData {
	sess := rep.Session
	d := report.JobSummaryData{Job: JobProfile, GFX: sess.GFX, Date: sess.Date, Commit: sess.Commit, Verdict: verdict, Folder: sess.Folder}
	for _, r := range sess.Runs {
		if r.Status == results.StatusOK {
			sum, err := results.ReadSummary(filepath.Join(rep.Folder, r.Name+"_summary.json"))
			if err == nil {
				d.Runs = append(d.Runs, sum)
				continue
			}
			d.Errors = append(d.Errors, err.Error())
		}
		d.FailedRuns = append(d.FailedRuns, report.RunState{Name: r.Name, Status: string(r.Status), Detail: r.Reason})
	}
	if rk != nil {
		d.RankingMD = rk.Markdown()
	}
	if jobErr != nil {
		d.Errors = append(d.Errors, jobErr.Error())
	}
	return d
}

// summary renders and appends a host job's step summary.
func (s *step) summary(d report.JobSummaryData) error {
	md, err := report.Render(report.JobSummary, d)
	if err != nil {
		return err
	}
	return s.rt.Summary(md)
}

// laterStep is where gemm-tests and publish start: the pinned commit checked out, the
// config, and the results folder the profile step left for that commit.
func (s *step) laterStep(ctx context.Context) (commit, cfgPath string, cfg config.Config, folder string, err error) {
	if commit, cfgPath, err = s.checkout(ctx); err != nil {
		return
	}
	if cfg, err = config.LoadRepo(cfgPath, s.workspace, false); err != nil {
		return
	}
	folder, err = s.resultsFolder(cfg.Results.Profiles, commit)
	return
}

// resultsFolder is the results folder the profile job left for the checkout's commit.
func (s *step) resultsFolder(profiles, commit string) (string, error) {
	dir := filepath.Join(s.root, filepath.FromSlash(profiles))
	short := strs.ShortSHA(commit)
	matches, _ := filepath.Glob(filepath.Join(dir, "*_"+short))
	var folders []string
	for _, m := range matches {
		if fi, err := os.Stat(filepath.Join(m, results.SessionFile)); err == nil && fi.Mode().IsRegular() {
			folders = append(folders, m)
		}
	}
	switch len(folders) {
	case 1:
		return folders[0], nil
	case 0:
		return "", fmt.Errorf("no results folder of commit %s in %s: run job: profile earlier in the same job", short, dir)
	}
	return "", fmt.Errorf("%d results folders of commit %s in %s: keep one", len(folders), short, dir)
}
