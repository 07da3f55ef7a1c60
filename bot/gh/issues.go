package gh

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
)

// Issue is an issue as GitHub holds it.
type Issue struct {
	Number int
	URL    string // on github.com (html_url)
	Title  string
	Body   string
	State  string
	Labels []string
	Author string // the login that opened it
}

func issueFrom(i *github.Issue) Issue {
	is := Issue{Number: i.GetNumber(), URL: i.GetHTMLURL(), Title: i.GetTitle(), Body: i.GetBody(), State: i.GetState(), Author: i.GetUser().GetLogin()}
	for _, l := range i.Labels {
		is.Labels = append(is.Labels, l.GetName())
	}
	return is
}

// maxIssuePages bounds the search of the bot's open issues (100 a page).
const maxIssuePages = 50

// OpenIssuesWithMarker returns the open issues (not pull requests) the bot's identity
// opened whose body contains marker, oldest first. It reads every page: a marker search
// that stopped early would open a duplicate.
func (c *Client) OpenIssuesWithMarker(ctx context.Context, r Repo, marker string) ([]Issue, error) {
	return c.IssuesWithMarker(ctx, r, marker, "open")
}

// IssuesWithMarker is OpenIssuesWithMarker for the issues in state: "open", "closed"
// or "all".
func (c *Client) IssuesWithMarker(ctx context.Context, r Repo, marker, state string) ([]Issue, error) {
	op := fmt.Sprintf("listing the %s issues of %s", state, r)
	if state != "open" && state != "closed" && state != "all" {
		return nil, fmt.Errorf("%s: the state must be open, closed or all", op)
	}
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if strings.TrimSpace(marker) == "" {
		return nil, fmt.Errorf("%s: the marker is empty; pass a hidden marker such as <!-- perfbot:regression -->", op)
	}
	self, err := c.Login(ctx)
	if err != nil {
		return nil, err
	}
	opts := &github.IssueListByRepoOptions{State: state, Creator: self, Sort: "created", Direction: "asc",
		ListOptions: github.ListOptions{PerPage: 100}}
	var out []Issue
	for page := 1; ; page++ {
		if page > maxIssuePages {
			return nil, fmt.Errorf("%s: the bot has more than %d %s issues; refusing to guess whether a marked one exists", op, maxIssuePages*100, state)
		}
		list, resp, err := c.api().Issues.ListByRepo(c.ctx(ctx), r.Owner, r.Name, opts)
		if err != nil {
			return nil, wrap(err, op, needIssuesRead)
		}
		for _, i := range list {
			// The list holds pull requests too, and GitHub may match the creator loosely.
			if i.IsPullRequest() || !strings.EqualFold(i.GetUser().GetLogin(), self) || !strings.Contains(i.GetBody(), marker) {
				continue
			}
			out = append(out, issueFrom(i))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// UpsertIssue keeps exactly one open bot issue carrying marker: it edits the title and
// body of the one there is when they differ, or opens it. body must contain marker.
func (c *Client) UpsertIssue(ctx context.Context, r Repo, marker, title, body string) (Issue, Action, error) {
	op := fmt.Sprintf("upserting the %s issue in %s", marker, r)
	if strings.TrimSpace(marker) == "" || !strings.Contains(body, marker) {
		return Issue{}, "", fmt.Errorf("%s: the body must contain the marker, or the next run could not find the issue and would open a second one", op)
	}
	if strings.TrimSpace(title) == "" {
		return Issue{}, "", fmt.Errorf("%s: the title is empty", op)
	}
	if err := checkBody(body); err != nil {
		return Issue{}, "", fmt.Errorf("%s: %w", op, err)
	}
	found, err := c.OpenIssuesWithMarker(ctx, r, marker)
	if err != nil {
		return Issue{}, "", err
	}
	if len(found) > 0 {
		return c.EditIssue(ctx, r, found[0], title, body)
	}
	i, _, err := c.api().Issues.Create(c.ctx(ctx), r.Owner, r.Name, &github.IssueRequest{Title: &title, Body: &body})
	if err != nil {
		err = wrap(err, fmt.Sprintf("opening an issue in %s", r), needIssuesWrite)
		if ambiguous(err) {
			err = fmt.Errorf("%w (the issue may have been opened anyway: the next run finds it by its marker)", err)
		}
		return Issue{}, "", err
	}
	return issueFrom(i), Created, nil
}

// EditIssue sets the title and body of an issue found before (its current text in
// cur), or leaves it when they are the same.
func (c *Client) EditIssue(ctx context.Context, r Repo, cur Issue, title, body string) (Issue, Action, error) {
	if cur.Title == title && sameText(cur.Body, body) {
		return cur, Unchanged, nil
	}
	if err := checkBody(body); err != nil {
		return Issue{}, "", fmt.Errorf("editing issue #%d in %s: %w", cur.Number, r, err)
	}
	i, _, err := c.api().Issues.Edit(c.ctx(ctx), r.Owner, r.Name, cur.Number, &github.IssueRequest{Title: &title, Body: &body})
	if err != nil {
		return Issue{}, "", wrap(err, fmt.Sprintf("editing issue #%d in %s", cur.Number, r), needIssuesWrite)
	}
	return issueFrom(i), Updated, nil
}
