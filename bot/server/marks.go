package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/mathx"
	"github.com/lablup/perfbot/internal/strs"
)

// marks are what a request shows on GitHub besides the reply to its command: the status
// comment (where it stands in its host's queue, or how it ended), the check run of a
// pull request and the reaction on the trigger comment. Both the commands (a cancelled
// queued request) and the dispatcher (a refused dispatch, a run that did not publish)
// end them through finish.
type marks struct {
	queue markQueue
	api   func(installation int64) (markAPI, error)
	now   func() time.Time
	// progress reads the GPU jobs' progress files (live.go); nil: none.
	progress *progressReader
}

// markQueue is what the estimate of a queued request reads (bot/queue implements it).
type markQueue interface {
	Position(ctx context.Context, r queue.Request) (int, error)
	List(ctx context.Context, f queue.Filter) ([]queue.Request, error)
	RunTimes(ctx context.Context, host string, n int) ([]time.Duration, error)
}

// markAPI is what finishing a request's marks asks GitHub (*gh.Client implements it).
type markAPI interface {
	CommentByID(ctx context.Context, r gh.Repo, id int64) (gh.Comment, error)
	UpdateComment(ctx context.Context, r gh.Repo, id int64, body string) (gh.Comment, gh.Action, error)
	UpdateCommentUnless(ctx context.Context, r gh.Repo, id int64, body string, keep func(current string) bool) (gh.Comment, gh.Action, error)
	CheckRunByID(ctx context.Context, r gh.Repo, id int64) (gh.CheckRun, error)
	CompleteCheckRun(ctx context.Context, r gh.Repo, id int64, o gh.CheckOutput) error
	React(ctx context.Context, r gh.Repo, commentID int64, content string) error
	StartCheckRun(ctx context.Context, r gh.Repo, id int64, p gh.CheckProgress) error
	RunArtifacts(ctx context.Context, r gh.Repo, runID int64) ([]gh.Artifact, error)
}

// requestMarker is the hidden line that finds a request's status comment again before
// it is created a second time.
func requestMarker(id int64) string { return fmt.Sprintf("<!-- perfbot:request %d -->", id) }

// statusBody renders the status comment through the same template the publisher
// uses, plus the request's marker.
func statusBody(r queue.Request, state, detail string, links []report.Link) (string, error) {
	return renderStatus(r, report.StatusData{State: state, Command: r.Command, Detail: detail, Links: links})
}

// queuedBody is the status comment of a queued request: where it stands now.
func (m *marks) queuedBody(ctx context.Context, r queue.Request) (string, error) {
	return statusBody(r, "queued", m.queuedDetail(ctx, r), nil)
}

// finalRE matches the state line of a finished status comment (templates/status.md.tmpl).
var finalRE = regexp.MustCompile(`(?m)^\*\*.*\*\*: (done|failed|cancelled)\.`)

// statusFinal reports whether a status comment shows a finished request: the
// publisher (or the server) wrote its end.
func statusFinal(body string) bool {
	return finalRE.MatchString(strings.ReplaceAll(body, "\r\n", "\n"))
}

// runTimesN is how many past runs the estimate looks at.
const runTimesN = 5

// activeStates are the states of a host's one request that holds the host.
var activeStates = []queue.State{queue.Dispatching, queue.Dispatched, queue.Running}

// requestHead names a request in its status comment: its id, its host and its commit,
// a compare's two commits, A..B, or a bisection's range and model.
func requestHead(r queue.Request) string {
	if r.Kind == string(command.Bisect) {
		return fmt.Sprintf("Request %d on host %s, %s", r.ID, r.Host, compareRange(r))
	}
	if r.Base != "" {
		return fmt.Sprintf("Request %d on host %s, compare %s..%s", r.ID, r.Host, strs.ShortSHA(r.Base), strs.ShortSHA(r.SHA))
	}
	return fmt.Sprintf("Request %d on host %s, commit %s", r.ID, r.Host, strs.ShortSHA(r.SHA))
}

// queuedDetail says where a queued request stands: its request id, host and commits,
// its position, and an estimate of its start from the host's past run times.
func (m *marks) queuedDetail(ctx context.Context, r queue.Request) string {
	head := requestHead(r) + " (" + r.PinnedFrom + ")."
	if r.Kind == string(command.Bisect) {
		head = requestHead(r) + fmt.Sprintf(", at most %d runs.", r.Repeats)
	}
	if r.Base != "" && r.Repeats > 0 && r.Kind == string(command.Bench) {
		// A profile compare profiles each side once: its cap says nothing.
		head = requestHead(r) + fmt.Sprintf(" (B: %s), at most %d repeats per side.", r.PinnedFrom, r.Repeats)
	}
	pos, err := m.queue.Position(ctx, r)
	if err != nil {
		return head
	}
	active, err := m.queue.List(ctx, queue.Filter{Host: r.Host, States: activeStates})
	if err != nil {
		return head
	}
	where := "Next in the queue"
	if pos > 0 {
		where = fmt.Sprintf("Position %d in the queue (%d ahead)", pos+1, pos)
	}
	if len(active) > 0 {
		where += ", behind a running request"
	}
	times, err := m.queue.RunTimes(ctx, r.Host, runTimesN)
	if err != nil || len(times) == 0 {
		if pos == 0 && len(active) == 0 {
			return head + " Starting now."
		}
		return head + " " + where + "; no estimate yet: no run has finished on this host."
	}
	med := mathx.Median(times)
	wait := time.Duration(pos) * med
	if len(active) > 0 {
		started := active[0].StartedAt
		if started.IsZero() {
			started = active[0].DispatchedAt
		}
		wait += max(med-m.now().Sub(started), 0)
	}
	if wait == 0 {
		return head + " " + where + "; starting now."
	}
	last := "the last run on this host took"
	if len(times) > 1 {
		last = fmt.Sprintf("median of the last %d runs on this host:", len(times))
	}
	return fmt.Sprintf("%s %s; estimated start in about %s (%s %s).", head, where, roundDuration(wait), last, roundDuration(med))
}

func roundDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "1 min"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
	}
	h := d.Round(time.Minute)
	return fmt.Sprintf("%d h %d min", int(h/time.Hour), int(h%time.Hour/time.Minute))
}

// client is the GitHub client of r's installation and r's repository.
func (m *marks) client(r queue.Request) (markAPI, gh.Repo, error) {
	c, err := m.api(r.Installation)
	if err != nil {
		return nil, gh.Repo{}, permanent{err}
	}
	repo, err := gh.ParseRepo(r.Repo)
	if err != nil {
		return nil, gh.Repo{}, permanent{err}
	}
	return c, repo, nil
}

// statusComment is r's status comment; ok is false when r has none or it was deleted.
func statusComment(ctx context.Context, c markAPI, repo gh.Repo, r queue.Request) (gh.Comment, bool, error) {
	return existing(r.StatusCommentID, func(id int64) (gh.Comment, error) { return c.CommentByID(ctx, repo, id) })
}

// checkRun is r's check run; ok is false when r has none or it was deleted.
func checkRun(ctx context.Context, c markAPI, repo gh.Repo, r queue.Request) (gh.CheckRun, bool, error) {
	return existing(r.CheckRunID, func(id int64) (gh.CheckRun, error) { return c.CheckRunByID(ctx, repo, id) })
}

// existing is what get reads of id; ok is false when id is none (0) or GitHub no
// longer has it.
func existing[T any](id int64, get func(int64) (T, error)) (v T, ok bool, err error) {
	if id <= 0 {
		return v, false, nil
	}
	v, err = get(id)
	if errors.Is(err, gh.ErrNotFound) {
		return v, false, nil
	}
	return v, err == nil, err
}

// runLinks are the links of r's run (the run, and its traces artifact when it uploaded
// one), looked up once, at the first call: only when something is to be written.
func runLinks(ctx context.Context, c markAPI, repo gh.Repo, r queue.Request, runURL string) func() []report.Link {
	var links []report.Link
	linked := false
	return func() []report.Link {
		if !linked && runURL != "" {
			linked = true
			links = []report.Link{{Text: "workflow run", URL: runURL}}
			if a, ok := artifactLink(ctx, c, repo, r, runURL); ok {
				links = append(links, a)
			}
		}
		return links
	}
}

// withLinks is a check run's summary with links, one paragraph each.
func withLinks(summary string, links []report.Link) string {
	for _, l := range links {
		summary += "\n\n" + strings.ToUpper(l.Text[:1]) + l.Text[1:] + ": " + l.URL
	}
	return summary
}

// finish ends a request's marks on GitHub when nobody else did: the status comment
// and the check run, with the run's link when there is one (and its traces artifact's,
// when the run uploaded one), and a confused reaction on the trigger comment. It leaves alone what the publisher already finished, and a
// status comment or check run deleted meanwhile. why says what happened.
func (m *marks) finish(ctx context.Context, r queue.Request, why, runURL string) error {
	c, repo, err := m.client(r)
	if err != nil {
		return err
	}
	if r.State == queue.Done { // the run succeeded: its publish job wrote the end (live.go)
		m.progress.forget(r.ID)
		return m.finishPublished(ctx, c, repo, r, runURL)
	}
	state, conclusion, title := "failed", "failure", "The run ended without publishing"
	if r.State == queue.Cancelled {
		state, conclusion, title = "cancelled", "cancelled", "Cancelled"
	}
	m.progress.forget(r.ID)
	link := runLinks(ctx, c, repo, r, runURL)
	touched := false
	cm, ok, err := statusComment(ctx, c, repo, r)
	if err != nil {
		return err
	}
	if ok && !statusFinal(cm.Body) {
		body, err := statusBody(r, state, why, link())
		if err != nil {
			return err
		}
		if _, _, err := c.UpdateComment(ctx, repo, r.StatusCommentID, body); err != nil && !errors.Is(err, gh.ErrNotFound) {
			return err
		}
		touched = true
	}
	cr, ok, err := checkRun(ctx, c, repo, r)
	if err != nil {
		return err
	}
	if ok && cr.Status != "completed" {
		summary := withLinks(why, link())
		if err := c.CompleteCheckRun(ctx, repo, r.CheckRunID, gh.CheckOutput{Conclusion: conclusion, Title: title, Summary: summary, DetailsURL: runURL}); err != nil && !errors.Is(err, gh.ErrNotFound) {
			return err
		}
		touched = true
	}
	if touched && r.State != queue.Cancelled && r.CommentID > 0 { // a re-run has no trigger comment
		if err := c.React(ctx, repo, r.CommentID, "confused"); err != nil && !errors.Is(err, gh.ErrNotFound) {
			return err
		}
	}
	return nil
}
