package publish

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/results"
)

// DryBisectComment is the file a dry run of PublishBisect writes for the bisection
// comment (with status-comment.md, check-run.md, step-summary.md and summary.json); a
// nightly's regression issue gets its bisection comment as
// regression-<model>_<date>.bisect.md (dryBisect).
const DryBisectComment = "bisect-comment.md"

const dryBisect = ".bisect.md"

// BisectOptions say what bisection to publish and where: a hand-started one
// (`/bench rocm bisect good=SHA bad=SHA`), whose outcome goes to the issue or pull
// request that asked. Target's ResultsDir is the bisection folder the GPU job wrote
// (bisect.json, the guard's log, the host facts and, when a culprit was found, its
// profile A/B in culprit/); its RepoDir is a clone holding the culprit's parent, whose
// attribution rules the culprit's profiles are diffed with. Nothing is committed:
// Target's Branch, BaseBranch and Author are not used.
type BisectOptions struct {
	Target
	// Issue is the issue or pull request the bisection was asked on: it gets the
	// bisection comment. 0 skips the comment.
	Issue int
	Marks
	// WorkflowRun is the URL of the workflow run that measured; "" when unknown.
	WorkflowRun string
	// Command is the command as the status comment names it; "" takes
	// "/bench rocm bisect".
	Command string
}

// BisectSummary says what PublishBisect did; a dry run writes it as summary.json.
type BisectSummary struct {
	DryRun   bool    `json:"dry_run"`
	Results  string  `json:"results"`
	Model    string  `json:"model"`
	Good     string  `json:"good"`
	Bad      string  `json:"bad"`
	Outcome  string  `json:"outcome"`
	FirstBad string  `json:"first_bad,omitempty"`
	Comment  Outcome `json:"bisect_comment"`
	// Reported's CheckRun is the check run's completion: neutral, or failure when
	// publishing failed.
	Reported
	Ending
}

func (o BisectOptions) normalize() (BisectOptions, error) {
	return checked(o, "publishing the bisection", o.check("run bisect"))
}

// BisectPlan is the plan of a hand-started bisection's publication.
type BisectPlan struct {
	Plan
	o   BisectOptions
	sum BisectSummary
	b   *bisectView
}

// PublishBisect publishes a bisection asked for by hand: its outcome (the first bad
// commit, its pull request, the confidence, the runs used, and the culprit's profile
// A/B against its parent) as one comment on the issue or pull request that asked,
// edited in place, then the status comment, the check run and the reaction:
// PlanBisect, then its effects through o.Sink. Nothing is committed.
func PublishBisect(ctx context.Context, o BisectOptions) (BisectSummary, error) {
	return publish[BisectOptions, BisectSummary](ctx, o, func(o BisectOptions) *BisectPlan { return &BisectPlan{o: o} }, PlanBisect)
}

// PlanBisect plans the publication of a bisection folder (o normalized): it reads and
// checks bisect.json and the culprit's profile A/B, asks GitHub for the first bad
// commit's pull requests, and diffs the culprit's two profiles with its parent's rules.
// It writes nothing but what it plans; a failure is the plan's Err.
func PlanBisect(ctx context.Context, o BisectOptions) *BisectPlan {
	p := &BisectPlan{o: o, sum: BisectSummary{DryRun: o.Sink.DryRun(), Results: o.ResultsDir}}
	var notes []string
	bf, err := readBisectFolder(o.ResultsDir)
	if err == nil {
		p.b, notes = o.bisectView(ctx, bf)
		d := bf.doc
		p.sum.Model, p.sum.Good, p.sum.Bad, p.sum.Outcome = d.Model, d.Good, d.Bad, p.b.data.Outcome
		if d.Outcome != nil {
			p.sum.FirstBad = d.Outcome.FirstBad
		}
		if o.WorkflowRun != "" {
			p.b.in.WorkflowRun = &report.Link{Text: "workflow run", URL: o.WorkflowRun}
		}
		// Render once before anything is written.
		_, err = p.b.render(nil)
	}
	pl := o.plan("", "", notes, err)
	if err == nil {
		pl.Steps = append(pl.Steps, CommentStep{Issue: o.Issue, Marker: p.b.data.Marker, File: DryBisectComment, What: "bisection comment",
			Skip: unless(o.Issue > 0, "no issue or pull request to comment on"), Body: p.commentBody, Failed: markedCommentFailed("bisection comment", o.Issue)})
	}
	pl.End = o.end(p)
	p.Plan = pl
	return p
}

func (p *BisectPlan) summary(a *Applied) BisectSummary {
	s := p.sum
	s.DryRun = a.DryRun
	s.Comment, s.Reported = a.Comment.Outcome, a.Reported
	s.Ending = ending(a)
	return s
}

func (p *BisectPlan) commentBody(_ string, _ Links) (string, []string, error) {
	md, err := p.b.render(nil)
	if err != nil {
		return "", nil, err
	}
	md, cut := fitComment("bisection comment", md, p.o.Config.Limits.CommentMaxBytes)
	return md, notes(cut), nil
}

func (p *BisectPlan) command() string {
	if p.o.Command != "" {
		return p.o.Command
	}
	return "/bench rocm bisect"
}

func (p *BisectPlan) statusBody(a *Applied) (string, error) {
	state := "done"
	if a.Failed() {
		state = "failed"
	}
	var steps []report.Step
	var links []report.Link
	detail := ""
	if p.b != nil {
		detail = p.b.data.Headline
		if st, l := commentStep(a, "bisection comment", p.o.Issue); st.Outcome != "" {
			steps = append(steps, st)
			if l != nil {
				links = append(links, *l)
			}
		}
	}
	return report.Render(report.Status, report.StatusData{State: state, Command: p.command(), Detail: detail, Links: links, Steps: steps, Errors: a.ErrorTexts()})
}

// checkOutput completes the check run: neutral (a bisection passes or fails nothing),
// failure when publishing failed.
func (p *BisectPlan) checkOutput(a *Applied) (gh.CheckOutput, error) {
	body, err := p.stepSummary(a)
	if err != nil {
		return gh.CheckOutput{}, err
	}
	out := gh.CheckOutput{Conclusion: "neutral", Title: "Bisection published", Summary: gh.Truncate(body, report.MaxCheckRunSummary)}
	if p.b != nil {
		out.Title = "Bisection: " + p.b.data.Outcome
	}
	if a.Failed() {
		out.Conclusion, out.Title = "failure", "Publishing the bisection failed"
	}
	out.DetailsURL = a.Comment.Link
	return out, nil
}

func (p *BisectPlan) stepSummary(a *Applied) (string, error) {
	if p.b != nil && p.Plan.Err == nil {
		return p.b.render(a.ErrorTexts())
	}
	md := "## ROCm bisection: publishing failed\n\n"
	for _, e := range a.ErrorTexts() {
		md += "- " + report.Text(e) + "\n"
	}
	return md, nil
}

// markedCommentFailed says what a failure to read or write the marked comment what on
// issue n is, in the summary and in the errors.
func markedCommentFailed(what string, n int) func(stage string, w Written, err error) (Outcome, error) {
	return func(stage string, w Written, err error) (Outcome, error) {
		verb, out := "updating", w.Outcome
		if stage == "read" {
			verb, out = "finding", Outcome{Action: "failed", Number: int64(n), Error: err.Error()}
		}
		return out, fmt.Errorf("%s the %s on #%d: %w", verb, what, n, err)
	}
}

// commentStep is the status comment's step of the marked comment what on issue n (the
// state it reached: up to date, not updated, skipped, written by a dry run), and its
// link when it is on GitHub; a step with no Outcome when the comment was not tried.
func commentStep(a *Applied, what string, n int) (report.Step, *report.Link) {
	w, st := a.Comment, report.Step{Name: what}
	switch {
	case w.Link != "":
		st.Outcome, st.Link = "up to date", &report.Link{Text: fmt.Sprintf("#%d", n), URL: w.Link}
		return st, &report.Link{Text: what, URL: w.Link}
	case a.CommentErr != nil:
		st.Outcome, st.Error = "not updated", w.Error
	case a.CommentSkipped:
		st.Outcome = "skipped: " + w.Detail
	case w.File != "":
		st.Outcome = "written to " + w.File + " (dry run)"
	}
	return st, nil
}

// The bisection folder.

// bisectFolder is a bisection folder as read from disk: the manifest, checked by
// runner/results, and the culprit's profile A/B when one ran and could be read.
type bisectFolder struct {
	dir     string
	doc     results.Bisect
	culprit *compareFolder
	// culpritNote says why there is no culprit A/B to show.
	culpritNote string
}

// readBisectFolder reads dir/bisect.json (a regular file, bounded, checked) and the
// culprit's profile A/B it names: a plain folder named culprit below dir, not a link,
// a profile compare of the first bad commit (B) against the last good one (A). A
// culprit A/B that is missing or wrong is a note, not an error: the bisection's
// outcome still stands.
func readBisectFolder(dir string) (*bisectFolder, error) {
	man := filepath.Join(dir, results.BisectFile)
	switch fi, err := os.Lstat(man); {
	case err != nil:
		return nil, fmt.Errorf("reading the bisection results (give the folder holding %s): %w", results.BisectFile, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("the bisection's %s is %s, not a regular file", results.BisectFile, kindOf(fi.Mode()))
	}
	doc, err := results.ReadBisect(man)
	if err != nil {
		return nil, err
	}
	bf := &bisectFolder{dir: dir, doc: doc}
	o := doc.Outcome
	switch {
	case o == nil || o.Outcome == results.BisectNotReproduced:
		return bf, nil
	case doc.Culprit == "":
		bf.culpritNote = orText(doc.CulpritReason, "the bisection ran none")
		return bf, nil
	}
	// results.ReadCulprit checks the folder and that it is the profile A/B of the first
	// bad commit against its parent; readCompare reads it as a compare is published.
	_, err = results.ReadCulprit(dir, doc)
	if err == nil {
		bf.culprit, err = readCompare(filepath.Join(dir, results.CulpritDir))
	}
	if err != nil {
		bf.culprit = nil
		bf.culpritNote = "its folder could not be read: " + err.Error()
	}
	return bf, nil
}

func orText(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// bisectView is a bisection ready to render.
type bisectView struct {
	in   report.BisectInput
	data report.BisectData
}

func (v *bisectView) render(errs []string) (string, error) {
	in := v.in
	in.Errors = errs
	return report.Render(report.BisectComment, report.NewBisectData(in))
}

// bisectView makes the bisection's comment input: the commit links, the first bad
// commit's pull requests (asked through t's sink), the culprit's verdicts and port
// impact (its two profiles diffed with the parent's rules, read from t's clone, as a
// profile compare's are). notes say what is missing.
func (t Target) bisectView(ctx context.Context, bf *bisectFolder) (*bisectView, []string) {
	var notes []string
	in := report.BisectInput{Bisect: bf.doc, CulpritNote: bf.culpritNote}
	if t.Repo.Owner != "" {
		in.CommitURL = func(sha string) string {
			return fmt.Sprintf("%s/%s/%s/commit/%s", t.ServerURL, t.Repo.Owner, t.Repo.Name, sha)
		}
	}
	if o := bf.doc.Outcome; o != nil && o.FirstBad != "" {
		in.PRs, in.PRNote = commitPulls(ctx, t.Sink, o.FirstBad)
	}
	if c := bf.culprit; c != nil {
		d := c.doc
		cp := &ComparePlan{o: CompareOptions{Target: t}, c: c, pinned: pinned{base: d.ShaA}}
		if d.DirA == "" || d.DirB == "" {
			in.CulpritNote = "the profile A/B names no profile folder of a side"
		} else if err := cp.portDiffs(ctx); err != nil {
			in.CulpritNote = "its profiles could not be diffed: " + err.Error()
		} else {
			in.Culprit = &report.CompareInput{Kind: string(d.Kind), Label: d.Label, A: d.ShaA, B: d.ShaB, Host: d.Host, Date: d.Date, Alpha: d.Options.Alpha,
				Runs: len(d.Runs), Rejected: d.Rejected, Complete: d.State == results.SessionComplete, Metrics: cp.metrics(), Diffs: cp.diffs, Notes: cp.sum.Notes}
		}
	}
	if in.Culprit == nil && bf.doc.Culprit != "" {
		notes = append(notes, "the culprit's profile A/B: "+in.CulpritNote)
	}
	v := &bisectView{in: in}
	v.data = report.NewBisectData(in)
	return v, notes
}

// commitPulls are the links of the pull requests GitHub associates with commit sha,
// or why they are not known (a dry run does not ask).
func commitPulls(ctx context.Context, s Sink, sha string) ([]report.Link, string) {
	gs, ok := s.(githubSink)
	if !ok {
		return nil, "a dry run does not ask GitHub"
	}
	l, ok := gs.api.(interface {
		CommitPulls(ctx context.Context, r gh.Repo, sha string) ([]gh.CommitPull, error)
	})
	if !ok {
		return nil, "the GitHub client cannot list a commit's pull requests"
	}
	prs, err := l.CommitPulls(ctx, gs.repo, sha)
	if err != nil {
		return nil, err.Error()
	}
	var out []report.Link
	for _, pr := range prs {
		state := pr.State
		if pr.Merged {
			state = "merged"
		}
		text := fmt.Sprintf("#%d (%s)", pr.Number, state)
		if t := strings.TrimSpace(pr.Title); t != "" {
			text = fmt.Sprintf("#%d %s (%s)", pr.Number, strs.Clip(t, 80, "..."), state)
		}
		out = append(out, report.Link{Text: text, URL: pr.URL})
	}
	return out, ""
}
