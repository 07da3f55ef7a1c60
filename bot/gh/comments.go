package gh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"
	"github.com/lablup/perfbot/bot/logkey"
)

// Action says what an idempotent write did.
type Action string

// The outcomes of an upsert.
const (
	Created   Action = "created"
	Updated   Action = "updated"
	Unchanged Action = "unchanged"
	// Kept is an update not made: the comment read right before the write held what
	// the caller must not replace (UpdateCommentUnless).
	Kept Action = "kept"
)

// Comment is an issue or pull request comment.
type Comment struct {
	ID   int64
	Body string
	URL  string // the comment on github.com (html_url)
	User string // the author's login
}

const (
	// MaxCommentChars is GitHub's limit on a comment body.
	MaxCommentChars = 65536
	// maxCommentPages bounds the marker search (100 comments a page); beyond it the
	// search fails loudly rather than missing the comment and posting a duplicate.
	maxCommentPages = 100
)

const (
	needIssuesRead  = "issues: read"
	needIssuesWrite = "issues: write"
)

func commentFrom(c *github.IssueComment) Comment {
	return Comment{ID: c.GetID(), Body: c.GetBody(), URL: c.GetHTMLURL(), User: c.GetUser().GetLogin()}
}

// FindCommentWithMarker returns the oldest comment on the issue (or pull request) that
// was written by the bot's own identity and contains marker, or nil when there is none.
// It reads every page: the comment may be far down a long thread.
func (c *Client) FindCommentWithMarker(ctx context.Context, r Repo, issue int, marker string) (*Comment, error) {
	op := fmt.Sprintf("listing the comments of %s#%d", r, issue)
	if err := checkIssue(r, issue); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if strings.TrimSpace(marker) == "" {
		return nil, fmt.Errorf("%s: the marker is empty; pass a hidden marker such as <!-- perfbot:status -->", op)
	}
	self, err := c.Login(ctx)
	if err != nil {
		return nil, err
	}
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	api := c.api()
	for page := 1; ; page++ {
		if page > maxCommentPages {
			return nil, fmt.Errorf("%s: more than %d comments; refusing to guess whether the marked comment exists", op, maxCommentPages*100)
		}
		list, resp, err := api.Issues.ListComments(c.ctx(ctx), r.Owner, r.Name, issue, opts)
		if err != nil {
			return nil, wrap(err, op, needIssuesRead)
		}
		for _, cm := range list {
			if strings.EqualFold(cm.GetUser().GetLogin(), self) && strings.Contains(cm.GetBody(), marker) {
				found := commentFrom(cm)
				return &found, nil
			}
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
}

// UpsertComment keeps exactly one bot comment carrying marker on the issue: it edits the
// existing one when the body differs, or creates it. body must contain marker, so the
// next call finds it again.
func (c *Client) UpsertComment(ctx context.Context, r Repo, issue int, marker, body string) (Comment, Action, error) {
	op := fmt.Sprintf("upserting the %s comment on %s#%d", marker, r, issue)
	if strings.TrimSpace(marker) == "" || !strings.Contains(body, marker) {
		return Comment{}, "", fmt.Errorf("%s: the body must contain the marker, or the next run could not find the comment and would post a second one", op)
	}
	if err := checkBody(body); err != nil {
		return Comment{}, "", fmt.Errorf("%s: %w", op, err)
	}
	found, err := c.FindCommentWithMarker(ctx, r, issue, marker)
	if err != nil {
		return Comment{}, "", err
	}
	if found != nil {
		if sameText(found.Body, body) {
			return *found, Unchanged, nil
		}
		cm, err := c.editComment(ctx, r, found.ID, body)
		if err != nil {
			return Comment{}, "", err
		}
		return cm, Updated, nil
	}
	return c.createMarked(ctx, r, issue, marker, body)
}

// createMarked posts the comment and, when GitHub fails in a way that may have posted it
// anyway (a server error, a dropped connection), looks for the marker before trying
// again: a duplicate comment is the worst outcome.
func (c *Client) createMarked(ctx context.Context, r Repo, issue int, marker, body string) (Comment, Action, error) {
	for attempt := 0; ; attempt++ {
		cm, err := c.CreateComment(ctx, r, issue, body)
		if err == nil {
			return cm, Created, nil
		}
		if !ambiguous(err) || attempt >= c.o.MaxRetries {
			return Comment{}, "", err
		}
		wait := backoff(attempt)
		c.o.Logger.Warn("github: comment creation failed ambiguously; looking for it before retrying",
			logkey.Repo, r.String(), logkey.Issue, issue, logkey.WaitMS, wait.Milliseconds(), logkey.Error, err)
		if err := c.o.Sleep(ctx, wait); err != nil {
			return Comment{}, "", err
		}
		found, ferr := c.FindCommentWithMarker(ctx, r, issue, marker)
		if ferr != nil {
			return Comment{}, "", fmt.Errorf("checking whether a failed comment was posted: %w", ferr)
		}
		if found != nil {
			if sameText(found.Body, body) {
				return *found, Created, nil
			}
			cm, err := c.editComment(ctx, r, found.ID, body)
			if err != nil {
				return Comment{}, "", err
			}
			return cm, Created, nil
		}
	}
}

// UpdateComment sets the body of one of the bot's own comments. It reads the comment
// first, so it can report Unchanged and refuse to edit somebody else's comment.
func (c *Client) UpdateComment(ctx context.Context, r Repo, id int64, body string) (Comment, Action, error) {
	return c.UpdateCommentUnless(ctx, r, id, body, nil)
}

// UpdateCommentUnless is UpdateComment that leaves the comment as it is (Kept) when
// keep, given the body read right before the write, says so. GitHub has no conditional
// write of a comment (no If-Match on an edit), so another writer's edit can still land
// between that read and the write: the check narrows the window to one round trip, it
// does not close it.
func (c *Client) UpdateCommentUnless(ctx context.Context, r Repo, id int64, body string, keep func(current string) bool) (Comment, Action, error) {
	op := fmt.Sprintf("updating comment %d in %s", id, r)
	if err := r.validate(); err != nil {
		return Comment{}, "", fmt.Errorf("%s: %w", op, err)
	}
	if id <= 0 {
		return Comment{}, "", fmt.Errorf("%s: want a positive comment id", op)
	}
	if err := checkBody(body); err != nil {
		return Comment{}, "", fmt.Errorf("%s: %w", op, err)
	}
	cur, _, err := c.api().Issues.GetComment(c.ctx(ctx), r.Owner, r.Name, id)
	if err != nil {
		return Comment{}, "", wrap(err, op, needIssuesRead)
	}
	self, err := c.Login(ctx)
	if err != nil {
		return Comment{}, "", err
	}
	if author := cur.GetUser().GetLogin(); !strings.EqualFold(author, self) {
		return Comment{}, "", fmt.Errorf("%s: the comment was written by %s, not by %s; perfbot edits only its own comments", op, author, self)
	}
	if sameText(cur.GetBody(), body) {
		return commentFrom(cur), Unchanged, nil
	}
	if keep != nil && keep(cur.GetBody()) {
		return commentFrom(cur), Kept, nil
	}
	cm, err := c.editComment(ctx, r, id, body)
	if err != nil {
		return Comment{}, "", err
	}
	return cm, Updated, nil
}

func (c *Client) editComment(ctx context.Context, r Repo, id int64, body string) (Comment, error) {
	cm, _, err := c.api().Issues.EditComment(c.ctx(ctx), r.Owner, r.Name, id, &github.IssueComment{Body: &body})
	if err != nil {
		return Comment{}, wrap(err, fmt.Sprintf("editing comment %d in %s", id, r), needIssuesWrite)
	}
	return commentFrom(cm), nil
}

// CreateComment posts a new comment. It is sent once: after a server error GitHub may
// or may not have posted it, and the error says so. Use UpsertComment for anything that
// must not be duplicated.
func (c *Client) CreateComment(ctx context.Context, r Repo, issue int, body string) (Comment, error) {
	op := fmt.Sprintf("creating a comment on %s#%d", r, issue)
	if err := checkIssue(r, issue); err != nil {
		return Comment{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := checkBody(body); err != nil {
		return Comment{}, fmt.Errorf("%s: %w", op, err)
	}
	cm, _, err := c.api().Issues.CreateComment(c.ctx(ctx), r.Owner, r.Name, issue, &github.IssueComment{Body: &body})
	if err != nil {
		err = wrap(err, op, needIssuesWrite)
		if ambiguous(err) {
			err = fmt.Errorf("%w (the comment may have been posted anyway: look before posting again)", err)
		}
		return Comment{}, err
	}
	return commentFrom(cm), nil
}

func checkIssue(r Repo, issue int) error {
	if err := r.validate(); err != nil {
		return err
	}
	if issue <= 0 {
		return errors.New("want a positive issue or pull request number")
	}
	return nil
}

func checkBody(body string) error {
	if strings.TrimSpace(body) == "" {
		return errors.New("the comment body is empty")
	}
	if n := utf8.RuneCountInString(body); n > MaxCommentChars {
		return fmt.Errorf("the comment body has %d characters; GitHub accepts at most %d: shorten it or link to the full text", n, MaxCommentChars)
	}
	return nil
}

// sameText compares bodies as GitHub stores them: line endings may come back as CRLF.
func sameText(a, b string) bool {
	return strings.ReplaceAll(a, "\r\n", "\n") == strings.ReplaceAll(b, "\r\n", "\n")
}
