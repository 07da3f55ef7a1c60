package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/logkey"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/internal/mathx"
	"github.com/lablup/perfbot/internal/mdtext"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/abrun"
	"github.com/prometheus/client_golang/prometheus"
)

// commands answers the comments of issue_comment deliveries: the gate decides, and
// commands acts on the decision. It replies to help, status, cancel and denied
// commands, and accepts /profile and /bench: the request is stored, marked on GitHub
// (reaction, status comment, check run) and queued, and its host's queue is kicked.
// It never dispatches: the dispatcher does, on the host's own goroutine.
type commands struct {
	log      *slog.Logger
	hosts    []Host
	botLogin string // the login of the App's own comments
	queue    commandQueue
	api      func(installation int64) (commandAPI, error)
	marks    *marks
	queues   hostQueues
	// decisions counts the gate's decisions; finished the requests that ended here
	// (a queued request cancelled).
	decisions, finished *prometheus.CounterVec
	// budget bounds the estimate of a compare (Settings.CompareBudget); runTime is the
	// time of one measured run while a host has no history (Settings.CompareRunTime).
	budget, runTime time.Duration
	// fault, for tests only, is asked at the named steps of a request whose crash
	// windows matter; an error it returns stops the delivery there, as a kill would.
	fault atomic.Pointer[func(step string) error]
}

// commandAPI is what commands asks GitHub of an installation. ghClient implements it.
type commandAPI interface {
	gate.GitHub
	// Reply answers a command comment in its one marked reply (gate.Reply).
	Reply(ctx context.Context, ev gate.Event, text string) error
	React(ctx context.Context, r gh.Repo, commentID int64, content string) error
	UpsertComment(ctx context.Context, r gh.Repo, issue int, marker, body string) (gh.Comment, gh.Action, error)
	CreateCheckRun(ctx context.Context, r gh.Repo, s gh.CheckRunSpec) (gh.CheckRun, error)
	runCanceller
}

// commandQueue is what commands reads and writes of the requests (bot/queue
// implements it).
type commandQueue interface {
	Add(ctx context.Context, r queue.Request) (queue.Request, bool, error)
	Get(ctx context.Context, id int64) (queue.Request, bool, error)
	List(ctx context.Context, f queue.Filter) ([]queue.Request, error)
	SetStatusComment(ctx context.Context, id, commentID int64) error
	SetCheckRun(ctx context.Context, id, checkRunID int64) error
	MarkQueued(ctx context.Context, id int64) error
	CancelQueued(ctx context.Context, id int64, by string) (bool, error)
	SetCancel(ctx context.Context, id int64, by string) error
	ModelRunTimes(ctx context.Context, host string, n int) ([]time.Duration, error)
}

// hostQueues moves the host queues along (the dispatcher implements it).
type hostQueues interface {
	// lock holds a host's queue still (no pass runs meanwhile) until unlock is called.
	lock(host string) (unlock func())
	// kick asks for a pass of the host's queue and returns at once.
	kick(host string, reconcile bool)
}

// handle answers one issue_comment delivery.
func (cm *commands) handle(ctx context.Context, d inbox.Delivery) error {
	ev, err := gate.ParseEvent(d.Payload)
	if err != nil {
		return permanent{err}
	}
	if ev.InstallationID <= 0 {
		return permanent{errors.New("the issue_comment event has no installation: not an App delivery")}
	}
	log := cm.log.With(logkey.Delivery, d.ID, logkey.Event, d.Event, logkey.Repo, ev.Repo.String(), logkey.Issue, ev.Issue)
	c, err := cm.api(ev.InstallationID)
	if err != nil {
		return permanent{err}
	}
	dec, err := gate.Decide(ctx, ev, c, gate.Options{BotLogin: cm.botLogin})
	if err != nil {
		return fmt.Errorf("deciding on comment %d: %w", ev.CommentID, err)
	}
	cm.decisions.WithLabelValues(string(dec.Outcome), string(dec.Reason)).Inc()
	switch dec.Outcome {
	case gate.Ignored:
		log.Debug("server: comment ignored", "reason", dec.Reason, "detail", dec.Detail)
		return nil
	case gate.Denied:
		log.Info("server: command denied", "reason", dec.Reason, "author", ev.Author)
		return c.Reply(ctx, ev, dec.Reply)
	}
	req := dec.Request
	log.Info("server: command accepted", "kind", req.Kind, "author", ev.Author, "sha", req.SHA)
	switch req.Kind {
	case command.Help:
		return c.Reply(ctx, ev, dec.Reply)
	case command.Status:
		return cm.status(ctx, c, ev, req)
	case command.Cancel:
		return cm.cancel(ctx, c, ev, req, log)
	case command.Accept:
		return cm.acceptRegression(ctx, c, ev, req, log)
	case command.Profile, command.Bench, command.Bisect:
		return cm.accept(ctx, c, d.ID, ev, req, log)
	}
	return permanent{fmt.Errorf("the gate accepted a %q command, which the server does not know", req.Kind)}
}

// pickHost chooses the host of a backend with the fewest open requests (the first
// listed on a tie).
func (cm *commands) pickHost(ctx context.Context, backend string) (Host, bool, error) {
	var best Host
	bestN, found := 0, false
	for _, h := range cm.hosts {
		if h.Backend != backend {
			continue
		}
		open, err := cm.queue.List(ctx, queue.Filter{Host: h.Label, States: queue.Open})
		if err != nil {
			return Host{}, false, err
		}
		if !found || len(open) < bestN {
			best, bestN, found = h, len(open), true
		}
	}
	return best, found, nil
}

// accept stores the request, then makes its marks on GitHub (reaction, status comment,
// check run) and queues it. Each step is recorded, so a delivery processed again after
// a failure resumes without doubling anything. A comment has at most one request (the
// queue's table holds it so): another delivery of the same comment, at the same time
// or later, gets the stored request and leaves its marks to the delivery that made it.
func (cm *commands) accept(ctx context.Context, c commandAPI, delivery string, ev gate.Event, req gate.Request, log *slog.Logger) error {
	host, ok, err := cm.pickHost(ctx, req.Command.Backend)
	if err != nil {
		return err
	}
	if !ok {
		return c.Reply(ctx, ev, fmt.Sprintf("This perfbot server has no GPU host for %s; ask its operator to add one to the server settings.", mdtext.Code(req.Command.Backend)))
	}
	if req.Compare || req.Kind == command.Bisect {
		over, why, err := cm.overBudget(ctx, host, req)
		if err != nil {
			return err
		}
		if over {
			log.Info("server: request over budget", "kind", req.Kind, "host", host.Label, "models", len(req.Models), "repeats", req.Repeats, "runs", req.MaxRuns)
			return c.Reply(ctx, ev, why)
		}
	}
	r, _, err := cm.queue.Add(ctx, queue.Request{
		Delivery: delivery, Repo: ev.Repo.String(), Installation: ev.InstallationID, Issue: ev.Issue, IsPR: ev.IsPR,
		CommentID: ev.CommentID, Requester: ev.Author, Kind: string(req.Kind), Command: commandText(req),
		SHA: req.SHA, PinnedFrom: req.PinnedFrom, Models: req.Models, Sampling: req.Sampling, Epic: req.Epic,
		Host: host.Label, Workflow: host.Workflow, Ref: ev.DefaultBranch,
		Base: req.Base, Repeats: storedRepeats(req),
	})
	if err != nil {
		return err
	}
	log = log.With(logkey.Request, r.ID, logkey.Host, r.Host)
	if r.Delivery != delivery {
		if ev.Action != "edited" {
			log.Info("server: another delivery of a comment that already has its request; nothing to do", "first", r.Delivery)
			return nil
		}
		log.Info("server: an edit of a comment already accepted; nothing changes")
		return c.Reply(ctx, ev, fmt.Sprintf(
			"Request %s was accepted from this comment as it was first written (commit %s); editing the comment does not change what runs. Post a new comment for another run, and `/perfbot cancel %d` to drop this one.",
			mdtext.Code(strconv.FormatInt(r.ID, 10)), mdtext.Code(strs.ShortSHA(r.SHA)), r.ID))
	}
	if r.State != queue.Accepting {
		log.Info("server: request already accepted", "state", r.State)
		return nil
	}
	if err := c.React(ctx, ev.Repo, ev.CommentID, "eyes"); err != nil {
		return err
	}
	if r.StatusCommentID == 0 {
		body, err := cm.marks.queuedBody(ctx, r)
		if err != nil {
			return err
		}
		sc, _, err := c.UpsertComment(ctx, ev.Repo, ev.Issue, requestMarker(r.ID), body)
		if err != nil {
			return err
		}
		if err := cm.queue.SetStatusComment(ctx, r.ID, sc.ID); err != nil {
			return err
		}
		r.StatusCommentID = sc.ID
	}
	// A bisection's commits are the default branch's, not the pull request's: it gets
	// no check run, which would sit on the bad commit.
	if r.IsPR && r.CheckRunID == 0 && r.Kind != string(command.Bisect) {
		cr, err := c.CreateCheckRun(ctx, ev.Repo, gh.CheckRunSpec{
			Name: "perfbot " + r.Kind, HeadSHA: r.SHA, ExternalID: externalID(r.ID),
			Title:   fmt.Sprintf("Queued: request %d on %s", r.ID, r.Host),
			Summary: fmt.Sprintf("%s, requested by %s, runs commit %s (%s)%s on the GPU host %s.", mdtext.Code(r.Command), mdtext.Code(r.Requester), mdtext.Code(r.SHA), mdtext.Text(r.PinnedFrom), comparedWith(r), mdtext.Code(r.Host)),
		})
		if err != nil {
			return err
		}
		// The crash window: the check run exists on GitHub, its id is not recorded.
		// Processed again, CreateCheckRun finds it by its external id.
		if err := cm.injected(StepCheckRunCreated); err != nil {
			return err
		}
		if err := cm.queue.SetCheckRun(ctx, r.ID, cr.ID); err != nil {
			return err
		}
	}
	if err := cm.queue.MarkQueued(ctx, r.ID); err != nil {
		return err
	}
	log.Info("server: request queued", "sha", r.SHA)
	cm.queues.kick(r.Host, false)
	return nil
}

// storedRepeats is what the queue keeps as a request's cap: a compare's most repeats
// per side, a bisection's budget of runs.
func storedRepeats(req gate.Request) int {
	if req.Kind == command.Bisect {
		return req.MaxRuns
	}
	return req.Repeats
}

// comparedWith names A of a compare, for the check run's summary: "" otherwise.
func comparedWith(r queue.Request) string {
	if r.Base == "" {
		return ""
	}
	return fmt.Sprintf(" compared with commit %s (A, up to %d repeats per side)", mdtext.Code(r.Base), r.Repeats)
}

// compareRange is a compare or a bisection as the status list shows it: compare A..B,
// bisect good..bad (model), short SHAs.
func compareRange(r queue.Request) string {
	if r.Kind == string(command.Bisect) {
		return "bisect " + strs.ShortSHA(r.Base) + ".." + strs.ShortSHA(r.SHA) + " (" + mdtext.Text(strings.Join(r.Models, ",")) + ")"
	}
	return "compare " + strs.ShortSHA(r.Base) + ".." + strs.ShortSHA(r.SHA)
}

// overBudget estimates the worst case of a compare on host: every model at its cap of
// repeats on both sides (runner/abrun's Estimate), each run taking the median time
// per model of the host's last plain runs, or the configured time while it has none.
// A bisection's worst case is its budget of runs (limits.max_bisect_runs) of its one
// model. Over the budget, why is the reply.
func (cm *commands) overBudget(ctx context.Context, host Host, req gate.Request) (over bool, why string, err error) {
	times, err := cm.queue.ModelRunTimes(ctx, host.Label, runTimesN)
	if err != nil {
		return false, "", err
	}
	perRun, from := cm.runTime, "the server's compare.run_mins, as no run has finished on this host yet"
	if len(times) > 0 {
		perRun = mathx.Median(times)
		from = fmt.Sprintf("the median time per model of the last %d runs on this host", len(times))
		if len(times) == 1 {
			from = "the time per model of the last run on this host"
		}
	}
	if req.Kind == command.Bisect {
		d := time.Duration(req.MaxRuns) * perRun
		if d <= cm.budget {
			return false, "", nil
		}
		return true, fmt.Sprintf("This bisection was not queued: it could take %s (up to %d single-model runs of %s, the config's limits.max_bisect_runs; the range %s of %d commits needs at least %d; %s), over the budget of %s of this perfbot server (compare.budget_mins). Lower limits.max_bisect_runs in the config, or ask the server's operator for a larger budget.",
			roundDuration(d), req.MaxRuns, roundDuration(perRun), mdtext.Code(strs.ShortSHA(req.Base)+".."+strs.ShortSHA(req.SHA)), req.Commits, req.MinRuns, from, roundDuration(cm.budget)), nil
	}
	runs, d := abrun.Estimate(abrun.Spec{Models: req.Models, Cap: req.Repeats}, perRun)
	if d <= cm.budget {
		return false, "", nil
	}
	models := fmt.Sprintf("%d models", len(req.Models))
	if len(req.Models) == 1 {
		models = "1 model"
	}
	return true, fmt.Sprintf("This compare was not queued: it could take %s (%s x 2 sides x up to %d repeats = %d runs of %s, %s), over the budget of %s of this perfbot server (compare.budget_mins). Compare fewer models with %s, or fewer repeats with %s.",
		roundDuration(d), models, req.Repeats, runs, roundDuration(perRun), from, roundDuration(cm.budget),
		mdtext.Code("models="), mdtext.Code("repeats=")), nil
}

// commandText is the command as the status comment names it.
func commandText(req gate.Request) string {
	if t := strings.TrimSpace(req.Command.Text); t != "" {
		return strs.Clip(t, 200, "…")
	}
	return "/" + string(req.Kind) + " " + req.Command.Backend
}

// StepCheckRunCreated names the step between a check run's creation and its record
// (for fault injection in tests).
const StepCheckRunCreated = "check run created"

// injected returns the fault a test set for step, or nil.
func (cm *commands) injected(step string) error {
	if f := cm.fault.Load(); f != nil {
		return (*f)(step)
	}
	return nil
}

func externalID(id int64) string { return fmt.Sprintf("perfbot-request-%d", id) }

// target finds the request a status or cancel command names or, without an id, the
// commenter's one open request on the issue. why is the reply when there is no single
// one.
func (cm *commands) target(ctx context.Context, ev gate.Event, id string) (r queue.Request, why string, err error) {
	if id != "" {
		n, perr := strconv.ParseInt(id, 10, 64)
		if perr == nil && n > 0 {
			r, ok, err := cm.queue.Get(ctx, n)
			if err != nil {
				return queue.Request{}, "", err
			}
			if ok && r.Repo == ev.Repo.String() {
				return r, "", nil
			}
		}
		return queue.Request{}, fmt.Sprintf("There is no perfbot request %s in %s. `/perfbot status` lists the open ones.", mdtext.Code(id), ev.Repo), nil
	}
	all, err := cm.queue.List(ctx, queue.Filter{Repo: ev.Repo.String(), Issue: ev.Issue, States: queue.Open})
	if err != nil {
		return queue.Request{}, "", err
	}
	var open []queue.Request
	for _, r := range all {
		if strings.EqualFold(r.Requester, ev.Author) {
			open = append(open, r)
		}
	}
	switch len(open) {
	case 0:
		return queue.Request{}, fmt.Sprintf("%s has no open perfbot request on this issue. `/perfbot status` lists the open requests of the repository; name one with `/perfbot cancel ID`.", mdtext.Code(ev.Author)), nil
	case 1:
		return open[0], "", nil
	}
	ids := make([]string, len(open))
	for i, o := range open {
		ids[i] = mdtext.Code(strconv.FormatInt(o.ID, 10))
	}
	return queue.Request{}, fmt.Sprintf("%s has several open requests on this issue (%s); name one: `/perfbot cancel ID`.", mdtext.Code(ev.Author), strings.Join(ids, ", ")), nil
}

// cancel drops a queued request or cancels its run. The requester may, and so may
// anyone with maintain or admin permission.
func (cm *commands) cancel(ctx context.Context, c commandAPI, ev gate.Event, req gate.Request, log *slog.Logger) error {
	r, why, err := cm.target(ctx, ev, req.ID)
	if err != nil {
		return err
	}
	if why != "" {
		return c.Reply(ctx, ev, why)
	}
	log = log.With(logkey.Request, r.ID, logkey.Host, r.Host)
	if r.State.Final() {
		return c.Reply(ctx, ev, fmt.Sprintf("Request %d has already ended (%s).", r.ID, r.State))
	}
	if !strings.EqualFold(ev.Author, r.Requester) && !gh.AtLeast(req.Permission, gate.MaintainPermission) {
		return c.Reply(ctx, ev, fmt.Sprintf("Request %d was made by %s; only they, or someone with %s or %s permission, can cancel it (%s has %s).",
			r.ID, mdtext.Code(r.Requester), mdtext.Code("maintain"), mdtext.Code("admin"), mdtext.Code(ev.Author), mdtext.Code(req.Permission)))
	}
	unlock := cm.queues.lock(r.Host)
	dropped, err := cm.queue.CancelQueued(ctx, r.ID, ev.Author)
	unlock()
	if err != nil {
		return err
	}
	if dropped {
		log.Info("server: queued request cancelled", "by", ev.Author)
		cm.finished.WithLabelValues(r.Host, string(queue.Cancelled)).Inc()
		r, _, err = cm.queue.Get(ctx, r.ID)
		if err != nil {
			return err
		}
		if err := cm.marks.finish(ctx, r, fmt.Sprintf("Request %d was cancelled by %s before it started.", r.ID, ev.Author), ""); err != nil {
			return err
		}
		return c.Reply(ctx, ev, fmt.Sprintf("Request %d is cancelled; it had not started.", r.ID))
	}
	if err := cm.queue.SetCancel(ctx, r.ID, ev.Author); err != nil {
		return err
	}
	r.CancelBy = ev.Author
	if r.RunID == 0 {
		log.Info("server: cancel asked before the run is known; it is cancelled when found", "by", ev.Author)
		return c.Reply(ctx, ev, fmt.Sprintf("Request %d was dispatched; its run is cancelled as soon as GitHub lists it.", r.ID))
	}
	if err := cancelRun(ctx, c, r); err != nil {
		return err
	}
	log.Info("server: run cancel asked", "by", ev.Author, logkey.Run, r.RunID)
	return c.Reply(ctx, ev, fmt.Sprintf("Asked GitHub to cancel the run of request %d: %s. Its status comment says when it has stopped.", r.ID, r.RunURL))
}

// status replies with the open requests of the repository, or the one named.
func (cm *commands) status(ctx context.Context, c commandAPI, ev gate.Event, req gate.Request) error {
	var list []queue.Request
	if req.ID != "" {
		r, why, err := cm.target(ctx, ev, req.ID)
		if err != nil {
			return err
		}
		if why != "" {
			return c.Reply(ctx, ev, why)
		}
		list = []queue.Request{r}
	} else {
		var err error
		if list, err = cm.queue.List(ctx, queue.Filter{Repo: ev.Repo.String(), States: queue.Open}); err != nil {
			return err
		}
	}
	if len(list) == 0 {
		return c.Reply(ctx, ev, fmt.Sprintf("No perfbot request is queued or running in %s.", ev.Repo))
	}
	var b strings.Builder
	b.WriteString("| request | command | by | host | state | where |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range list {
		where := ""
		switch {
		case r.RunURL != "":
			where = "[workflow run](" + mdtext.LinkURL(r.RunURL) + ")"
		case r.State == queue.Queued || r.State == queue.Accepting:
			where = mdtext.Text(cm.marks.queuedDetail(ctx, r))
		}
		cmdCell := mdtext.CellCode(r.Command)
		if r.Base != "" {
			cmdCell += " " + compareRange(r)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", r.ID, cmdCell, mdtext.CellCode(r.Requester),
			mdtext.CellCode(r.Host), r.State, where)
	}
	return c.Reply(ctx, ev, b.String())
}
