package gh

import (
	"context"
	"fmt"
	"strings"
)

// CheckProgress is a check run moved to in progress: where it is followed and what it
// says meanwhile.
type CheckProgress struct {
	Title      string
	Summary    string // Markdown; cut to MaxCheckText bytes with a note if longer
	DetailsURL string // the workflow run's page
}

type checkRunStart struct {
	Status     string         `json:"status"`
	DetailsURL string         `json:"details_url,omitempty"`
	Output     checkRunOutput `json:"output"`
}

// StartCheckRun moves a check run to in_progress with a details URL and a summary.
// Repeating it leaves the check run as it was.
func (c *Client) StartCheckRun(ctx context.Context, r Repo, id int64, p CheckProgress) error {
	op := fmt.Sprintf("moving check run %d in %s to in progress", id, r)
	if err := r.validate(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if id <= 0 {
		return fmt.Errorf("%s: want a positive check run id", op)
	}
	if strings.TrimSpace(p.Title) == "" || strings.TrimSpace(p.Summary) == "" {
		return fmt.Errorf("%s: the title and summary are required", op)
	}
	body := checkRunStart{Status: "in_progress", DetailsURL: p.DetailsURL,
		Output: checkRunOutput{Title: p.Title, Summary: Truncate(p.Summary, MaxCheckText)}}
	api := c.api()
	req, err := api.NewRequest("PATCH", fmt.Sprintf("repos/%s/%s/check-runs/%d", r.Owner, r.Name, id), body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = api.Do(c.ctx(ctx), req, nil)
	return wrap(err, op, "checks: write")
}
