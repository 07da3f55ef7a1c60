package gh

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"
	"github.com/lablup/perfbot/internal/strs"
)

// MergeBase is the best common ancestor of base and head (branches or SHAs of r), as
// the compare endpoint names it (merge_base_commit): on a pull request, with base its
// target branch and head its head, the commit the pull request's changes start from.
// An unknown base or head is an error matching ErrNotFound.
func (c *Client) MergeBase(ctx context.Context, r Repo, base, head string) (string, error) {
	op := fmt.Sprintf("finding the merge base of %s and %s in %s", base, head, r)
	if err := r.validate(); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if !validBranch(base) || !validBranch(head) {
		return "", fmt.Errorf("%s: want SHAs or branch names", op)
	}
	// One commit per page: only the merge base is read, not the commit list.
	cmp, _, err := c.api().Repositories.CompareCommits(c.ctx(ctx), r.Owner, r.Name, base, head, &github.ListOptions{PerPage: 1})
	if err != nil {
		return "", wrap(err, op, "contents: read")
	}
	sha := cmp.GetMergeBaseCommit().GetSHA()
	if !isFullSHA(sha) {
		return "", fmt.Errorf("%s: GitHub answered an unexpected merge base %q", op, strs.Clip(sha, 80, "..."))
	}
	return sha, nil
}
