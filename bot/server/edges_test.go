package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/queue"
)

// logLines is a logger's output the test reads: what an operator sees of the server.
type logLines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the lines logged at level (INFO, WARN, ERROR) so far.
func (l *logLines) lines(level string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, "level="+level+" ") {
			out = append(out, line)
		}
	}
	return out
}

// capture returns a logger whose lines the test reads.
func capture() (*slog.Logger, *logLines) {
	l := &logLines{}
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug})), l
}

// wantLogged fails the test unless exactly one line of level holds each of subs, and
// no other line of that level was logged.
func wantLogged(t *testing.T, l *logLines, level string, subs ...string) {
	t.Helper()
	got := l.lines(level)
	if len(got) != len(subs) {
		t.Errorf("%d %s lines, want %d (%q):\n%s", len(got), level, len(subs), subs, strings.Join(got, "\n"))
		return
	}
	for i, sub := range subs {
		if !strings.Contains(got[i], sub) {
			t.Errorf("%s line %d lacks %q:\n%s", level, i+1, sub, got[i])
		}
	}
}

// TestDispatcherLogsOnlyWhatWentWrong: an operator alerts on the server's error and
// warning lines, so each outcome of a dispatch logs its own line and nothing else: a
// dispatch GitHub took logs no error (nor a warning about the queued requests' status
// comments it refreshed), a refused one the refusal alone (the request's
// end was recorded), a lost or rate-limited answer a warning and no error about
// recording the retry.
func TestDispatcherLogsOnlyWhatWentWrong(t *testing.T) {
	ctx := context.Background()
	t.Run("sent", func(t *testing.T) {
		r := newDispatcherRig(t)
		log, lines := capture()
		r.dp.log = log
		r.queuedWithStatus(t, 41)
		r.queuedWithStatus(t, 42) // its status comment is refreshed with its new place
		r.dp.pass(ctx, testHost, false)
		wantLogged(t, lines, "ERROR")
		wantLogged(t, lines, "WARN")
		wantLogged(t, lines, "INFO", "server: workflow dispatched")
	})
	t.Run("refused", func(t *testing.T) {
		r := newDispatcherRig(t)
		log, lines := capture()
		r.dp.log = log
		r.queuedWithStatus(t, 41)
		r.gh.dispatchErr = &gh.APIError{Op: "dispatching perfbot.yml", Status: 422, Message: "Unexpected inputs provided"}
		r.dp.pass(ctx, testHost, false)
		if got := state(t, r.q, 1); got.State != queue.Failed {
			t.Fatalf("request 1 is %s, want failed", got.State)
		}
		wantLogged(t, lines, "ERROR", "server: GitHub refused the dispatch; the request failed")
		wantLogged(t, lines, "WARN")
	})
	for _, c := range []struct {
		name string
		err  error
		warn string
	}{
		{"lost", &gh.APIError{Op: "dispatching perfbot.yml", Status: 502}, "server: dispatch answer lost"},
		{"rate limited", &gh.RateLimitError{RetryAt: time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)}, "server: dispatch rate limited"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newDispatcherRig(t)
			log, lines := capture()
			r.dp.log = log
			r.queuedWithStatus(t, 41)
			r.gh.dispatchErr = c.err
			r.dp.pass(ctx, testHost, false)
			if got := state(t, r.q, 1); got.State != queue.Dispatching || got.NextTryAt.IsZero() {
				t.Fatalf("request 1 is %s, next try %s: want dispatching, with its retry recorded", got.State, got.NextTryAt)
			}
			wantLogged(t, lines, "ERROR")
			wantLogged(t, lines, "WARN", c.warn)
		})
	}
}

// TestPassLogsAFailedSettle: a pass that cannot settle the host's active request (here
// the installation's client cannot be made) says so in a warning naming the request,
// and leaves the request for the next pass; a pass cut short by shutdown does not warn.
func TestPassLogsAFailedSettle(t *testing.T) {
	r := newDispatcherRig(t)
	log, lines := capture()
	r.dp.log = log
	ctx := context.Background()
	r.queuedWithStatus(t, 41)
	if _, ok, err := r.q.Claim(ctx, testHost); err != nil || !ok {
		t.Fatalf("claiming request 1: %v (claimed %v)", err, ok)
	}
	r.dp.api = func(int64) (runAPI, error) { return nil, errors.New("installation 1 is suspended") }
	r.clk.add(confirmAfter + time.Second)
	r.dp.pass(ctx, testHost, true)
	wantLogged(t, lines, "WARN", "server: settling the active request failed")
	if got := lines.lines("WARN"); len(got) == 1 && (!strings.Contains(got[0], "request=1") || !strings.Contains(got[0], "installation 1 is suspended")) {
		t.Errorf("the warning does not name the request and the cause:\n%s", got[0])
	}
	if got := state(t, r.q, 1); got.State != queue.Dispatching {
		t.Errorf("request 1 is %s, want still dispatching, for the next pass", got.State)
	}

	stopped, cancel := context.WithCancel(ctx)
	cancel()
	r.dp.pass(stopped, testHost, true)
	if got := lines.lines("WARN"); len(got) != 1 {
		t.Errorf("a pass stopped by shutdown warned:\n%s", strings.Join(got, "\n"))
	}
}

// TestAcceptPicksTheLeastBusyHostThenTheFirstListed: with several hosts for a
// backend, a request goes to the one with the fewest open requests, and on a tie to
// the one listed first in the settings.
func TestAcceptPicksTheLeastBusyHostThenTheFirstListed(t *testing.T) {
	r := newCommandsRig(t)
	r.cm.hosts = []Host{
		{Label: "gfx1151-a", Backend: "rocm", Workflow: "perfbot.yml"},
		{Label: "gfx1151-b", Backend: "rocm", Workflow: "perfbot-b.yml"},
	}
	ctx := context.Background()
	for i, want := range []string{"gfx1151-a", "gfx1151-b", "gfx1151-a"} {
		id := int64(41 + i)
		if err := r.cm.accept(ctx, r.gh, "delivery-"+string(rune('1'+i)), commentOn(7, false, id, "alice"), profile("rocm"), quiet()); err != nil {
			t.Fatal(err)
		}
		if got := state(t, r.q, int64(i+1)); got.Host != want {
			t.Errorf("request %d went to %s, want %s", i+1, got.Host, want)
		}
	}
}

// TestReconcileLooksForTheRunOnceConfirmAfterPassed: the periodic check looks for the
// run of a dispatch GitHub took once dispatch.confirm_secs have passed since the
// dispatch, to the second, and not before.
func TestReconcileLooksForTheRunOnceConfirmAfterPassed(t *testing.T) {
	r := newDispatcherRig(t)
	ctx := context.Background()
	req := r.started(t, 41)
	r.gh.runs = []gh.WorkflowRun{{ID: 9001, DisplayTitle: RunName(req.ID), Status: "in_progress", URL: "https://github.com/octo/engine/actions/runs/9001"}}
	r.clk.add(confirmAfter - time.Second)
	r.dp.pass(ctx, testHost, true)
	if got := state(t, r.q, req.ID); got.State != queue.Dispatched || got.RunID != 0 {
		t.Fatalf("a second before dispatch.confirm_secs request 1 is %s with run %d, want dispatched, not looked for yet", got.State, got.RunID)
	}
	r.clk.add(time.Second)
	r.dp.pass(ctx, testHost, true)
	if got := state(t, r.q, req.ID); got.State != queue.Running || got.RunID != 9001 {
		t.Errorf("at dispatch.confirm_secs request 1 is %s with run %d, want running with run 9001 found", got.State, got.RunID)
	}
}

// TestReconcileCancelsOnlyARunAskedToBeCancelled: the periodic check cancels the run
// of a request someone cancelled, and never the run of one nobody did.
func TestReconcileCancelsOnlyARunAskedToBeCancelled(t *testing.T) {
	r := newDispatcherRig(t)
	ctx := context.Background()
	req := r.started(t, 41)
	r.gh.runs = []gh.WorkflowRun{{ID: 9001, DisplayTitle: RunName(req.ID), Status: "in_progress", URL: "https://github.com/octo/engine/actions/runs/9001"}}
	r.clk.add(confirmAfter + time.Second)
	r.dp.pass(ctx, testHost, true)
	r.dp.pass(ctx, testHost, true)
	if got := state(t, r.q, req.ID); got.State != queue.Running || got.RunID != 9001 {
		t.Fatalf("request 1 is %s with run %d, want running with run 9001", got.State, got.RunID)
	}
	if len(r.gh.cancelled) != 0 {
		t.Fatalf("the check cancelled runs %v of a request nobody cancelled", r.gh.cancelled)
	}
	if err := r.q.SetCancel(ctx, req.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	r.dp.pass(ctx, testHost, true)
	if len(r.gh.cancelled) != 1 || r.gh.cancelled[0] != 9001 {
		t.Errorf("cancelled runs %v, want run 9001 of the cancelled request", r.gh.cancelled)
	}
}

// createdSince is GitHub's list of a workflow's runs as the API filters it: only runs
// created at or after since (the `created` query of gh.Client.WorkflowRuns).
type createdSince struct{ *fakeGitHub }

func (c createdSince) WorkflowRuns(ctx context.Context, r gh.Repo, workflow string, since time.Time) ([]gh.WorkflowRun, error) {
	all, err := c.fakeGitHub.WorkflowRuns(ctx, r, workflow, since)
	var out []gh.WorkflowRun
	for _, run := range all {
		if !run.CreatedAt.Before(since) {
			out = append(out, run)
		}
	}
	return out, err
}

// TestLostDispatchFindsItsRunDespiteClockSkew: a run is looked for among those GitHub
// created from two minutes before the request on, so a run whose creation time is a
// minute before the request (GitHub's clock behind the server's) is still found, and
// not dispatched a second time, while an older run titled with a reused request id is
// not taken for it.
func TestLostDispatchFindsItsRunDespiteClockSkew(t *testing.T) {
	r := newDispatcherRig(t)
	r.dp.api = func(int64) (runAPI, error) { return createdSince{r.gh}, nil }
	ctx := context.Background()
	req := r.lost(t)
	r.gh.runs = []gh.WorkflowRun{
		{ID: 8000, DisplayTitle: RunName(req.ID), Status: "completed", CreatedAt: req.CreatedAt.Add(-3 * time.Minute), URL: "https://github.com/octo/engine/actions/runs/8000"},
		{ID: 9001, DisplayTitle: RunName(req.ID), Status: "in_progress", CreatedAt: req.CreatedAt.Add(-time.Minute), URL: "https://github.com/octo/engine/actions/runs/9001"},
	}
	r.clk.add(confirmAfter + time.Second)
	r.dp.pass(ctx, testHost, false)
	if ids := r.dispatched(t); len(ids) != 0 {
		t.Errorf("dispatched %q again although its run exists", ids)
	}
	if got := state(t, r.q, req.ID); got.State != queue.Running || got.RunID != 9001 {
		t.Errorf("request 1 is %s with run %d, want running with run 9001 (created a minute before it)", got.State, got.RunID)
	}
}

// TestSweepReadsAtMostItsPageBound: a delivery log that never ends (GitHub always
// naming a next page of recent attempts) is read for sweepMaxPages pages, no more.
func TestSweepReadsAtMostItsPageBound(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var pages [][]gh.HookDelivery
	for p := range sweepMaxPages + 50 {
		pages = append(pages, []gh.HookDelivery{attempt(int64(100000-p), "g"+strconv.Itoa(p), 503, now.Add(-time.Minute))})
	}
	hooks := &fakeHooks{pages: pages}
	sw := newSweeper(now, hooks, heldIDs{})
	n, err := sw.sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if hooks.asked != sweepMaxPages || n != sweepMaxPages {
		t.Errorf("read %d pages and asked %d redeliveries, want %d of each", hooks.asked, n, sweepMaxPages)
	}
}

// TestSweepLogsTheRedeliveriesItAsked: a sweep that asked GitHub to redeliver says how
// many; one that found nothing to ask logs nothing at info level.
func TestSweepLogsTheRedeliveriesItAsked(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hooks := &fakeHooks{pages: [][]gh.HookDelivery{{attempt(7, "down", 0, now.Add(-time.Hour)), attempt(6, "ok", 202, now.Add(-time.Hour))}}}
	sw := newSweeper(now, hooks, heldIDs{})
	log, lines := capture()
	sw.log = log
	sw.run(context.Background())
	wantLogged(t, lines, "INFO", "sweep: redelivery asked", "sweep: asked GitHub to redeliver failed deliveries")
	if got := lines.lines("INFO"); len(got) == 2 && !strings.Contains(got[1], "count=1") {
		t.Errorf("the sweep's line does not say it asked one redelivery:\n%s", got[1])
	}

	hooks.pages = [][]gh.HookDelivery{{attempt(6, "ok", 202, now.Add(-time.Hour))}}
	log, lines = capture()
	sw.log = log
	sw.run(context.Background())
	wantLogged(t, lines, "INFO")
}

// TestSweepLeavesRefusalsAloneAndRedeliversServerErrors: an attempt perfbot answered
// 400 to 499 was refused on purpose and is not sent again; one answered 500 (or 399)
// was not, and is.
func TestSweepLeavesRefusalsAloneAndRedeliversServerErrors(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Hour)
	hooks := &fakeHooks{pages: [][]gh.HookDelivery{{
		attempt(4, "answered-500", 500, at), attempt(3, "answered-499", 499, at),
		attempt(2, "answered-400", 400, at), attempt(1, "answered-399", 399, at),
	}}}
	sw := newSweeper(now, hooks, heldIDs{})
	if _, err := sw.sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []int64{4, 1}; !slices.Equal(hooks.redelivered, want) {
		t.Errorf("redelivered attempts %v, want %v: the 500 and the 399, not the 4xx refusals", hooks.redelivered, want)
	}
}

// TestRunLearnedAfterACancelIsCancelled: a request cancelled after its dispatch but
// before GitHub listed its run has that run cancelled as soon as its first
// workflow_run event names it, and a cancelled request's run that already completed is
// not asked to cancel. The run's start is logged once.
func TestRunLearnedAfterACancelIsCancelled(t *testing.T) {
	r := newDispatcherRig(t)
	log, lines := capture()
	r.dp.log = log
	ctx := context.Background()
	req := r.started(t, 41)
	if err := r.q.SetCancel(ctx, req.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	started := runPayload(req.ID, 9001, ".github/workflows/perfbot.yml", "", r.clk.now())
	started = bytes.Replace(started, []byte(`"action":"completed"`), []byte(`"action":"in_progress"`), 1)
	started = bytes.Replace(started, []byte(`"status":"completed"`), []byte(`"status":"in_progress"`), 1)
	if err := r.dp.onWorkflowRun(ctx, inbox.Delivery{ID: "run-1", Event: "workflow_run", Payload: started}); err != nil {
		t.Fatal(err)
	}
	if got := state(t, r.q, req.ID); got.State != queue.Running || got.RunID != 9001 {
		t.Fatalf("request 1 is %s with run %d, want running with run 9001", got.State, got.RunID)
	}
	if len(r.gh.cancelled) != 1 || r.gh.cancelled[0] != 9001 {
		t.Errorf("cancelled runs %v, want run 9001, learned after the cancel", r.gh.cancelled)
	}
	if n := startsLogged(lines); n != 1 {
		t.Errorf("the run's start was logged %d times when it was learned, want once", n)
	}
	r.runEnded(t, req, ".github/workflows/perfbot.yml", "cancelled")
	if len(r.gh.cancelled) != 1 {
		t.Errorf("cancelled runs %v: the completed run was asked to cancel again", r.gh.cancelled)
	}
	if got := state(t, r.q, req.ID); got.State != queue.Cancelled {
		t.Errorf("request 1 is %s, want cancelled", got.State)
	}
	if n := startsLogged(lines); n != 1 {
		t.Errorf("the run's start was logged %d times, want once, when it was learned:\n%s", n, strings.Join(lines.lines("INFO"), "\n"))
	}
}

// startsLogged counts the lines that say a run started.
func startsLogged(l *logLines) int {
	n := 0
	for _, line := range l.lines("INFO") {
		if strings.Contains(line, "server: run started") {
			n++
		}
	}
	return n
}

// TestSweepNeverAsksToRedeliverAnAttemptWithoutAnID: attempts GitHub lists without an
// id (0) give nothing to redeliver; a redelivery of attempt 0 is never asked.
func TestSweepNeverAsksToRedeliverAnAttemptWithoutAnID(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hooks := &fakeHooks{pages: [][]gh.HookDelivery{{attempt(5, "down", 0, now.Add(-time.Hour)), attempt(0, "no-id", 503, now.Add(-time.Hour))}}}
	sw := newSweeper(now, hooks, heldIDs{})
	if _, err := sw.sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []int64{5}; !slices.Equal(hooks.redelivered, want) {
		t.Errorf("redelivered attempts %v, want %v", hooks.redelivered, want)
	}
}

// TestRunTimeOfUpToAWeekFeedsTheEstimate: a completed run's time (GitHub's last update
// less its start) feeds the host's estimates when it is at most seven days; a longer one
// is taken for a clock error and left out.
func TestRunTimeOfUpToAWeekFeedsTheEstimate(t *testing.T) {
	week := 7 * 24 * time.Hour
	for _, c := range []struct {
		took time.Duration
		want []time.Duration
	}{
		{week, []time.Duration{week}},
		{week + time.Second, nil},
	} {
		r := newDispatcherRig(t)
		ctx := context.Background()
		req := r.started(t, 41)
		start := r.clk.now()
		payload := runPayload(req.ID, 9001, ".github/workflows/perfbot.yml", "success", start)
		payload = bytes.Replace(payload, []byte(start.Add(10*time.Minute).Format(time.RFC3339)), []byte(start.Add(c.took).Format(time.RFC3339)), 1)
		if err := r.dp.onWorkflowRun(ctx, inbox.Delivery{ID: "run-1", Event: "workflow_run", Payload: payload}); err != nil {
			t.Fatal(err)
		}
		times, err := r.q.RunTimes(ctx, testHost, 5)
		if err != nil || !slices.Equal(times, c.want) {
			t.Errorf("a run of %s: run times %v (%v), want %v", c.took, times, err, c.want)
		}
	}
}

// TestDroppedRequestLogsOneWarning: the periodic check that drops a request whose
// acceptance failed for good warns once, saying so, and not that its marks failed when
// they were finished.
func TestDroppedRequestLogsOneWarning(t *testing.T) {
	r := newDispatcherRig(t)
	log, lines := capture()
	r.dp.log = log
	ctx := context.Background()
	sc, _, _ := r.gh.UpsertComment(ctx, gh.Repo{}, 7, requestMarker(1), "**Profile**: queued.")
	req, _, err := r.q.Add(ctx, queue.Request{Delivery: "d-41", Repo: testRepo, Installation: 1, Issue: 7, CommentID: 41,
		Requester: "alice", Kind: "profile", Command: "/profile rocm", SHA: testSHA, Host: testHost, Workflow: "perfbot.yml", Ref: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.q.SetStatusComment(ctx, req.ID, sc.ID); err != nil {
		t.Fatal(err)
	}
	r.deliveries["d-41"] = inbox.Delivery{ID: "d-41", State: inbox.Failed, Error: "GitHub answered 502"}
	r.dp.dropUnqueued(ctx)
	if got := state(t, r.q, req.ID); got.State != queue.Failed {
		t.Fatalf("request 1 is %s, want failed", got.State)
	}
	wantLogged(t, lines, "WARN", "server: a request that could not be queued was dropped")
}

// ranFor records a finished run of took on the test host: a request claimed, its run
// started and done.
func ranFor(t *testing.T, q *queue.Queue, clk *clock, commentID int64, took time.Duration) {
	t.Helper()
	ctx := context.Background()
	req := queued(t, q, commentID, "alice", 0)
	if _, ok, err := q.Claim(ctx, testHost); err != nil || !ok {
		t.Fatalf("claiming request %d: %v (claimed %v)", req.ID, err, ok)
	}
	if _, err := q.SetRun(ctx, req.ID, 1000+req.ID, "https://github.com/octo/engine/actions/runs/1", clk.now()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Finish(ctx, req.ID, queue.Done, "success", "", took); err != nil {
		t.Fatal(err)
	}
}

// TestQueuedStatusEstimatesTheStart: the status comment of a queued request says where
// it stands and, once runs have finished on the host, when it should start: the
// median of the last runs for each request ahead, plus what the running one has left.
func TestQueuedStatusEstimatesTheStart(t *testing.T) {
	ctx := context.Background()
	newMarks := func(t *testing.T) (*marks, *queue.Queue, *clock) {
		clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
		q, _ := openQueue(t, clk.now)
		return &marks{queue: q, now: clk.now}, q, clk
	}
	t.Run("idle host", func(t *testing.T) {
		m, q, clk := newMarks(t)
		ranFor(t, q, clk, 1, 10*time.Minute)
		r := queued(t, q, 2, "bob", 0)
		if got, want := m.queuedDetail(ctx, r), "Request 2 on host gfx1151, commit 01234567 (the default branch). Next in the queue; starting now."; got != want {
			t.Errorf("detail\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("behind a running request", func(t *testing.T) {
		m, q, clk := newMarks(t)
		for i, took := range []time.Duration{10 * time.Minute, 30 * time.Minute, 20 * time.Minute} {
			ranFor(t, q, clk, int64(i+1), took)
		}
		running := queued(t, q, 4, "carol", 0)
		if _, ok, err := q.Claim(ctx, testHost); err != nil || !ok {
			t.Fatalf("claiming: %v (%v)", err, ok)
		}
		if _, err := q.SetRun(ctx, running.ID, 9001, "https://github.com/octo/engine/actions/runs/9001", clk.now()); err != nil {
			t.Fatal(err)
		}
		first := queued(t, q, 5, "bob", 0)
		second := queued(t, q, 6, "bob", 0)
		clk.add(5 * time.Minute)
		wantIn(t, "the first queued request", m.queuedDetail(ctx, first),
			"Next in the queue, behind a running request; estimated start in about 15 min (median of the last 3 runs on this host: 20 min).")
		wantIn(t, "the second queued request", m.queuedDetail(ctx, second),
			"Position 2 in the queue (1 ahead), behind a running request; estimated start in about 35 min (median of the last 3 runs on this host: 20 min).")
		clk.add(time.Hour)
		wantIn(t, "the first queued request, the running one over time", m.queuedDetail(ctx, first),
			"Next in the queue, behind a running request; starting now.")
	})
	for _, c := range []struct {
		took time.Duration
		want string
	}{
		{30 * time.Second, "estimated start in about 1 min (the last run on this host took 1 min)."},
		{59 * time.Second, "estimated start in about 1 min (the last run on this host took 1 min)."},
		{time.Minute + 29*time.Second, "estimated start in about 1 min (the last run on this host took 1 min)."},
		{time.Minute + 30*time.Second, "estimated start in about 2 min (the last run on this host took 2 min)."},
		{59*time.Minute + 29*time.Second, "estimated start in about 59 min (the last run on this host took 59 min)."},
		{time.Hour, "estimated start in about 1 h 0 min (the last run on this host took 1 h 0 min)."},
		{90*time.Minute + 40*time.Second, "estimated start in about 1 h 31 min (the last run on this host took 1 h 31 min)."},
	} {
		t.Run(c.took.String(), func(t *testing.T) {
			m, q, clk := newMarks(t)
			ranFor(t, q, clk, 1, c.took)
			queued(t, q, 2, "bob", 0)
			r := queued(t, q, 3, "bob", 0) // one ahead: the wait is one run
			wantIn(t, "the status", m.queuedDetail(ctx, r), "Position 2 in the queue (1 ahead); "+c.want)
		})
	}
}

// failingReact is GitHub failing to add reactions.
type failingReact struct {
	*fakeGitHub
	err error
}

func (f failingReact) React(context.Context, gh.Repo, int64, string) error { return f.err }

// TestFinishFailsWhenTheReactionFails: finishing a failed request's marks ends with
// the confused reaction on its trigger comment; when GitHub fails to add it, finish
// fails (the delivery is tried again), unless the comment is gone (404).
func TestFinishFailsWhenTheReactionFails(t *testing.T) {
	for _, c := range []struct {
		err     error
		wantErr bool
	}{
		{&gh.APIError{Op: "reacting", Status: 500}, true},
		{&gh.APIError{Op: "reacting", Status: 404}, false},
	} {
		r := newDispatcherRig(t)
		req := r.queuedWithStatus(t, 41)
		req.State = queue.Failed
		m := &marks{queue: r.q, now: r.clk.now, api: func(int64) (markAPI, error) { return failingReact{r.gh, c.err}, nil }}
		err := m.finish(context.Background(), req, "GitHub refused the dispatch.", "")
		if (err != nil) != c.wantErr {
			t.Errorf("reaction answered %v: finish returned %v, want an error: %v", c.err, err, c.wantErr)
		}
		wantIn(t, "the status comment", r.gh.comment(t, req.StatusCommentID), "failed.", "GitHub refused the dispatch.")
	}
}

// TestReconcileEndsACancelledRunWhoseEndWasMissed: the periodic check of a request
// someone cancelled asks GitHub to cancel its run and, when the run has already
// ended (its completion was never delivered), ends the request in the same pass and
// frees the host.
func TestReconcileEndsACancelledRunWhoseEndWasMissed(t *testing.T) {
	r := newDispatcherRig(t)
	ctx := context.Background()
	req := r.started(t, 41)
	next := r.queuedWithStatus(t, 42)
	r.gh.runs = []gh.WorkflowRun{{ID: 9001, DisplayTitle: RunName(req.ID), Status: "in_progress", URL: "https://github.com/octo/engine/actions/runs/9001"}}
	r.clk.add(confirmAfter + time.Second)
	r.dp.pass(ctx, testHost, true)
	if err := r.q.SetCancel(ctx, req.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	r.gh.runs[0].Status, r.gh.runs[0].Conclusion = "completed", "cancelled"
	r.dp.pass(ctx, testHost, true)
	if got := state(t, r.q, req.ID); got.State != queue.Cancelled {
		t.Errorf("request 1 is %s, want cancelled in the pass that found its run ended", got.State)
	}
	if got := state(t, r.q, next.ID); got.State != queue.Dispatched {
		t.Errorf("request 2 is %s, want dispatched once the host is free", got.State)
	}
}

// failingCancel is GitHub answering a run's cancel with err.
type failingCancel struct {
	*fakeGitHub
	err error
}

func (f failingCancel) CancelWorkflowRun(context.Context, gh.Repo, int64) error { return f.err }

// TestCancelOfARunGitHubFailsToCancel: a cancel GitHub answers with a server error
// fails the command's processing (the delivery is tried again) and claims nothing; a
// run that has already ended (409) is not an error.
func TestCancelOfARunGitHubFailsToCancel(t *testing.T) {
	for _, c := range []struct {
		status  int
		wantErr bool
	}{{500, true}, {409, false}} {
		r := newCommandsRig(t)
		ctx := context.Background()
		req := queued(t, r.q, 41, "alice", 0)
		if _, ok, err := r.q.Claim(ctx, testHost); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if _, err := r.q.SetRun(ctx, req.ID, 9001, "https://github.com/octo/engine/actions/runs/9001", time.Time{}); err != nil {
			t.Fatal(err)
		}
		api := failingCancel{r.gh, &gh.APIError{Op: "cancelling run 9001", Status: c.status}}
		err := r.cm.cancel(ctx, api, commentOn(7, false, 42, "alice"), gate.Request{Kind: command.Cancel, ID: "1"}, quiet())
		if (err != nil) != c.wantErr {
			t.Errorf("GitHub answered %d: cancel returned %v, want an error: %v", c.status, err, c.wantErr)
		}
		if c.wantErr && len(r.gh.replies) != 0 {
			t.Errorf("GitHub answered %d, yet the reply %q was written", c.status, r.gh.replies)
		}
	}
}

// TestRunEventRetriesACancelGitHubFailed: when the run of a cancelled request is
// learned from its event and GitHub fails to cancel it (500), the event's processing
// fails, so the delivery is tried again and the cancel with it.
func TestRunEventRetriesACancelGitHubFailed(t *testing.T) {
	r := newDispatcherRig(t)
	ctx := context.Background()
	req := r.started(t, 41)
	if err := r.q.SetCancel(ctx, req.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	r.dp.api = func(int64) (runAPI, error) {
		return failingCancel{r.gh, &gh.APIError{Op: "cancelling run 9001", Status: 500}}, nil
	}
	started := runPayload(req.ID, 9001, ".github/workflows/perfbot.yml", "", r.clk.now())
	started = bytes.Replace(started, []byte(`"action":"completed"`), []byte(`"action":"in_progress"`), 1)
	started = bytes.Replace(started, []byte(`"status":"completed"`), []byte(`"status":"in_progress"`), 1)
	if err := r.dp.onWorkflowRun(ctx, inbox.Delivery{ID: "run-1", Event: "workflow_run", Payload: started}); err == nil {
		t.Error("GitHub failed to cancel the run, and the event was taken as processed")
	}
}
