package gh

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// WorkflowRun is a run of an Actions workflow.
type WorkflowRun struct {
	ID           int64
	DisplayTitle string // the run-name, which carries perfbot's request id
	Status       string // queued, in_progress, completed ...
	Conclusion   string // success, failure, cancelled ... once completed
	URL          string // on github.com (html_url)
	CreatedAt    time.Time
	StartedAt    time.Time
	UpdatedAt    time.Time
}

func runFrom(r *github.WorkflowRun) WorkflowRun {
	return WorkflowRun{
		ID: r.GetID(), DisplayTitle: r.GetDisplayTitle(), Status: r.GetStatus(), Conclusion: r.GetConclusion(),
		URL: r.GetHTMLURL(), CreatedAt: r.GetCreatedAt().Time, StartedAt: r.GetRunStartedAt().Time, UpdatedAt: r.GetUpdatedAt().Time,
	}
}

const (
	needActionsRead  = "actions: read"
	needActionsWrite = "actions: write"
	// maxRunPages bounds a run search: perfbot looks for a run it just dispatched.
	maxRunPages = 5
)

// DispatchWorkflow starts a workflow_dispatch run of workflow (a file name such as
// perfbot.yml) at ref, with inputs. It is sent once: after a server error the run
// may exist anyway (MayHaveHappened), so look for it before dispatching again.
func (c *Client) DispatchWorkflow(ctx context.Context, r Repo, workflow, ref string, inputs map[string]any) error {
	op := fmt.Sprintf("dispatching workflow %s at %s in %s", workflow, ref, r)
	if err := r.validate(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if !validWorkflow(workflow) {
		return fmt.Errorf("%s: %q is not a workflow file name (for example perfbot.yml)", op, workflow)
	}
	if !validBranch(ref) {
		return fmt.Errorf("%s: %q is not a valid branch name", op, ref)
	}
	_, err := c.api().Actions.CreateWorkflowDispatchEventByFileName(c.ctx(ctx), r.Owner, r.Name, workflow,
		github.CreateWorkflowDispatchEventRequest{Ref: ref, Inputs: inputs})
	return wrap(err, op, needActionsWrite)
}

// WorkflowRuns lists the workflow_dispatch runs of workflow created at or after since,
// newest first.
func (c *Client) WorkflowRuns(ctx context.Context, r Repo, workflow string, since time.Time) ([]WorkflowRun, error) {
	op := fmt.Sprintf("listing the runs of workflow %s in %s", workflow, r)
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if !validWorkflow(workflow) {
		return nil, fmt.Errorf("%s: %q is not a workflow file name", op, workflow)
	}
	opts := &github.ListWorkflowRunsOptions{
		Event:       "workflow_dispatch",
		Created:     ">=" + since.UTC().Format("2006-01-02T15:04:05Z"),
		ListOptions: github.ListOptions{PerPage: 100},
	}
	var out []WorkflowRun
	for page := 1; page <= maxRunPages; page++ {
		runs, resp, err := c.api().Actions.ListWorkflowRunsByFileName(c.ctx(ctx), r.Owner, r.Name, workflow, opts)
		if err != nil {
			return nil, wrap(err, op, needActionsRead)
		}
		for _, run := range runs.WorkflowRuns {
			out = append(out, runFrom(run))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// WorkflowRunByID reads one run.
func (c *Client) WorkflowRunByID(ctx context.Context, r Repo, id int64) (WorkflowRun, error) {
	op := fmt.Sprintf("reading workflow run %d in %s", id, r)
	if err := r.validate(); err != nil {
		return WorkflowRun{}, fmt.Errorf("%s: %w", op, err)
	}
	run, _, err := c.api().Actions.GetWorkflowRunByID(c.ctx(ctx), r.Owner, r.Name, id)
	if err != nil {
		return WorkflowRun{}, wrap(err, op, needActionsRead)
	}
	return runFrom(run), nil
}

// CancelWorkflowRun asks GitHub to cancel a run (it answers 202). A run that has
// already completed answers 409, which is returned as an *APIError.
func (c *Client) CancelWorkflowRun(ctx context.Context, r Repo, id int64) error {
	op := fmt.Sprintf("cancelling workflow run %d in %s", id, r)
	if err := r.validate(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	// Cancelling twice is harmless, so the POST may be repeated after a server error.
	_, err := c.api().Actions.CancelWorkflowRunByID(repeatable(c.ctx(ctx)), r.Owner, r.Name, id)
	if isAccepted(err) {
		err = nil
	}
	return wrap(err, op, needActionsWrite)
}

// IsConflict reports a 409 answer (for example cancelling a run that has ended).
func IsConflict(err error) bool { return statusIs(err, http.StatusConflict) }

func validWorkflow(s string) bool {
	if !(strings.HasSuffix(s, ".yml") || strings.HasSuffix(s, ".yaml")) || len(s) > 255 || strings.HasPrefix(s, ".") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}
