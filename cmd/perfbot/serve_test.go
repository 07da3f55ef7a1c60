package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/store"
	"github.com/lablup/perfbot/bot/webhook"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
)

const serveSecret = "crash test secret"

// fakeGitHub is the API stub a real `perfbot serve` process talks to during the crash
// test: every call may happen any number of times (a killed process repeats some), and
// the dispatches are counted by request id. Each dispatch "starts a run" that lists
// under the workflow's runs at once, so a restarted server finds a dispatch whose
// answer it lost instead of sending it again.
type fakeGitHub struct {
	stub *fakegithub.Stub

	mu         sync.Mutex
	dispatches map[string]int // request id -> dispatches
	order      []string
	started    chan string // request ids, as dispatched
}

func newFakeGitHub(t *testing.T, comments []int64) *fakeGitHub {
	t.Helper()
	s := fakegithub.New(t)
	f := &fakeGitHub{stub: s, dispatches: map[string]int{}, started: make(chan string, 1000)}
	ex := func(name string) string { return testfix.Path(t, "github", "rest-openapi-examples", name+".json") }
	const repo = "/repos/Codertocat/Hello-World"
	s.Expect("GET", "/app", fakegithub.JSONFileWith(200, ex("integration"), map[string]any{"id": 1, "slug": "perfbot-runner"})).AnyTimes()
	s.Expect("POST", "/app/installations/1/access_tokens", fakegithub.JSONFileWith(201, ex("installation-token"),
		map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})).AnyTimes()
	s.Expect("GET", "/app/hook/deliveries", fakegithub.JSON(200, []any{})).AnyTimes()
	s.Expect("GET", repo+"/contents/.github/perfbot.yml", s.Example(200, "content-file-response-if-content-is-a-file", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(gatetest.Config)), "encoding": "base64",
		"size": len(gatetest.Config), "name": "perfbot.yml", "path": ".github/perfbot.yml", "type": "file",
	})).AnyTimes()
	s.Expect("GET", repo+"/collaborators/Codertocat/permission",
		s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", map[string]any{"permission": "write", "role_name": "write"})).AnyTimes()
	s.Expect("GET", repo+"/git/ref/heads/master", s.Example(200, "git-ref", map[string]any{"ref": "refs/heads/master", "object.sha": gatetest.MasterSHA})).AnyTimes()
	s.Expect("GET", repo+"/issues/1/comments", fakegithub.JSON(200, []any{})).AnyTimes()
	s.Expect("POST", repo+"/issues/1/comments", fakegithub.JSONFileWith(201, ex("issue-comment"), map[string]any{"id": 5001, "user.login": "perfbot-runner[bot]"})).AnyTimes()
	s.Expect("GET", repo+"/issues/comments/5001", fakegithub.JSONFileWith(200, ex("issue-comment"),
		map[string]any{"id": 5001, "body": "<!-- perfbot:status -->\n**/profile rocm**: done.\n", "user.login": "perfbot-runner[bot]"})).AnyTimes()
	for _, id := range comments {
		s.Expect("POST", fmt.Sprintf("%s/issues/comments/%d/reactions", repo, id), fakegithub.JSONFile(201, ex("reaction"))).AnyTimes()
	}
	// Queued status comments are refreshed as the queue moves.
	s.Expect("PATCH", repo+"/issues/comments/5001", fakegithub.JSONFileWith(200, ex("issue-comment"), map[string]any{"id": 5001, "user.login": "perfbot-runner[bot]"})).AnyTimes()
	s.Expect("POST", repo+"/actions/workflows/perfbot.yml/dispatches", fakegithub.Func(func(req fakegithub.Request) fakegithub.Response {
		var body struct {
			Inputs map[string]string `json:"inputs"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil || body.Inputs["sha"] != gatetest.MasterSHA {
			return fakegithub.Response{Status: 422, Body: []byte(`{"message":"bad inputs"}`)}
		}
		id := body.Inputs["request_id"]
		f.mu.Lock()
		f.dispatches[id]++
		f.order = append(f.order, id)
		f.mu.Unlock()
		f.started <- id
		return fakegithub.Response{Status: 204}
	})).AnyTimes()
	run, err := fakegithub.Object(ex("workflow-run"))
	if err != nil {
		t.Fatal(err)
	}
	s.Expect("GET", repo+"/actions/workflows/perfbot.yml/runs", fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
		f.mu.Lock()
		ids := append([]string(nil), f.order...)
		f.mu.Unlock()
		runs := []any{}
		for _, id := range ids {
			r := map[string]any{}
			for k, v := range run {
				r[k] = v
			}
			r["id"], r["display_title"], r["event"] = 7000+atoi(id), "perfbot request "+id+": profile", "workflow_dispatch"
			r["created_at"], r["status"] = time.Now().UTC().Format(time.RFC3339), "in_progress"
			runs = append(runs, r)
		}
		b, _ := json.Marshal(map[string]any{"total_count": len(runs), "workflow_runs": runs})
		return fakegithub.Response{Status: 200, Body: b}
	})).AnyTimes()
	// A restarted server asks about the runs it holds; the fake Actions side delivers
	// their completion, so they are in progress here.
	for i := range comments {
		id := 7001 + i
		s.Expect("GET", fmt.Sprintf("%s/actions/runs/%d", repo, id), fakegithub.JSONFileWith(200, ex("workflow-run"),
			map[string]any{"id": id, "status": "in_progress", "conclusion": nil})).AnyTimes()
	}
	return f
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

func (f *fakeGitHub) counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.dispatches {
		out[k] = v
	}
	return out
}

// serveProc is one `perfbot serve` process.
type serveProc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

func startServe(t *testing.T, bin, cfg string, log io.Writer) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "PERFBOT_WEBHOOK_SECRET="+serveSecret)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *serveProc) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("perfbot serve did not stop within 15 s of %v", sig)
	}
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("perfbot serve did not answer /healthz within 30 s")
}

// postUntil2xx posts a signed delivery until the server answers 2xx (the retries stand
// for GitHub's redelivery of a failed one) and returns the status.
func postUntil2xx(ctx context.Context, base, event, id string, body []byte) (int, error) {
	for {
		req, err := http.NewRequestWithContext(ctx, "POST", base+"/webhook", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(webhook.HeaderEvent, event)
		req.Header.Set(webhook.HeaderDelivery, id)
		req.Header.Set(webhook.HeaderSignature, webhook.Sign([]byte(serveSecret), body))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return resp.StatusCode, nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestServeSurvivesSIGKILL runs the real binary, kills it with SIGKILL twice while
// signed comment deliveries (each a /profile rocm command) arrive from four senders,
// restarts it each time, and checks that every delivery answered 2xx is in the inbox
// exactly once, processed, and that its command was dispatched exactly once (counted
// by request id at the API). A fake Actions side answers each dispatch with a
// workflow_run completed delivery, so the one GPU host's queue keeps moving.
func TestServeSurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "perfbot")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building perfbot: %v\n%s", err, out)
	}
	const n = 48
	comments := make([]int64, n)
	for i := range comments {
		comments[i] = int64(10000 + i)
	}
	gh := newFakeGitHub(t, comments)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	db := filepath.Join(dir, "perfbot.db")
	cfg := filepath.Join(dir, "serve.yml")
	settings := fmt.Sprintf(`version: 1
listen: %s
database: %s
github: {api_url: %q, app_id: 1, private_key_file: %s}
hosts:
  - {label: gfx1151, backend: rocm, workflow: perfbot.yml}
workers: 4
max_attempts: 50
dispatch: {confirm_secs: 0, check_secs: 3600}
`, addr, db, gh.stub.URL(), keyFile)
	if err := os.WriteFile(cfg, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	base := "http://" + addr
	proc := startServe(t, bin, cfg, logFile)
	waitHealthy(t, base)
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("serve log (last 8 KB):\n%s", b[max(0, len(b)-8192):])
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	raw, err := os.ReadFile(testfix.Path(t, "github", "webhooks", "issue_comment.created.json"))
	if err != nil {
		t.Fatal(err)
	}
	runRaw, err := os.ReadFile(testfix.Path(t, "github", "webhooks", "workflow_run.completed.json"))
	if err != nil {
		t.Fatal(err)
	}

	// The Actions side: each dispatched request id gets one run that completes.
	var wg sync.WaitGroup
	completed := map[string]bool{}
	var cmu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case id := <-gh.started:
				cmu.Lock()
				seen := completed[id]
				completed[id] = true
				cmu.Unlock()
				if seen {
					continue // a second dispatch: the count at the stub shows it
				}
				body := edited(t, runRaw, map[string]any{
					"action": "completed", "repository.full_name": "Codertocat/Hello-World",
					"workflow_run.id": 7000 + atoi(id), "workflow_run.event": "workflow_dispatch",
					"workflow_run.path":          ".github/workflows/perfbot.yml",
					"workflow_run.display_title": "perfbot request " + id + ": profile",
					"workflow_run.status":        "completed", "workflow_run.conclusion": "success",
					"workflow_run.created_at":     time.Now().UTC().Format(time.RFC3339),
					"workflow_run.run_started_at": time.Now().UTC().Format(time.RFC3339),
					"workflow_run.updated_at":     time.Now().Add(90 * time.Second).UTC().Format(time.RFC3339),
				})
				if _, err := postUntil2xx(ctx, base, "workflow_run", fmt.Sprintf("77777777-0000-4000-8000-%012d", atoi(id)), body); err != nil {
					return
				}
			}
		}
	}()

	// The comments: four senders, 48 deliveries, two SIGKILLs in the middle.
	ids := make([]string, n)
	next := make(chan int, n)
	for i := range n {
		ids[i] = fmt.Sprintf("88888888-0000-4000-8000-%012d", i)
		next <- i
	}
	close(next)
	var answered atomic.Int64
	answers := make([]int, n)
	var senders sync.WaitGroup
	for range 4 {
		senders.Add(1)
		go func() {
			defer senders.Done()
			for i := range next {
				body := edited(t, raw, map[string]any{"comment.id": 10000 + i, "comment.body": "/profile rocm"})
				code, err := postUntil2xx(ctx, base, "issue_comment", ids[i], body)
				if err != nil {
					return
				}
				answers[i] = code
				answered.Add(1)
			}
		}()
	}
	for _, after := range []int64{12, 30} {
		for answered.Load() < after && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		proc.stop(t, syscall.SIGKILL)
		proc = startServe(t, bin, cfg, logFile)
	}
	senders.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the deliveries were not all answered within the deadline: %d of %d", answered.Load(), n)
	}
	// Wait for every request to be dispatched and its run to complete.
	for ctx.Err() == nil {
		cmu.Lock()
		done := len(completed)
		cmu.Unlock()
		if done == n && openRequests(t, db) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	proc.stop(t, syscall.SIGTERM)
	cancel()
	wg.Wait()

	// The database after the storm.
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	counts := gh.counts()
	for i, id := range ids {
		if answers[i]/100 != 2 {
			t.Errorf("delivery %s was never answered 2xx", id)
			continue
		}
		var times, state string
		if err := st.Read().QueryRow(`SELECT count(*), max(state) FROM deliveries WHERE id = ?`, id).Scan(&times, &state); err != nil {
			t.Fatal(err)
		}
		if times != "1" || state != string(inbox.Done) {
			t.Errorf("delivery %s: %s row(s) in the inbox, state %q; want exactly 1, done", id, times, state)
		}
		var reqID sql.NullInt64
		var nreq int
		if err := st.Read().QueryRow(`SELECT count(*), max(id) FROM requests WHERE delivery = ?`, id).Scan(&nreq, &reqID); err != nil {
			t.Fatal(err)
		}
		if nreq != 1 {
			t.Errorf("delivery %s made %d requests, want 1", id, nreq)
			continue
		}
		if c := counts[fmt.Sprint(reqID.Int64)]; c != 1 {
			t.Errorf("request %d (delivery %s) was dispatched %d times, want exactly 1", reqID.Int64, id, c)
		}
	}
	if len(counts) != n {
		t.Errorf("%d request ids dispatched, want %d", len(counts), n)
	}
	b, _ := os.ReadFile(logFile.Name())
	if strings.Count(string(b), `"msg":"server: listening"`) != 3 {
		t.Errorf("want three server starts in the log")
	}
	dup := 0
	for _, a := range answers {
		if a == http.StatusOK {
			dup++
		}
	}
	t.Logf("%d deliveries; %d first answered after a restart as already held; %d dispatches whose answer a kill lost, found again; %d runs asked about after a restart",
		n, dup, strings.Count(string(b), "found the run of a dispatch"), runChecks(gh.stub))
}

func openRequests(t *testing.T, db string) int {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(`SELECT count(*) FROM requests WHERE state NOT IN ('done', 'failed', 'cancelled')`).Scan(&n); err != nil {
		return -1
	}
	var total int
	if err := conn.QueryRow(`SELECT count(*) FROM requests`).Scan(&total); err != nil {
		return -1
	}
	if total == 0 {
		return -1
	}
	return n
}

// edited is a payload with dotted-key overrides and the App's installation.
func edited(t testing.TB, payload []byte, edits map[string]any) []byte {
	t.Helper()
	all := map[string]any{"installation": map[string]any{"id": 1, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}}
	for k, v := range edits {
		all[k] = v
	}
	b, err := fakegithub.Payload(payload, all)
	if err != nil {
		t.Error(err)
	}
	return b
}

func runChecks(s *fakegithub.Stub) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == "GET" && strings.Contains(r.Path, "/actions/runs/") {
			n++
		}
	}
	return n
}

// serveSetup writes an App key and a settings file for `perfbot serve` in dir.
func serveSetup(t *testing.T, dir, name, listen, apiURL, db string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, name+".pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, name+".yml")
	settings := fmt.Sprintf(`version: 1
listen: %s
database: %s
github: {api_url: %q, app_id: 1, private_key_file: %s}
hosts:
  - {label: gfx1151, backend: rocm, workflow: perfbot.yml}
`, listen, db, apiURL, keyFile)
	if err := os.WriteFile(cfg, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// freeAddr is a 127.0.0.1 address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serveRefused runs `perfbot serve` that must refuse to start: it returns what it
// wrote, after checking that it exited non-zero within a minute.
func serveRefused(t *testing.T, bin, cfg, secret string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "PERFBOT_WEBHOOK_SECRET="+secret)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("perfbot serve did not stop within a minute:\n%s", out)
	}
	if err == nil {
		t.Fatalf("perfbot serve exited 0, want a refusal:\n%s", out)
	}
	return string(out)
}

// TestServeStartRefusals runs the real binary where it must refuse to start, and says
// why: GitHub not reachable (a network error naming the host, not a refusal of the
// credentials), the credentials refused, a webhook secret of white space only, and a
// second server on one database reached through a symlink.
func TestServeStartRefusals(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "perfbot")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building perfbot: %v\n%s", err, out)
	}
	ex := func(name string) string { return testfix.Path(t, "github", "rest-openapi-examples", name+".json") }

	t.Run("GitHub not reachable", func(t *testing.T) {
		down := freeAddr(t)
		cfg := serveSetup(t, t.TempDir(), "serve", freeAddr(t), "http://"+down+"/api/v3/", filepath.Join(t.TempDir(), "perfbot.db"))
		out := serveRefused(t, bin, cfg, serveSecret)
		if !strings.Contains(out, "network error: GitHub's API at "+down+" could not be reached") || !strings.Contains(out, "connection refused") {
			t.Errorf("want a network error naming %s:\n%s", down, out)
		}
		if strings.Contains(out, "refused the App's credentials") {
			t.Errorf("a network error reported as refused credentials:\n%s", out)
		}
	})

	t.Run("credentials refused", func(t *testing.T) {
		stub := fakegithub.New(t)
		stub.Expect("GET", "/app", fakegithub.JSON(401, map[string]string{"message": "A JSON web token could not be decoded"}))
		cfg := serveSetup(t, t.TempDir(), "serve", freeAddr(t), stub.URL(), filepath.Join(t.TempDir(), "perfbot.db"))
		out := serveRefused(t, bin, cfg, serveSecret)
		if !strings.Contains(out, "GitHub refused the App's credentials (github.app_id 1") || !strings.Contains(out, "401") {
			t.Errorf("want the refusal of the credentials:\n%s", out)
		}
	})

	t.Run("white-space secret", func(t *testing.T) {
		stub := fakegithub.New(t) // no call expected: the secret is checked first
		cfg := serveSetup(t, t.TempDir(), "serve", freeAddr(t), stub.URL(), filepath.Join(t.TempDir(), "perfbot.db"))
		for _, secret := range []string{" ", " \t  ", "\u00a0\u3000"} {
			out := serveRefused(t, bin, cfg, secret)
			if !strings.Contains(out, "the webhook secret is only white space") || !strings.Contains(out, "PERFBOT_WEBHOOK_SECRET") {
				t.Errorf("secret %q: want a refusal of the white-space secret:\n%s", secret, out)
			}
		}
	})

	t.Run("one database through a symlink", func(t *testing.T) {
		stub := fakegithub.New(t)
		stub.Expect("GET", "/app", fakegithub.JSONFileWith(200, ex("integration"), map[string]any{"id": 1, "slug": "perfbot-runner"})).Times(2)
		stub.Expect("GET", "/app/hook/deliveries", fakegithub.JSON(200, []any{})).AnyTimes()
		d := t.TempDir()
		if err := os.Mkdir(filepath.Join(d, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		real := filepath.Join(d, "data", "perfbot.db")
		link := filepath.Join(d, "perfbot.db")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		addr := freeAddr(t)
		first := serveSetup(t, d, "first", addr, stub.URL(), real)
		second := serveSetup(t, d, "second", freeAddr(t), stub.URL(), link)
		var log bytes.Buffer
		proc := startServe(t, bin, first, &log)
		waitHealthy(t, "http://"+addr)
		out := serveRefused(t, bin, second, serveSecret)
		if !strings.Contains(out, "the database "+link+" is in use by another perfbot serve") {
			t.Errorf("want the second server refused:\n%s", out)
		}
		proc.stop(t, syscall.SIGTERM)
		if t.Failed() {
			t.Logf("the first server's log:\n%s", log.String())
		}
	})
}

// TestServeKilledAfterCheckRunCreated kills the real binary with SIGKILL while GitHub
// creates a request's check run: the run exists on GitHub, its id was never stored.
// The restarted server processes the delivery again, finds the check run by its
// external id instead of creating a second one, and dispatches once with its id.
func TestServeKilledAfterCheckRunCreated(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "perfbot")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building perfbot: %v\n%s", err, out)
	}
	ex := func(name string) string { return testfix.Path(t, "github", "rest-openapi-examples", name+".json") }
	const (
		repo    = "/repos/kubernetes/test-infra"
		comment = 262693732
	)
	s := fakegithub.New(t)
	s.Expect("GET", "/app", fakegithub.JSONFileWith(200, ex("integration"), map[string]any{"id": 1, "slug": "perfbot-runner"})).Times(2)
	s.Expect("POST", "/app/installations/1/access_tokens", fakegithub.JSONFileWith(201, ex("installation-token"),
		map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})).AnyTimes()
	s.Expect("GET", "/app/hook/deliveries", fakegithub.JSON(200, []any{})).AnyTimes()
	s.Expect("GET", repo+"/contents/.github/perfbot.yml", s.Example(200, "content-file-response-if-content-is-a-file", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(gatetest.Config)), "encoding": "base64",
		"size": len(gatetest.Config), "name": "perfbot.yml", "path": ".github/perfbot.yml", "type": "file",
	})).Times(2)
	s.Expect("GET", repo+"/collaborators/spxtr/permission",
		s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", map[string]any{"permission": "write", "role_name": "write"})).Times(2)
	s.Expect("GET", repo+"/pulls/947", s.Example(200, "pull-request", map[string]any{
		"number": 947, "state": "open", "head.sha": gatetest.PRSHA, "head.ref": "topic",
		"head.repo.id": 1296269, "head.repo.full_name": "kubernetes/test-infra", "head.repo.owner.login": "kubernetes",
		"base.repo.id": 1296269, "base.repo.full_name": "kubernetes/test-infra",
	})).Times(2)
	s.Expect("POST", fmt.Sprintf("%s/issues/comments/%d/reactions", repo, comment), fakegithub.JSONFile(201, ex("reaction"))).Times(2)
	s.Expect("GET", repo+"/issues/947/comments", fakegithub.JSON(200, []any{}))
	s.Expect("POST", repo+"/issues/947/comments", fakegithub.JSONFileWith(201, ex("issue-comment"), map[string]any{"id": 5001, "user.login": "perfbot-runner[bot]"}))

	var (
		mu      sync.Mutex
		proc    *serveProc
		created []any
	)
	run, err := fakegithub.Object(ex("check-run"))
	if err != nil {
		t.Fatal(err)
	}
	s.Expect("GET", repo+"/commits/"+gatetest.PRSHA+"/check-runs", fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(map[string]any{"total_count": len(created), "check_runs": append([]any{}, created...)})
		return fakegithub.Response{Status: 200, Body: b}
	})).Times(2)
	// GitHub creates the check run; the server dies before it can store its id.
	s.Expect("POST", repo+"/check-runs", fakegithub.Func(func(req fakegithub.Request) fakegithub.Response {
		var in struct {
			Name       string `json:"name"`
			ExternalID string `json:"external_id"`
		}
		if err := json.Unmarshal(req.Body, &in); err != nil {
			return fakegithub.Response{Status: 422, Body: []byte(`{"message":"bad body"}`)}
		}
		r := map[string]any{}
		for k, v := range run {
			r[k] = v
		}
		r["id"], r["name"], r["external_id"], r["head_sha"], r["status"], r["conclusion"] = 6001, in.Name, in.ExternalID, gatetest.PRSHA, "queued", nil
		mu.Lock()
		created = append(created, r)
		p := proc
		mu.Unlock()
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		b, _ := json.Marshal(r)
		return fakegithub.Response{Status: 201, Body: b}
	}))
	dispatched := make(chan map[string]string, 2)
	s.Expect("POST", repo+"/actions/workflows/perfbot.yml/dispatches", fakegithub.Func(func(req fakegithub.Request) fakegithub.Response {
		var body struct {
			Inputs map[string]string `json:"inputs"`
		}
		_ = json.Unmarshal(req.Body, &body)
		dispatched <- body.Inputs
		return fakegithub.Response{Status: 204}
	}))

	addr := freeAddr(t)
	db := filepath.Join(dir, "perfbot.db")
	cfg := serveSetup(t, dir, "serve", addr, s.URL(), db)
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("serve log:\n%s", b)
		}
	}()
	base := "http://" + addr
	mu.Lock()
	proc = startServe(t, bin, cfg, logFile)
	first := proc
	mu.Unlock()
	waitHealthy(t, base)

	raw, err := os.ReadFile(testfix.Path(t, "github", "webhooks-pr-comments", "prow.issue_comment.created.pr.lgtm.json"))
	if err != nil {
		t.Fatal(err)
	}
	body := edited(t, raw, map[string]any{"comment.body": "/profile rocm"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if code, err := postUntil2xx(ctx, base, "issue_comment", "66666666-0000-4000-8000-000000000001", body); err != nil || code != http.StatusAccepted {
		t.Fatalf("delivery: %d %v", code, err)
	}
	select {
	case <-first.done:
	case <-ctx.Done():
		t.Fatal("the server was not killed at the check run's creation")
	}
	mu.Lock()
	proc = startServe(t, bin, cfg, logFile)
	mu.Unlock()
	select {
	case in := <-dispatched:
		if in["check_run_id"] != "6001" || in["request_id"] != "1" || in["sha"] != gatetest.PRSHA {
			t.Errorf("dispatch inputs %v, want request 1 with check run 6001 on %s", in, gatetest.PRSHA)
		}
	case <-ctx.Done():
		t.Fatal("the request was not dispatched after the restart")
	}
	proc.stop(t, syscall.SIGTERM)
	mu.Lock()
	n := len(created)
	mu.Unlock()
	if n != 1 {
		t.Errorf("%d check runs created, want 1", n)
	}
}
