package gh

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/google/go-github/v62/github"
)

// PRSpec is the pull request a bot branch should have.
type PRSpec struct {
	Head   string // the branch with the changes ("branch", or "owner:branch" from a fork)
	Base   string // the branch to merge into
	Title  string
	Body   string
	Draft  bool     // used when the PR is created; REST cannot change it afterwards
	Labels []string // added if missing; labels already on the PR are kept
}

// PR is a pull request as GitHub holds it after an upsert.
type PR struct {
	Number  int
	URL     string // on github.com (html_url)
	Title   string
	Body    string
	Head    string
	Base    string
	HeadSHA string
	Draft   bool
	Labels  []string
}

const (
	needPullsRead  = "pull_requests: read"
	needPullsWrite = "pull_requests: write"
)

func prFrom(p *github.PullRequest) PR {
	pr := PR{
		Number: p.GetNumber(), URL: p.GetHTMLURL(), Title: p.GetTitle(), Body: p.GetBody(),
		Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef(), HeadSHA: p.GetHead().GetSHA(), Draft: p.GetDraft(),
	}
	for _, l := range p.Labels {
		pr.Labels = append(pr.Labels, l.GetName())
	}
	return pr
}

// UpsertPR keeps the one open pull request of s.Head in step with s: it opens it when
// there is none, edits title, body or base when they differ, and adds missing labels.
// A differing draft state is only logged: the REST API cannot convert a pull request.
func (c *Client) UpsertPR(ctx context.Context, r Repo, s PRSpec) (PR, Action, error) {
	op := fmt.Sprintf("upserting the pull request of %s in %s", s.Head, r)
	if err := checkPRSpec(r, s); err != nil {
		return PR{}, "", fmt.Errorf("%s: %w", op, err)
	}
	existing, err := c.openPR(ctx, r, s)
	if err != nil {
		return PR{}, "", err
	}
	action, fresh := Unchanged, false
	if existing == nil {
		created, err := c.createPR(ctx, r, s)
		switch {
		case err == nil:
			existing, action, fresh = created, Created, true
		case statusIs(err, http.StatusUnprocessableEntity):
			// A retried POST whose first attempt went through, or a concurrent run:
			// GitHub refuses the duplicate. Adopt the one that exists.
			again, lerr := c.openPR(ctx, r, s)
			if lerr != nil {
				return PR{}, "", lerr
			}
			if again == nil {
				return PR{}, "", err
			}
			existing, action = again, Created
		default:
			return PR{}, "", err
		}
	}

	pr := prFrom(existing)
	if !fresh && (!sameText(pr.Title, s.Title) || !sameText(pr.Body, s.Body) || pr.Base != s.Base) {
		edit := &github.PullRequest{Title: &s.Title, Body: &s.Body}
		if pr.Base != s.Base {
			edit.Base = &github.PullRequestBranch{Ref: &s.Base}
		}
		edited, _, err := c.api().PullRequests.Edit(c.ctx(ctx), r.Owner, r.Name, pr.Number, edit)
		if err != nil {
			return PR{}, "", wrap(err, fmt.Sprintf("editing pull request %s#%d", r, pr.Number), needPullsWrite)
		}
		pr = prFrom(edited)
		if action == Unchanged {
			action = Updated
		}
	}

	if missing := missingLabels(pr.Labels, s.Labels); len(missing) > 0 {
		labels, _, err := c.api().Issues.AddLabelsToIssue(c.ctx(ctx), r.Owner, r.Name, pr.Number, missing)
		if err != nil {
			return PR{}, "", wrap(err, fmt.Sprintf("labelling pull request %s#%d", r, pr.Number), needPullsWrite)
		}
		pr.Labels = pr.Labels[:0]
		for _, l := range labels {
			pr.Labels = append(pr.Labels, l.GetName())
		}
		if action == Unchanged {
			action = Updated
		}
	}
	if pr.Draft != s.Draft {
		c.o.Logger.Info("github: pull request draft state differs from the request; REST cannot change it",
			"repo", r.String(), "pr", pr.Number, "draft", pr.Draft)
	}
	return pr, action, nil
}

// openPR finds the open pull request from s.Head, preferring one into s.Base.
func (c *Client) openPR(ctx context.Context, r Repo, s PRSpec) (*github.PullRequest, error) {
	head := s.Head
	if !strings.Contains(head, ":") {
		head = r.Owner + ":" + head
	}
	op := fmt.Sprintf("listing the open pull requests of %s in %s", head, r)
	list, _, err := c.api().PullRequests.List(c.ctx(ctx), r.Owner, r.Name, &github.PullRequestListOptions{
		State: "open", Head: head, ListOptions: github.ListOptions{PerPage: 100},
	})
	if err != nil {
		return nil, wrap(err, op, needPullsRead)
	}
	switch len(list) {
	case 0:
		return nil, nil
	case 1:
		return list[0], nil
	}
	var onBase []*github.PullRequest
	for _, p := range list {
		if p.GetBase().GetRef() == s.Base {
			onBase = append(onBase, p)
		}
	}
	if len(onBase) == 1 {
		return onBase[0], nil
	}
	nums := make([]string, 0, len(list))
	for _, p := range list {
		nums = append(nums, fmt.Sprintf("#%d", p.GetNumber()))
	}
	return nil, fmt.Errorf("%s: %d open pull requests (%s); close all but one so perfbot knows which to update", op, len(list), strings.Join(nums, ", "))
}

func (c *Client) createPR(ctx context.Context, r Repo, s PRSpec) (*github.PullRequest, error) {
	np := &github.NewPullRequest{Title: &s.Title, Head: &s.Head, Base: &s.Base, Body: &s.Body}
	if s.Draft {
		np.Draft = &s.Draft
	}
	// GitHub refuses a second PR for the same head and base with 422, so a retried
	// POST cannot open a duplicate.
	p, _, err := c.api().PullRequests.Create(repeatable(c.ctx(ctx)), r.Owner, r.Name, np)
	if err != nil {
		return nil, wrap(err, fmt.Sprintf("creating a pull request from %s into %s in %s", s.Head, s.Base, r), needPullsWrite)
	}
	return p, nil
}

func checkPRSpec(r Repo, s PRSpec) error {
	if err := r.validate(); err != nil {
		return err
	}
	head := s.Head
	if owner, branch, ok := strings.Cut(head, ":"); ok {
		if !validLogin(owner) {
			return fmt.Errorf("head %q: %q is not a GitHub login", s.Head, owner)
		}
		head = branch
	}
	var errs []error
	if !validBranch(head) {
		errs = append(errs, fmt.Errorf("head %q is not a valid branch name", s.Head))
	}
	if !validBranch(s.Base) {
		errs = append(errs, fmt.Errorf("base %q is not a valid branch name", s.Base))
	}
	if strings.TrimSpace(s.Title) == "" {
		errs = append(errs, errors.New("the title is empty"))
	}
	if n := len([]rune(s.Body)); n > MaxCommentChars {
		errs = append(errs, fmt.Errorf("the body has %d characters; GitHub accepts at most %d", n, MaxCommentChars))
	}
	for _, l := range s.Labels {
		if strings.TrimSpace(l) == "" || len(l) > 50 {
			errs = append(errs, fmt.Errorf("label %q: want 1-50 characters", l))
		}
	}
	return errors.Join(errs...)
}

// missingLabels lists wanted labels not on the PR; GitHub compares label names
// case-insensitively.
func missingLabels(have, want []string) []string {
	on := make(map[string]bool, len(have))
	for _, h := range have {
		on[strings.ToLower(h)] = true
	}
	var missing []string
	for _, w := range want {
		if !on[strings.ToLower(w)] {
			on[strings.ToLower(w)] = true
			missing = append(missing, w)
		}
	}
	sort.Strings(missing)
	return missing
}
