package gh

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
)

// CheckRunSpec is a check run to open on a commit.
type CheckRunSpec struct {
	Name       string // shown on the pull request
	HeadSHA    string // the 40-digit commit
	ExternalID string // the caller's key, used to find the run again after a failed create
	DetailsURL string
	Title      string
	Summary    string // Markdown
}

// CheckRun is a check run as GitHub holds it.
type CheckRun struct {
	ID         int64
	Status     string // queued, in_progress, completed
	Conclusion string
	URL        string // on github.com (html_url)
}

// CreateCheckRun opens a queued check run, or returns the one already there: before
// creating it, and again after GitHub failed in a way that may have created it anyway,
// it looks for a run of that name with the external id on the commit (as a comment is
// found by its hidden marker). A caller that created the run and died before
// recording it therefore gets that run back, and a pull request never shows the same
// request twice.
func (c *Client) CreateCheckRun(ctx context.Context, r Repo, s CheckRunSpec) (CheckRun, error) {
	op := fmt.Sprintf("creating check run %q on %s in %s", s.Name, s.HeadSHA, r)
	if err := r.validate(); err != nil {
		return CheckRun{}, fmt.Errorf("%s: %w", op, err)
	}
	if len(s.HeadSHA) != 40 || strings.Trim(s.HeadSHA, "0123456789abcdef") != "" {
		return CheckRun{}, fmt.Errorf("%s: want a 40-digit lower-case commit SHA", op)
	}
	if strings.TrimSpace(s.Name) == "" || s.ExternalID == "" || strings.TrimSpace(s.Title) == "" || strings.TrimSpace(s.Summary) == "" {
		return CheckRun{}, fmt.Errorf("%s: the name, external id, title and summary are required", op)
	}
	opts := github.CreateCheckRunOptions{
		Name: s.Name, HeadSHA: s.HeadSHA, ExternalID: &s.ExternalID, Status: github.String("queued"),
		Output: &github.CheckRunOutput{Title: &s.Title, Summary: github.String(Truncate(s.Summary, MaxCheckText))},
	}
	if s.DetailsURL != "" {
		opts.DetailsURL = &s.DetailsURL
	}
	found, err := c.findCheckRun(ctx, r, s)
	if err != nil {
		return CheckRun{}, fmt.Errorf("%s: looking for it first: %w", op, err)
	}
	if found != nil {
		return *found, nil
	}
	for attempt := 0; ; attempt++ {
		run, _, err := c.api().Checks.CreateCheckRun(c.ctx(ctx), r.Owner, r.Name, opts)
		if err == nil {
			return checkRunFrom(run), nil
		}
		err = wrap(err, op, "checks: write")
		if !ambiguous(err) || attempt >= c.o.MaxRetries {
			return CheckRun{}, err
		}
		if werr := c.o.Sleep(ctx, backoff(attempt)); werr != nil {
			return CheckRun{}, werr
		}
		found, ferr := c.findCheckRun(ctx, r, s)
		if ferr != nil {
			return CheckRun{}, fmt.Errorf("checking whether a failed check run was created: %w", ferr)
		}
		if found != nil {
			return *found, nil
		}
	}
}

// maxCheckRunPages bounds the search for a check run by external id: 10 pages of 100
// runs of one name on one commit.
const maxCheckRunPages = 10

// findCheckRun looks for the check run of s's name and external id on s's commit
// (all of them, not only the latest of the name); nil when there is none.
func (c *Client) findCheckRun(ctx context.Context, r Repo, s CheckRunSpec) (*CheckRun, error) {
	opts := &github.ListCheckRunsOptions{CheckName: &s.Name, Filter: github.String("all"), ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < maxCheckRunPages; page++ {
		res, resp, err := c.api().Checks.ListCheckRunsForRef(c.ctx(ctx), r.Owner, r.Name, s.HeadSHA, opts)
		if err != nil {
			return nil, wrap(err, fmt.Sprintf("listing the check runs of %s in %s", s.HeadSHA, r), "checks: read")
		}
		for _, run := range res.CheckRuns {
			if run.GetExternalID() == s.ExternalID {
				cr := checkRunFrom(run)
				return &cr, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, fmt.Errorf("looking for check run %q with external id %s on %s in %s: more than %d pages of runs of that name", s.Name, s.ExternalID, s.HeadSHA, r, maxCheckRunPages)
}

func checkRunFrom(r *github.CheckRun) CheckRun {
	return CheckRun{ID: r.GetID(), Status: r.GetStatus(), Conclusion: r.GetConclusion(), URL: r.GetHTMLURL()}
}

// CheckRunByID reads one check run.
func (c *Client) CheckRunByID(ctx context.Context, r Repo, id int64) (CheckRun, error) {
	op := fmt.Sprintf("reading check run %d in %s", id, r)
	if err := r.validate(); err != nil {
		return CheckRun{}, fmt.Errorf("%s: %w", op, err)
	}
	run, _, err := c.api().Checks.GetCheckRun(c.ctx(ctx), r.Owner, r.Name, id)
	if err != nil {
		return CheckRun{}, wrap(err, op, "checks: read")
	}
	return checkRunFrom(run), nil
}

// CommentByID reads one issue or pull request comment.
func (c *Client) CommentByID(ctx context.Context, r Repo, id int64) (Comment, error) {
	op := fmt.Sprintf("reading comment %d in %s", id, r)
	if err := r.validate(); err != nil {
		return Comment{}, fmt.Errorf("%s: %w", op, err)
	}
	cm, _, err := c.api().Issues.GetComment(c.ctx(ctx), r.Owner, r.Name, id)
	if err != nil {
		return Comment{}, wrap(err, op, needIssuesRead)
	}
	return commentFrom(cm), nil
}
