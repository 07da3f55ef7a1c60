package gh

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
)

// CloseIssue posts comment on the issue (none when comment is "") and closes it as
// completed. An issue already closed gets neither.
func (c *Client) CloseIssue(ctx context.Context, r Repo, cur Issue, comment string) (Issue, Action, error) {
	op := fmt.Sprintf("closing issue #%d in %s", cur.Number, r)
	if err := checkIssue(r, cur.Number); err != nil {
		return Issue{}, "", fmt.Errorf("%s: %w", op, err)
	}
	if cur.State == "closed" {
		return cur, Unchanged, nil
	}
	if comment != "" {
		if _, err := c.CreateComment(ctx, r, cur.Number, comment); err != nil {
			return Issue{}, "", err
		}
	}
	state, reason := "closed", "completed"
	i, _, err := c.api().Issues.Edit(c.ctx(ctx), r.Owner, r.Name, cur.Number, &github.IssueRequest{State: &state, StateReason: &reason})
	if err != nil {
		return Issue{}, "", wrap(err, op, needIssuesWrite)
	}
	return issueFrom(i), "closed", nil
}

// AddIssueLabels adds labels to an issue (or pull request); the ones there are kept.
func (c *Client) AddIssueLabels(ctx context.Context, r Repo, number int, labels ...string) error {
	op := fmt.Sprintf("labelling issue #%d in %s", number, r)
	if err := checkIssue(r, number); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	for _, l := range labels {
		if strings.TrimSpace(l) == "" || len(l) > 50 {
			return fmt.Errorf("%s: the label %q is empty or longer than 50 characters", op, l)
		}
	}
	if _, _, err := c.api().Issues.AddLabelsToIssue(c.ctx(ctx), r.Owner, r.Name, number, labels); err != nil {
		return wrap(err, op, needIssuesWrite)
	}
	return nil
}

// IssueByNumber reads one issue (or pull request).
func (c *Client) IssueByNumber(ctx context.Context, r Repo, number int) (Issue, error) {
	op := fmt.Sprintf("reading issue #%d in %s", number, r)
	if err := checkIssue(r, number); err != nil {
		return Issue{}, fmt.Errorf("%s: %w", op, err)
	}
	i, _, err := c.api().Issues.Get(c.ctx(ctx), r.Owner, r.Name, number)
	if err != nil {
		return Issue{}, wrap(err, op, needIssuesRead)
	}
	return issueFrom(i), nil
}
