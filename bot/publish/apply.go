package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/strs"
)

// Plan is what one publication writes, decided from the results before anything is
// written: the commit to push, then the steps that need the pushed commit (the pull
// request, the issues, the comment that keeps the history), then the steps that report
// the end and run after a failure too. A document that links to the pushed commit or to
// the pull request is made by its step from the Links of the steps before it.
type Plan struct {
	// Push is the commit on the bot branch; nil when there is nothing to push (a
	// publish that could not start).
	Push *PushSpec
	// Server and Repo make the links to the pushed commit's files; with no Repo they
	// stay repo-relative paths.
	Server string
	Repo   gh.Repo
	// Base is the pinned base commit, "" when planning stopped before it was pinned.
	Base string
	// Branch is the bot branch planning chose; "" keeps the options' branch.
	Branch string
	// Steps run in order once the commit is on the branch.
	Steps []Step
	// End run in order at the end, after a failure too.
	End []Step
	// Notes are what the planning noticed.
	Notes []string
	// Err is why planning failed: nothing is pushed, End still reports it.
	Err error
}

// plan is the plan itself: every kind's plan embeds its Plan, and so is planned.
func (p Plan) plan() Plan { return p }

// Step is one effect of a plan; the step types of this package (PRStep, CommentStep,
// IssuesStep, StatusStep, CheckRunStep, ReactStep, StepSummaryStep) make every kind.
type Step interface {
	apply(ctx context.Context, s Sink, a *Applied)
}

// Links are what the documents of later steps link to.
type Links struct {
	// Root is where links to the pushed commit's files start ("" before the push or
	// without a repository: repo-relative paths).
	Root string
	// PR is the pull request on GitHub, nil in a dry run or before it is opened.
	PR *report.Link
	// Issues are the regression issues opened on GitHub, by model.
	Issues map[string]report.Link
}

// Link is a link to a file of the pushed commit.
func (l Links) Link(text, repoPath string) report.Link {
	return report.Link{Text: text, URL: l.Root + repoPath}
}

// Applied is what applying a plan did, step by step.
type Applied struct {
	DryRun bool
	Git    Git
	// Pushed says the commit is on the bot branch (pushed now or already there).
	Pushed     bool
	BaseBranch string
	Links      Links
	PR         Written
	PRErr      error
	Issues     []Outcome
	// Comment is the comment that keeps the history (epic ranking, tracking).
	Comment        Written
	CommentErr     error
	CommentSkipped bool
	// Aside is a comment that keeps no history (the report on the requesting pull
	// request): its step has Aside set.
	Aside        Written
	AsideErr     error
	AsideSkipped bool
	// Stale are the bot branches of closed requests, deleted or kept.
	Stale []Outcome
	Reported
	StepSummary string
	Notes       []string
	Errors      []error
}

// Failed says whether a step (or the planning) failed so far.
func (a *Applied) Failed() bool { return len(a.Errors) > 0 }

// Conclusion is success unless a step failed.
func (a *Applied) Conclusion() string {
	if a.Failed() {
		return "failure"
	}
	return "success"
}

// ErrorTexts are the errors as the summaries list them.
func (a *Applied) ErrorTexts() []string {
	var out []string
	for _, e := range a.Errors {
		out = append(out, e.Error())
	}
	return out
}

func (a *Applied) fail(err error) { a.Errors = append(a.Errors, err) }

func (a *Applied) note(n ...string) { a.Notes = append(a.Notes, n...) }

// apply runs a plan's effects through the sink. git is what the bot branch is before
// the push (branch and remote).
func apply(ctx context.Context, p Plan, s Sink, git Git) *Applied {
	a := &Applied{DryRun: s.DryRun(), Git: git, Links: Links{Issues: map[string]report.Link{}}}
	a.note(p.Notes...)
	ok := p.Err == nil
	if !ok {
		a.fail(p.Err)
	}
	if ok && p.Push != nil {
		ok = a.push(ctx, p, s)
	}
	if ok {
		for _, st := range p.Steps {
			st.apply(ctx, s, a)
		}
	}
	for _, st := range p.End {
		st.apply(ctx, s, a)
	}
	return a
}

func (a *Applied) push(ctx context.Context, p Plan, s Sink) bool {
	pu, err := s.Push(ctx, *p.Push)
	a.BaseBranch = pu.BaseBranch
	a.note(pu.Notes...)
	a.Git.Remote = pu.Remote
	res := pu.Result
	a.Git.Commit, a.Git.Action, a.Git.Pushed, a.Git.Retries = res.Commit, res.Action, res.Pushed, res.Retries
	if err != nil {
		a.Git.Error = err.Error()
		a.fail(err)
		return false
	}
	a.Pushed = true
	if p.Repo.Owner != "" {
		a.Links.Root = fmt.Sprintf("%s/%s/%s/blob/%s/", p.Server, p.Repo.Owner, p.Repo.Name, res.Commit)
	}
	return true
}

// PRStep opens or updates the one pull request of the bot branch.
type PRStep struct {
	Title, Head string
	Draft       bool
	// File is the dry run's document.
	File string
	// Body makes the body from the links of the pushed commit.
	Body func(Links) (string, error)
	// NoteDraft notes a pull request opened earlier with another draft state.
	NoteDraft bool
}

func (st PRStep) apply(ctx context.Context, s Sink, a *Applied) {
	body, err := st.Body(a.Links)
	if err != nil {
		a.PR, a.PRErr = Written{Outcome: Outcome{Action: "failed", Error: err.Error()}}, err
		a.fail(fmt.Errorf("rendering the pull request body: %w", err))
		return
	}
	spec := gh.PRSpec{Head: st.Head, Base: a.BaseBranch, Title: st.Title, Body: fitBody(body), Draft: st.Draft}
	w, err := s.PullRequest(ctx, spec, st.File)
	a.PR = w
	if err != nil {
		a.PRErr = err
		a.fail(err)
		return
	}
	if w.Link == "" {
		return
	}
	a.Links.PR = &report.Link{Text: fmt.Sprintf("#%d", w.Number), URL: w.Link}
	if st.NoteDraft && w.Draft != spec.Draft && w.Action != string(gh.Created) {
		a.note(fmt.Sprintf("pull request #%d was opened earlier with draft=%t; GitHub's REST API cannot change that: convert it by hand", w.Number, w.Draft))
	}
}

// fitBody cuts a pull request body past GitHub's limit of 65,536 characters, with a
// note saying so; a body within the limit goes as it is.
func fitBody(body string) string {
	if len([]rune(body)) <= report.MaxComment {
		return body
	}
	return gh.Truncate(body, report.MaxComment-100)
}

// fitComment cuts a comment longer than limit (limits.comment_max_bytes; GitHub's
// limit when 0 or above it) to fit, with a note in it saying so, and returns the note
// for the summary's notes ("" when the comment fits). what names the comment.
func fitComment(what, md string, limit int) (string, string) {
	if limit <= 0 || limit > report.MaxComment {
		limit = report.MaxComment
	}
	if len(md) <= limit {
		return md, ""
	}
	return gh.Truncate(md, limit), fmt.Sprintf("the %s is %d bytes, more than the %d a comment may have: it was cut", what, len(md), limit)
}

// notes is the one note, or none for "".
func notes(note string) []string {
	if note == "" {
		return nil
	}
	return []string{note}
}

// CommentStep upserts the marked comment that keeps a history (the epic ranking, the
// nightly tracking comment); Skip says why there is none to keep.
type CommentStep struct {
	Issue        int
	Marker, File string
	Skip         string
	// Body makes the body from the comment's current text and the links; notes say
	// what it noticed (a history that starts over).
	Body func(earlier string, l Links) (body string, notes []string, err error)
	// Failed says what a failure to read or write the comment is, in the summary and
	// in the errors; a failure to make the body is "rendering the <What>".
	Failed func(stage string, w Written, err error) (Outcome, error)
	What   string
	// Aside records the comment as Applied.Aside instead of Applied.Comment: it is
	// one more comment, not the one that keeps the history.
	Aside bool
}

func (st CommentStep) apply(ctx context.Context, s Sink, a *Applied) {
	if st.Aside {
		// Run as the history comment would, then move the outcome aside.
		keep, keepErr, keepSkipped := a.Comment, a.CommentErr, a.CommentSkipped
		defer func() {
			a.Aside, a.AsideErr, a.AsideSkipped = a.Comment, a.CommentErr, a.CommentSkipped
			a.Comment, a.CommentErr, a.CommentSkipped = keep, keepErr, keepSkipped
		}()
		a.Comment, a.CommentErr, a.CommentSkipped = Written{}, nil, false
	}
	if st.Skip != "" {
		a.Comment, a.CommentSkipped = Written{Outcome: Outcome{Action: "skipped", Detail: st.Skip}}, true
		return
	}
	var notes []string
	w, err := s.Comment(ctx, Comment{Issue: st.Issue, Marker: st.Marker, File: st.File, Body: func(earlier string) (string, error) {
		body, n, err := st.Body(earlier, a.Links)
		notes = n
		return body, err
	}})
	a.note(notes...)
	a.Comment = w
	if err == nil {
		return
	}
	a.CommentErr = err
	if stage(err) == "render" {
		a.Comment = Written{Outcome: Outcome{Action: "failed", Error: err.Error()}}
		a.fail(fmt.Errorf("rendering the %s: %w", st.What, errors.Unwrap(err)))
		return
	}
	out, ferr := st.Failed(stage(err), w, err)
	a.Comment.Outcome = out
	a.fail(ferr)
}

// IssuesStep opens or updates one issue per finding (the nightly's regressions): it
// finds the open ones, then Issues says which to write, given the open ones.
type IssuesStep struct {
	Prefix string
	Want   []Issue
	// Issues are the issues to write; each is made from the links so far, which
	// include the issues written before it.
	Issues func(open map[string]gh.Issue) []IssueStep
}

// IssueStep is one issue to write.
type IssueStep struct {
	Issue
	Name string // what the errors call it (the model)
	// Body makes the body from the links so far.
	Body func(Links) (body string, notes []string, err error)
	// Link keeps the issue's link for the later documents.
	Link bool
	// Comments are marked comments upserted on the issue once it is written and left
	// open (a regression's bisection).
	Comments []IssueComment
}

// IssueComment is one marked comment on an issue an IssueStep writes; File is the dry
// run's document.
type IssueComment struct {
	Marker, File, What string
	Body               func(Links) (string, error)
}

func (st IssuesStep) apply(ctx context.Context, s Sink, a *Applied) {
	open, err := s.FindIssues(ctx, st.Prefix, st.Want)
	if err != nil {
		a.fail(fmt.Errorf("finding the open regression issues: %w", err))
		return
	}
	for _, is := range st.Issues(open) {
		body, notes, err := is.Body(a.Links)
		a.note(notes...)
		out := Outcome{Detail: is.Name}
		if err != nil {
			out.Action, out.Error = "failed", err.Error()
			a.Issues = append(a.Issues, out)
			a.fail(fmt.Errorf("rendering the regression issue of %s: %w", is.Name, err))
			continue
		}
		is.Issue.Body = body
		w, err := s.Issue(ctx, is.Issue)
		if err != nil {
			out.Action, out.Error = "failed", err.Error()
			a.Issues = append(a.Issues, out)
			a.fail(fmt.Errorf("writing the regression issue of %s: %w", is.Name, err))
			continue
		}
		out.Action, out.Number, out.URL = w.Action, w.Number, w.URL
		if is.Close != "" {
			closed, err := closeIssue(ctx, s, is.Issue, w)
			if err != nil {
				out.Action, out.Error = "failed", err.Error()
				a.Issues = append(a.Issues, out)
				a.fail(fmt.Errorf("closing the regression issue of %s: %w", is.Name, err))
				continue
			}
			out.Action = closed.Action
		}
		a.Issues = append(a.Issues, out)
		if is.Close == "" {
			for _, ic := range is.Comments {
				a.issueComment(ctx, s, int(w.Number), ic)
			}
		}
		// A dry run's issue is a file of the dry-run folder: nothing a committed page
		// or a comment could link to.
		if is.Link && w.Link != "" {
			a.Links.Issues[is.Name] = report.Link{Text: fmt.Sprintf("#%d", w.Number), URL: w.Link}
		}
	}
}

// issueComment upserts one marked comment on issue n, recorded among the issues.
func (a *Applied) issueComment(ctx context.Context, s Sink, n int, ic IssueComment) {
	w, err := s.Comment(ctx, Comment{Issue: n, Marker: ic.Marker, File: ic.File, Body: func(string) (string, error) { return ic.Body(a.Links) }})
	out := w.Outcome
	out.Detail = ic.What
	if err != nil {
		out.Action, out.Error = "failed", err.Error()
		a.fail(fmt.Errorf("writing the %s: %w", ic.What, err))
	}
	a.Issues = append(a.Issues, out)
}

// made is the document doc makes of what was done; false after recording why it
// could not be made.
func made(a *Applied, what string, doc func(*Applied) (string, error)) (string, bool) {
	md, err := doc(a)
	if err != nil {
		a.fail(fmt.Errorf("rendering %s: %w", what, err))
		return "", false
	}
	return md, true
}

// StatusStep finishes the status comment of the command.
type StatusStep struct {
	ID   int64
	File string
	// Body makes the comment from what was done.
	Body func(a *Applied) (string, error)
}

func (st StatusStep) apply(ctx context.Context, s Sink, a *Applied) {
	body, ok := made(a, "the status comment", st.Body)
	if !ok {
		return
	}
	if !s.DryRun() && st.ID <= 0 {
		a.Status = Outcome{Action: "skipped", Detail: "no status comment id was given"}
		return
	}
	w, err := s.Comment(ctx, Comment{ID: st.ID, File: st.File, Body: func(string) (string, error) { return body, nil }})
	a.Status = w.Outcome
	if err != nil {
		if s.DryRun() {
			a.fail(err)
		} else {
			a.fail(fmt.Errorf("updating the status comment: %w", err))
		}
	}
}

// CheckRunStep completes the check run made at acceptance.
type CheckRunStep struct {
	ID   int64
	File string
	// Output makes the check run's output from what was done; a nil error with an
	// empty Output skips it.
	Output func(a *Applied) (gh.CheckOutput, error)
}

func (st CheckRunStep) apply(ctx context.Context, s Sink, a *Applied) {
	out, err := st.Output(a)
	if err != nil {
		a.fail(fmt.Errorf("rendering the check run summary: %w", err))
		return
	}
	o, err := s.CheckRun(ctx, st.ID, out, st.File)
	a.CheckRun = o
	if err != nil {
		a.fail(err)
	}
}

// ReactStep reacts to the comment that asked for the run: Content when every step
// so far succeeded, Failed otherwise.
type ReactStep struct {
	ID              int64
	Content, Failed string
}

func (st ReactStep) apply(ctx context.Context, s Sink, a *Applied) {
	content := st.Content
	if a.Failed() {
		content = st.Failed
	}
	if st.ID <= 0 {
		a.Reaction = Outcome{Action: "skipped", Detail: "no trigger comment id was given"}
		return
	}
	o, err := s.React(ctx, st.ID, content)
	a.Reaction = o
	if err != nil {
		a.fail(err)
	}
}

// StepSummaryStep makes the job step summary; File keeps it in a dry run ("" does not).
type StepSummaryStep struct {
	File     string
	Markdown func(a *Applied) (string, error)
}

func (st StepSummaryStep) apply(_ context.Context, s Sink, a *Applied) {
	md, ok := made(a, "the step summary", st.Markdown)
	if ok {
		a.StepSummary = gh.Truncate(md, report.MaxStepSummary)
	}
	if ok && st.File != "" {
		if err := s.Record(st.File, []byte(a.StepSummary)); err != nil {
			a.fail(err)
		}
	}
}

// reporting is what a kind's plan makes of what was done for the requester.
type reporting interface {
	statusBody(a *Applied) (string, error)
	checkOutput(a *Applied) (gh.CheckOutput, error)
	stepSummary(a *Applied) (string, error)
}

// end finishes the status comment, completes the check run, reacts to the comment
// that asked and makes the step summary, as r says: the end of a requested
// publication.
func (m Marks) end(r reporting) []Step {
	return []Step{
		StatusStep{ID: m.StatusCommentID, File: DryStatus, Body: r.statusBody},
		CheckRunStep{ID: m.CheckRunID, File: DryCheckRun, Output: r.checkOutput},
		ReactStep{ID: m.TriggerCommentID, Content: "rocket", Failed: "confused"},
		StepSummaryStep{File: DryStepSummary, Markdown: r.stepSummary},
	}
}

// statusLines are the publishing steps as a status comment and the summaries show
// them, and the links they list: the state reached, not what this call changed, so a
// rerun renders the same text.
type statusLines struct {
	steps []report.Step
	links []report.Link
}

func (s *statusLines) add(st report.Step) { s.steps = append(s.steps, st) }

func (s *statusLines) link(text, url string) {
	s.links = append(s.links, report.Link{Text: text, URL: url})
}

// commit adds the line of the commit on branch, or of the push that failed.
func (s *statusLines) commit(a *Applied, branch string) {
	switch {
	case a.Pushed:
		s.add(report.Step{Name: "commit", Outcome: fmt.Sprintf("%s on %s", strs.ShortSHA(a.Git.Commit), branch)})
	case a.Git.Error != "":
		s.add(report.Step{Name: "commit", Outcome: "not pushed", Error: a.Git.Error})
	}
}

// pr adds the line of the pull request, listed as text and said to be open as open
// says when it is.
func (s *statusLines) pr(a *Applied, text, open string) {
	switch {
	case a.Links.PR != nil:
		l := *a.Links.PR
		s.link(text, l.URL)
		s.add(report.Step{Name: "pull request", Outcome: open, Link: &l})
	case a.PRErr != nil:
		s.add(report.Step{Name: "pull request", Outcome: "not opened", Error: a.PR.Error})
	case a.PR.File != "":
		s.add(report.Step{Name: "pull request", Outcome: "written to " + a.PR.File + " (dry run)"})
	}
}

// comment adds the line of the comment step name on issue n that wrote w: up to date
// (and in the links when listed), not written when err is set (failed says so: "not
// updated", "not posted"), skipped, or written in a dry run.
func (s *statusLines) comment(name string, listed bool, n int, w Written, err error, skipped bool, failed string) {
	switch {
	case w.Link != "":
		if listed {
			s.link(name, w.Link)
		}
		s.add(report.Step{Name: name, Outcome: "up to date", Link: &report.Link{Text: fmt.Sprintf("#%d", n), URL: w.Link}})
	case err != nil:
		s.add(report.Step{Name: name, Outcome: failed, Error: w.Error})
	case skipped:
		s.add(report.Step{Name: name, Outcome: "skipped: " + w.Detail})
	case w.File != "":
		s.add(report.Step{Name: name, Outcome: "written to " + w.File + " (dry run)"})
	}
}

// planned is a kind's plan with the summary it makes of what applying it did.
type planned[S any] interface {
	plan() Plan
	summary(a *Applied) S
}

// options are a kind's options: normalize checks them and fills the defaults;
// destination (its Target's) is where the writes go and the bot branch before the push.
type options[O any] interface {
	normalize() (O, error)
	destination() (Sink, Git)
}

// publish is a kind's Publish: it normalizes o and runs the plan that plan makes of it;
// none is the kind's plan of nothing (see run).
func publish[O options[O], S any, P planned[S]](ctx context.Context, o O, none func(O) P, plan func(context.Context, O) P) (S, error) {
	o, err := o.normalize()
	if err != nil {
		var zero S
		return zero, err
	}
	s, git := o.destination()
	return run(ctx, s, git, none(o), func() planned[S] { return plan(ctx, o) })
}

// run opens the sink, plans, applies the plan and returns the kind's summary, kept as
// summary.json in a dry run. A sink that cannot open stops it first, with none's
// summary (the kind's plan of nothing).
func run[S any](ctx context.Context, s Sink, git Git, none planned[S], plan func() planned[S]) (S, error) {
	if err := s.Open(); err != nil {
		return none.summary(&Applied{DryRun: s.DryRun(), Git: git}), err
	}
	k := plan()
	p := k.plan()
	git.Base = p.Base
	if p.Branch != "" {
		git.Branch = p.Branch
	}
	a := apply(ctx, p, s, git)
	sum := k.summary(a)
	record(s, a, func() any { return sum })
	return k.summary(a), errors.Join(a.Errors...)
}

// record keeps the summary as summary.json in a dry run.
func record(s Sink, a *Applied, summary func() any) {
	if !s.DryRun() {
		return
	}
	b, err := json.MarshalIndent(summary(), "", "  ")
	if err == nil {
		err = s.Record(DrySummary, append(b, '\n'))
	}
	if err != nil {
		a.fail(fmt.Errorf("writing the dry run's summary: %w", err))
	}
}
