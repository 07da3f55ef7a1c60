// Package gatetest holds the gate's table of cases, exported so that every path that
// decides on a comment (gate.Decide itself, the bot server, the Action's gate job) runs
// the same ones: a real webhook payload with edits, the GitHub the gate will find (as
// expectations on the fake GitHub of internal/fakegithub), and the decision wanted.
//
// It is for tests only. It must not hold rules of its own: what a case wants is written
// out, never computed.
package gatetest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
)

// BotLogin is perfbot's own login in the cases: pass it as gate.Options.BotLogin. It is a
// machine user (no [bot] suffix), so only the configured login tells it apart.
const BotLogin = "perfbot-runner"

// DefaultBranch is the default branch of every payload's repository.
const DefaultBranch = "master"

// Case is one event, the GitHub it meets and the decision wanted.
type Case struct {
	Name string
	// Payload is the event file under testdata/real, as path parts for testfix.Path.
	Payload []string
	// Edits override payload fields by dotted key (comment.body, sender.login, ...).
	Edits map[string]any
	World World
	Want  Want
}

// World is what GitHub answers. Each field describes calls the gate makes, exactly
// once each; a zero field means the gate must not make that call.
type World struct {
	// Config is the default branch's .github/perfbot.yml; NoConfig answers 404.
	Config   string
	NoConfig bool
	// Permission is the commenter's permission (admin, maintain, write, triage, read, none).
	Permission string
	// PR is the pull request of a PR comment.
	PR *PR
	// Branches maps a branch to its head SHA; "" answers 404.
	Branches map[string]string
	// Commits maps a ref (a short or full SHA) to the full SHA; "" answers 404.
	Commits map[string]string
	// Contains are the comparisons asked: is SHA on Head.
	Contains []Containment
	// MergeBases are the merge bases asked (a compare on a pull request without base=).
	MergeBases []MergeBase
	// Ranges are the comparisons of a bisection's ends asked.
	Ranges []Range
}

// Range answers how Head stands to Base: Status (identical, ahead, behind, diverged)
// with the counts, or 404 when Status is "".
type Range struct {
	Base, Head, Status string
	AheadBy, BehindBy  int
}

// MergeBase answers the merge base of Base and Head: SHA, or 404 when "".
type MergeBase struct {
	Base, Head, SHA string
}

// PR is a pull request's head.
type PR struct {
	SHA  string
	Fork bool
}

// Containment answers whether commit SHA is Head or one of its ancestors.
type Containment struct {
	Head, SHA string
	Contained bool
}

// Want is the decision a case wants. Reply is a substring of Decision.Reply; the other
// fields are compared exactly, and only for Accepted.
type Want struct {
	Outcome  gate.Outcome
	Reason   gate.Reason
	Reply    string
	Kind     command.Kind
	SHA      string
	Models   []string
	Sampling []string
	Epic     int
	ID       string
	// Compare, Base (A, pinned) and Repeats of a compare; Base is the good commit of a
	// bisection (Kind command.Bisect, SHA its bad one), Commits its range's size.
	Compare bool
	Base    string
	Repeats int
	Commits int
}

// Event returns the case's payload with its edits, as GitHub would send it.
func (c Case) Event(t testing.TB) []byte {
	t.Helper()
	m, err := fakegithub.Object(testfix.Path(t, c.Payload...))
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(c.Edits))
	for k := range c.Edits {
		keys = append(keys, k)
	}
	slices.Sort(keys) // parents before children
	for _, k := range keys {
		if err := fakegithub.Set(m, k, c.Edits[k]); err != nil {
			t.Fatalf("case %s: editing the payload: %v", c.Name, err)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Repo returns the owner/name of the case's payload repository.
func (c Case) Repo(t testing.TB) string { return c.meta(t).Repository.FullName }

// Issue returns the issue or pull request number of the case's payload.
func (c Case) Issue(t testing.TB) int { return c.meta(t).Issue.Number }

// meta is what the helpers read of the edited payload.
type meta struct {
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Issue struct {
		Number int `json:"number"`
	} `json:"issue"`
	Comment struct {
		User struct {
			Login string `json:"login"`
		} `json:"user"`
	} `json:"comment"`
}

func (c Case) meta(t testing.TB) meta {
	t.Helper()
	var m meta
	if err := json.Unmarshal(c.Event(t), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Expect declares on s every call the gate makes for the case, with GitHub's documented
// answers. The stub then fails the test on any other call and on any call not made. The
// config is read through the API (gate.Options.Config left nil), as the server and the
// Action's gate job do; a caller adds its own calls (reactions, replies) to s.
func (c Case) Expect(t testing.TB, s *fakegithub.Stub) {
	t.Helper()
	repo := "/repos/" + c.Repo(t)
	w := c.World
	notFound := fakegithub.JSON(404, map[string]string{"message": "Not Found"})
	if w.Config != "" || w.NoConfig {
		path := repo + "/contents/.github/perfbot.yml?ref=" + DefaultBranch
		if w.NoConfig {
			s.Expect("GET", path, notFound)
		} else {
			s.Expect("GET", path, s.Example(200, "content-file-response-if-content-is-a-file", map[string]any{
				"content": base64.StdEncoding.EncodeToString([]byte(w.Config)), "encoding": "base64",
				"size": len(w.Config), "name": "perfbot.yml", "path": ".github/perfbot.yml", "type": "file",
			}))
		}
	}
	if w.Permission != "" {
		who := c.meta(t)
		perm, role := w.Permission, w.Permission
		// The permission field knows only admin, write, read, none; role_name the rest.
		switch perm {
		case "maintain":
			perm = "write"
		case "triage":
			perm = "read"
		}
		s.Expect("GET", repo+"/collaborators/"+who.Comment.User.Login+"/permission",
			s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions",
				map[string]any{"permission": perm, "role_name": role}))
	}
	if w.PR != nil {
		full := c.Repo(t)
		owner, name, _ := strings.Cut(full, "/")
		headID, headName, headOwner := 1296269, full, owner
		if w.PR.Fork {
			headID, headName, headOwner = 7777777, "forker/"+name, "forker"
		}
		s.Expect("GET", repo+"/pulls/"+strconv.Itoa(c.Issue(t)), s.Example(200, "pull-request", map[string]any{
			"number": c.Issue(t), "state": "open",
			"head.sha": w.PR.SHA, "head.ref": "topic",
			"head.repo.id": headID, "head.repo.full_name": headName, "head.repo.owner.login": headOwner,
			"base.repo.id": 1296269, "base.repo.full_name": full,
		}))
	}
	for _, b := range sortedKeys(w.Branches) {
		path := repo + "/git/ref/heads/" + b
		if sha := w.Branches[b]; sha == "" {
			s.Expect("GET", path, notFound)
		} else {
			s.Expect("GET", path, s.Example(200, "git-ref", map[string]any{"ref": "refs/heads/" + b, "object.sha": sha}))
		}
	}
	for _, ref := range sortedKeys(w.Commits) {
		path := repo + "/commits/" + ref
		sha := w.Commits[ref]
		if sha == "" {
			s.Expect("GET", path, fakegithub.JSON(404, map[string]string{"message": "No commit found for SHA: " + ref}))
			continue
		}
		// Asked with the sha media type, GitHub answers the 40 digits as text, which the
		// description documents only as its JSON form: hence unchecked.
		s.Expect("GET", path, fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
			return fakegithub.Response{Status: 200, Header: http.Header{"Content-Type": {"application/vnd.github.sha; charset=utf-8"}}, Body: []byte(sha)}
		}).Unchecked()).Match(fakegithub.Header("Accept", "application/vnd.github.v3.sha"))
	}
	for _, k := range w.Contains {
		status := "diverged"
		if k.Contained {
			status = "ahead"
		}
		s.Expect("GET", repo+"/compare/"+k.SHA+"..."+k.Head, s.Example(200, "commit-comparison", map[string]any{
			"status": status, "base_commit.sha": k.SHA,
		}))
	}
	for _, g := range w.Ranges {
		path := repo + "/compare/" + g.Base + "..." + g.Head
		if g.Status == "" {
			s.Expect("GET", path, notFound)
			continue
		}
		s.Expect("GET", path, s.Example(200, "commit-comparison", map[string]any{
			"status": g.Status, "ahead_by": g.AheadBy, "behind_by": g.BehindBy, "base_commit.sha": g.Base,
		}))
	}
	for _, m := range w.MergeBases {
		path := repo + "/compare/" + m.Base + "..." + m.Head
		if m.SHA == "" {
			s.Expect("GET", path, notFound)
			continue
		}
		s.Expect("GET", path, s.Example(200, "commit-comparison", map[string]any{
			"status": "ahead", "merge_base_commit.sha": m.SHA,
		}))
	}
}

// Check compares a decision with the case's want.
func (c Case) Check(t testing.TB, d gate.Decision) {
	t.Helper()
	w := c.Want
	if d.Outcome != w.Outcome {
		t.Errorf("%s: outcome %s (reason %s: %s%s), want %s", c.Name, d.Outcome, d.Reason, d.Detail, d.Reply, w.Outcome)
		return
	}
	if d.Reason != w.Reason {
		t.Errorf("%s: reason %q, want %q", c.Name, d.Reason, w.Reason)
	}
	if !strings.Contains(d.Reply, w.Reply) {
		t.Errorf("%s: reply %q does not contain %q", c.Name, d.Reply, w.Reply)
	}
	if w.Outcome != gate.Accepted {
		return
	}
	r := d.Request
	if r.Kind != w.Kind || r.SHA != w.SHA || r.Epic != w.Epic || r.ID != w.ID {
		t.Errorf("%s: request kind %s sha %q epic %d id %q; want kind %s sha %q epic %d id %q",
			c.Name, r.Kind, r.SHA, r.Epic, r.ID, w.Kind, w.SHA, w.Epic, w.ID)
	}
	if !slices.Equal(r.Models, w.Models) || !slices.Equal(r.Sampling, w.Sampling) {
		t.Errorf("%s: models %v sampling %v; want %v %v", c.Name, r.Models, r.Sampling, w.Models, w.Sampling)
	}
	if r.Compare != w.Compare || r.Base != w.Base || r.Repeats != w.Repeats || r.Commits != w.Commits {
		t.Errorf("%s: compare %v base %q repeats %d commits %d; want compare %v base %q repeats %d commits %d",
			c.Name, r.Compare, r.Base, r.Repeats, r.Commits, w.Compare, w.Base, w.Repeats, w.Commits)
	}
}

// WriteEvent writes the case's payload to a file in dir (for GITHUB_EVENT_PATH) and
// returns its path.
func (c Case) WriteEvent(t testing.TB, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "event.json")
	if err := os.WriteFile(p, c.Event(t), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
