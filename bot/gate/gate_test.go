package gate_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/testfix"

	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/fakegithub"
)

func client(t *testing.T, s *fakegithub.Stub) *gh.Client {
	t.Helper()
	c, err := gh.NewTokenClient("ghs_testtoken0123456789", gh.Options{
		BaseURL: s.URL(), Login: "perfbot[bot]", MaxRetries: -1,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCases runs the shared table through Decide with the real API client against the
// API stub: every call the gate makes is one the case declares, answered as GitHub
// documents it.
func TestCases(t *testing.T) {
	t.Parallel()
	for _, c := range gatetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.New(t)
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
		})
	}
}

func TestParseEventRealPayloads(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file         []string
		want         gate.Event
		previousBody string
	}{
		{[]string{"github", "webhooks", "issue_comment.created.json"}, gate.Event{Action: "created", Repo: gh.Repo{Owner: "Codertocat", Name: "Hello-World"},
			DefaultBranch: "master", Issue: 1, CommentID: 492700400, Body: "You are totally right! I'll get this fixed right away.",
			Author: "Codertocat", AuthorType: "User", Sender: "Codertocat", SenderType: "User"}, ""},
		{[]string{"github", "webhooks", "issue_comment.created.with-installation.json"}, gate.Event{Action: "created", Repo: gh.Repo{Owner: "Codertocat", Name: "Hello-World"},
			DefaultBranch: "master", InstallationID: 1, Issue: 1, CommentID: 492700400, Body: "You are totally right! I'll get this fixed right away.",
			Author: "Codertocat", AuthorType: "User", Sender: "Codertocat", SenderType: "User"}, ""},
		{[]string{"github", "webhooks", "issue_comment.edited.json"}, gate.Event{Action: "edited", Repo: gh.Repo{Owner: "Codertocat", Name: "Hello-World"},
			DefaultBranch: "master", Issue: 1, CommentID: 492700400, Body: "You are totally right! I'll get this fixed today.",
			Author: "Codertocat", AuthorType: "User", Sender: "Codertocat", SenderType: "User",
			PreviousBody: "You are totally right! I'll get this fixed right away.", BodyChanged: true}, ""},
		{[]string{"github", "webhooks-pr-comments", "prow.issue_comment.created.pr.lgtm.json"}, gate.Event{Action: "created", Repo: gh.Repo{Owner: "kubernetes", Name: "test-infra"},
			DefaultBranch: "master", Issue: 947, IsPR: true, CommentID: 262693732, Body: "/lgtm",
			Author: "spxtr", AuthorType: "User", Sender: "spxtr", SenderType: "User"}, ""},
		{[]string{"github", "webhooks-pr-comments", "drone.issue_comment.created.pr.json"}, gate.Event{Action: "created", Repo: gh.Repo{Owner: "abc", Name: "def-ci-webhook-test"},
			DefaultBranch: "master", Issue: 2, IsPR: true, CommentID: 751955664, Body: "trigger abc",
			Author: "lts-def", AuthorType: "User", Sender: "lts-def", SenderType: "User"}, ""},
	}
	for _, c := range cases {
		b, err := os.ReadFile(testfix.Path(t, c.file...))
		if err != nil {
			t.Fatal(err)
		}
		got, err := gate.ParseEvent(b)
		if err != nil {
			t.Errorf("%s: %v", c.file[2], err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.file[2], got, c.want)
		}
	}
}

func TestParseEventRefusesBadPayloads(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(testfix.Path(t, "github", "webhooks", "issue_comment.created.json"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(key string, v any) []byte {
		m := map[string]any{}
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		if err := fakegithub.Set(m, key, v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m)
		return b
	}
	cases := []struct {
		name    string
		payload []byte
		want    string
	}{
		{"not JSON", []byte("{"), "reading the issue_comment event"},
		{"no comment", edit("comment", nil), "no comment"},
		{"repository name escaping a path", edit("repository.full_name", "Codertocat/../../x"), "want owner/name"},
		{"no comment id", edit("comment.id", 0), "no comment id"},
		{"no author", edit("comment.user", nil), "no comment author"},
		{"too large", append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), gate.MaxPayloadBytes)...), `"}`...), "GitHub sends at most"},
	}
	for _, c := range cases {
		if _, err := gate.ParseEvent(c.payload); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := gate.FromGitHub(nil); err == nil {
		t.Error("FromGitHub(nil) accepted")
	}
}

func event(t *testing.T, body string) gate.Event {
	t.Helper()
	b, err := os.ReadFile(testfix.Path(t, "github", "webhooks", "issue_comment.created.with-installation.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := gate.ParseEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	ev.Body = body
	return ev
}

func decide(t *testing.T, s *fakegithub.Stub, ev gate.Event, o gate.Options) (gate.Decision, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return gate.Decide(ctx, ev, client(t, s), o)
}

func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(gatetest.Config), config.DefaultPath)
	if err != nil {
		t.Fatal(err)
	}
	return &cfg
}

// TestAcceptedRequest checks every field of an accepted request, with the config given
// in Options (no contents call) and its trigger.min_permission raised.
func TestAcceptedRequest(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	cfg := testConfig(t)
	cfg.Trigger.MinPermission = "maintain"
	s.Expect("GET", "/repos/Codertocat/Hello-World/collaborators/Codertocat/permission",
		s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", map[string]any{"permission": "admin", "role_name": "admin"}))
	s.Expect("GET", "/repos/Codertocat/Hello-World/git/ref/heads/master",
		s.Example(200, "git-ref", map[string]any{"object.sha": gatetest.MasterSHA}))
	d, err := decide(t, s, event(t, "/profile rocm models=qwen3 sampling=t1"), gate.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	r := d.Request
	if d.Outcome != gate.Accepted || d.Config == nil || d.Reply != "" {
		t.Fatalf("decision %+v", d)
	}
	want := gate.Request{Command: r.Command, Kind: command.Profile, Repo: gh.Repo{Owner: "Codertocat", Name: "Hello-World"},
		InstallationID: 1, Issue: 1, IsPR: false, CommentID: 492700400, Requester: "Codertocat", Permission: "admin",
		SHA: gatetest.MasterSHA, PinnedFrom: "the head of the default branch master", Epic: 7}
	r.Models, r.Sampling = nil, nil
	if !reflect.DeepEqual(r, want) {
		t.Errorf("request\n %+v\nwant\n %+v", r, want)
	}
	if !slices.Equal(d.Request.Models, []string{"qwen3"}) || !slices.Equal(d.Request.Sampling, []string{"t1"}) {
		t.Errorf("models %v sampling %v", d.Request.Models, d.Request.Sampling)
	}
}

func TestRaisedMinimumDeniesWrite(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	cfg := testConfig(t)
	cfg.Trigger.MinPermission = "maintain"
	s.Expect("GET", "/repos/Codertocat/Hello-World/collaborators/Codertocat/permission",
		s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", map[string]any{"permission": "write", "role_name": "write"}))
	d, err := decide(t, s, event(t, "/profile rocm"), gate.Options{Config: cfg})
	if err != nil || d.Outcome != gate.Denied || d.Reason != gate.ReasonPermission || !strings.Contains(d.Reply, "needs `maintain` or more") {
		t.Errorf("decision %+v, error %v", d, err)
	}
}

// A commenter GitHub does not know on a private repository has no permission.
func TestUnknownCommenterIsDenied(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	s.Expect("GET", "/repos/Codertocat/Hello-World/collaborators/Codertocat/permission", fakegithub.JSON(404, map[string]string{"message": "Not Found"}))
	d, err := decide(t, s, event(t, "/perfbot status"), gate.Options{Config: testConfig(t)})
	if err != nil || d.Outcome != gate.Denied || !strings.Contains(d.Reply, "has the `none` permission") {
		t.Errorf("decision %+v, error %v", d, err)
	}
}

// A failure to ask GitHub is an error, not a decision: the caller retries the event.
func TestAPIFailureIsAnError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		set  func(s *fakegithub.Stub)
		o    func(t *testing.T) gate.Options
	}{
		{"config", func(s *fakegithub.Stub) {
			s.Expect("GET", "/repos/Codertocat/Hello-World/contents/.github/perfbot.yml", fakegithub.Status(502))
		}, func(*testing.T) gate.Options { return gate.Options{} }},
		{"permission", func(s *fakegithub.Stub) {
			s.Expect("GET", "/repos/Codertocat/Hello-World/collaborators/Codertocat/permission", fakegithub.Status(503))
		}, func(t *testing.T) gate.Options { return gate.Options{Config: testConfig(t)} }},
		{"default branch head", func(s *fakegithub.Stub) {
			s.Expect("GET", "/repos/Codertocat/Hello-World/collaborators/Codertocat/permission",
				s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", nil))
			s.Expect("GET", "/repos/Codertocat/Hello-World/git/ref/heads/master", fakegithub.Status(500))
		}, func(t *testing.T) gate.Options { return gate.Options{Config: testConfig(t)} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.New(t)
			c.set(s)
			d, err := decide(t, s, event(t, "/profile rocm"), c.o(t))
			var ae *gh.APIError
			if !errors.As(err, &ae) || ae.Status < 500 || d.Outcome != "" {
				t.Errorf("decision %+v, error %v", d, err)
			}
		})
	}
}

func TestBadConfigIsExplained(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	bad := "version: 1\nmodels:\n  llama: {dir: m, model_type: llama, weights_gib: -1}\n"
	s.Expect("GET", "/repos/Codertocat/Hello-World/contents/.github/perfbot.yml?ref=master",
		s.Example(200, "content-file-response-if-content-is-a-file", map[string]any{"content": base64.StdEncoding.EncodeToString([]byte(bad)), "size": len(bad)}))
	d, err := decide(t, s, event(t, "/profile rocm"), gate.Options{})
	if err != nil || d.Outcome != gate.Denied || d.Reason != gate.ReasonBadConfig || !strings.Contains(d.Reply, ".github/perfbot.yml:3: models.llama.weights_gib: must be > 0") {
		t.Errorf("decision %+v, error %v", d, err)
	}
}

func TestIgnoredWithoutAsking(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(*gate.Event)
		o    gate.Options
		want gate.Reason
	}{
		{"unknown action", func(e *gate.Event) { e.Action = "pinned" }, gate.Options{}, gate.ReasonAction},
		{"own login, other case", func(e *gate.Event) { e.Author = "PerfBot-Runner" }, gate.Options{BotLogin: gatetest.BotLogin}, gate.ReasonBot},
		{"own App login", func(e *gate.Event) { e.Author = "perfbot" }, gate.Options{BotLogin: "perfbot[bot]"}, gate.ReasonBot},
		{"bot type without suffix", func(e *gate.Event) { e.AuthorType = "Bot" }, gate.Options{}, gate.ReasonBot},
		{"edit by another that left the command", func(e *gate.Event) {
			e.Action, e.Sender, e.BodyChanged, e.PreviousBody = "edited", "mallory", true, "/profile rocm\nold text"
		}, gate.Options{}, gate.ReasonUnchanged},
		{"edit of the title only", func(e *gate.Event) { e.Action, e.BodyChanged = "edited", false }, gate.Options{}, gate.ReasonUnchanged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.New(t) // no calls expected: any call fails the test
			ev := event(t, "/profile rocm")
			c.edit(&ev)
			d, err := decide(t, s, ev, c.o)
			if err != nil || d.Outcome != gate.Ignored || d.Reason != c.want || d.Detail == "" || d.Reply != "" {
				t.Errorf("decision %+v, error %v", d, err)
			}
		})
	}
}

// The fork reply names the exact command a maintainer would post; it carries the
// comment's text only inside a code span.
func TestForkReplyQuotesSafely(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	ev := event(t, "/profile rocm models=llama")
	ev.IsPR = true
	s.Expect("GET", "/repos/Codertocat/Hello-World/collaborators/Codertocat/permission",
		s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", nil))
	s.Expect("GET", "/repos/Codertocat/Hello-World/pulls/1", s.Example(200, "pull-request", map[string]any{
		"head.sha": gatetest.ForkSHA, "head.repo": nil}))
	d, err := decide(t, s, ev, gate.Options{Config: testConfig(t)})
	if err != nil || d.Reason != gate.ReasonFork || !strings.Contains(d.Reply, "is in a fork.") ||
		!strings.Contains(d.Reply, "`/profile rocm models=llama ref="+gatetest.ForkSHA+"`") {
		t.Errorf("decision %+v, error %v", d, err)
	}
}
