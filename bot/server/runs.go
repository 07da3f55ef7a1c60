package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/internal/strs"
)

// onWorkflowRun follows the runs perfbot dispatched: it learns a run's id when it is
// requested, and when it completes it ends the request (finishing its marks if the run
// did not publish) and kicks the host for its next request. A run counts as a
// request's only when it is of the workflow file that request dispatched: its title
// alone (which any workflow of the repository can set) never ends a request.
func (dp *dispatcher) onWorkflowRun(ctx context.Context, d inbox.Delivery) error {
	var ev github.WorkflowRunEvent
	if err := json.Unmarshal(d.Payload, &ev); err != nil {
		return permanent{fmt.Errorf("reading the workflow_run event: %w", err)}
	}
	// go-github's WorkflowRun has no path: the workflow file of the run.
	var file struct {
		Run struct {
			Path string `json:"path"`
		} `json:"workflow_run"`
	}
	if err := json.Unmarshal(d.Payload, &file); err != nil {
		return permanent{fmt.Errorf("reading the workflow_run event: %w", err)}
	}
	wr := ev.GetWorkflowRun()
	id := requestOf(wr.GetDisplayTitle())
	if id == 0 {
		return nil
	}
	log := dp.log.With(logkey.Delivery, d.ID, logkey.Event, d.Event, logkey.Repo, ev.GetRepo().GetFullName(), logkey.Request, id, logkey.Run, wr.GetID())
	r, ok, err := dp.queue.Get(ctx, id)
	if err != nil {
		return err
	}
	if !ok || r.Repo != ev.GetRepo().GetFullName() || wr.GetEvent() != "workflow_dispatch" {
		log.Debug("server: a run that is not one of perfbot's requests")
		return nil
	}
	if !sameWorkflow(file.Run.Path, r.Workflow) {
		log.Info("server: a run titled after a request, of another workflow file; ignored", "path", strs.Clip(file.Run.Path, 200, "…"), "workflow", r.Workflow)
		return nil
	}
	if created := wr.GetCreatedAt().Time; !created.IsZero() && created.Before(r.CreatedAt.Add(-2*time.Minute)) {
		log.Info("server: a run older than the request it names; ignored")
		return nil
	}
	run := gh.WorkflowRun{
		ID: wr.GetID(), DisplayTitle: wr.GetDisplayTitle(), Status: wr.GetStatus(), Conclusion: wr.GetConclusion(),
		URL: wr.GetHTMLURL(), CreatedAt: wr.GetCreatedAt().Time, StartedAt: wr.GetRunStartedAt().Time, UpdatedAt: wr.GetUpdatedAt().Time,
	}
	unlock := dp.lock(r.Host)
	err = dp.followRun(ctx, r, run, ev.GetAction(), log)
	unlock()
	if err != nil {
		return err
	}
	dp.kick(r.Host, false)
	return nil
}

func (dp *dispatcher) followRun(ctx context.Context, r queue.Request, run gh.WorkflowRun, action string, log *slog.Logger) error {
	if !r.State.Final() {
		changed, err := dp.queue.SetRun(ctx, r.ID, run.ID, run.URL, run.StartedAt)
		if err != nil {
			return err
		}
		if changed {
			r.RunID, r.RunURL, r.StartedAt = run.ID, run.URL, run.StartedAt
			if r.State != queue.Running {
				log.Info("server: run started")
				r.State = queue.Running
			}
		}
		if r.CancelBy != "" && run.Status != "completed" {
			c, err := dp.api(r.Installation)
			if err != nil {
				return err
			}
			if err := cancelRun(ctx, c, r); err != nil {
				return err
			}
		}
	}
	if action != "completed" && run.Status != "completed" {
		// The run started (requested, or in progress): the status comment and the
		// check run say so with the run's link, unless it is this request's run no
		// longer (SetRun keeps the first run) or the request has ended.
		if r.State == queue.Running && r.RunID == run.ID && r.CancelBy == "" {
			return dp.marks.showRunning(ctx, r, true)
		}
		return nil
	}
	return dp.complete(ctx, r, run)
}

// complete ends a request whose run completed. The request ends first, so the host is
// free even when the marks below fail (they are retried with the delivery).
func (dp *dispatcher) complete(ctx context.Context, r queue.Request, run gh.WorkflowRun) error {
	state := queue.Failed
	switch run.Conclusion {
	case "success":
		state = queue.Done
	case "cancelled":
		state = queue.Cancelled
	}
	// GitHub's own times: the run's start and its last update, when it completed.
	took := run.UpdatedAt.Sub(run.StartedAt)
	if run.StartedAt.IsZero() || took <= 0 || took > 7*24*time.Hour {
		took = 0
	}
	changed, err := dp.queue.Finish(ctx, r.ID, state, run.Conclusion, "", took)
	if err != nil {
		return err
	}
	if changed {
		dp.finished.WithLabelValues(r.Host, string(state)).Inc()
		dp.log.Info("server: run completed", logkey.Request, r.ID, logkey.Host, r.Host, logkey.Run, run.ID, "conclusion", run.Conclusion)
	}
	r, _, err = dp.queue.Get(ctx, r.ID)
	if err != nil {
		return err
	}
	why := fmt.Sprintf("Request %d: the workflow run ended (%s) without publishing its results; see the run's log.", r.ID, conclusionText(run.Conclusion))
	if r.State == queue.Cancelled {
		why = fmt.Sprintf("Request %d was cancelled", r.ID)
		if r.CancelBy != "" {
			why += " by " + r.CancelBy
		}
		why += " while it ran."
	}
	return dp.marks.finish(ctx, r, why, run.URL)
}

// sameWorkflow reports whether a run's workflow path (".github/workflows/perfbot.yml",
// possibly followed by "@" and a ref) is the workflow file dispatched.
func sameWorkflow(path, file string) bool {
	path, _, _ = strings.Cut(path, "@")
	return file != "" && path == ".github/workflows/"+file
}

func conclusionText(c string) string {
	if c == "" {
		return "no conclusion"
	}
	return c
}

// check reconciles every host's queue with GitHub (dispatches to retry or confirm,
// runs whose end was missed) and drops the requests that could not be queued.
func (dp *dispatcher) check(ctx context.Context) {
	dp.dropUnqueued(ctx)
	for _, h := range dp.hosts {
		dp.kick(h, true)
	}
}

// dropUnqueued ends the requests whose acceptance failed for good (their delivery ran
// out of attempts before the request joined its queue), so they do not count as
// waiting forever, and says so on GitHub where it can.
func (dp *dispatcher) dropUnqueued(ctx context.Context) {
	stuck, err := dp.queue.List(ctx, queue.Filter{States: []queue.State{queue.Accepting}})
	if err != nil {
		return
	}
	for _, r := range stuck {
		d, ok, err := dp.deliveries.Get(ctx, r.Delivery)
		if err != nil || !ok || d.State != inbox.Failed {
			continue
		}
		why := fmt.Sprintf("Request %d could not be queued: %s. Post the command again.", r.ID, d.Error)
		if changed, err := dp.queue.Finish(ctx, r.ID, queue.Failed, "", why, 0); err != nil || !changed {
			continue
		}
		dp.finished.WithLabelValues(r.Host, string(queue.Failed)).Inc()
		dp.log.Warn("server: a request that could not be queued was dropped", logkey.Request, r.ID, logkey.Delivery, r.Delivery)
		r.State = queue.Failed
		if err := dp.marks.finish(ctx, r, why, ""); err != nil {
			dp.log.Warn("server: finishing the marks of a dropped request failed", logkey.Request, r.ID, logkey.Error, err)
		}
	}
}
