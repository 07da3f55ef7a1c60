package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/lablup/perfbot/bot/queue"
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
func Inputs(r queue.Request) map[string]any {
	return map[string]any{
		"job":                r.Kind,
		"request_id":         strconv.FormatInt(r.ID, 10),
		"sha":                r.SHA,
		"models":             strings.Join(r.Models, ","),
		"sampling":           strings.Join(r.Sampling, ","),
		"epic":               strconv.Itoa(r.Epic),
		"issue":              strconv.Itoa(r.Issue),
		"status_comment_id":  strconv.FormatInt(r.StatusCommentID, 10),
		"trigger_comment_id": strconv.FormatInt(r.CommentID, 10),
		"check_run_id":       strconv.FormatInt(r.CheckRunID, 10),
	}
}

func (s *Server) hostLock(host string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	mu, ok := s.hostMu[host]
	if !ok {
		// A request stored under a host the settings no longer list still needs a lock.
		mu = &sync.Mutex{}
		s.hostMu[host] = mu
	}
	return mu
}

// pumps move each host's queue along off the delivery workers: a worker that changed a
// queue (accepted a request, ended a run) kicks its host's pump and goes on with the
// next delivery, so a GitHub that is slow to take a dispatch holds that host's pump
// (each call bounded by github.timeout_secs), never the workers. One goroutine per host
// runs its pumps one at a time; kicks that arrive meanwhile become one more pass.
type pumps struct {
	s *Server

	mu    sync.Mutex
	ctx   context.Context // the server's work context; nil before Serve
	wg    sync.WaitGroup
	hosts map[string]*hostPump
}

type hostPump struct {
	wake      chan struct{}
	reconcile bool // guarded by pumps.mu
}

func newPumps(s *Server) *pumps { return &pumps{s: s, hosts: map[string]*hostPump{}} }

// start lets kicks run pumps until ctx ends.
func (p *pumps) start(ctx context.Context) {
	p.mu.Lock()
	p.ctx = ctx
	p.mu.Unlock()
}

// wait returns when every host's pump goroutine has stopped (after the context ended).
func (p *pumps) wait() {
	p.mu.Lock() // no kick is between its check of the context and wg.Add
	p.mu.Unlock()
	p.wg.Wait()
}

// kick asks for a pass of host's pump. Outside Serve, or after it, it does nothing: the
// periodic check at the next start pumps every host.
func (p *pumps) kick(host string, reconcile bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx == nil || p.ctx.Err() != nil {
		return
	}
	h, ok := p.hosts[host]
	if !ok {
		h = &hostPump{wake: make(chan struct{}, 1)}
		p.hosts[host] = h
		p.wg.Add(1)
		go p.loop(p.ctx, host, h)
	}
	h.reconcile = h.reconcile || reconcile
	select {
	case h.wake <- struct{}{}:
	default: // a pass is due already and will see this change
	}
}

func (p *pumps) loop(ctx context.Context, host string, h *hostPump) {
	defer p.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		}
		p.mu.Lock()
		reconcile := h.reconcile
		h.reconcile = false
		p.mu.Unlock()
		p.s.pumpNow(ctx, host, reconcile)
	}
}

// pump asks for a pass of the host's pump (pumpNow) on the host's own goroutine and
// returns at once; reconcile asks GitHub about the active run too.
func (s *Server) pump(_ context.Context, host string, reconcile bool) {
	s.pumps.kick(host, reconcile)
}

// pumpNow moves a host's queue along: it settles the active request when it can (a
// dispatch whose answer was lost, a run whose end was missed when reconcile is set,
// a cancel waiting for its run) and, when the host is free, dispatches the next
// request. Errors are logged: the next pump tries again.
func (s *Server) pumpNow(ctx context.Context, host string, reconcile bool) {
	mu := s.hostLock(host)
	mu.Lock()
	defer mu.Unlock()
	log := s.log.With(logkey.Host, host)
	for range 100 { // each turn ends a request or dispatches one
		active, err := s.queue.List(ctx, queue.Filter{Host: host, States: []queue.State{queue.Dispatching, queue.Dispatched, queue.Running}})
		if err != nil {
			log.Error("server: reading the host's queue failed", logkey.Error, err)
			return
		}
		if len(active) > 0 {
			again, err := s.settle(ctx, active[0], reconcile)
			if err != nil && ctx.Err() == nil {
				log.Warn("server: settling the active request failed; trying again later", logkey.Request, active[0].ID, logkey.Error, err)
			}
			if !again {
				return
			}
			continue
		}
		r, ok, err := s.queue.Claim(ctx, host)
		if err != nil {
			log.Error("server: claiming the next request failed", logkey.Error, err)
			return
		}
		if !ok {
			return
		}
		if again := s.dispatch(ctx, r); !again {
			return
		}
	}
}

// dispatch sends the workflow_dispatch of a claimed request. It reports whether the
// host is free again (the dispatch was refused and the request failed).
func (s *Server) dispatch(ctx context.Context, r queue.Request) bool {
	log := s.log.With(logkey.Request, r.ID, logkey.Host, r.Host, logkey.Repo, r.Repo)
	c, err := s.client(r.Installation)
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
		if err := s.queue.MarkDispatched(bg, r.ID); err != nil {
			log.Error("server: recording the dispatch failed; it is confirmed later", logkey.Error, err)
		}
		s.m.dispatches.WithLabelValues(r.Host, "sent").Inc()
		s.m.dispatchLatency.WithLabelValues(r.Host).Observe(s.o.Now().Sub(r.CreatedAt).Seconds())
		log.Info("server: workflow dispatched", "workflow", r.Workflow, "sha", r.SHA)
		s.refreshQueue(ctx, r.Host)
		return false
	case ctx.Err() != nil:
		return false // stays dispatching; confirmed after a restart
	case errors.As(err, &rl):
		next := rl.RetryAt
		s.queueRetry(bg, r, err, next)
		s.m.dispatches.WithLabelValues(r.Host, "retry").Inc()
		log.Warn("server: dispatch rate limited; trying again later", logkey.Error, err, "retry_at", next.UTC().Format(time.RFC3339))
		return false
	case gh.MayHaveHappened(err):
		// The run may exist: look for it after GitHub had time to list it.
		next := s.o.Now().Add(s.set.ConfirmAfter)
		s.queueRetry(bg, r, err, next)
		s.m.dispatches.WithLabelValues(r.Host, "retry").Inc()
		log.Warn("server: dispatch answer lost; looking for the run before sending it again", logkey.Error, err)
		return false
	}
	s.m.dispatches.WithLabelValues(r.Host, "refused").Inc()
	log.Error("server: GitHub refused the dispatch; the request failed", logkey.Error, err)
	if ferr := s.giveUp(bg, r, fmt.Sprintf("GitHub refused to start workflow %s for request %d: %v", r.Workflow, r.ID, err)); ferr != nil {
		log.Warn("server: ending the request failed", logkey.Error, ferr)
	}
	return true
}

// runAppearTimeout bounds the wait for the run of an accepted dispatch.
const runAppearTimeout = 30 * time.Minute

// giveUp ends an active request as failed without a run, and says why on GitHub.
func (s *Server) giveUp(ctx context.Context, r queue.Request, why string) error {
	changed, err := s.queue.Finish(ctx, r.ID, queue.Failed, "", why, 0)
	if err != nil {
		return err
	}
	if changed {
		s.m.runs.WithLabelValues(r.Host, string(queue.Failed)).Inc()
	}
	r.State = queue.Failed
	return s.finishMarks(ctx, r, why, "")
}

func (s *Server) queueRetry(ctx context.Context, r queue.Request, cause error, next time.Time) {
	if err := s.queue.Retry(ctx, r.ID, cause, next); err != nil {
		s.log.Error("server: recording a dispatch retry failed", logkey.Request, r.ID, logkey.Error, err)
	}
}

// settle moves the host's active request on when it can. It reports whether the host
// became free.
func (s *Server) settle(ctx context.Context, r queue.Request, reconcile bool) (bool, error) {
	now := s.o.Now()
	c, err := s.client(r.Installation)
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
		due := r.DispatchedAt.Add(s.set.ConfirmAfter)
		if r.NextTryAt.After(due) {
			due = r.NextTryAt
		}
		if now.Before(due) {
			return false, nil
		}
		found, err := s.findRun(ctx, c, repo, r)
		if err != nil || found {
			return false, err
		}
		if err := s.queue.Redispatch(ctx, r.ID); err != nil {
			return false, err
		}
		r.DispatchedAt = now
		return s.dispatch(ctx, r), nil
	}
	// The rest asks GitHub about a run that events should have told about; only the
	// periodic check does it, so events do not cost API calls.
	if !reconcile {
		return false, nil
	}
	if r.RunID == 0 {
		if now.Sub(r.DispatchedAt) < s.set.ConfirmAfter {
			return false, nil
		}
		found, err := s.findRun(ctx, c, repo, r)
		if err != nil {
			return false, err
		}
		if !found {
			if now.Sub(r.DispatchedAt) < runAppearTimeout {
				return false, nil
			}
			// GitHub took the dispatch but no run came of it (a workflow that fails to
			// start, a run-name without the request id): free the host.
			return true, s.giveUp(ctx, r, fmt.Sprintf("GitHub accepted the dispatch of workflow %s for request %d, but no run named %q appeared within %s; check the workflow's run-name and inputs (perfbot's docs/server.md §5).",
				r.Workflow, r.ID, RunName(r.ID), runAppearTimeout))
		}
		if r, _, err = s.queue.Get(ctx, r.ID); err != nil {
			return false, err
		}
	}
	if r.CancelBy != "" {
		if err := s.cancelRun(ctx, c, r); err != nil {
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
	return true, s.complete(ctx, r, run)
}

// findRun looks for the run of a request among the workflow's dispatched runs and
// records it. The run must have been created after the first dispatch (less a margin
// for clock skew), so an old run of a reused id never matches.
func (s *Server) findRun(ctx context.Context, c *gh.Client, repo gh.Repo, r queue.Request) (bool, error) {
	since := r.CreatedAt.Add(-2 * time.Minute)
	runs, err := c.WorkflowRuns(ctx, repo, r.Workflow, since)
	if err != nil {
		return false, err
	}
	for _, run := range runs {
		if requestOf(run.DisplayTitle) == r.ID {
			if _, err := s.queue.SetRun(ctx, r.ID, run.ID, run.URL, run.StartedAt); err != nil {
				return false, err
			}
			s.m.dispatches.WithLabelValues(r.Host, "found").Inc()
			s.log.Info("server: found the run of a dispatch", logkey.Request, r.ID, logkey.Run, run.ID)
			return true, nil
		}
	}
	return false, nil
}

// refreshMax bounds the status comments refreshed per dispatch: each costs two API
// calls, and a request further back is refreshed once it moves up.
const refreshMax = 10

// refreshQueue updates the status comments of a host's first queued requests after
// the queue moved, so each shows its new position and estimate. Best effort.
func (s *Server) refreshQueue(ctx context.Context, host string) {
	queued, err := s.queue.List(ctx, queue.Filter{Host: host, States: []queue.State{queue.Queued}})
	if err != nil {
		return
	}
	queued = queued[:min(len(queued), refreshMax)]
	for _, r := range queued {
		if r.StatusCommentID == 0 {
			continue
		}
		c, err := s.client(r.Installation)
		if err != nil {
			continue
		}
		repo, err := gh.ParseRepo(r.Repo)
		if err != nil {
			continue
		}
		body, err := s.statusBody(ctx, r, "queued", s.queuedDetail(ctx, r), nil)
		if err == nil {
			_, _, err = c.UpdateComment(ctx, repo, r.StatusCommentID, body)
		}
		if err != nil {
			s.log.Warn("server: refreshing a queued status comment failed", logkey.Request, r.ID, logkey.Error, err)
		}
	}
}
