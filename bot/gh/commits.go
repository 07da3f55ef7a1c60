package gh

import (
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/lablup/perfbot/internal/strs"
)

// PullHead is what pinning a run needs of a pull request: its head commit and where
// that commit lives.
type PullHead struct {
	Number int
	SHA    string // the head commit, 40 hex digits
	Ref    string // the head branch
	// Base is the branch the pull request targets (its base.ref).
	Base string
	// Repo is the head repository (owner/name); "" when the fork was deleted.
	Repo string
	// Fork is true when the head lives in another repository than the base, or in one
	// that no longer exists.
	Fork  bool
	State string // open or closed
}

// PullHead reads a pull request's head.
func (c *Client) PullHead(ctx context.Context, r Repo, number int) (PullHead, error) {
	op := fmt.Sprintf("reading pull request %s#%d", r, number)
	if err := checkIssue(r, number); err != nil {
		return PullHead{}, fmt.Errorf("%s: %w", op, err)
	}
	p, _, err := c.api().PullRequests.Get(c.ctx(ctx), r.Owner, r.Name, number)
	if err != nil {
		return PullHead{}, wrap(err, op, needPullsRead)
	}
	h := PullHead{Number: p.GetNumber(), SHA: p.GetHead().GetSHA(), Ref: p.GetHead().GetRef(), Base: p.GetBase().GetRef(), State: p.GetState()}
	head, base := p.GetHead().GetRepo(), p.GetBase().GetRepo()
	h.Repo = head.GetFullName()
	switch {
	case head == nil || base == nil:
		h.Fork = true // a deleted fork: nobody can say whose code it is
	case head.GetID() != 0 && base.GetID() != 0:
		h.Fork = head.GetID() != base.GetID()
	default:
		h.Fork = !strings.EqualFold(head.GetFullName(), base.GetFullName())
	}
	if !isFullSHA(h.SHA) {
		return PullHead{}, fmt.Errorf("%s: GitHub answered an unexpected head commit %q", op, h.SHA)
	}
	return h, nil
}

// CommitSHA resolves a commit-ish of the repository (a SHA of 7 to 40 hex digits, or a
// branch) to the full SHA of its commit. An unknown or ambiguous one is an error
// matching ErrNotFound or, for an ambiguous short SHA, an APIError with status 422.
//
// GitHub serves the commits of every fork through the parent repository too: a SHA
// that resolves here may not be on any branch of r (see Contains).
func (c *Client) CommitSHA(ctx context.Context, r Repo, ref string) (string, error) {
	op := fmt.Sprintf("resolving commit %s in %s", ref, r)
	if err := r.validate(); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if !validBranch(ref) {
		return "", fmt.Errorf("%s: %q is neither a SHA nor a branch name", op, ref)
	}
	// The sha media type answers the 40 digits alone, not the commit and its diff.
	sha, _, err := c.api().Repositories.GetCommitSHA1(c.ctx(ctx), r.Owner, r.Name, ref, "")
	if err != nil {
		return "", wrap(err, op, "contents: read")
	}
	sha = strings.TrimSpace(sha)
	if !isFullSHA(sha) {
		return "", fmt.Errorf("%s: GitHub answered an unexpected SHA %q", op, strs.Clip(sha, 80, "..."))
	}
	return sha, nil
}

// Contains reports whether commit sha is head itself or one of its ancestors, where
// head is a branch or a SHA of r: whether the commit belongs to that line of history.
func (c *Client) Contains(ctx context.Context, r Repo, head, sha string) (bool, error) {
	op := fmt.Sprintf("comparing %s with %s in %s", sha, head, r)
	if err := r.validate(); err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	if !validBranch(head) || !validBranch(sha) {
		return false, fmt.Errorf("%s: want SHAs or branch names", op)
	}
	// One commit per page: only the status is read, not the commit list.
	cmp, _, err := c.api().Repositories.CompareCommits(c.ctx(ctx), r.Owner, r.Name, sha, head, &github.ListOptions{PerPage: 1})
	if err != nil {
		return false, wrap(err, op, "contents: read")
	}
	switch cmp.GetStatus() {
	case "identical", "ahead":
		return true, nil
	case "behind", "diverged":
		return false, nil
	}
	return false, fmt.Errorf("%s: GitHub answered an unknown status %q", op, cmp.GetStatus())
}

// MaxFileBytes bounds FileContent: the contents API serves files up to 1 MiB.
const MaxFileBytes = 1 << 20

// FileContent returns the bytes of a file of the repository at ref (a branch or a SHA).
// A missing file is an error matching ErrNotFound.
func (c *Client) FileContent(ctx context.Context, r Repo, file, ref string) ([]byte, error) {
	op := fmt.Sprintf("reading %s at %s in %s", file, ref, r)
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if file == "" || path.IsAbs(file) || path.Clean(file) != file || strings.HasPrefix(file, "../") || file == ".." {
		return nil, fmt.Errorf("%s: want a clean path inside the repository", op)
	}
	if !validBranch(ref) {
		return nil, fmt.Errorf("%s: %q is neither a SHA nor a branch name", op, ref)
	}
	fc, _, _, err := c.api().Repositories.GetContents(c.ctx(ctx), r.Owner, r.Name, file, &github.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, wrap(err, op, "contents: read")
	}
	if fc == nil || fc.GetType() != "file" {
		return nil, fmt.Errorf("%s: not a file", op)
	}
	if fc.GetSize() > MaxFileBytes {
		return nil, fmt.Errorf("%s: the file has %d bytes; perfbot reads at most %d", op, fc.GetSize(), MaxFileBytes)
	}
	if fc.GetEncoding() != "base64" {
		return nil, fmt.Errorf("%s: GitHub answered the content in encoding %q, not base64", op, fc.GetEncoding())
	}
	raw := ""
	if fc.Content != nil {
		raw = *fc.Content
	}
	if base64.StdEncoding.DecodedLen(len(raw)) > 2*MaxFileBytes {
		return nil, fmt.Errorf("%s: the answer is larger than the %d bytes perfbot reads", op, MaxFileBytes)
	}
	// GitHub wraps the base64 text in lines.
	b, err := base64.StdEncoding.DecodeString(strings.Map(dropSpace, raw))
	if err != nil {
		return nil, fmt.Errorf("%s: decoding the content: %w", op, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s: the file has %d bytes; perfbot reads at most %d", op, len(b), MaxFileBytes)
	}
	return b, nil
}

func dropSpace(r rune) rune {
	if r == '\n' || r == '\r' || r == ' ' {
		return -1
	}
	return r
}

func isFullSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CommitPull is a pull request associated with a commit: the one it was merged by, or
// one whose head holds it.
type CommitPull struct {
	Number int
	URL    string // on github.com (html_url)
	Title  string
	State  string // open or closed
	Merged bool   // merged_at is set
}

// maxCommitPulls bounds the pull requests read for one commit: one page.
const maxCommitPulls = 100

// CommitPulls lists the pull requests GitHub associates with a commit ("list pull
// requests associated with a commit": the pull request that merged it into the
// default branch, or the open ones whose head holds it), merged ones first, then by
// number. sha must be a full SHA; none associated is an empty list.
func (c *Client) CommitPulls(ctx context.Context, r Repo, sha string) ([]CommitPull, error) {
	op := fmt.Sprintf("listing the pull requests of commit %s in %s", strs.ShortSHA(sha), r)
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if !isFullSHA(sha) {
		return nil, fmt.Errorf("%s: %q is not a full 40-hex-digit SHA", op, strs.Clip(sha, 80, "..."))
	}
	list, _, err := c.api().PullRequests.ListPullRequestsWithCommit(c.ctx(ctx), r.Owner, r.Name, sha, &github.ListOptions{PerPage: maxCommitPulls})
	if err != nil {
		return nil, wrap(err, op, needPullsRead)
	}
	out := make([]CommitPull, 0, len(list))
	for _, p := range list {
		if p.GetNumber() <= 0 {
			return nil, fmt.Errorf("%s: GitHub answered a pull request without a number", op)
		}
		out = append(out, CommitPull{Number: p.GetNumber(), URL: p.GetHTMLURL(), Title: p.GetTitle(), State: p.GetState(), Merged: p.MergedAt != nil})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Merged != out[j].Merged {
			return out[i].Merged
		}
		return out[i].Number < out[j].Number
	})
	return out, nil
}
