package publish

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/strs"
)

// DryRequest is the dry run's file of the report posted on the requesting pull request.
const DryRequest = "request-comment.md"

// RequestMarker marks the report perfbot posts on the requesting pull request when the
// profiled commit is not on the default branch: one comment, edited in place by a
// rerun.
const RequestMarker = "<!-- perfbot:profile-report -->"

// maxPatchDiff bounds the withheld patch's diff shown in the pull request body and the
// comment, well under GitHub's 65,536 characters.
const maxPatchDiff = 24 << 10

// resolveRequest finds what asked for the run: the kind of Issue (from GitHub unless
// given), who asked and the comment, and so the request's bot branch.
func (p *ProfilePlan) resolveRequest(ctx context.Context) error {
	o := p.o
	t := gitpub.Trigger{Kind: gitpub.TriggerNightly}
	if o.Issue > 0 {
		kind := o.IssueKind
		if kind == "" {
			th, err := o.Sink.Thread(ctx, o.Issue)
			switch {
			case errors.Is(err, errNotAsked):
				kind = gitpub.TriggerIssue
				p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("dry run: whether #%d is a pull request is not known here; its bot branch is named as an issue's", o.Issue))
			case err != nil:
				return fmt.Errorf("finding whether #%d is a pull request or an issue (it names the bot branch): %w", o.Issue, err)
			case th.PullRequest:
				kind = gitpub.TriggerPR
			default:
				kind = gitpub.TriggerIssue
			}
		}
		t = gitpub.Trigger{Kind: kind, Number: o.Issue}
		p.sum.Trigger = t.String()
	}
	p.trigger = t
	p.requester, p.commentURL = o.Requester, o.TriggerCommentURL
	if o.TriggerCommentID > 0 && (p.requester == "" || p.commentURL == "") {
		c, err := o.Sink.TriggerComment(ctx, o.TriggerCommentID)
		switch {
		case errors.Is(err, errNotAsked):
		case err != nil:
			p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("the comment that asked for the run could not be read (%v): the pull request does not name who asked", err))
		default:
			if p.requester == "" {
				p.requester = c.User
			}
			if p.commentURL == "" {
				p.commentURL = c.URL
			}
		}
	}
	if !strings.HasPrefix(p.commentURL, "https://") && !strings.HasPrefix(p.commentURL, "http://") {
		p.commentURL = ""
	}
	p.sum.Requester = p.requester
	p.branch = o.Branch
	if p.branch == "" {
		b, err := gitpub.BranchName(o.Config.Branches.Profile, t)
		if err != nil {
			return fmt.Errorf("naming the bot branch: %w", err)
		}
		p.branch = b
	}
	return nil
}

// pinMain finds the default branch's head, which the results commit is built on, and
// whether the profiled commit is in its history.
func (p *ProfilePlan) pinMain(ctx context.Context) error {
	o := p.o
	branch, err := o.Sink.BaseBranch(ctx, o.BaseBranch)
	if err != nil {
		return err
	}
	pub := &gitpub.Publisher{Dir: o.RepoDir, Remote: o.Remote, DefaultBranch: branch, Token: o.GitToken}
	head := ""
	if o.Sink.DryRun() {
		// A dry run pushes only to a remote on this machine; with another, the clone's
		// own view of the branch stands in for the remote's.
		if u, err := git(ctx, o.RepoDir, "remote", "get-url", o.Remote); err != nil || !localRemote(u) {
			for _, ref := range []string{"refs/remotes/" + o.Remote + "/" + branch, "refs/heads/" + branch} {
				if sha, err := git(ctx, o.RepoDir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}"); err == nil && fullSHA.MatchString(sha) {
					head = sha
					p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("dry run: the remote is not on this machine, so the results commit is built on the clone's %s", ref))
					break
				}
			}
		}
	}
	if head == "" {
		if _, head, err = pub.DefaultBranchHead(ctx); err != nil {
			return fmt.Errorf("finding the head of %s, which the results commit is built on: %w", branch, err)
		}
	}
	on, err := pub.IsAncestor(ctx, p.base, head)
	if err != nil {
		return fmt.Errorf("finding whether the profiled commit is on %s: %w", branch, err)
	}
	p.mainBranch, p.mainHead, p.onMain = branch, head, on
	p.sum.Git.Base, p.sum.OnMain = head, on
	return nil
}

// offMain is what the documents say of a profiled commit not on the default branch;
// nil when it is on it.
func (p *ProfilePlan) offMain() *report.OffMain {
	if p.onMain || p.mainHead == "" {
		return nil
	}
	m := &report.OffMain{Commit: p.f.commit8, Branch: p.mainBranch, Head: strs.ShortSHA(p.mainHead)}
	if p.trigger.Kind == gitpub.TriggerPR {
		m.PR = p.trigger.Number
	}
	return m
}

// offMainLine is the title's words for a profiled commit not on the default branch.
func (p *ProfilePlan) offMainLine() string {
	m := p.offMain()
	if m == nil {
		return ""
	}
	if m.PR > 0 {
		return fmt.Sprintf("measured at %s, the head of #%d, not yet on %s", m.Commit, m.PR, m.Branch)
	}
	return fmt.Sprintf("measured at %s, not yet on %s", m.Commit, m.Branch)
}

// withheldWords are the words the status comment adds to offMainLine when the gate
// patch was shown rather than committed; "" when it was not.
func (p *ProfilePlan) withheldWords() string {
	if p.withheld == nil {
		return ""
	}
	return "; the patch is not committed"
}

// withholdReason says why the patched files must not be committed on the default
// branch's head: the profiled commit is not on it (the tests ran on code it does not
// have), or the branch changed a patched file since (its newer content would be
// overwritten). "" means they can be.
func (p *ProfilePlan) withholdReason(ctx context.Context, paths []string) string {
	if !p.onMain {
		return p.offMainLine() + ": the numeric tests ran on code " + p.mainBranch + " does not have"
	}
	if p.mainHead == p.base {
		return ""
	}
	var changed []string
	for _, path := range paths {
		a, errA := readBlob(ctx, p.o.RepoDir, p.o.Remote, p.o.GitToken, p.base, path, maxPatchedSource)
		b, errB := readBlob(ctx, p.o.RepoDir, p.o.Remote, p.o.GitToken, p.mainHead, path, maxPatchedSource)
		if errA != nil || errB != nil || string(a) != string(b) {
			changed = append(changed, path)
		}
	}
	if len(changed) == 0 {
		return ""
	}
	return fmt.Sprintf("%s changed %s since the profiled commit %s", p.mainBranch, strings.Join(changed, ", "), p.f.commit8)
}

// placePatch commits the patched files, or, when they must not be committed, keeps
// the patch as a diff the documents show.
func (p *ProfilePlan) placePatch(ctx context.Context, ps *Patch, order []string, patched map[string][]byte) {
	if len(order) == 0 {
		return
	}
	why := p.withholdReason(ctx, order)
	if why == "" {
		for _, path := range order {
			ps.Changed = append(ps.Changed, path)
			p.files[path] = patched[path]
		}
		return
	}
	ps.Withheld, ps.Pending = why, slices.Clone(order)
	pub := &gitpub.Publisher{Dir: p.o.RepoDir, Remote: p.o.Remote, Token: p.o.GitToken}
	diff, err := pub.Diff(ctx, p.base, patched, maxPatchDiff)
	w := &report.Withheld{Why: why, Diff: diff, Cut: errors.Is(err, gitpub.ErrDiffTooLong)}
	if err != nil && !w.Cut {
		w.Diff = "the diff could not be made: " + err.Error()
		p.sum.Notes = append(p.sum.Notes, "the withheld patch's diff could not be made: "+err.Error())
	}
	p.withheld = w
}

// requestStep posts the report on the requesting pull request when the profiled commit
// is not on the default branch: its reviewers see the figures of their code there, as
// the results pull request holds none of it.
func (p *ProfilePlan) requestStep() (CommentStep, bool) {
	if p.onMain || p.trigger.Kind != gitpub.TriggerPR {
		return CommentStep{}, false
	}
	return CommentStep{Issue: p.trigger.Number, Marker: RequestMarker, File: DryRequest, What: "report on the requesting pull request",
		Aside: true, Body: p.requestBody, Failed: p.requestFailed}, true
}

// requestBody is the report on the requesting pull request: the results pull
// request's body under a line that says what it is.
func (p *ProfilePlan) requestBody(_ string, l Links) (string, []string, error) {
	body, err := p.prBody(l)
	if err != nil {
		return "", nil, err
	}
	body = strings.TrimSpace(strings.ReplaceAll(body, report.PRMarker, ""))
	where := "the results pull request"
	if l.PR != nil {
		where = "the results pull request [" + report.Text(l.PR.Text) + "](" + report.LinkURL(l.PR.URL) + ")"
	}
	head := fmt.Sprintf("%s\n**perfbot**: the decode profile of this pull request's head %s. The report and the results are in %s, which holds only perfbot's files; a rerun edits this comment.\n\n",
		RequestMarker, report.Code(p.base), where)
	return fitBody(head + body + "\n"), nil, nil
}

// requestFailed says what a failure to write the report on the requesting pull
// request is.
func (p *ProfilePlan) requestFailed(_ string, w Written, err error) (Outcome, error) {
	if w.File != "" {
		return w.Outcome, err
	}
	n := p.trigger.Number
	return Outcome{Action: "failed", Number: int64(n), Error: err.Error()}, fmt.Errorf("posting the report on #%d: %w", n, err)
}

// StaleStep deletes the bot branches (under Prefix) of requests whose issue or pull
// request is closed or merged, except Keep; GitHub closes their pull requests. A
// branch that moved since it was listed is kept. It never fails the publication: what
// it could not do is an outcome and a note.
type StaleStep struct {
	Prefix, Keep string
	Repo, Token  string
	// Skip says why nothing is looked for (the configuration turns it off, a dry run).
	Skip string
}

func (st StaleStep) apply(ctx context.Context, s Sink, a *Applied) {
	if st.Skip != "" {
		return
	}
	pub := &gitpub.Publisher{Dir: st.Repo, Remote: a.Git.Remote, Token: st.Token, DefaultBranch: a.BaseBranch, Branches: []string{st.Prefix}}
	list, err := pub.ListBranches(ctx, st.Prefix)
	if err != nil {
		a.note("looking for stale bot branches: " + err.Error())
	}
	for _, b := range list {
		if b.Name == st.Keep || b.Trigger.Kind == gitpub.TriggerNightly {
			continue
		}
		th, err := s.Thread(ctx, b.Trigger.Number)
		if err != nil {
			a.Stale = append(a.Stale, Outcome{Action: "kept", Detail: b.Name, Error: err.Error()})
			a.note(fmt.Sprintf("bot branch %s is kept: the state of %s could not be read: %v", b.Name, b.Trigger, err))
			continue
		}
		if th.State != "closed" {
			continue
		}
		if err := pub.DeleteBranch(ctx, b.Name, b.SHA); err != nil && !errors.Is(err, gitpub.ErrNoBranch) {
			a.Stale = append(a.Stale, Outcome{Action: "kept", Number: int64(b.Trigger.Number), Detail: b.Name, Error: err.Error()})
			a.note(fmt.Sprintf("bot branch %s of closed %s is kept: %v", b.Name, b.Trigger, err))
			continue
		}
		a.Stale = append(a.Stale, Outcome{Action: "deleted", Number: int64(b.Trigger.Number), Detail: b.Name})
	}
}
