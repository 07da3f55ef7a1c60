package publish

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
)

// hub keeps the state of the GitHub stub across publishes: the bot branch's pull
// request, the comments on the epic and the status comments. Its responders answer
// from that state with GitHub's documented example objects; the tests declare which
// calls must happen, and the stub fails on any other and on any that does not.
type hub struct {
	t *testing.T
	s *fakegithub.Stub

	mu       sync.Mutex
	pr       map[string]any
	epic     []map[string]any
	statuses map[int64]map[string]any
	nextID   int64
}

const (
	pullsPath    = "/repos/lablup/mlxcel/pulls"
	epicPath     = "/repos/lablup/mlxcel/issues/1814/comments"
	commentsPath = "/repos/lablup/mlxcel/issues/comments/"
	checkPath    = "/repos/lablup/mlxcel/check-runs/"
	triggerID    = 4242
	checkRunID   = 777
)

// onGitHub is a target and a hub standing for its GitHub, with a client of the hub.
func onGitHub(t *testing.T) (*target, *hub, *gh.Client) {
	t.Helper()
	tg := newTarget(t)
	h := newHub(t)
	return tg, h, client(t, h.s, &sleeps{})
}

func newHub(t *testing.T) *hub {
	return &hub{t: t, s: fakegithub.New(t), statuses: map[int64]map[string]any{}, nextID: 9000}
}

func (h *hub) object(name string, overrides map[string]any) map[string]any {
	h.t.Helper()
	m, err := fakegithub.Object(example(h.t, name))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range overrides {
		if err := fakegithub.Set(m, k, v); err != nil {
			h.t.Fatal(err)
		}
	}
	return m
}

func answer(status int, v any) fakegithub.Response {
	b, _ := json.Marshal(v)
	return fakegithub.Response{Status: status, Header: http.Header{}, Body: b}
}

func body(req fakegithub.Request) map[string]any {
	m, _ := req.JSON()
	return m
}

// comment makes a comment answer written by the bot.
func (h *hub) comment(id int64, issue int, text string) map[string]any {
	return h.object("issue-comment", map[string]any{
		"id": id, "body": text, "user.login": botLogin,
		"html_url": fmt.Sprintf("https://github.com/lablup/mlxcel/issues/%d#issuecomment-%d", issue, id),
	})
}

// addStatus makes a status comment saying the run is queued, as acceptance left it.
func (h *hub) addStatus(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.statuses[id] = h.comment(id, 12, "<!-- perfbot:status -->\n**/profile rocm**: running model 2/2.")
}

func (h *hub) listPRs() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		if h.pr == nil {
			return answer(200, []any{})
		}
		items, err := fakegithub.Items(example(h.t, "pull-request-simple-items"))
		if err != nil || len(items) == 0 {
			h.t.Errorf("pull request list example: %v", err)
			return answer(500, nil)
		}
		item := items[0]
		for _, k := range []string{"number", "html_url", "title", "body", "draft", "labels"} {
			item[k] = h.pr[k]
		}
		item["head"].(map[string]any)["ref"] = h.pr["head"].(map[string]any)["ref"]
		item["base"].(map[string]any)["ref"] = h.pr["base"].(map[string]any)["ref"]
		return answer(200, []any{item})
	})
}

func (h *hub) createPR() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		b := body(req)
		h.pr = h.object("pull-request", map[string]any{
			"number": 57, "html_url": "https://github.com/lablup/mlxcel/pull/57",
			"title": b["title"], "body": b["body"], "draft": b["draft"] == true, "labels": []any{},
			"head.ref": b["head"], "base.ref": b["base"],
		})
		return answer(201, h.pr)
	})
}

func (h *hub) editPR() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		b := body(req)
		h.pr["title"], h.pr["body"] = b["title"], b["body"]
		return answer(200, h.pr)
	})
}

func (h *hub) listEpic() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		list := []any{h.object("issue-comment", map[string]any{"id": 1, "body": "Tracking the ROCm ports.", "user.login": "maintainer"})}
		for _, c := range h.epic {
			list = append(list, c)
		}
		return answer(200, list)
	})
}

func (h *hub) createEpic() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		h.nextID++
		c := h.comment(h.nextID, epicIssue, body(req)["body"].(string))
		h.epic = append(h.epic, c)
		return answer(201, c)
	})
}

// editComment edits an epic or a status comment by the id in the path.
func (h *hub) editComment() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		id, _ := strconv.ParseInt(path.Base(req.Path), 10, 64)
		text := body(req)["body"].(string)
		for _, c := range h.epic {
			if fmt.Sprint(c["id"]) == strconv.FormatInt(id, 10) {
				c["body"] = text
				return answer(200, c)
			}
		}
		if c, ok := h.statuses[id]; ok {
			c["body"] = text
			return answer(200, c)
		}
		return answer(404, map[string]string{"message": "Not Found"})
	})
}

func (h *hub) getStatus() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		id, _ := strconv.ParseInt(path.Base(req.Path), 10, 64)
		return answer(200, h.statuses[id])
	})
}

func (h *hub) checkRun() fakegithub.Responder {
	return fakegithub.Func(func(req fakegithub.Request) fakegithub.Response {
		b := body(req)
		return answer(200, h.object("check-run", map[string]any{"id": checkRunID, "status": "completed", "conclusion": b["conclusion"]}))
	})
}

func (h *hub) reaction() fakegithub.Responder {
	return fakegithub.Func(func(req fakegithub.Request) fakegithub.Response {
		return answer(201, h.object("reaction", map[string]any{"content": body(req)["content"]}))
	})
}

// expectFinish declares the status comment, check run and reaction calls of the end of
// a publish; edit says whether the status comment changes.
func (h *hub) expectFinish(status int64, edit bool, conclusion, reaction string) {
	id := strconv.FormatInt(status, 10)
	h.s.Expect("GET", commentsPath+id, h.getStatus())
	if edit {
		h.s.Expect("PATCH", commentsPath+id, h.editComment())
	}
	h.s.Expect("PATCH", checkPath+strconv.Itoa(checkRunID), h.checkRun()).JSONBody(map[string]any{"conclusion": conclusion, "status": "completed"})
	h.s.Expect("POST", commentsPath+strconv.Itoa(triggerID)+"/reactions", h.reaction()).JSONBody(map[string]any{"content": reaction})
}

func rateLimitFile(t testing.TB, name string) string {
	return testfix.Path(t, "github", "rate-limit", name)
}

// locked answers with f holding mu: the stub serves requests concurrently.
func locked(mu *sync.Mutex, f func(fakegithub.Request) fakegithub.Response) fakegithub.Responder {
	return fakegithub.Func(func(req fakegithub.Request) fakegithub.Response {
		mu.Lock()
		defer mu.Unlock()
		return f(req)
	})
}

const worldToken = "ghs_worldtoken0123456789"

// world is a stateful local GitHub holding the target's bare remote, the epic, and
// pull requests whose heads are branches of the remote.
type world struct {
	s  *fakegithub.Server
	c  *gh.Client
	tg *target
}

// newWorld makes a target and the world around it.
func newWorld(t *testing.T) *world {
	t.Helper()
	tg := newTarget(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := fakegithub.New(t, fakegithub.App(1, "perfbot", &key.PublicKey))
	s.AddToken(worldToken, botLogin)
	s.AddUser(fakegithub.User{Login: "maintainer"})
	s.AddRepo(&fakegithub.Repo{Owner: testRepo.Owner, Name: testRepo.Name, DefaultBranch: "main", GitDir: tg.bare,
		Collaborators: map[string]string{"maintainer": fakegithub.PermWrite}})
	if _, err := s.AddIssue(testRepo.String(), fakegithub.Issue{Number: epicIssue, Title: "epic", User: "maintainer"}); err != nil {
		t.Fatal(err)
	}
	c, err := gh.NewTokenClient(worldToken, gh.Options{BaseURL: s.URL(), Login: botLogin, Sleep: (&sleeps{}).sleep, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	return &world{s: s, c: c, tg: tg}
}

// pull opens pull request n whose head is a branch of the remote with one more commit
// than main (a new file), fetched into the publishing clone; it returns the head.
func (w *world) pull(t *testing.T, n int, branch string) string {
	t.Helper()
	seed := filepath.Join(t.TempDir(), "seed")
	gitT(t, filepath.Dir(seed), "clone", "--quiet", w.tg.bare, seed)
	writeFile(t, filepath.Join(seed, "src", branch+".rs"), "// the unreviewed code of "+branch+"\n")
	gitT(t, seed, "add", "-A")
	gitT(t, seed, "commit", "--quiet", "-m", branch)
	gitT(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch)
	gitT(t, w.tg.checkout, "fetch", "--quiet", "origin", branch)
	w.addPull(t, n, branch)
	return gitT(t, seed, "rev-parse", "HEAD")
}

func (w *world) addPull(t *testing.T, n int, branch string) {
	t.Helper()
	if _, err := w.s.AddIssue(testRepo.String(), fakegithub.Issue{Number: n, Title: branch, User: "maintainer",
		PR: &fakegithub.Pull{Head: branch, Base: "main"}}); err != nil {
		t.Fatal(err)
	}
}

// ask writes the command on n and returns its id.
func (w *world) ask(t *testing.T, n int) int64 {
	t.Helper()
	c, err := w.s.AddComment(testRepo.String(), n, "maintainer", "/profile rocm")
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// asked is a profile of pull request n's head, asked for on n: it opens n (pull), asks
// (ask) and lays out the prepared results of the head.
func (w *world) asked(t *testing.T, n int, branch string) (head string, ask int64, res string) {
	t.Helper()
	head = w.pull(t, n, branch)
	return head, w.ask(t, n), layPrepared(t, w.tg.at(head), profile{date: "2026-09-30", tests: allPassed})
}

// close closes issue or pull request n, as a maintainer merging it would.
func (w *world) close(t *testing.T, n int) {
	t.Helper()
	req, _ := http.NewRequest("PATCH", w.s.URL()+"repos/"+testRepo.String()+"/issues/"+strconv.Itoa(n), strings.NewReader(`{"state":"closed"}`))
	req.Header.Set("Authorization", "token "+worldToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("closing #%d: %v %v", n, err, resp)
	}
	resp.Body.Close()
}

// options publish results for issue or pull request n, its kind and the requester
// left for GitHub to say.
func (w *world) options(res string, n int, trigger int64) Options {
	return Options{Target: Target{ResultsDir: res, RepoDir: w.tg.checkout, Config: testConfig(), Sink: ToGitHub(w.c, testRepo), Repo: testRepo,
		BaseBranch: "main"}, Issue: n, Marks: Marks{TriggerCommentID: trigger}, Now: func() time.Time { return testNow }}
}
