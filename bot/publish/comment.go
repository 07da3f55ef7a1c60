package publish

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lablup/perfbot/bot/gh"
)

// commenter is what a comment kept in place needs from the API.
type commenter interface {
	FindCommentWithMarker(ctx context.Context, r gh.Repo, issue int, marker string) (*gh.Comment, error)
	UpsertComment(ctx context.Context, r gh.Repo, issue int, marker, body string) (gh.Comment, gh.Action, error)
}

// marked is one comment perfbot keeps on an issue and edits in place, found again by its
// hidden marker (the epic ranking, the nightly tracking comment); a dry run keeps it as
// the file dryName in dryDir.
type marked struct {
	gh      commenter // nil: a dry run
	repo    gh.Repo
	issue   int
	marker  string
	dryDir  string
	dryName string
}

// read returns the comment's current body ("" when there is none yet), so that the next
// body can carry its history on.
func (m marked) read(ctx context.Context) (string, error) {
	if m.gh == nil {
		b, err := os.ReadFile(filepath.Join(m.dryDir, m.dryName))
		if err != nil {
			return "", nil
		}
		return string(b), nil
	}
	found, err := m.gh.FindCommentWithMarker(ctx, m.repo, m.issue, m.marker)
	if err != nil || found == nil {
		return "", err
	}
	return found.Body, nil
}

// write creates or edits the comment. The outcome names the comment (the dry-run file)
// and says what was done; on an error its action is "failed".
func (m marked) write(ctx context.Context, body string) (Outcome, error) {
	if m.gh == nil {
		action, err := writeDryFile(m.dryDir, m.dryName, body)
		out := Outcome{Action: action, Number: int64(m.issue), URL: m.dryName}
		if err != nil {
			out.Error = err.Error()
		}
		return out, err
	}
	cm, action, err := m.gh.UpsertComment(ctx, m.repo, m.issue, m.marker, body)
	if err != nil {
		return Outcome{Action: "failed", Number: int64(m.issue), Error: err.Error()}, err
	}
	return Outcome{Action: string(action), Number: int64(m.issue), URL: cm.URL}, nil
}

// prOpener is what opening the bot branch's pull request needs from the API.
type prOpener interface {
	UpsertPR(ctx context.Context, r gh.Repo, s gh.PRSpec) (gh.PR, gh.Action, error)
}

// openPR opens or updates the one pull request of spec.Head; a dry run (api nil) writes
// it as the file dryName in dryDir, with its head, base and draft state on top.
func openPR(ctx context.Context, api prOpener, r gh.Repo, dryDir, dryName string, spec gh.PRSpec) (gh.PR, Outcome, error) {
	if api == nil {
		doc := fmt.Sprintf("# %s\n\nHead `%s` into `%s`; draft: %t.\n\n---\n\n%s", spec.Title, spec.Head, spec.Base, spec.Draft, spec.Body)
		action, err := writeDryFile(dryDir, dryName, doc)
		out := Outcome{Action: action, URL: dryName}
		if err != nil {
			out.Error = err.Error()
		}
		return gh.PR{Draft: spec.Draft}, out, err
	}
	pr, action, err := api.UpsertPR(ctx, r, spec)
	if err != nil {
		return pr, Outcome{Action: "failed", Error: err.Error()}, fmt.Errorf("opening the pull request: %w", err)
	}
	return pr, Outcome{Action: string(action), Number: int64(pr.Number), URL: pr.URL}, nil
}
