package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/store"
	"github.com/prometheus/client_golang/prometheus"
)

// The unit tests of the server's parts (commands, dispatcher, sweeper) drive each
// part alone: GitHub is fakeGitHub, in memory, and the requests are bot/queue on a
// SQLite file of the test's own. No HTTP is involved; the end-to-end tests
// (scenario_test.go and the rest) run the whole server against the API stub.

// fakeGitHub is an installation's GitHub in memory: the comments, check runs, runs
// and dispatches a part made or asked for. It implements commandAPI, runAPI and
// markAPI; the gate's own questions (gate.GitHub) are not asked by the tests.
type fakeGitHub struct {
	gate.GitHub // nil: a call of the gate's would panic

	mu        sync.Mutex
	nextID    int64
	comments  map[int64]gh.Comment // by id
	checkRuns map[int64]gh.CheckRun
	// checkSpecs are what each created check run was asked to be.
	checkSpecs []gh.CheckRunSpec
	replies    []string // the text of each reply to a command comment
	reactions  []string // "COMMENT_ID:CONTENT"
	// dispatches are the inputs of each workflow dispatch; dispatchErr, when set, is
	// the answer to the next one.
	dispatches  []map[string]any
	dispatchErr error
	runs        []gh.WorkflowRun // the workflow's runs GitHub lists
	cancelled   []int64          // runs asked to cancel
	// startErr and updateErr, when set, answer every start of a check run and every
	// conditional edit of a comment; artifactLists counts the listings of a run's
	// artifacts.
	startErr, updateErr error
	artifactLists       int
}

func newFakeGitHub() *fakeGitHub {
	return &fakeGitHub{nextID: 100, comments: map[int64]gh.Comment{}, checkRuns: map[int64]gh.CheckRun{}}
}

func (f *fakeGitHub) Reply(_ context.Context, ev gate.Event, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies = append(f.replies, text)
	return nil
}

func (f *fakeGitHub) React(_ context.Context, _ gh.Repo, commentID int64, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reactions = append(f.reactions, fmt.Sprintf("%d:%s", commentID, content))
	return nil
}

func (f *fakeGitHub) UpsertComment(_ context.Context, _ gh.Repo, _ int, marker, body string) (gh.Comment, gh.Action, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, c := range f.comments {
		if strings.Contains(c.Body, marker) {
			c.Body = body
			f.comments[id] = c
			return c, gh.Updated, nil
		}
	}
	f.nextID++
	c := gh.Comment{ID: f.nextID, Body: body}
	f.comments[c.ID] = c
	return c, gh.Created, nil
}

func (f *fakeGitHub) UpdateComment(_ context.Context, _ gh.Repo, id int64, body string) (gh.Comment, gh.Action, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := held(f.comments, id)
	if err != nil {
		return c, "", err
	}
	c.Body = body
	f.comments[id] = c
	return c, gh.Updated, nil
}

func (f *fakeGitHub) CommentByID(_ context.Context, _ gh.Repo, id int64) (gh.Comment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return held(f.comments, id)
}

// held returns what GitHub holds under id, or its 404.
func held[T any](m map[int64]T, id int64) (T, error) {
	v, ok := m[id]
	if !ok {
		return v, &gh.APIError{Op: fmt.Sprintf("reading %d", id), Status: 404}
	}
	return v, nil
}

func (f *fakeGitHub) CreateCheckRun(_ context.Context, _ gh.Repo, s gh.CheckRunSpec) (gh.CheckRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	cr := gh.CheckRun{ID: f.nextID, Status: "queued"}
	f.checkRuns[cr.ID] = cr
	f.checkSpecs = append(f.checkSpecs, s)
	return cr, nil
}

func (f *fakeGitHub) CheckRunByID(_ context.Context, _ gh.Repo, id int64) (gh.CheckRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return held(f.checkRuns, id)
}

func (f *fakeGitHub) CompleteCheckRun(_ context.Context, _ gh.Repo, id int64, o gh.CheckOutput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cr, err := held(f.checkRuns, id)
	if err != nil {
		return err
	}
	cr.Status, cr.Conclusion = "completed", o.Conclusion
	f.checkRuns[id] = cr
	return nil
}

func (f *fakeGitHub) DispatchWorkflow(_ context.Context, _ gh.Repo, _, _ string, inputs map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.dispatchErr; err != nil {
		f.dispatchErr = nil
		return err
	}
	f.dispatches = append(f.dispatches, inputs)
	return nil
}

func (f *fakeGitHub) WorkflowRuns(context.Context, gh.Repo, string, time.Time) ([]gh.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]gh.WorkflowRun(nil), f.runs...), nil
}

func (f *fakeGitHub) WorkflowRunByID(_ context.Context, _ gh.Repo, id int64) (gh.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return gh.WorkflowRun{}, &gh.APIError{Op: "reading a run", Status: 404}
}

func (f *fakeGitHub) CancelWorkflowRun(_ context.Context, _ gh.Repo, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, id)
	return nil
}

// comment returns the body of a comment the fake holds.
func (f *fakeGitHub) comment(t *testing.T, id int64) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.comments[id]
	if !ok {
		t.Fatalf("GitHub holds no comment %d", id)
	}
	return c.Body
}

// wantIn fails the test for each of subs that text (what it is) lacks.
func wantIn(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(text, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, text)
		}
	}
}

// lastReply returns the last reply to a command comment.
func (f *fakeGitHub) lastReply(t *testing.T) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.replies) == 0 {
		t.Fatal("no reply was written")
	}
	return f.replies[len(f.replies)-1]
}

// apiFor is a part's installation lookup that always answers with f.
func apiFor[API any](f *fakeGitHub) func(int64) (API, error) {
	return func(int64) (API, error) { return any(f).(API), nil }
}

// kicks records the kicks of a host queue and lets commands lock it.
type kicks struct {
	mu    sync.Mutex
	hosts []string
}

func (k *kicks) lock(string) func() { k.mu.Lock(); return k.mu.Unlock }

func (k *kicks) kick(host string, _ bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.hosts = append(k.hosts, host)
}

// clock is the parts' clock, moved by the test (the parts run on the test's
// goroutine).
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }

// openQueue opens the requests table on a fresh SQLite file.
func openQueue(t *testing.T, now func() time.Time) (*queue.Queue, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "perfbot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return queue.New(db, now), db
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

const (
	testRepo = "octo/engine"
	testHost = "gfx1151"
	testSHA  = "0123456789abcdef0123456789abcdef01234567"
)

// queued stores a request of comment commentID by user, queued on testHost.
func queued(t *testing.T, q *queue.Queue, commentID int64, user string, statusID int64) queue.Request {
	t.Helper()
	ctx := context.Background()
	r, _, err := q.Add(ctx, queue.Request{
		Delivery: fmt.Sprintf("d-%d", commentID), Repo: testRepo, Installation: 1, Issue: 7, CommentID: commentID,
		Requester: user, Kind: "profile", Command: "/profile rocm", SHA: testSHA, PinnedFrom: "the default branch",
		Host: testHost, Workflow: "perfbot.yml", Ref: "main",
	})
	if err != nil {
		t.Fatal(err)
	}
	if statusID != 0 {
		if err := q.SetStatusComment(ctx, r.ID, statusID); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.MarkQueued(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	return state(t, q, r.ID)
}

// state returns a request's state in the queue.
func state(t *testing.T, q *queue.Queue, id int64) queue.Request {
	t.Helper()
	r, ok, err := q.Get(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("request %d: %v (found %v)", id, err, ok)
	}
	return r
}

// counted returns the value of a counter series of c whose labels hold all of want.
func counted(t *testing.T, c prometheus.Collector, want map[string]string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue series
				}
			}
			total += m.GetCounter().GetValue()
		}
	}
	return total
}
