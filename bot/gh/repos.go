package gh

import (
	"context"
	"fmt"
	"strings"
)

var reactions = map[string]bool{
	"+1": true, "-1": true, "laugh": true, "confused": true,
	"heart": true, "hooray": true, "rocket": true, "eyes": true,
}

// React adds a reaction (+1, -1, laugh, confused, heart, hooray, rocket, eyes) to an
// issue or pull request comment. Reacting twice is harmless: GitHub keeps one.
func (c *Client) React(ctx context.Context, r Repo, commentID int64, content string) error {
	op := fmt.Sprintf("reacting %s to comment %d in %s", content, commentID, r)
	if err := r.validate(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if commentID <= 0 {
		return fmt.Errorf("%s: want a positive comment id", op)
	}
	if !reactions[content] {
		return fmt.Errorf("%s: unknown reaction; want one of +1, -1, laugh, confused, heart, hooray, rocket, eyes", op)
	}
	// GitHub answers 200 for an existing reaction instead of adding a second one, so a
	// retried POST is safe.
	_, _, err := c.api().Reactions.CreateIssueCommentReaction(repeatable(c.ctx(ctx)), r.Owner, r.Name, commentID, content)
	return wrap(err, op, needIssuesWrite)
}

// Permissions, strongest first.
var permissionRank = map[string]int{"admin": 5, "maintain": 4, "write": 3, "triage": 2, "read": 1, "none": 0}

// Permission returns user's permission on the repository: admin, maintain, write,
// triage, read or none. A user who is not a collaborator gets an error matching
// ErrNotFound on private repositories and "read" on public ones, as GitHub answers.
func (c *Client) Permission(ctx context.Context, r Repo, user string) (string, error) {
	op := fmt.Sprintf("looking up %s's permission on %s", user, r)
	if err := r.validate(); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if !validUser(user) {
		return "", fmt.Errorf("%s: %q is not a GitHub login", op, user)
	}
	// go-github v62 drops role_name, the only field that tells maintain and triage
	// apart from write and read; decode the answer here.
	var ans struct {
		Permission string `json:"permission"`
		RoleName   string `json:"role_name"`
	}
	api := c.api()
	req, err := api.NewRequest("GET", fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", r.Owner, r.Name, user), nil)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if _, err := api.Do(c.ctx(ctx), req, &ans); err != nil {
		return "", wrap(err, op, "metadata: read")
	}
	if _, ok := permissionRank[ans.RoleName]; ok {
		return ans.RoleName, nil
	}
	// Custom roles carry their own name in role_name; their base level is in permission.
	if _, ok := permissionRank[ans.Permission]; ok {
		return ans.Permission, nil
	}
	return "", fmt.Errorf("%s: GitHub answered an unknown permission %q", op, ans.Permission)
}

// AtLeast reports whether permission have meets the minimum want (both among admin,
// maintain, write, triage, read, none). Unknown values never meet a minimum.
func AtLeast(have, want string) bool {
	h, okH := permissionRank[have]
	w, okW := permissionRank[want]
	return okH && okW && h >= w
}

// DefaultBranch returns the repository's default branch.
func (c *Client) DefaultBranch(ctx context.Context, r Repo) (string, error) {
	op := fmt.Sprintf("reading the default branch of %s", r)
	if err := r.validate(); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	repo, _, err := c.api().Repositories.Get(c.ctx(ctx), r.Owner, r.Name)
	if err != nil {
		return "", wrap(err, op, "metadata: read")
	}
	if repo.GetDefaultBranch() == "" {
		return "", fmt.Errorf("%s: GitHub answered no default branch (is the repository empty?)", op)
	}
	return repo.GetDefaultBranch(), nil
}

// BranchHead returns the commit SHA a branch points to now.
func (c *Client) BranchHead(ctx context.Context, r Repo, branch string) (string, error) {
	op := fmt.Sprintf("reading the head of branch %s in %s", branch, r)
	if err := r.validate(); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if !validBranch(branch) {
		return "", fmt.Errorf("%s: %q is not a valid branch name", op, branch)
	}
	ref, _, err := c.api().Git.GetRef(c.ctx(ctx), r.Owner, r.Name, "heads/"+strings.TrimPrefix(branch, "refs/heads/"))
	if err != nil {
		return "", wrap(err, op, "contents: read")
	}
	sha := ref.GetObject().GetSHA()
	if len(sha) != 40 {
		return "", fmt.Errorf("%s: GitHub answered an unexpected object %q", op, sha)
	}
	return sha, nil
}
