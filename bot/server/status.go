package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/report"
)

// requestMarker is the hidden line that finds a request's status comment again before
// it is created a second time.
func requestMarker(id int64) string { return fmt.Sprintf("<!-- perfbot:request %d -->", id) }

// statusBody renders the status comment through the same template the publisher
// uses, plus the request's marker.
func (s *Server) statusBody(_ context.Context, r queue.Request, state, detail string, links []report.Link) (string, error) {
	body, err := report.Render(report.Status, report.StatusData{State: state, Command: r.Command, Detail: detail, Links: links})
	if err != nil {
		return "", err
	}
	return strings.TrimRight(body, "\n") + "\n\n" + requestMarker(r.ID) + "\n", nil
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

// queuedDetail says where a queued request stands: its request id and host, its
// position, and an estimate of its start from the host's past run times.
func (s *Server) queuedDetail(ctx context.Context, r queue.Request) string {
	head := fmt.Sprintf("Request %d on host %s, commit %s (%s).", r.ID, r.Host, short(r.SHA), r.PinnedFrom)
	pos, err := s.queue.Position(ctx, r)
	if err != nil {
		return head
	}
	active, err := s.queue.List(ctx, queue.Filter{Host: r.Host, States: []queue.State{queue.Dispatching, queue.Dispatched, queue.Running}})
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
	times, err := s.queue.RunTimes(ctx, r.Host, runTimesN)
	if err != nil || len(times) == 0 {
		if pos == 0 && len(active) == 0 {
			return head + " Starting now."
		}
		return head + " " + where + "; no estimate yet: no run has finished on this host."
	}
	med := median(times)
	wait := time.Duration(pos) * med
	if len(active) > 0 {
		started := active[0].StartedAt
		if started.IsZero() {
			started = active[0].DispatchedAt
		}
		wait += max(med-s.o.Now().Sub(started), 0)
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

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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

// finishMarks ends a request's marks on GitHub when nobody else did: the status comment
// and the check run, with the run's link when there is one, and a confused reaction on
// the trigger comment. It leaves alone what the publisher already finished, and a
// status comment or check run deleted meanwhile. why says what happened.
func (s *Server) finishMarks(ctx context.Context, r queue.Request, why, runURL string) error {
	c, err := s.client(r.Installation)
	if err != nil {
		return permanent{err}
	}
	repo, err := gh.ParseRepo(r.Repo)
	if err != nil {
		return permanent{err}
	}
	state, conclusion, title := "failed", "failure", "The run ended without publishing"
	if r.State == queue.Cancelled {
		state, conclusion, title = "cancelled", "cancelled", "Cancelled"
	}
	var links []report.Link
	if runURL != "" {
		links = []report.Link{{Text: "workflow run", URL: runURL}}
	}
	touched := false
	if r.StatusCommentID > 0 {
		cm, err := c.CommentByID(ctx, repo, r.StatusCommentID)
		switch {
		case errors.Is(err, gh.ErrNotFound):
		case err != nil:
			return err
		case !statusFinal(cm.Body):
			body, err := s.statusBody(ctx, r, state, why, links)
			if err != nil {
				return err
			}
			if _, _, err := c.UpdateComment(ctx, repo, r.StatusCommentID, body); err != nil && !errors.Is(err, gh.ErrNotFound) {
				return err
			}
			touched = true
		}
	}
	if r.CheckRunID > 0 {
		cr, err := c.CheckRunByID(ctx, repo, r.CheckRunID)
		switch {
		case errors.Is(err, gh.ErrNotFound):
		case err != nil:
			return err
		case cr.Status != "completed":
			summary := why
			if runURL != "" {
				summary += "\n\nWorkflow run: " + runURL
			}
			if err := c.CompleteCheckRun(ctx, repo, r.CheckRunID, gh.CheckOutput{Conclusion: conclusion, Title: title, Summary: summary, DetailsURL: runURL}); err != nil && !errors.Is(err, gh.ErrNotFound) {
				return err
			}
			touched = true
		}
	}
	if touched && r.State != queue.Cancelled {
		if err := c.React(ctx, repo, r.CommentID, "confused"); err != nil && !errors.Is(err, gh.ErrNotFound) {
			return err
		}
	}
	return nil
}
