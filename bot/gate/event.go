package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/lablup/perfbot/bot/gh"
)

// MaxPayloadBytes bounds an issue_comment payload: GitHub caps webhook payloads at
// 25 MB.
const MaxPayloadBytes = 25 << 20

// Event is what the gate reads of one issue_comment event, as plain values.
type Event struct {
	// Action is created, edited or deleted.
	Action string
	Repo   gh.Repo
	// DefaultBranch is the repository's default branch, from the payload.
	DefaultBranch string
	// InstallationID is the GitHub App installation that sent it; 0 outside an App.
	InstallationID int64
	// Issue is the issue or pull request number; IsPR tells which.
	Issue int
	IsPR  bool
	// CommentID and Body are the comment's; Author and AuthorType ("User", "Bot",
	// "Organization") its author's.
	CommentID  int64
	Body       string
	Author     string
	AuthorType string
	// Sender is who caused the event (for edited: the editor).
	Sender     string
	SenderType string
	// PreviousBody is the body before an edit (changes.body.from); BodyChanged is false
	// when the edit did not touch the body or the event is not an edit.
	PreviousBody string
	BodyChanged  bool
}

// FromGitHub takes the values of go-github's decoded event.
func FromGitHub(ev *github.IssueCommentEvent) (Event, error) {
	if ev == nil || ev.Comment == nil || ev.Issue == nil || ev.Repo == nil {
		return Event{}, errors.New("reading the issue_comment event: it has no comment, issue or repository")
	}
	e := Event{
		Action:        ev.GetAction(),
		DefaultBranch: ev.GetRepo().GetDefaultBranch(),
		Issue:         ev.GetIssue().GetNumber(),
		IsPR:          ev.GetIssue().IsPullRequest(),
		CommentID:     ev.GetComment().GetID(),
		Body:          ev.GetComment().GetBody(),
		Author:        ev.GetComment().GetUser().GetLogin(),
		AuthorType:    ev.GetComment().GetUser().GetType(),
		Sender:        ev.GetSender().GetLogin(),
		SenderType:    ev.GetSender().GetType(),
	}
	if ev.Installation != nil {
		e.InstallationID = ev.GetInstallation().GetID()
	}
	if ev.Changes != nil && ev.Changes.Body != nil && ev.Changes.Body.From != nil {
		e.PreviousBody, e.BodyChanged = *ev.Changes.Body.From, true
	}
	repo, err := gh.ParseRepo(ev.GetRepo().GetFullName())
	if err != nil {
		return Event{}, fmt.Errorf("reading the issue_comment event: %w", err)
	}
	e.Repo = repo
	return e, e.validate()
}

// ParseEvent decodes an issue_comment payload (the webhook body, or the file at
// GITHUB_EVENT_PATH in Actions).
func ParseEvent(payload []byte) (Event, error) {
	if len(payload) > MaxPayloadBytes {
		return Event{}, fmt.Errorf("reading the issue_comment event: the payload has %d bytes; GitHub sends at most %d", len(payload), MaxPayloadBytes)
	}
	var ev github.IssueCommentEvent
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&ev); err != nil {
		return Event{}, fmt.Errorf("reading the issue_comment event: %w", err)
	}
	return FromGitHub(&ev)
}

func (e Event) validate() error {
	// An unknown action is not refused here: Decide ignores it.
	var errs []string
	if e.Issue <= 0 {
		errs = append(errs, "no issue number")
	}
	if e.CommentID <= 0 {
		errs = append(errs, "no comment id")
	}
	if e.Author == "" {
		errs = append(errs, "no comment author")
	}
	if e.Sender == "" {
		errs = append(errs, "no sender")
	}
	if len(errs) > 0 {
		return fmt.Errorf("reading the issue_comment event: %s", strings.Join(errs, ", "))
	}
	return nil
}
