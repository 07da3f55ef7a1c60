package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
)

var (
	issuePayload = []string{"github", "webhooks", "issue_comment.created.json"}
	prPayload    = []string{"github", "webhooks-pr-comments", "prow.issue_comment.created.pr.lgtm.json"}
)

// TestShortSHAByMaintainerIsStillChecked: only a full 40-digit SHA lets a maintainer
// run a commit that is on neither the default branch nor the pull request's branch. A
// short SHA could name another commit once the repository holds more objects, so it is
// checked like anyone's, and a commit the check finds is pinned without the "named by"
// note.
func TestShortSHAByMaintainerIsStillChecked(t *testing.T) {
	t.Parallel()
	cases := []gatetest.Case{
		{
			Name: "maintainer's short SHA off the default branch", Payload: issuePayload,
			Edits: map[string]any{"comment.body": "/profile rocm ref=" + gatetest.ShortSHA},
			World: gatetest.World{Config: gatetest.Config, Permission: "maintain",
				Commits:  map[string]string{gatetest.ShortSHA: gatetest.FullOfShort},
				Contains: []gatetest.Containment{{Head: gatetest.DefaultBranch, SHA: gatetest.FullOfShort}}},
			Want: gatetest.Want{Outcome: gate.Denied, Reason: gate.ReasonRef, Reply: "may come from a fork"},
		},
		{
			Name: "admin's short SHA on neither the default nor the pull request's branch", Payload: prPayload,
			Edits: map[string]any{"comment.body": "/profile rocm ref=" + gatetest.ShortSHA},
			World: gatetest.World{Config: gatetest.Config, Permission: "admin",
				Commits: map[string]string{gatetest.ShortSHA: gatetest.FullOfShort},
				PR:      &gatetest.PR{SHA: gatetest.PRSHA},
				Contains: []gatetest.Containment{
					{Head: gatetest.DefaultBranch, SHA: gatetest.FullOfShort},
					{Head: gatetest.PRSHA, SHA: gatetest.FullOfShort},
				}},
			Want: gatetest.Want{Outcome: gate.Denied, Reason: gate.ReasonRef, Reply: "or this pull request's own branch"},
		},
		{
			Name: "maintainer's short SHA on the default branch", Payload: issuePayload,
			Edits: map[string]any{"comment.body": "/profile rocm ref=" + gatetest.ShortSHA},
			World: gatetest.World{Config: gatetest.Config, Permission: "maintain",
				Commits:  map[string]string{gatetest.ShortSHA: gatetest.FullOfShort},
				Contains: []gatetest.Containment{{Head: gatetest.DefaultBranch, SHA: gatetest.FullOfShort, Contained: true}}},
			Want: gatetest.Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: gatetest.FullOfShort,
				Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"}, Epic: 7},
		},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.New(t) // a call the case does not declare fails the test
			c.Expect(t, s)
			ev, err := gate.ParseEvent(c.Event(t))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			d, err := gate.Decide(ctx, ev, client(t, s), gate.Options{BotLogin: gatetest.BotLogin})
			if err != nil {
				t.Fatal(err)
			}
			c.Check(t, d)
			if d.Outcome == gate.Accepted && d.Request.PinnedFrom != "commit "+gatetest.FullOfShort {
				t.Errorf("pinned from %q, want the commit without a maintainer's name", d.Request.PinnedFrom)
			}
		})
	}
}

// TestCommitLookupAnswers: GitHub's 422 for a short SHA (ambiguous or malformed) is a
// refusal the commenter reads; a server error is an error, so the event is tried again
// rather than refused.
func TestCommitLookupAnswers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		answer fakegithub.Responder
		denied bool
	}{
		{"ambiguous", fakegithub.JSON(422, map[string]string{"message": "No commit found for SHA: 9fceb02"}), true},
		{"server error", fakegithub.Status(500), false},
		{"unavailable", fakegithub.Status(503), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.New(t)
			s.Expect("GET", "/repos/Codertocat/Hello-World/collaborators/Codertocat/permission",
				s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", nil))
			s.Expect("GET", "/repos/Codertocat/Hello-World/commits/"+gatetest.ShortSHA, c.answer)
			d, err := decide(t, s, event(t, "/profile rocm ref="+gatetest.ShortSHA), gate.Options{Config: testConfig(t)})
			if c.denied {
				if err != nil || d.Outcome != gate.Denied || d.Reason != gate.ReasonRef || !strings.Contains(d.Reply, "has no commit `"+gatetest.ShortSHA+"`") {
					t.Errorf("decision %+v, error %v", d, err)
				}
				return
			}
			var ae *gh.APIError
			if !errors.As(err, &ae) || d.Outcome != "" {
				t.Errorf("decision %+v, error %v; want an API error and no decision", d, err)
			}
		})
	}
}

// TestParseEventEdges: a payload of exactly MaxPayloadBytes is read, one byte more is
// refused; an issue or comment number of 0 is refused.
func TestParseEventEdges(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(testfix.Path(t, "github", "webhooks", "issue_comment.created.json"))
	if err != nil {
		t.Fatal(err)
	}
	pad := func(n int) []byte { return append(bytes.Clone(good), bytes.Repeat([]byte(" "), n-len(good))...) }
	if _, err := gate.ParseEvent(pad(gate.MaxPayloadBytes)); err != nil {
		t.Errorf("payload of exactly %d bytes: %v", gate.MaxPayloadBytes, err)
	}
	if _, err := gate.ParseEvent(pad(gate.MaxPayloadBytes + 1)); err == nil || !strings.Contains(err.Error(), "GitHub sends at most") {
		t.Errorf("payload of %d bytes: %v", gate.MaxPayloadBytes+1, err)
	}
	for key, want := range map[string]string{"issue.number": "no issue number", "comment.id": "no comment id"} {
		for _, v := range []int{0, -1} {
			m, err := fakegithub.Object(testfix.Path(t, "github", "webhooks", "issue_comment.created.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := fakegithub.Set(m, key, v); err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gate.ParseEvent(b); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s = %d: error %v, want %q", key, v, err, want)
			}
		}
	}
}
