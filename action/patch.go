package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/patch/patchrun"
	"github.com/lablup/perfbot/runner/results"
)

// Verdicts of the patch job, besides draft (the patch was refused or verification
// failed: publish opens a draft) and failed (the job could not run).
const (
	VerdictReady   = "ready"   // the patch applied and its verification passed
	VerdictSkipped = "skipped" // no numeric tests' outcome in the results folder: nothing to patch
)

// maxGemmTests bounds gemm_tests.json (three tests with a detail each).
const maxGemmTests = 1 << 20

// patchJob prepares the grouped_gemm gate patch on the GPU runner, after gemm-tests in
// the same job: it applies the numeric tests' outcome to a scratch worktree of the
// pinned commit (never the workflow's checkout), runs the checker and the configured
// verification there, and writes the outcome as data into the results folder
// (gemm_patch.json), for a publish job that runs nothing of the repository. A refused
// patch or a failed verification is an outcome (publish opens a draft), not a failed
// job.
func (s *step) patchJob(ctx context.Context) error {
	commit, _, cfg, folder, err := s.laterStep(ctx)
	if err != nil {
		return err
	}
	d := report.JobSummaryData{Job: JobPatch, Commit: commit, Folder: filepath.Base(folder)}
	b, err := infile.ReadFile(filepath.Join(folder, results.GemmTestsFile), maxGemmTests)
	if errors.Is(err, fs.ErrNotExist) {
		msg := fmt.Sprintf("the results folder has no %s (the gemm-tests step did not run or left no outcome): nothing to patch, no %s written", results.GemmTestsFile, patch.PreparedFile)
		s.rt.Annotate(Annotation{Level: Notice, Title: "perfbot: no grouped_gemm patch", Message: msg})
		d.Verdict = VerdictSkipped
		d.Lines = []report.Row{{Label: "patch", Value: msg}}
		return errors.Join(s.setOutputs("results-dir", folder, "verdict", VerdictSkipped), s.summary(d))
	}
	var prep patch.Prepared
	jobErr := func() error {
		if err != nil {
			return fmt.Errorf("reading the numeric tests' outcome: %w", err)
		}
		outcome, err := patch.ParseOutcome(b)
		if err != nil {
			return fmt.Errorf("%s: %w", results.GemmTestsFile, err)
		}
		return s.rt.Quiet("perfbot: grouped_gemm gate patch and verification", func(w io.Writer) error {
			fmt.Fprintf(w, "applying the %s decision to a scratch worktree of %s\n", outcome.Decide(), commit)
			prep, err = patchrun.Prepare(ctx, patchrun.PrepareOptions{RepoDir: s.workspace, Commit: commit, Outcome: outcome,
				Verify: cfg.Verify, ScratchDir: s.rt.Getenv("RUNNER_TEMP")})
			if err != nil {
				return err
			}
			if prep.Report != nil {
				io.WriteString(w, prep.Report.Markdown())
			}
			io.WriteString(w, patch.VerifyMarkdown(prep.Verify))
			return prep.Write(filepath.Join(folder, patch.PreparedFile))
		})
	}()
	verdict := VerdictFailed
	if jobErr == nil {
		verdict = VerdictReady
		if prep.Error != "" {
			verdict = VerdictDraft
			s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: the grouped_gemm gate patch was not applied", Message: prep.Error})
		}
		for _, v := range prep.Verify {
			if !v.Passed() {
				verdict = VerdictDraft
				s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: verification failed", Message: strings.Join(v.Command, " ") + ": " + exitText(v)})
			}
		}
		d.Lines = append(d.Lines, report.Row{Label: "decision", Value: string(prep.Decision)})
		if prep.Report != nil {
			var changed []string
			for _, f := range prep.Files {
				changed = append(changed, f.Path)
			}
			d.Lines = append(d.Lines, report.Row{Label: "changed", Value: orText(strings.Join(changed, ", "), "nothing")})
			if c := prep.Report.Checker; c != nil {
				d.Lines = append(d.Lines, report.Row{Label: "checker", Value: c.Verdict})
			}
		}
		for _, v := range prep.Verify {
			result := "passed"
			if !v.Passed() {
				result = "failed (" + exitText(v) + ")"
			}
			d.Lines = append(d.Lines, report.Row{Label: strings.Join(v.Command, " "), Value: result})
		}
	} else {
		d.Errors = []string{jobErr.Error()}
	}
	d.Verdict = verdict
	errs := []error{jobErr, s.setOutputs("results-dir", folder, "verdict", verdict), s.summary(d)}
	return errors.Join(errs...)
}

func exitText(v patch.VerifyResult) string {
	if v.Err != "" {
		return v.Err
	}
	return fmt.Sprintf("exit %d", v.ExitCode)
}
