package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/bot/webhook"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/linestest"
	"github.com/lablup/perfbot/internal/logtest"
	"github.com/lablup/perfbot/internal/testfix"
)

// The App of the tests. Its slug is the gate cases' bot login, so the shared cases'
// "perfbot's own comment" is the App's own comment here too.
const (
	appID          = 1
	appSlug        = "perfbot-runner"
	installationID = 1
	secretEnv      = "PERFBOT_TEST_SECRET"
	workflow       = "perfbot.yml"
	hostLabel      = "gfx1151"
)

var secret = []byte("It's a test secret for perfbot")

var (
	keyOnce sync.Once
	keyPEM  []byte
)

// appKeyFile writes the App's private key (one RSA key per test binary: generating is
// the slow part).
func appKeyFile(t testing.TB) string {
	t.Helper()
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	})
	p := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(p, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func example(t testing.TB, name string) string {
	return testfix.Path(t, "github", "rest-openapi-examples", name+".json")
}

// expectToken declares the one installation token a server mints before its first
// call as the installation.
func expectToken(t testing.TB, s *fakegithub.Stub) {
	t.Helper()
	s.Expect("POST", fmt.Sprintf("/app/installations/%d/access_tokens", installationID),
		fakegithub.JSONFileWith(201, example(t, "installation-token"), map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}))
}

// expectApp declares the calls every server makes: who the App is at start and the
// first sweep (which finds nothing). swept is closed when the sweep has asked.
func expectApp(t testing.TB, s *fakegithub.Stub) (swept chan struct{}) {
	t.Helper()
	s.Expect("GET", "/app", fakegithub.JSONFileWith(200, example(t, "integration"), map[string]any{"id": appID, "slug": appSlug}))
	swept = make(chan struct{})
	var once sync.Once
	s.Expect("GET", "/app/hook/deliveries", fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
		once.Do(func() { close(swept) })
		return fakegithub.Response{Status: 200, Body: []byte("[]")}
	}))
	return swept
}

// serveBare starts a server on set with opts, where the test gives LiveEvery and Now
// and the rest is what such tests share (no log, retries within 50 ms, GitHub's
// answers not retried); it serves on a free port of 127.0.0.1 until ctx ends. It
// declares the start's calls on stub (expectApp), waits for the start's sweep and
// returns the server's address and where Serve's result goes. With stop given, the
// test's cleanup calls it and waits up to 10 s for the server to stop. Each of before
// is called with the server before it serves.
func serveBare(t *testing.T, ctx context.Context, stub *fakegithub.Stub, set server.Settings, opts server.Options, stop context.CancelFunc, before ...func(*server.Server)) (addr string, served <-chan error) {
	t.Helper()
	swept := expectApp(t, stub)
	done := make(chan error, 1)
	serving := false
	if stop != nil {
		t.Cleanup(func() {
			stop()
			if !serving {
				return
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("the server did not stop within 10 s")
			}
		})
	}
	opts.Secret, opts.Logger = secret, slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.RetryBase, opts.RetryMax = 10*time.Millisecond, 50*time.Millisecond
	opts.GitHub = gh.Options{MaxRetries: -1, Sleep: noSleep}
	srv, err := server.New(ctx, set, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range before {
		f(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- srv.Serve(ctx, ln) }()
	serving = true
	select {
	case <-swept:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not sweep at start within 10 s")
	}
	return ln.Addr().String(), done
}

// countRequests counts the requests the stub has had for method and path.
func countRequests(s *fakegithub.Stub, method, path string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// settings are a server's settings for the tests, on a fresh database.
func settings(t testing.TB, apiURL string) server.Settings {
	t.Helper()
	set := server.DefaultSettings()
	set.Listen = "127.0.0.1:0"
	set.Database = filepath.Join(t.TempDir(), "perfbot.db")
	set.APIURL = apiURL
	set.AppID = appID
	set.KeyFile = appKeyFile(t)
	set.SecretEnv = secretEnv
	set.Hosts = []server.Host{{Label: hostLabel, Backend: "rocm", Workflow: workflow}}
	set.Workers = 2
	set.Backlog = 100
	set.MaxAttempts = 3
	set.SweepEvery = time.Hour
	set.CheckEvery = time.Hour
	set.ConfirmAfter = 0
	return set
}

// rig is a running server on 127.0.0.1 talking to an API stub.
type rig struct {
	t       *testing.T
	stub    *fakegithub.Stub
	srv     *server.Server
	url     string
	logs    string           // the server's log file
	lines   *linestest.Lines // the same lines, to wait for
	settled chan settled
}

type settled struct {
	d   inbox.Delivery
	err error
}

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// start runs a server with set (nil: the defaults above) against stub, whose App calls
// are declared here; the test declares the rest before sending deliveries.
func start(t *testing.T, stub *fakegithub.Stub, set *server.Settings) *rig {
	t.Helper()
	swept := expectApp(t, stub)
	if set == nil {
		s := settings(t, stub.URL())
		set = &s
	}
	r := &rig{t: t, stub: stub, logs: filepath.Join(t.TempDir(), "serve.log"), lines: linestest.New(), settled: make(chan settled, 64)}
	r.lines.Limit = 30 * time.Second
	logf, err := os.Create(r.logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, *set, server.Options{
		Secret: secret, Logger: slog.New(logtest.NoDurations(t, slog.NewJSONHandler(io.MultiWriter(logf, r.lines), &slog.HandlerOptions{Level: slog.LevelDebug}))),
		RetryBase: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		LiveEvery: time.Hour, // the tests refresh the live status with server.Live
		GitHub:    gh.Options{MaxRetries: -1, Sleep: noSleep},
		OnSettled: func(d inbox.Delivery, err error) { r.settled <- settled{d, err} },
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop within 10 s")
		}
		if t.Failed() {
			b, _ := os.ReadFile(r.logs)
			t.Logf("server log:\n%s", b)
		}
	})
	r.srv, r.url = srv, "http://"+ln.Addr().String()
	select {
	case <-swept:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not sweep at start within 10 s")
	}
	return r
}

// post sends a signed delivery and returns the status and answer.
func (r *rig) post(event, id string, body []byte) (int, string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", r.url+"/webhook", bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.HeaderEvent, event)
	req.Header.Set(webhook.HeaderDelivery, id)
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(secret, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// deliver posts a delivery, wants it stored (202), and waits until a worker settled it.
func (r *rig) deliver(event, id string, body []byte) error {
	r.t.Helper()
	if code, msg := r.post(event, id, body); code != http.StatusAccepted {
		r.t.Fatalf("delivery %s: %d %s, want 202", id, code, msg)
	}
	return r.wait(id)
}

// wait waits until a worker has settled delivery id (done, retry or failed) and
// returns its processing error.
func (r *rig) wait(id string) error {
	r.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case s := <-r.settled:
			if s.d.ID == id {
				return s.err
			}
		case <-deadline:
			r.t.Fatalf("delivery %s was not processed within 15 s", id)
		}
	}
}

// waitDispatched waits until the server logged the dispatch of a request: dispatches
// run on the host's own goroutine, after the delivery that queued the request has
// settled.
func (r *rig) waitDispatched(request int64) {
	r.t.Helper()
	r.lines.WaitAny(r.t, fmt.Sprintf(`"msg":"server: workflow dispatched".*"request":%d[,}]`, request))
}

func (r *rig) get(path string) (int, string) {
	r.t.Helper()
	resp, err := http.Get(r.url + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// wantMetrics fails the test for each line /metrics does not hold.
func (r *rig) wantMetrics(lines ...string) {
	r.t.Helper()
	code, metrics := r.get("/metrics")
	if code != http.StatusOK {
		r.t.Fatalf("/metrics: %d", code)
	}
	for _, want := range lines {
		if !strings.Contains(metrics, want) {
			r.t.Errorf("/metrics lacks %s", want)
		}
	}
}

// edit returns a JSON payload with dotted-key overrides and the App's installation.
func edit(t testing.TB, payload []byte, edits map[string]any) []byte {
	t.Helper()
	all := map[string]any{"installation": map[string]any{"id": installationID, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}}
	for k, v := range edits {
		all[k] = v
	}
	b, err := fakegithub.Payload(payload, all)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func payload(t testing.TB, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(testfix.Path(t, elem...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bodyHas matches a request whose JSON body's field contains all of subs.
func bodyHas(field string, subs ...string) fakegithub.Matcher {
	return fakegithub.MatchFunc(field+" contains", func(req fakegithub.Request) error {
		m, err := req.JSON()
		if err != nil {
			return err
		}
		v, _ := m[field].(string)
		for _, s := range subs {
			if !strings.Contains(v, s) {
				return fmt.Errorf("%s %q does not contain %q", field, v, s)
			}
		}
		return nil
	})
}

// expectReply declares the one reply to a comment: the marker search, then the post.
func expectReply(t testing.TB, s *fakegithub.Stub, repo string, issue int, commentID int64, subs ...string) {
	t.Helper()
	s.Expect("GET", fmt.Sprintf("/repos/%s/issues/%d/comments", repo, issue), fakegithub.JSON(200, []any{}))
	s.Expect("POST", fmt.Sprintf("/repos/%s/issues/%d/comments", repo, issue),
		fakegithub.JSONFileWith(201, example(t, "issue-comment"), map[string]any{"id": 9000 + commentID%1000, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", append(subs, fmt.Sprintf("<!-- perfbot:reply %d -->", commentID))...))
}

// accepted are the ids the stub gives a request's status comment and check run.
type accepted struct {
	statusID, checkRunID int64
}

// expectAccepted declares what accepting a /profile or /bench request does: the eyes
// reaction, the status comment, the check run on a pull request and, when dispatch is
// set, the workflow dispatch with the pinned SHA and the request's ids.
func expectAccepted(t testing.TB, s *fakegithub.Stub, repo string, issue int, isPR bool, commentID, requestID int64, sha string, dispatch map[string]any) accepted {
	t.Helper()
	a := accepted{statusID: 5000 + requestID}
	s.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", repo, commentID), fakegithub.JSONFile(201, example(t, "reaction"))).
		JSONBody(map[string]any{"content": "eyes"})
	s.Expect("GET", fmt.Sprintf("/repos/%s/issues/%d/comments", repo, issue), fakegithub.JSON(200, []any{}))
	s.Expect("POST", fmt.Sprintf("/repos/%s/issues/%d/comments", repo, issue),
		fakegithub.JSONFileWith(201, example(t, "issue-comment"), map[string]any{"id": a.statusID, "user.login": appSlug + "[bot]"})).
		Match(bodyHas("body", "queued.", fmt.Sprintf("Request %d on host %s", requestID, hostLabel), fmt.Sprintf("<!-- perfbot:request %d -->", requestID)))
	if isPR {
		a.checkRunID = 6000 + requestID
		expectCheckRuns(t, s, repo, sha)
		s.Expect("POST", fmt.Sprintf("/repos/%s/check-runs", repo),
			fakegithub.JSONFileWith(201, example(t, "check-run"), map[string]any{"id": a.checkRunID, "status": "queued", "head_sha": sha})).
			JSONBody(map[string]any{"head_sha": sha, "status": "queued", "external_id": fmt.Sprintf("perfbot-request-%d", requestID)})
	}
	if dispatch != nil {
		in := map[string]any{
			"inputs.sha": sha, "inputs.request_id": fmt.Sprint(requestID), "inputs.issue": fmt.Sprint(issue),
			"inputs.status_comment_id": fmt.Sprint(a.statusID), "inputs.trigger_comment_id": fmt.Sprint(commentID),
			"inputs.check_run_id": fmt.Sprint(a.checkRunID),
		}
		for k, v := range dispatch {
			in[k] = v
		}
		s.Expect("POST", fmt.Sprintf("/repos/%s/actions/workflows/%s/dispatches", repo, workflow), fakegithub.Status(204)).JSONBody(in)
	}
	return a
}

// expectCheckRuns declares the look for a request's check run on sha before it is
// created, finding the given runs (id -> external id).
func expectCheckRuns(t testing.TB, s *fakegithub.Stub, repo, sha string, runs ...map[string]any) *fakegithub.Expectation {
	t.Helper()
	list := []any{}
	for _, r := range runs {
		m, err := fakegithub.Object(example(t, "check-run"))
		if err != nil {
			t.Fatal(err)
		}
		r["head_sha"] = sha
		for k, v := range r {
			if err := fakegithub.Set(m, k, v); err != nil {
				t.Fatal(err)
			}
		}
		list = append(list, m)
	}
	return s.Expect("GET", fmt.Sprintf("/repos/%s/commits/%s/check-runs?filter=all", repo, sha),
		fakegithub.JSON(200, map[string]any{"total_count": len(list), "check_runs": list}))
}
