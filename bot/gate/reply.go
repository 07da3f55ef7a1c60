package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/lablup/perfbot/bot/gh"
)

// ReplyMarker is the hidden marker of perfbot's one reply to a command comment: a
// retried delivery, a rerun of the gate job or a later edit of the same comment edits
// that reply instead of adding another.
func ReplyMarker(commentID int64) string {
	return fmt.Sprintf("<!-- perfbot:reply %d -->", commentID)
}

// Reply answers the command comment of ev with text, in its one marked reply. The
// server and the Action's gate job both answer through it.
func Reply(ctx context.Context, c *gh.Client, ev Event, text string) error {
	marker := ReplyMarker(ev.CommentID)
	body := gh.Truncate(strings.TrimRight(text, "\n"), gh.MaxCommentChars-len(marker)-4) + "\n\n" + marker + "\n"
	if _, _, err := c.UpsertComment(ctx, ev.Repo, ev.Issue, marker, body); err != nil {
		return fmt.Errorf("replying to comment %d: %w", ev.CommentID, err)
	}
	return nil
}
