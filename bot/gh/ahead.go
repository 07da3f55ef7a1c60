package gh

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"
)

// Comparison is how head stands to base, as the compare endpoint says it: Status is
// identical, ahead (base is an ancestor of head), behind (head is an ancestor of base)
// or diverged; AheadBy is the number of commits of base..head (every commit reachable
// from head and not from base, merged ones included), BehindBy those of head..base.
type Comparison struct {
	Status            string
	AheadBy, BehindBy int
}

// Compare compares base with head (branches or SHAs of r): what a bisection of
// base..head needs to know before it is queued. An unknown base or head is an error
// matching ErrNotFound.
func (c *Client) Compare(ctx context.Context, r Repo, base, head string) (Comparison, error) {
	op := fmt.Sprintf("comparing %s with %s in %s", base, head, r)
	if err := r.validate(); err != nil {
		return Comparison{}, fmt.Errorf("%s: %w", op, err)
	}
	if !validBranch(base) || !validBranch(head) {
		return Comparison{}, fmt.Errorf("%s: want SHAs or branch names", op)
	}
	// One commit per page: only the counts are read, not the commit list.
	cmp, _, err := c.api().Repositories.CompareCommits(c.ctx(ctx), r.Owner, r.Name, base, head, &github.ListOptions{PerPage: 1})
	if err != nil {
		return Comparison{}, wrap(err, op, "contents: read")
	}
	out := Comparison{Status: cmp.GetStatus(), AheadBy: cmp.GetAheadBy(), BehindBy: cmp.GetBehindBy()}
	switch out.Status {
	case "identical", "ahead", "behind", "diverged":
	default:
		return Comparison{}, fmt.Errorf("%s: GitHub answered an unknown status %q", op, out.Status)
	}
	if out.AheadBy < 0 || out.BehindBy < 0 {
		return Comparison{}, fmt.Errorf("%s: GitHub answered negative counts (%d ahead, %d behind)", op, out.AheadBy, out.BehindBy)
	}
	return out, nil
}
