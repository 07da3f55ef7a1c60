package server_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// expectConfig declares one read of a repository's .github/perfbot.yml.
func expectConfig(t testing.TB, s *fakegithub.Stub, repo string) {
	t.Helper()
	s.Expect("GET", "/repos/"+repo+"/contents/.github/perfbot.yml?ref="+gatetest.DefaultBranch, s.Example(200, "content-file-response-if-content-is-a-file", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(gatetest.Config)), "encoding": "base64",
		"size": len(gatetest.Config), "name": "perfbot.yml", "path": ".github/perfbot.yml", "type": "file",
	}))
}

// expectReadyApp answers every GET /app /readyz asks.
func expectReadyApp(t testing.TB, s *fakegithub.Stub) {
	s.Expect("GET", "/app", fakegithub.JSONFileWith(200, example(t, "integration"), map[string]any{"id": appID, "slug": appSlug})).AnyTimes()
}

// hold is a responder that answers only when released (the test's cleanup releases
// it, before the stub closes). entered is closed when the first call arrives.
type hold struct {
	entered, release chan struct{}
	once, rel        sync.Once
}

func newHold(t *testing.T) *hold {
	h := &hold{entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(h.free)
	return h
}

func (h *hold) free() { h.rel.Do(func() { close(h.release) }) }

func (h *hold) then(r fakegithub.Response) fakegithub.Responder {
	return fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
		h.once.Do(func() { close(h.entered) })
		<-h.release
		return r
	})
}

func (h *hold) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-h.entered:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not reach the API within 30 s", what)
	}
}

// waitReady polls /readyz until it answers code; the limit only turns a hang into a
// failure.
func (r *rig) waitReady(code int) string {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, body := r.get("/readyz")
		if got == code {
			return body
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("/readyz stayed %d %q, want %d", got, body, code)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHungDispatchDoesNotStopWorkers: GitHub takes a workflow dispatch and does not
// answer. With a single worker, a /perfbot help comment on another repository is
// still answered meanwhile, and /readyz stays 200 (no worker is stuck: the dispatch
// runs on the host's own goroutine, not on a worker). When GitHub answers, the
// dispatch is recorded.
func TestHungDispatchDoesNotStopWorkers(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	set.Workers = 1
	set.APITimeout = time.Hour // the dispatch really hangs while help is answered
	set.StuckAfter = time.Nanosecond
	r := start(t, stub, &set)
	expectToken(t, stub)
	expectReadyApp(t, stub)
	dispatch := newHold(t)
	expectGate(t, stub, issueRepo, "Codertocat", "write", true)
	expectAccepted(t, stub, issueRepo, issueNum, false, 8001, 1, gatetest.MasterSHA, nil)
	stub.Expect("POST", fmt.Sprintf("/repos/%s/actions/workflows/%s/dispatches", issueRepo, workflow), dispatch.then(fakegithub.Response{Status: 204})).
		JSONBody(map[string]any{"inputs.request_id": "1", "inputs.sha": gatetest.MasterSHA})
	if err := r.deliver("issue_comment", "88888888-0000-4000-8000-000000000001", commentEvent(t, 8001, "Codertocat", "/profile rocm")); err != nil {
		t.Fatal(err)
	}
	dispatch.wait(t, "the dispatch")

	expectConfig(t, stub, prRepo)
	expectReply(t, stub, prRepo, prNum, 8002, "`/profile rocm [models=NAME,...]")
	if err := r.deliver("issue_comment", "88888888-0000-4000-8000-000000000002", prCommentEvent(t, 8002, "spxtr", "/perfbot help")); err != nil {
		t.Fatalf("help while a dispatch hangs: %v", err)
	}
	if code, body := r.get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz while a dispatch hangs and the worker is free: %d %q", code, body)
	}
	select {
	case <-dispatch.release:
		t.Fatal("the dispatch was released before help was answered")
	default:
	}
	dispatch.free()
	r.waitDispatched(1)
}

// TestDispatchTimesOut: GitHub takes a workflow dispatch and never answers. The call
// fails after github.timeout_secs, as one whose answer was lost (the run is looked for
// before the dispatch is sent again).
func TestDispatchTimesOut(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	set.APITimeout = 100 * time.Millisecond
	r := start(t, stub, &set)
	expectToken(t, stub)
	dispatch := newHold(t)
	expectGate(t, stub, issueRepo, "Codertocat", "write", true)
	expectAccepted(t, stub, issueRepo, issueNum, false, 8101, 1, gatetest.MasterSHA, nil)
	stub.Expect("POST", fmt.Sprintf("/repos/%s/actions/workflows/%s/dispatches", issueRepo, workflow), dispatch.then(fakegithub.Response{Status: 204}))
	if err := r.deliver("issue_comment", "88888888-0000-4000-8000-000000000101", commentEvent(t, 8101, "Codertocat", "/profile rocm")); err != nil {
		t.Fatal(err)
	}
	line := r.lines.WaitAny(t, `"msg":"server: dispatch answer lost; looking for the run before sending it again".*`)
	for _, want := range []string{"GitHub did not answer POST ", fmt.Sprintf("/repos/%s/actions/workflows/%s/dispatches within 100ms", issueRepo, workflow)} {
		if !strings.Contains(line[0], want) {
			t.Errorf("log line %s\nlacks %q", line[0], want)
		}
	}
	r.wantMetrics(`perfbot_dispatches_total{host="gfx1151",result="retry"} 1`)
}

// TestReadyzReportsStuckWorkers: the only worker waits on a GitHub call that does not
// answer; /readyz turns 503 and says the workers are stuck, and turns 200 again once
// the call is answered.
func TestReadyzReportsStuckWorkers(t *testing.T) {
	t.Parallel()
	stub := fakegithub.New(t)
	set := settings(t, stub.URL())
	set.Workers = 1
	set.APITimeout = time.Hour
	set.StuckAfter = time.Nanosecond
	r := start(t, stub, &set)
	expectToken(t, stub)
	expectReadyApp(t, stub)
	config := newHold(t)
	stub.Expect("GET", "/repos/"+issueRepo+"/contents/.github/perfbot.yml?ref="+gatetest.DefaultBranch,
		config.then(fakegithub.Response{Status: 404, Body: []byte(`{"message":"Not Found"}`)}))
	expectReply(t, stub, issueRepo, issueNum, 8201, "has no `.github/perfbot.yml`")
	const id = "88888888-0000-4000-8000-000000000201"
	if code, msg := r.post("issue_comment", id, commentEvent(t, 8201, "Codertocat", "/perfbot help")); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	config.wait(t, "the config read")
	body := r.waitReady(http.StatusServiceUnavailable)
	if want := "workers: all 1 workers have been on their deliveries for over 1ns (the oldest, delivery " + id; !strings.Contains(body, want) {
		t.Errorf("/readyz %q lacks %q", body, want)
	}
	r.wantMetrics("perfbot_workers_busy 1")
	config.free()
	if err := r.wait(id); err != nil {
		t.Fatal(err)
	}
	r.waitReady(http.StatusOK)
	r.wantMetrics("perfbot_workers_busy 0", "perfbot_oldest_processing_seconds 0")
}

// TestHungAppAtStart: GitHub accepts the connection of the start-up GET /app and never
// answers; New fails after github.timeout_secs with a timeout error.
func TestHungAppAtStart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	set := settings(t, "http://"+ln.Addr().String()+"/")
	set.APITimeout = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = server.New(ctx, set, server.Options{Secret: secret, GitHub: gh.Options{MaxRetries: -1, Sleep: noSleep}})
	var te *gh.TimeoutError
	if !errors.As(err, &te) || te.Path != "/app" {
		t.Fatalf("New: %v, want a timeout of GET /app", err)
	}
	if ctx.Err() != nil {
		t.Fatal("New returned only when the test's own deadline ended")
	}
	if !strings.Contains(err.Error(), "GitHub did not answer GET /app within 100ms") {
		t.Errorf("New: %v", err)
	}
}
