package gh

import (
	"context"
	"fmt"
)

// Thread is an issue or a pull request as the issues API shows either: its number,
// whether it is a pull request, and its state (open or closed; a merged pull request
// is closed).
type Thread struct {
	Number      int
	URL         string // on github.com (html_url)
	PullRequest bool
	State       string
}

// Thread reads issue or pull request number (GET /repos/{owner}/{repo}/issues/{n}: a
// pull request carries a pull_request key).
func (c *Client) Thread(ctx context.Context, r Repo, number int) (Thread, error) {
	op := fmt.Sprintf("reading issue or pull request %s#%d", r, number)
	if err := r.validate(); err != nil {
		return Thread{}, fmt.Errorf("%s: %w", op, err)
	}
	if number < 1 {
		return Thread{}, fmt.Errorf("%s: not an issue number", op)
	}
	is, _, err := c.api().Issues.Get(c.ctx(ctx), r.Owner, r.Name, number)
	if err != nil {
		return Thread{}, wrap(err, op, needIssuesRead)
	}
	return Thread{Number: is.GetNumber(), URL: is.GetHTMLURL(), PullRequest: is.IsPullRequest(), State: is.GetState()}, nil
}
