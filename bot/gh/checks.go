package gh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// CheckOutput is how a check run ends.
type CheckOutput struct {
	Conclusion string // success, failure, neutral, cancelled, skipped, timed_out or action_required
	Title      string
	Summary    string // Markdown; cut to MaxCheckText bytes with a note if longer
	Text       string // Markdown details; cut the same way
	DetailsURL string // where the full report lives (required for action_required)
}

// MaxCheckText is GitHub's limit on a check run's summary and on its text (65535
// characters); counting bytes keeps any text within it.
const MaxCheckText = 65535

var conclusions = map[string]bool{
	"success": true, "failure": true, "neutral": true, "cancelled": true,
	"skipped": true, "timed_out": true, "action_required": true,
}

// checkRunUpdate is written here rather than with go-github's UpdateCheckRunOptions,
// whose required-by-type Name would send "name": "" and rename the check run.
type checkRunUpdate struct {
	Status      string         `json:"status"`
	Conclusion  string         `json:"conclusion"`
	CompletedAt string         `json:"completed_at"`
	DetailsURL  string         `json:"details_url,omitempty"`
	Output      checkRunOutput `json:"output"`
}

type checkRunOutput struct {
	Title   string `json:"title"`
	Summary string `json:"summary"`
	Text    string `json:"text,omitempty"`
}

// CompleteCheckRun marks a check run completed with a conclusion and its report.
// Repeating it with the same output leaves the check run as it was.
func (c *Client) CompleteCheckRun(ctx context.Context, r Repo, id int64, o CheckOutput) error {
	op := fmt.Sprintf("completing check run %d in %s", id, r)
	if err := checkCheckOutput(r, id, o); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	body := checkRunUpdate{
		Status:      "completed",
		Conclusion:  o.Conclusion,
		CompletedAt: c.o.Now().UTC().Format(time.RFC3339),
		DetailsURL:  o.DetailsURL,
		Output: checkRunOutput{
			Title:   o.Title,
			Summary: Truncate(o.Summary, MaxCheckText),
			Text:    Truncate(o.Text, MaxCheckText),
		},
	}
	api := c.api()
	req, err := api.NewRequest("PATCH", fmt.Sprintf("repos/%s/%s/check-runs/%d", r.Owner, r.Name, id), body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = api.Do(c.ctx(ctx), req, nil)
	return wrap(err, op, "checks: write")
}

func checkCheckOutput(r Repo, id int64, o CheckOutput) error {
	if err := r.validate(); err != nil {
		return err
	}
	var errs []error
	if id <= 0 {
		errs = append(errs, errors.New("want a positive check run id"))
	}
	if !conclusions[o.Conclusion] {
		errs = append(errs, fmt.Errorf("conclusion %q: want one of success, failure, neutral, cancelled, skipped, timed_out, action_required", o.Conclusion))
	}
	if o.Conclusion == "action_required" && o.DetailsURL == "" {
		errs = append(errs, errors.New("conclusion action_required needs a details URL"))
	}
	if strings.TrimSpace(o.Title) == "" {
		errs = append(errs, errors.New("the output title is empty"))
	}
	if strings.TrimSpace(o.Summary) == "" {
		errs = append(errs, errors.New("the output summary is empty"))
	}
	return errors.Join(errs...)
}

// Truncate cuts Markdown to at most limit bytes without splitting a UTF-8 character,
// preferring a line end, closing a code fence left open, and saying that it was cut.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := fmt.Sprintf("\n\n_(truncated: %d of %d bytes shown; see the details link for the full report)_\n", 0, len(s))
	budget := limit - len(note) - len("\n```") - 8 // room for the real numbers and a fence
	if budget <= 0 {
		return safePrefix(s, limit)
	}
	cut := safePrefix(s, budget)
	// A cut mid-line makes a broken table row or sentence; step back to a line end
	// unless that throws away too much.
	if i := strings.LastIndexByte(cut, '\n'); i >= len(cut)-4096 && i > 0 {
		cut = cut[:i]
	}
	if strings.Count("\n"+cut, "\n```")%2 == 1 {
		cut += "\n```"
	}
	return cut + fmt.Sprintf("\n\n_(truncated: %d of %d bytes shown; see the details link for the full report)_\n", len(cut), len(s))
}

// safePrefix returns the longest prefix of s of at most n bytes that ends on a rune boundary.
func safePrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
