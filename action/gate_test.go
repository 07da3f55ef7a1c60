package action

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
)

// gateStep runs the gate job of the Action on one case: its event as the event file,
// its GitHub on the API stub, token mode.
func gateStep(t *testing.T, c gatetest.Case, s *fakegithub.Stub, extra map[string]string) (result, *stepEnv, string, error) {
	t.Helper()
	e := gateEnv(t, c, s, extra)
	res, log, err := runGate(e)
	return res, e, log, err
}

// gateEnv is gateStep's step environment.
func gateEnv(t *testing.T, c gatetest.Case, s *fakegithub.Stub, extra map[string]string) *stepEnv {
	t.Helper()
	in := map[string]string{"job": "gate", "github-token": "ghs_gatetesttoken0123456789", "github-api-url": s.URL()}
	for k, v := range extra {
		in[k] = v
	}
	e := newStepEnv(t, in)
	e.vars["GITHUB_EVENT_NAME"] = "issue_comment"
	e.vars["GITHUB_EVENT_PATH"] = c.WriteEvent(t, e.dir)
	e.vars["GITHUB_REPOSITORY"] = c.Repo(t)
	e.vars["GITHUB_SERVER_URL"] = "https://github.com"
	e.vars["GITHUB_WORKFLOW_REF"] = c.Repo(t) + "/.github/workflows/perfbot-profile.yml@refs/heads/" + gatetest.DefaultBranch
	e.vars[EnvBotLogin] = gatetest.BotLogin
	return e
}

// runGate runs the gate job in e and returns what it printed.
func runGate(e *stepEnv) (result, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var log bytes.Buffer
	res, err := run(ctx, Options{Stdout: &log, Getenv: e.getenv})
	return res, log.String(), err
}

// commentID is the id of the case's comment.
func commentID(t *testing.T, c gatetest.Case) int64 {
	t.Helper()
	m, err := fakegithub.Object(c.WriteEvent(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := m["comment"].(map[string]any)["id"].(float64)
	return int64(id)
}

// The gate job decides every case of the shared table exactly as bot/gate (and so the
// server) does, with the same GitHub calls; on top it answers on the thread and hands
// an accepted profile to the GPU job as outputs.
func TestGateJobRunsTheSharedCases(t *testing.T) {
	t.Parallel()
	for _, c := range gatetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.New(t)
			c.Expect(t, s)
			repo, issue, id := "/repos/"+c.Repo(t), c.Issue(t), commentID(t, c)
			w := c.Want
			reply, reaction := false, ""
			verdict := string(w.Kind)
			switch {
			case w.Outcome == gate.Denied:
				reply, verdict = true, VerdictDenied
			case w.Outcome == gate.Ignored:
				verdict = VerdictIgnored
			case w.Kind == command.Profile || w.Kind == command.Bench || w.Kind == command.Bisect:
				reaction = "eyes"
			default:
				reply = true
			}
			comments := fmt.Sprintf("%s/issues/%d/comments", repo, issue)
			if reply {
				s.Expect("GET", comments, fakegithub.JSON(200, []any{}))
				s.Expect("POST", comments, s.Example(201, "issue-comment", map[string]any{"user.login": gatetest.BotLogin}))
			}
			if reaction != "" {
				s.Expect("POST", fmt.Sprintf("%s/issues/comments/%d/reactions", repo, id), s.Example(201, "reaction", map[string]any{"content": reaction})).
					JSONBody(map[string]any{"content": reaction})
			}

			res, e, log, err := gateStep(t, c, s, nil)
			if err != nil {
				t.Fatalf("gate job: %v\nlog:\n%s", err, log)
			}
			c.Check(t, res.gate.Decision)

			want := map[string]string{"verdict": verdict, "accepted": strconv.FormatBool(reaction == "eyes")}
			if want["accepted"] == "true" {
				want["request-id"] = "comment-" + strconv.FormatInt(id, 10)
				want["sha"] = w.SHA
				for k, v := range map[string][]string{"models": w.Models, "sampling": w.Sampling} {
					if len(v) > 0 {
						want[k] = strings.Join(v, ",")
					}
				}
				want["trigger-comment-id"] = strconv.FormatInt(id, 10)
				if w.Epic > 0 {
					want["epic"] = strconv.Itoa(w.Epic)
				}
				if w.Compare {
					want["base"], want["repeats"] = w.Base, strconv.Itoa(w.Repeats)
				}
				if w.Kind == command.Bisect {
					// The good end beside the bad one (sha); no repeats.
					want["base"] = w.Base
				}
			}
			if diff := cmp.Diff(want, readOutputs(t, e.output)); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			if reply {
				var posted string
				for _, r := range s.Requests() {
					if r.Method == "POST" && r.Path == comments {
						b, _ := r.JSON()
						posted, _ = b["body"].(string)
					}
				}
				if !strings.Contains(posted, w.Reply) || !strings.Contains(posted, fmt.Sprintf("<!-- perfbot:reply %d -->", id)) {
					t.Errorf("the reply does not say %q with its marker:\n%s", w.Reply, posted)
				}
			}
		})
	}
}

// A refused command's comment text reaches the log only escaped, and a hostile comment
// accepted for a run hands on only the values the gate typed.
func TestGateJobHostileComment(t *testing.T) {
	t.Parallel()
	c := gatetest.Cases()[0] // an issue comment by a write user
	c.Edits = map[string]any{"comment.body": "/profile rocm models=" + strings.ReplaceAll(hostileValue, "\n", ",")}
	c.World.Branches = nil
	s := fakegithub.New(t)
	c.Expect(t, s)
	repo, issue := "/repos/"+c.Repo(t), c.Issue(t)
	s.Expect("GET", fmt.Sprintf("%s/issues/%d/comments", repo, issue), fakegithub.JSON(200, []any{}))
	s.Expect("POST", fmt.Sprintf("%s/issues/%d/comments", repo, issue), s.Example(201, "issue-comment", map[string]any{"user.login": gatetest.BotLogin}))
	_, e, log, err := gateStep(t, c, s, nil)
	if err != nil {
		t.Fatalf("gate job: %v\nlog:\n%s", err, log)
	}
	if diff := cmp.Diff(map[string]string{"verdict": VerdictDenied, "accepted": "false"}, readOutputs(t, e.output)); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	cs := commands(t, log)
	if len(cs) != 2 || cs[0].Name != "add-mask" || cs[0].Msg != "ghs_gatetesttoken0123456789" || cs[1].Name != "warning" {
		t.Errorf("commands %s, want the token's mask and one warning\nlog:\n%s", names(cs), log)
	}
}

// dry-run decides and hands on the outputs without answering on the thread.
func TestGateJobDryRun(t *testing.T) {
	t.Parallel()
	c := gatetest.Cases()[0]
	s := fakegithub.New(t)
	c.Expect(t, s)
	res, e, log, err := gateStep(t, c, s, map[string]string{"dry-run": "true", "request-id": "req-7"})
	if err != nil {
		t.Fatalf("gate job: %v\nlog:\n%s", err, log)
	}
	c.Check(t, res.gate.Decision)
	if res.gate.Reacted != "" || res.gate.Replied != "" {
		t.Errorf("a dry run answered: %+v", res.gate)
	}
	if outs := readOutputs(t, e.output); outs["request-id"] != "req-7" || outs["accepted"] != "true" || outs["sha"] != gatetest.MasterSHA {
		t.Errorf("outputs %v", outs)
	}
}

// With app-id and app-private-key the gate acts as the App's installation on the
// event's repository: found with the App's JWT, its token minted once and carried by
// every call. The key is masked whole and line by line before anything else is written.
func TestGateJobAsApp(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	c := gatetest.Cases()[0]
	s := fakegithub.New(t)
	const token = "ghs_16C7e42F292c6912E7710c838347Ae178B4a" // GitHub's documented example
	jwt := fakegithub.MatchFunc("App JWT", func(r fakegithub.Request) error {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ey") {
			return fmt.Errorf("authorization %q is not the App's JWT", r.Header.Get("Authorization"))
		}
		return nil
	})
	s.Expect("GET", "/repos/"+c.Repo(t)+"/installation", fakegithub.JSONFileWith(200, testfix.Path(t, "github", "rest-openapi-examples", "installation.json"), map[string]any{"id": 7})).Match(jwt)
	s.Expect("POST", "/app/installations/7/access_tokens", fakegithub.JSONFileWith(201, testfix.Path(t, "github", "rest-openapi-examples", "installation-token.json"),
		map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})).Match(jwt)
	c.Expect(t, s)
	s.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", c.Repo(t), commentID(t, c)), s.Example(201, "reaction", map[string]any{"content": "eyes"})).
		Match(fakegithub.Header("Authorization", "token "+token))
	res, e, log, err := gateStep(t, c, s, map[string]string{"github-token": "", "app-id": "42", "app-private-key": pemKey})
	if err != nil {
		t.Fatalf("gate job: %v\n%s", err, log)
	}
	c.Check(t, res.gate.Decision)
	if outs := readOutputs(t, e.output); outs["accepted"] != "true" {
		t.Errorf("outputs %v", outs)
	}
	cs := commands(t, log)
	masked := map[string]bool{}
	for _, cmd := range cs {
		if cmd.Name == "add-mask" {
			masked[cmd.Msg] = true
		}
	}
	lines := strings.Split(strings.TrimSpace(pemKey), "\n")
	if !masked[strings.TrimSpace(pemKey)] || !masked[lines[1]] || !masked[lines[len(lines)-2]] {
		t.Errorf("the key is not masked whole and line by line: %d masks", len(masked))
	}
	if len(cs) == 0 || cs[0].Name != "add-mask" {
		t.Errorf("the first command is not a mask: %s", names(cs))
	}
}

// The notice of an accepted run says what runs, pinned to what: a compare both
// commits, a bisection its range, its size and its budget of runs.
func TestGateAcceptedNotice(t *testing.T) {
	t.Parallel()
	const good, bad = "9fceb02d0ae598e95dc970b74767f19372d61af8", "aa218f56b14c9653891f9e74264a383fa43fefbd"
	for _, c := range []struct {
		r    gate.Request
		want string
	}{
		{gate.Request{Kind: command.Profile, Requester: "alice", Models: []string{"llama", "qwen3"}, SHA: bad, PinnedFrom: "branch main"},
			"profile by alice: llama,qwen3 pinned to " + bad + " (branch main)"},
		{gate.Request{Kind: command.Bench, Requester: "alice", Models: []string{"llama"}, SHA: bad, PinnedFrom: "branch main", Compare: true, Base: good, BasePinnedFrom: "branch old", Repeats: 7},
			"bench by alice: llama pinned to " + bad + " (branch main), compared with " + good + " (branch old), at most 7 repeats per side"},
		{gate.Request{Kind: command.Bisect, Requester: "bob", Models: []string{"qwen3"}, SHA: bad, PinnedFrom: "commit " + bad + " (bad=)", Base: good, Commits: 12, MaxRuns: 60},
			"bisect by bob: qwen3 pinned to " + bad + " (commit " + bad + " (bad=)), back to the last good commit " + good + ": 12 commits, at most 60 runs"},
	} {
		if got := gateAccepted(c.r); got != c.want {
			t.Errorf("notice\n %q\nwant\n %q", got, c.want)
		}
	}
}
