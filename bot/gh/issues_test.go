package gh

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/fakegithub"
)

const (
	issuesPath  = "/repos/lablup/mlxcel/issues"
	issueMarker = "<!-- perfbot:regression rocm_strixhalo-gfx1151 Meta-Llama-3.1-8B-Instruct-4bit -->"
)

// issue builds an issue answer from GitHub's documented example; pr keeps the example's
// pull_request links (the issue list holds pull requests too).
func issue(t testing.TB, number int, user, title, body string, pr bool) map[string]any {
	t.Helper()
	m, err := fakegithub.Object(example(t, "issue"))
	if err != nil {
		t.Fatal(err)
	}
	if !pr {
		delete(m, "pull_request")
	}
	for k, v := range map[string]any{"number": number, "user.login": user, "title": title, "body": body, "state": "open",
		"html_url": fmt.Sprintf("https://github.com/lablup/mlxcel/issues/%d", number)} {
		if err := fakegithub.Set(m, k, v); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// Only an open issue the bot opened with the marker counts: not the bot's pull request
// quoting it, not somebody's issue quoting it. None here: the issue is opened.
func TestUpsertIssueOpensWhenNoneIsMarked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", issuesPath+"?state=open&creator=perfbot[bot]&sort=created&direction=asc&per_page=100", fakegithub.JSON(200, []any{
		issue(t, 57, botLogin, "rocm: nightly baseline", issueMarker, true),
		issue(t, 60, "octocat", "Llama is slow", "see "+issueMarker, false),
		issue(t, 61, botLogin, "another regression", "<!-- perfbot:regression rocm_strixhalo-gfx1151 Qwen3-0.6B-4bit -->", false),
	}))
	body := issueMarker + "\nLlama decode fell 10.4%."
	e.s.Expect("POST", issuesPath, fakegithub.Func(func(req fakegithub.Request) fakegithub.Response {
		return fakegithub.Response{Status: 201, Body: mustJSON(issue(t, 62, botLogin, "Nightly: decode regression", body, false))}
	})).JSONBody(map[string]any{"title": "Nightly: decode regression", "body": body})
	got, action, err := e.c.UpsertIssue(context.Background(), testRepo, issueMarker, "Nightly: decode regression", body)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Created)
	eq(t, "number", got.Number, 62)
	eq(t, "url", got.URL, "https://github.com/lablup/mlxcel/issues/62")
}

// The marked issue on the second page is edited, once; the same text again changes
// nothing.
func TestUpsertIssueEditsTheMarkedOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	page2 := e.s.AbsURL("/repositories/1296269/issues?state=open&page=2")
	e.s.Expect("GET", issuesPath+"?state=open&page=", fakegithub.JSON(200, []any{issue(t, 3, botLogin, "old", "no marker", false)}).
		Header("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, page2, page2)))
	e.s.Expect("GET", issuesPath+"?state=open&page=2", fakegithub.JSON(200, []any{issue(t, 70, botLogin, "Nightly: decode regression", issueMarker+"\nnight 1", false)}))
	body := issueMarker + "\nnights 1 and 2"
	e.s.Expect("PATCH", issuesPath+"/70", fakegithub.JSON(200, issue(t, 70, botLogin, "Nightly: decode regression", body, false))).
		JSONBody(map[string]any{"body": body, "title": "Nightly: decode regression"})
	got, action, err := e.c.UpsertIssue(context.Background(), testRepo, issueMarker, "Nightly: decode regression", body)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Updated)
	eq(t, "number", got.Number, 70)
	same, action, err := e.c.EditIssue(context.Background(), testRepo, got, got.Title, strings.ReplaceAll(body, "\n", "\r\n"))
	if err != nil || action != Unchanged || same.Number != 70 {
		t.Errorf("same text: %v %v %+v", action, err, same)
	}
}

func TestUpsertIssueRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ marker, title, body, want string }{
		{issueMarker, "t", "no marker here", "must contain the marker"},
		{"", "t", "x", "must contain the marker"},
		{issueMarker, " ", issueMarker, "the title is empty"},
		{issueMarker, "t", issueMarker + strings.Repeat("x", MaxCommentChars), "GitHub accepts at most"},
	} {
		if _, _, err := e.c.UpsertIssue(context.Background(), testRepo, tc.marker, tc.title, tc.body); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.body[:min(20, len(tc.body))], err, tc.want)
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
