package fakegithub_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/gittest"
	"github.com/lablup/perfbot/internal/testfix"
)

func TestMain(m *testing.M) { gittest.Main(m) }

// env is a fake with one repository (a real bare git remote), an epic issue and an
// open pull request. The fake checks every JSON answer against GitHub's REST
// description and fails the test on one that does not match.
type env struct {
	fake   *fakegithub.Server
	client *gh.Client
	repo   gh.Repo
	main   string // main's head
	url    string // the API's base URL, with /api/v3/
	bare   string
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// testWorkflow declares the dispatch inputs the fake checks dispatches against.
const testWorkflow = `name: perfbot profile
run-name: perfbot request ${{ inputs.request-id || github.event.comment.id }}
on:
  workflow_dispatch:
    inputs:
      request-id: {type: string, required: true}
      sha: {type: string, default: ""}
      models: {type: string, default: "all"}
  issue_comment:
    types: [created]
jobs: {}
`

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	bare := filepath.Join(dir, "mlxcel.git")
	work := filepath.Join(dir, "work")
	git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	git(t, dir, "init", "-q", "-b", "main", work)
	os.WriteFile(filepath.Join(work, "README.md"), []byte("mlxcel\n"), 0o644)
	os.MkdirAll(filepath.Join(work, ".github", "workflows"), 0o755)
	os.WriteFile(filepath.Join(work, ".github", "workflows", "perfbot-profile.yml"), []byte(testWorkflow), 0o644)
	git(t, work, "add", ".")
	git(t, work, "commit", "-qm", "init")
	git(t, work, "push", "-q", bare, "main", "main:feature")
	head := git(t, work, "rev-parse", "HEAD")

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	fake := fakegithub.New(t, fakegithub.App(42, "perfbot", &key.PublicKey))
	fake.AddUser(fakegithub.User{Login: "maintainer"})
	fake.AddUser(fakegithub.User{Login: "reader"})
	fake.AddRepo(&fakegithub.Repo{Owner: "lablup", Name: "mlxcel", DefaultBranch: "main", GitDir: bare,
		Collaborators: map[string]string{"maintainer": fakegithub.PermMaintain, "reader": fakegithub.PermRead}})
	if _, err := fake.AddIssue("lablup/mlxcel", fakegithub.Issue{Number: 1814, Title: "ROCm kernel ports", User: "maintainer"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.AddIssue("lablup/mlxcel", fakegithub.Issue{Number: 1900, Title: "feature", User: "maintainer",
		PR: &fakegithub.Pull{Head: "feature", Base: "main"}}); err != nil {
		t.Fatal(err)
	}
	e := &env{fake: fake, repo: gh.Repo{Owner: "lablup", Name: "mlxcel"}, main: head, bare: bare, url: fake.URL()}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if _, err := gh.NewAppTransport(gh.AppAuth{AppID: 42, PrivateKeyPEM: pemKey}, gh.Options{BaseURL: e.url}); err != nil {
		t.Fatal(err)
	}
	e.client, err = gh.Connect(context.Background(), gh.Credentials{AppID: 42, PrivateKeyPEM: pemKey, Repo: e.repo}, gh.Options{BaseURL: e.url})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// The bot's own API layer works against the fake as against GitHub: the App
// authenticates with its key, and every answer has the documented shape.
func TestBotClientAgainstFake(t *testing.T) {
	e := newEnv(t)
	c := ctx(t)

	perm, err := e.client.Permission(c, e.repo, "maintainer")
	if err != nil || perm != "maintain" {
		t.Errorf("maintainer's permission = %q, %v; want maintain (role_name)", perm, err)
	}
	if perm, err := e.client.Permission(c, e.repo, "reader"); err != nil || perm != "read" {
		t.Errorf("reader's permission = %q, %v", perm, err)
	}
	if b, err := e.client.DefaultBranch(c, e.repo); err != nil || b != "main" {
		t.Errorf("default branch = %q, %v", b, err)
	}
	if sha, err := e.client.BranchHead(c, e.repo, "main"); err != nil || sha != e.main {
		t.Errorf("main's head = %q, %v; want %s", sha, err, e.main)
	}
	if _, err := e.client.BranchHead(c, e.repo, "no-such-branch"); err == nil {
		t.Error("a missing branch has a head")
	}

	const marker = "<!-- perfbot:port-ranking -->"
	first, action, err := e.client.UpsertComment(c, e.repo, 1814, marker, marker+"\nranking 1")
	if err != nil || action != gh.Created {
		t.Fatalf("first upsert: %v %v", action, err)
	}
	second, action, err := e.client.UpsertComment(c, e.repo, 1814, marker, marker+"\nranking 2")
	if err != nil || action != gh.Updated || second.ID != first.ID {
		t.Fatalf("second upsert: %+v %v %v", second, action, err)
	}
	if _, action, err := e.client.UpsertComment(c, e.repo, 1814, marker, marker+"\nranking 2"); err != nil || action != gh.Unchanged {
		t.Fatalf("third upsert: %v %v", action, err)
	}
	got := e.fake.Comments(1814)
	if len(got) != 1 || got[0].Body != marker+"\nranking 2" || got[0].User != "perfbot[bot]" {
		t.Fatalf("comments on the epic: %+v", got)
	}

	if err := e.client.React(c, e.repo, first.ID, "eyes"); err != nil {
		t.Fatal(err)
	}
	if cm, _ := e.fake.Comment(first.ID); len(cm.Reactions) != 1 || cm.Reactions[0] != "eyes" {
		t.Errorf("reactions: %v", cm.Reactions)
	}

	// The bot branch must exist before a pull request can be opened from it.
	pr, action, err := e.client.UpsertPR(c, e.repo, gh.PRSpec{Head: "feature", Base: "main", Title: "t", Body: "b", Labels: []string{"perfbot"}})
	if err != nil || action != gh.Unchanged && action != gh.Updated || pr.Number != 1900 {
		t.Fatalf("upsert of the open PR: %+v %v %v", pr, action, err)
	}
	issues := e.fake.Issues("lablup/mlxcel")
	if len(issues) != 2 || issues[1].Title != "t" || len(issues[1].Labels) != 1 {
		t.Errorf("issues after the upsert: %+v", issues)
	}
}

// Writes without credentials, or with a JWT signed by another key, are refused.
func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	e.fake.AddToken("ghp_reader", "reader")
	req := func(auth string) int {
		r, _ := http.NewRequest("POST", e.fake.URL()+"repos/lablup/mlxcel/issues/1814/comments", bytes.NewBufferString(`{"body":"x"}`))
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := req(""); got != 401 {
		t.Errorf("no credentials: %d", got)
	}
	if got := req("token nope"); got != 401 {
		t.Errorf("unknown token: %d", got)
	}
	if got := req("Bearer a.b.c"); got != 401 {
		t.Errorf("forged JWT: %d", got)
	}
	if got := req("token ghp_reader"); got != 201 {
		t.Errorf("a user's token: %d", got)
	}
	if c := e.fake.Comments(1814); len(c) != 1 || c[0].User != "reader" {
		t.Errorf("comments: %+v", c)
	}
}

// The endpoints the server, the Action and the nightly job call beyond bot/gh's
// helpers, through go-github as they use it.
func TestMoreEndpoints(t *testing.T) {
	e := newEnv(t)
	c := ctx(t)
	e.fake.AddToken("ghs_test", "perfbot[bot]")
	api, err := github.NewClient(nil).WithAuthToken("ghs_test").WithEnterpriseURLs(e.url, e.url)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := api.Repositories.GetBranch(c, "lablup", "mlxcel", "feature", 0)
	if err != nil || b.GetCommit().GetSHA() != e.main {
		t.Errorf("branch: %v %v", b, err)
	}
	pr, _, err := api.PullRequests.Get(c, "lablup", "mlxcel", 1900)
	if err != nil || pr.GetHead().GetSHA() != e.main || pr.GetHead().GetRepo().GetFullName() != "lablup/mlxcel" {
		t.Fatalf("PR: %v %v", pr, err)
	}
	if _, _, err := api.PullRequests.Create(c, "lablup", "mlxcel", &github.NewPullRequest{Title: github.String("x"), Head: github.String("feature"), Base: github.String("main")}); err == nil {
		t.Error("a second PR for the same head and base was opened")
	}
	cr, _, err := api.Checks.CreateCheckRun(c, "lablup", "mlxcel", github.CreateCheckRunOptions{Name: "perfbot / rocm profile", HeadSHA: e.main, Status: github.String("queued")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.Checks.UpdateCheckRun(c, "lablup", "mlxcel", cr.GetID(), github.UpdateCheckRunOptions{Name: "perfbot / rocm profile",
		Conclusion: github.String("success"), Output: &github.CheckRunOutput{Title: github.String("done"), Summary: github.String("ok")}}); err != nil {
		t.Fatal(err)
	}
	if runs := e.fake.CheckRuns(); len(runs) != 1 || runs[0].Status != "completed" || runs[0].Conclusion != "success" || runs[0].Title != "done" {
		t.Errorf("check runs: %+v", runs)
	}
	got := make(chan fakegithub.Dispatch, 1)
	e.fake.OnDispatch(func(d fakegithub.Dispatch) { got <- d })
	if _, err := api.Actions.CreateWorkflowDispatchEventByFileName(c, "lablup", "mlxcel", "perfbot-profile.yml",
		github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]interface{}{"request-id": "r1", "sha": e.main}}); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if d.Workflow != "perfbot-profile.yml" || d.Inputs["sha"] != e.main || d.Inputs["request-id"] != "r1" || d.Inputs["models"] != "all" {
			t.Errorf("dispatch: %+v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no dispatch hook")
	}
	if _, err := api.Actions.CreateWorkflowDispatchEventByFileName(c, "lablup", "mlxcel", "perfbot-profile.yml",
		github.CreateWorkflowDispatchEventRequest{Ref: "no-such-branch"}); err == nil {
		t.Error("dispatch on a missing ref accepted")
	}
	iss, _, err := api.Issues.Create(c, "lablup", "mlxcel", &github.IssueRequest{Title: github.String("decode regression"), Labels: &[]string{"perfbot"}})
	if err != nil || iss.GetNumber() != 1901 {
		t.Fatalf("issue: %v %v", iss, err)
	}
	if _, _, err := api.Issues.Edit(c, "lablup", "mlxcel", iss.GetNumber(), &github.IssueRequest{State: github.String("closed")}); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]map[string]interface{}{
		"an input the workflow does not declare": {"request-id": "r3", "job": "profile"},
		"a required input left out":              {"sha": e.main},
	} {
		if _, err := api.Actions.CreateWorkflowDispatchEventByFileName(c, "lablup", "mlxcel", "perfbot-profile.yml",
			github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: bad}); err == nil || !strings.Contains(err.Error(), "422") {
			t.Errorf("%s: %v, want a 422", name, err)
		}
	}
	if _, err := api.Actions.CreateWorkflowDispatchEventByFileName(c, "lablup", "mlxcel", "no-such.yml",
		github.CreateWorkflowDispatchEventRequest{Ref: "main"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a workflow that does not exist: %v, want a 404", err)
	}
	if _, err := api.Actions.CreateWorkflowDispatchEventByFileName(c, "lablup", "mlxcel", "perfbot-profile.yml",
		github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]interface{}{"request-id": "r2"}}); err != nil {
		t.Fatal(err)
	}
	d2 := <-got
	runs, _, err := api.Actions.ListWorkflowRunsByFileName(c, "lablup", "mlxcel", "perfbot-profile.yml", &github.ListWorkflowRunsOptions{Event: "workflow_dispatch"})
	if err != nil || runs.GetTotalCount() != 2 || runs.WorkflowRuns[0].GetDisplayTitle() != "perfbot request r2" || runs.WorkflowRuns[0].GetID() != d2.RunID {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	if _, err := e.fake.SetRun(d2.RunID, "completed", "success"); err != nil {
		t.Fatal(err)
	}
	if run, _, err := api.Actions.GetWorkflowRunByID(c, "lablup", "mlxcel", d2.RunID); err != nil || run.GetConclusion() != "success" {
		t.Errorf("run: %v %v", run, err)
	}
	if _, err := api.Actions.CancelWorkflowRunByID(c, "lablup", "mlxcel", d2.RunID); err == nil {
		t.Error("a completed run was cancelled")
	}
	sha, _, err := api.Repositories.GetCommitSHA1(c, "lablup", "mlxcel", "feature", "")
	if err != nil || sha != e.main {
		t.Errorf("commit SHA of feature: %q %v", sha, err)
	}
	if _, _, err := api.Repositories.CompareCommits(c, "lablup", "mlxcel", e.main, "feature", nil); err != nil {
		t.Error(err)
	}
	fc, _, _, err := api.Repositories.GetContents(c, "lablup", "mlxcel", "README.md", &github.RepositoryContentGetOptions{Ref: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := fc.GetContent(); body != "mlxcel\n" {
		t.Errorf("README.md = %q", body)
	}
	if _, _, _, err := api.Repositories.GetContents(c, "lablup", "mlxcel", "../etc/passwd", nil); err == nil {
		t.Error("a path outside the repository was served")
	}
	list, _, err := api.Checks.ListCheckRunsForRef(c, "lablup", "mlxcel", e.main, nil)
	if err != nil || list.GetTotal() != 1 {
		t.Errorf("check runs for main: %v %v", list, err)
	}
	if _, _, err := api.Issues.Get(c, "lablup", "mlxcel", 1814); err != nil {
		t.Error(err)
	}
}

// Expectations come before the App's world: a test puts a fault (here a 502, then the
// real secondary rate-limit answer) in front of it, and the world answers the rest.
// Every request is recorded, whoever answered it.
func TestFaultsInFrontOfTheWorld(t *testing.T) {
	e := newEnv(t)
	c := ctx(t)
	dir := testfix.Path(t, "github", "rate-limit")
	e.fake.Expect("GET", "/repos/lablup/mlxcel/collaborators/maintainer/permission", fakegithub.Status(502))
	e.fake.Expect("GET", "/repos/lablup/mlxcel/collaborators/maintainer/permission",
		fakegithub.Recorded(dir+"/secondary-403.headers.txt", dir+"/secondary-403.body.json"))
	e.fake.AddToken("ghs_test", "perfbot[bot]")
	url := e.fake.AbsURL("/repos/lablup/mlxcel/collaborators/maintainer/permission")
	before := len(e.fake.Requests()) // gh.Connect's calls
	var codes []int
	for range 3 {
		r, _ := http.NewRequestWithContext(c, "GET", url, nil)
		r.Header.Set("Authorization", "token ghs_test")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	if fmt.Sprint(codes) != "[502 403 200]" {
		t.Errorf("statuses %v, want the 502, the rate limit, then the world's answer", codes)
	}
	if reqs := e.fake.Requests()[before:]; len(reqs) != 3 || reqs[2].Path != "/repos/lablup/mlxcel/collaborators/maintainer/permission" {
		t.Errorf("recorded %v, want the 3 calls", reqs)
	}
}

// An endpoint the world does not serve answers GitHub's 404 naming it, without failing
// the test, and one GET pattern serves both issues/{n}/comments and issues/comments/{id}.
func TestWorldRoutes(t *testing.T) {
	e := newEnv(t)
	e.fake.AddToken("ghp_reader", "reader")
	cm, err := e.fake.AddComment("lablup/mlxcel", 1814, "reader", "hello")
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, path string) (int, string) {
		r, _ := http.NewRequest(method, e.fake.AbsURL(path), nil)
		r.Header.Set("Authorization", "token ghp_reader")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("DELETE", "/repos/lablup/mlxcel"); code != 404 || !strings.Contains(body, "does not serve DELETE /repos/lablup/mlxcel") {
		t.Errorf("unserved endpoint: %d %s", code, body)
	}
	if code, body := get("GET", fmt.Sprintf("/repos/lablup/mlxcel/issues/comments/%d", cm.ID)); code != 200 || !strings.Contains(body, `"body":"hello"`) {
		t.Errorf("a comment by id: %d %s", code, body)
	}
	if code, body := get("GET", "/repos/lablup/mlxcel/issues/1814/comments"); code != 200 || !strings.Contains(body, `"body":"hello"`) {
		t.Errorf("an issue's comments: %d %s", code, body)
	}
	for _, path := range []string{"/repos/lablup/mlxcel/issues/1814/labels", "/repos/lablup/mlxcel/issues/comments/999999", "/repos/lablup/mlxcel/pulls/1814", "/repos/lablup/nope/issues/1814"} {
		if code, _ := get("GET", path); code != 404 {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
}

// The pull requests of a commit: the open one whose head holds it and not main, and a
// merged one whose merge commit it is, as the bot's client reads them; a commit on
// main alone has none, and an unknown one is a 422. Every answer has the shape GitHub's
// REST description gives the endpoint.
func TestCommitPullsRoute(t *testing.T) {
	e := newEnv(t)
	c := ctx(t)
	dir := t.TempDir()
	git(t, dir, "clone", "-q", e.bare, "w")
	work := filepath.Join(dir, "w")
	git(t, work, "checkout", "-q", "-b", "topic")
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("a\n"), 0o644)
	git(t, work, "add", ".")
	git(t, work, "commit", "-qm", "topic")
	topic := git(t, work, "rev-parse", "HEAD")
	git(t, work, "push", "-q", "origin", "topic")
	if _, err := e.fake.AddIssue("lablup/mlxcel", fakegithub.Issue{Number: 1902, Title: "topic", User: "maintainer", State: "open",
		PR: &fakegithub.Pull{Head: "topic", Base: "main"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.AddIssue("lablup/mlxcel", fakegithub.Issue{Number: 1903, Title: "squashed", User: "maintainer", State: "closed",
		PR: &fakegithub.Pull{Head: "feature", Base: "main", MergeCommit: e.main}}); err != nil {
		t.Fatal(err)
	}
	got, err := e.client.CommitPulls(c, e.repo, topic)
	if err != nil || len(got) != 1 || got[0].Number != 1902 || got[0].Merged || got[0].State != "open" {
		t.Errorf("the topic commit: %+v %v", got, err)
	}
	got, err = e.client.CommitPulls(c, e.repo, e.main)
	if err != nil || len(got) != 1 || got[0].Number != 1903 || !got[0].Merged {
		t.Errorf("main's commit, merged by #1903 (#1900's head is main's commit, which main holds): %+v %v", got, err)
	}
	_, err = e.client.CommitPulls(c, e.repo, strings.Repeat("e", 40))
	var ae *gh.APIError
	if !errors.As(err, &ae) || ae.Status != 422 {
		t.Errorf("an unknown commit: %v, want a 422", err)
	}
}
