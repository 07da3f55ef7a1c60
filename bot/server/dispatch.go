package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/prometheus/client_golang/prometheus"
)

// RunName is the run-name the dispatched workflow must carry (docs/server.md §5): the
// request id is how the server finds its run among the repository's runs.
func RunName(id int64) string { return fmt.Sprintf("perfbot request %d", id) }

var runNameRE = regexp.MustCompile(`\bperfbot request (\d{1,18})\b`)

// requestOf returns the request id a run's title names, or 0.
func requestOf(title string) int64 {
	m := runNameRE.FindStringSubmatch(title)
	if m == nil {
		return 0
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

// Inputs are the workflow_dispatch inputs of a request (docs/server.md §5). Values are
// strings, as the REST API takes them; the workflow declares their types.
//
// A compare adds base, its A commit (40 hex digits; sha is its B), and repeats, its
// most repeats per side. A bisection (job bisect) adds base, its last good commit
// (sha is its first bad one), and its one model in models. Other requests send
// neither, so a workflow that does not declare them still takes their dispatches.
func Inputs(r queue.Request) map[string]any {
	in := map[string]any{
		"job":                r.Kind,
		"request_id":         strconv.FormatInt(r.ID, 10),
		"sha":                r.SHA,
		"models":             strings.Join(r.Models, ","),
		"sampling":           strings.Join(r.Sampling, ","),
		"epic":               strconv.Itoa(r.Epic),
		"issue":              strconv.Itoa(r.Issue),
		"status_comment_id":  strconv.FormatInt(r.StatusCommentID, 10),
		"trigger_comment_id": strconv.FormatInt(max(r.CommentID, 0), 10), // a re-run has none
		"check_run_id":       strconv.FormatInt(r.CheckRunID, 10),
	}
	if r.Base != "" {
		in["base"] = r.Base
		if r.Kind != string(command.Bisect) {
			in["repeats"] = strconv.Itoa(r.Repeats)
		}
	}
	return in
}

// dispatcher moves each host's queue along and follows the runs it dispatched. A
// pass over a host's queue settles its active request when it can (a dispatch whose
// answer was lost, a run whose end was missed, a cancel waiting for its run) and,
// when the host is free, claims and dispatches the next request. Passes run on the
// host's own goroutine (loops): a worker that changed a queue kicks its host and goes
// on with its next delivery, so a GitHub that is slow to take a dispatch holds that
// host's goroutine (each call bounded by github.timeout_secs), never the workers.
type dispatcher struct {
	log          *slog.Logger
	now          func() time.Time
	hosts        []string      // the hosts the periodic check reconciles
	confirmAfter time.Duration // how long to wait before looking for a run whose dispatch answer was lost
	queue        runQueue
	deliveries   deliveryGetter
	api          func(installation int64) (runAPI, error)
	marks        *marks
	loops        *hostLoops // runs pass
	// dispatches, latency and finished are perfbot_dispatches_total,
	// perfbot_dispatch_latency_seconds and perfbot_runs_finished_total.
	dispatches, finished *prometheus.CounterVec
	latency              *prometheus.HistogramVec

	mu     sync.Mutex
	hostMu map[string]*sync.Mutex
}

// runQueue is what the dispatcher reads and writes of the requests (bot/queue
// implements it).
type runQueue interface {
	Get(ctx context.Context, id int64) (queue.Request, bool, error)
	List(ctx context.Context, f queue.Filter) ([]queue.Request, error)
	Claim(ctx context.Context, host string) (queue.Request, bool, error)
	MarkDispatched(ctx context.Context, id int64) error
	Retry(ctx context.Context, id int64, cause error, next time.Time) error
	Redispatch(ctx context.Context, id int64) error
	SetRun(ctx context.Context, id, runID int64, url string, started time.Time) (bool, error)
	Finish(ctx context.Context, id int64, state queue.State, conclusion, cause string, took time.Duration) (bool, error)
}

// deliveryGetter reads a stored delivery (bot/inbox implements it): the periodic check
// ends requests whose delivery failed for good.
type deliveryGetter interface {
	Get(ctx context.Context, id string) (inbox.Delivery, bool, error)
}

// runCanceller cancels a workflow run.
type runCanceller interface {
	CancelWorkflowRun(ctx context.Context, r gh.Repo, id int64) error
}

// runAPI is what the dispatcher asks GitHub of an installation (*gh.Client implements
// it).
type runAPI interface {
	DispatchWorkflow(ctx context.Context, r gh.Repo, workflow, ref string, inputs map[string]any) error
	WorkflowRuns(ctx context.Context, r gh.Repo, workflow string, since time.Time) ([]gh.WorkflowRun, error)
	WorkflowRunByID(ctx context.Context, r gh.Repo, id int64) (gh.WorkflowRun, error)
	UpdateComment(ctx context.Context, r gh.Repo, id int64, body string) (gh.Comment, gh.Action, error)
	runCanceller
}

// lock holds a host's queue still: no pass of it runs until unlock is called.
func (dp *dispatcher) lock(host string) (unlock func()) {
	dp.mu.Lock()
	mu, ok := dp.hostMu[host]
	if !ok {
		// A host the settings do not list (a request stored under a host since
		// removed) still needs a lock.
		mu = &sync.Mutex{}
		dp.hostMu[host] = mu
	}
	dp.mu.Unlock()
	mu.Lock()
	return mu.Unlock
}

// kick asks for a pass of host's queue on the host's own goroutine and returns at
// once; reconcile asks GitHub about the active run too.
func (dp *dispatcher) kick(host string, reconcile bool) { dp.loops.kick(host, reconcile) }

// pass moves a host's queue along: it settles the active request when it can (a
// dispatch whose answer was lost, a run whose end was missed when reconcile is set,
// a cancel waiting for its run) and, when the host is free, dispatches the next
// request. Errors are logged: the next pass tries again.
func (dp *dispatcher) pass(ctx context.Context, host string, reconcile bool) {
	defer dp.lock(host)()
	log := dp.log.With(logkey.Host, host)
	for range 100 { // each turn ends a request or dispatches one
		active, err := dp.queue.List(ctx, queue.Filter{Host: host, States: activeStates})
		if err != nil {
			log.Error("server: reading the host's queue failed", logkey.Error, err)
			return
		}
		if len(active) > 0 {
			again, err := dp.settle(ctx, active[0], reconcile)
			if err != nil && ctx.Err() == nil {
				log.Warn("server: settling the active request failed; trying again later", logkey.Request, active[0].ID, logkey.Error, err)
			}
			if !again {
				return
			}
			continue
		}
		r, ok, err := dp.queue.Claim(ctx, host)
		if err != nil {
			log.Error("server: claiming the next request failed", logkey.Error, err)
			return
		}
		if !ok {
			return
		}
		if again := dp.dispatch(ctx, r); !again {
			return
		}
	}
}

// dispatch sends the workflow_dispatch of a claimed request. It reports whether the
// host is free again (the dispatch was refused and the request failed).
func (dp *dispatcher) dispatch(ctx context.Context, r queue.Request) bool {
	log := dp.log.With(logkey.Request, r.ID, logkey.Host, r.Host, logkey.Repo, r.Repo)
	c, err := dp.api(r.Installation)
	if err == nil {
		var repo gh.Repo
		if repo, err = gh.ParseRepo(r.Repo); err == nil {
			err = c.DispatchWorkflow(ctx, repo, r.Workflow, r.Ref, Inputs(r))
		}
	}
	bg := context.WithoutCancel(ctx)
	var rl *gh.RateLimitError
	switch {
	case err == nil:
		if err := dp.queue.MarkDispatched(bg, r.ID); err != nil {
			log.Error("server: recording the dispatch failed; it is confirmed later", logkey.Error, err)
		}
		dp.dispatches.WithLabelValues(r.Host, "sent").Inc()
		dp.latency.WithLabelValues(r.Host).Observe(dp.now().Sub(r.CreatedAt).Seconds())
		log.Info("server: workflow dispatched", "workflow", r.Workflow, "sha", r.SHA)
		dp.refreshQueue(ctx, r.Host)
		return false
	case ctx.Err() != nil:
		return false // stays dispatching; confirmed after a restart
	case errors.As(err, &rl):
		next := rl.RetryAt
		dp.queueRetry(bg, r, err, next)
		dp.dispatches.WithLabelValues(r.Host, "retry").Inc()
		log.Warn("server: dispatch rate limited; trying again later", logkey.Error, err, "retry_at", next.UTC().Format(time.RFC3339))
		return false
	case gh.MayHaveHappened(err):
		// The run may exist: look for it after GitHub had time to list it.
		next := dp.now().Add(dp.confirmAfter)
		dp.queueRetry(bg, r, err, next)
		dp.dispatches.WithLabelValues(r.Host, "retry").Inc()
		log.Warn("server: dispatch answer lost; looking for the run before sending it again", logkey.Error, err)
		return false
	}
	dp.dispatches.WithLabelValues(r.Host, "refused").Inc()
	log.Error("server: GitHub refused the dispatch; the request failed", logkey.Error, err)
	if ferr := dp.giveUp(bg, r, fmt.Sprintf("GitHub refused to start workflow %s for request %d: %v", r.Workflow, r.ID, err)); ferr != nil {
		log.Warn("server: ending the request failed", logkey.Error, ferr)
	}
	return true
}

// runAppearTimeout bounds the wait for the run of an accepted dispatch.
const runAppearTimeout = 30 * time.Minute

// giveUp ends an active request as failed without a run, and says why on GitHub.
func (dp *dispatcher) giveUp(ctx context.Context, r queue.Request, why string) error {
	changed, err := dp.queue.Finish(ctx, r.ID, queue.Failed, "", why, 0)
	if err != nil {
		return err
	}
	if changed {
		dp.finished.WithLabelValues(r.Host, string(queue.Failed)).Inc()
	}
	r.State = queue.Failed
	return dp.marks.finish(ctx, r, why, "")
}

func (dp *dispatcher) queueRetry(ctx context.Context, r queue.Request, cause error, next time.Time) {
	if err := dp.queue.Retry(ctx, r.ID, cause, next); err != nil {
		dp.log.Error("server: recording a dispatch retry failed", logkey.Request, r.ID, logkey.Error, err)
	}
}

// settle moves the host's active request on when it can. It reports whether the host
// became free.
func (dp *dispatcher) settle(ctx context.Context, r queue.Request, reconcile bool) (bool, error) {
	now := dp.now()
	c, err := dp.api(r.Installation)
	if err != nil {
		return false, err
	}
	repo, err := gh.ParseRepo(r.Repo)
	if err != nil {
		return false, err
	}
	switch r.State {
	case queue.Dispatching:
		// Claimed, and the dispatch failed or its answer was lost (maybe in a crash):
		// the run may exist. Look for it once GitHub had time to list it, and send the
		// dispatch again only when it is not there.
		due := r.DispatchedAt.Add(dp.confirmAfter)
		if r.NextTryAt.After(due) {
			due = r.NextTryAt
		}
		if now.Before(due) {
			return false, nil
		}
		found, err := dp.findRun(ctx, c, repo, r)
		if err != nil || found {
			return false, err
		}
		if err := dp.queue.Redispatch(ctx, r.ID); err != nil {
			return false, err
		}
		r.DispatchedAt = now
		return dp.dispatch(ctx, r), nil
	}
	// The rest asks GitHub about a run that events should have told about; only the
	// periodic check does it, so events do not cost API calls.
	if !reconcile {
		return false, nil
	}
	if r.RunID == 0 {
		if now.Sub(r.DispatchedAt) < dp.confirmAfter {
			return false, nil
		}
		found, err := dp.findRun(ctx, c, repo, r)
		if err != nil {
			return false, err
		}
		if !found {
			if now.Sub(r.DispatchedAt) < runAppearTimeout {
				return false, nil
			}
			// GitHub took the dispatch but no run came of it (a workflow that fails to
			// start, a run-name without the request id): free the host.
			return true, dp.giveUp(ctx, r, fmt.Sprintf("GitHub accepted the dispatch of workflow %s for request %d, but no run named %q appeared within %s; check the workflow's run-name and inputs (perfbot's docs/server.md §5).",
				r.Workflow, r.ID, RunName(r.ID), runAppearTimeout))
		}
		if r, _, err = dp.queue.Get(ctx, r.ID); err != nil {
			return false, err
		}
	}
	if r.CancelBy != "" {
		if err := cancelRun(ctx, c, r); err != nil {
			return false, err
		}
	}
	// A run whose completion was never delivered (or not yet processed).
	run, err := c.WorkflowRunByID(ctx, repo, r.RunID)
	if err != nil {
		return false, err
	}
	if run.Status != "completed" {
		return false, nil
	}
	return true, dp.complete(ctx, r, run)
}

// findRun looks for the run of a request among the workflow's dispatched runs and
// records it. The run must have been created after the first dispatch (less a margin
// for clock skew), so an old run of a reused id never matches.
func (dp *dispatcher) findRun(ctx context.Context, c runAPI, repo gh.Repo, r queue.Request) (bool, error) {
	since := r.CreatedAt.Add(-2 * time.Minute)
	runs, err := c.WorkflowRuns(ctx, repo, r.Workflow, since)
	if err != nil {
		return false, err
	}
	for _, run := range runs {
		if requestOf(run.DisplayTitle) == r.ID {
			if _, err := dp.queue.SetRun(ctx, r.ID, run.ID, run.URL, run.StartedAt); err != nil {
				return false, err
			}
			dp.dispatches.WithLabelValues(r.Host, "found").Inc()
			dp.log.Info("server: found the run of a dispatch", logkey.Request, r.ID, logkey.Run, run.ID)
			return true, nil
		}
	}
	return false, nil
}

// cancelRun asks GitHub to cancel a request's run; a run that has already ended (409)
// is not an error.
func cancelRun(ctx context.Context, c runCanceller, r queue.Request) error {
	repo, err := gh.ParseRepo(r.Repo)
	if err != nil {
		return permanent{err}
	}
	if err := c.CancelWorkflowRun(ctx, repo, r.RunID); err != nil && !gh.IsConflict(err) {
		return err
	}
	return nil
}

// refreshMax bounds the status comments refreshed per dispatch: each costs two API
// calls, and a request further back is refreshed once it moves up.
const refreshMax = 10

// refreshQueue updates the status comments of a host's first queued requests after
// the queue moved, so each shows its new position and estimate. Best effort.
func (dp *dispatcher) refreshQueue(ctx context.Context, host string) {
	queued, err := dp.queue.List(ctx, queue.Filter{Host: host, States: []queue.State{queue.Queued}})
	if err != nil {
		return
	}
	queued = queued[:min(len(queued), refreshMax)]
	for _, r := range queued {
		if r.StatusCommentID == 0 {
			continue
		}
		c, err := dp.api(r.Installation)
		if err != nil {
			continue
		}
		repo, err := gh.ParseRepo(r.Repo)
		if err != nil {
			continue
		}
		body, err := dp.marks.queuedBody(ctx, r)
		if err == nil {
			_, _, err = c.UpdateComment(ctx, repo, r.StatusCommentID, body)
		}
		if err != nil {
			dp.log.Warn("server: refreshing a queued status comment failed", logkey.Request, r.ID, logkey.Error, err)
		}
	}
}
