package gh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/fakegithub"
)

const commentsPath = "/repos/lablup/mlxcel/issues/12/comments"

// The marked comment is on the second page; a comment by someone else quoting the
// marker on the first page must not be taken for it.
func TestUpsertCommentFindsMarkerOnSecondPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	page2 := e.s.AbsURL("/repositories/1296269/issues/12/comments?per_page=100&page=2")
	e.s.Expect("GET", commentsPath+"?per_page=100&page=", fakegithub.JSON(200, []any{
		comment(t, 101, "octocat", "quoting the bot: "+marker),
		comment(t, 102, botLogin, "queued"),
	}).Header("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, page2, page2)))
	e.s.Expect("GET", commentsPath+"?per_page=100&page=2", fakegithub.JSON(200, []any{
		comment(t, 103, "someone", "+1"),
		comment(t, 104, botLogin, marker+"\nold ranking"),
	}))
	body := marker + "\nnew ranking"
	e.s.Expect("PATCH", "/repos/lablup/mlxcel/issues/comments/104",
		fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"id": 104, "body": body, "user.login": botLogin})).
		JSONBody(map[string]any{"body": body})

	got, action, err := e.c.UpsertComment(context.Background(), testRepo, 12, marker, body)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Updated)
	if diff := cmp.Diff(Comment{ID: 104, Body: body, URL: "https://github.com/octocat/Hello-World/issues/1347#issuecomment-1", User: botLogin}, got); diff != "" {
		t.Errorf("comment (-want +got):\n%s", diff)
	}
}

func TestUpsertCommentCreatesWhenAbsent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", commentsPath, fakegithub.JSON(200, []any{comment(t, 1, "octocat", "/profile rocm")}))
	body := marker + "\n| rank | unit |"
	e.s.Expect("POST", commentsPath, fakegithub.JSONFileWith(201, example(t, "issue-comment"), map[string]any{"id": 55, "body": body, "user.login": botLogin})).
		JSONBody(map[string]any{"body": body})

	got, action, err := e.c.UpsertComment(context.Background(), testRepo, 12, marker, body)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Created)
	eq(t, "id", got.ID, 55)
}

func TestUpsertCommentUnchangedWhenSameBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := marker + "\nsame\n"
	// GitHub may hand the body back with CRLF line ends.
	e.s.Expect("GET", commentsPath, fakegithub.JSON(200, []any{comment(t, 9, "PerfBot[bot]", strings.ReplaceAll(body, "\n", "\r\n"))}))

	got, action, err := e.c.UpsertComment(context.Background(), testRepo, 12, marker, body)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Unchanged)
	eq(t, "id", got.ID, 9)
}

func TestUpsertCommentRefusesBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		issue        int
		marker, body string
		want         string
	}{
		{"body without marker", 12, marker, "no marker here", "must contain the marker"},
		{"empty marker", 12, "", "x", "must contain the marker"},
		{"bad issue", 0, marker, marker, "positive issue"},
		{"too long", 12, marker, marker + strings.Repeat("é", MaxCommentChars), "GitHub accepts at most 65536"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t) // no expectations: any call fails the test
			_, _, err := e.c.UpsertComment(context.Background(), testRepo, c.issue, c.marker, c.body)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
}

// A 502 on the create may hide a comment that was posted: look before posting again,
// and never post twice.
func TestUpsertCommentAfterAmbiguousFailureDoesNotDoublePost(t *testing.T) {
	t.Parallel()
	body := marker + "\nranking"
	t.Run("posted after all", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", commentsPath, fakegithub.JSON(200, []any{}))
		e.s.Expect("POST", commentsPath, fakegithub.Status(502)) // exactly once
		e.s.Expect("GET", commentsPath, fakegithub.JSON(200, []any{comment(t, 77, botLogin, body)}))

		got, action, err := e.c.UpsertComment(context.Background(), testRepo, 12, marker, body)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "action", action, Created)
		eq(t, "id", got.ID, 77)
		if diff := cmp.Diff([]time.Duration{time.Second}, e.sleeps.got()); diff != "" {
			t.Errorf("sleeps (-want +got):\n%s", diff)
		}
	})
	t.Run("not posted", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", commentsPath, fakegithub.JSON(200, []any{})).Times(2)
		e.s.Expect("POST", commentsPath, fakegithub.Status(502))
		e.s.Expect("POST", commentsPath, fakegithub.JSONFileWith(201, example(t, "issue-comment"), map[string]any{"id": 78, "body": body, "user.login": botLogin}))

		got, action, err := e.c.UpsertComment(context.Background(), testRepo, 12, marker, body)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "action", action, Created)
		eq(t, "id", got.ID, 78)
	})
}

func TestCreateCommentIsSentOnceOnServerError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("POST", commentsPath, fakegithub.Status(502))
	_, err := e.c.CreateComment(context.Background(), testRepo, 12, "denied: you need write permission")
	if err == nil || !strings.Contains(err.Error(), "may have been posted") || !strings.Contains(err.Error(), "502") {
		t.Errorf("error %v", err)
	}
	if len(e.sleeps.got()) != 0 {
		t.Errorf("slept %v before a retry that must not happen", e.sleeps.got())
	}
}

func TestCreateCommentRetriesAfterSecondaryLimit(t *testing.T) {
	t.Parallel()
	// A rate-limited POST was refused before GitHub acted on it: resending is safe.
	e := newEnv(t)
	e.s.Expect("POST", commentsPath, fakegithub.Recorded(rateLimitFile(t, "secondary-403.headers.txt"), rateLimitFile(t, "secondary-403.body.json")))
	e.s.Expect("POST", commentsPath, fakegithub.JSONFileWith(201, example(t, "issue-comment"), map[string]any{"id": 5}))
	got, err := e.c.CreateComment(context.Background(), testRepo, 12, "accepted")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "id", got.ID, 5)
	if diff := cmp.Diff([]time.Duration{60 * time.Second}, e.sleeps.got()); diff != "" {
		t.Errorf("sleeps (-want +got):\n%s", diff)
	}
	// Both attempts carried the same body.
	reqs := e.s.Requests()
	if len(reqs) != 2 || string(reqs[0].Body) != string(reqs[1].Body) || !strings.Contains(string(reqs[1].Body), "accepted") {
		t.Errorf("requests %v", reqs)
	}
}

func TestUpdateComment(t *testing.T) {
	t.Parallel()
	const path = "/repos/lablup/mlxcel/issues/comments/1"
	cases := []struct {
		name       string
		author     string
		current    string
		want       Action
		wantErr    string
		expectEdit bool
	}{
		{"edits own comment", botLogin, "queued", Updated, "", true},
		{"same body", botLogin, "running model 1/2", Unchanged, "", false},
		{"someone else's", "octocat", "queued", "", "written by octocat, not by perfbot[bot]", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.s.Expect("GET", path, fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"user.login": c.author, "body": c.current}))
			if c.expectEdit {
				e.s.Expect("PATCH", path, fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"user.login": c.author, "body": "running model 1/2"})).
					JSONBody(map[string]any{"body": "running model 1/2"})
			}
			got, action, err := e.c.UpdateComment(context.Background(), testRepo, 1, "running model 1/2")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "action", action, c.want)
			eq(t, "body", got.Body, "running model 1/2")
		})
	}
}

// UpdateCommentUnless leaves a comment whose current body keep refuses (Kept, no
// edit: the stub fails on a PATCH) and edits one it accepts.
func TestUpdateCommentUnless(t *testing.T) {
	t.Parallel()
	const path = "/repos/lablup/mlxcel/issues/comments/1"
	final := func(body string) bool { return strings.Contains(body, "done") }
	e := newEnv(t)
	e.s.Expect("GET", path, fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"user.login": botLogin, "body": "done: published"}))
	got, action, err := e.c.UpdateCommentUnless(context.Background(), testRepo, 1, "running model 1/2", final)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Kept)
	eq(t, "body", got.Body, "done: published")

	e.s.Expect("GET", path, fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"user.login": botLogin, "body": "queued"}))
	e.s.Expect("PATCH", path, fakegithub.JSONFileWith(200, example(t, "issue-comment"), map[string]any{"user.login": botLogin, "body": "running model 1/2"})).
		JSONBody(map[string]any{"body": "running model 1/2"})
	if _, action, err = e.c.UpdateCommentUnless(context.Background(), testRepo, 1, "running model 1/2", final); err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Updated)
}

func TestFindCommentOnMissingIssueIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", "/repos/lablup/mlxcel/issues/999/comments", fakegithub.JSON(404, map[string]string{
		"message": "Not Found", "documentation_url": "https://docs.github.com/rest/issues/comments#list-issue-comments",
	}))
	got, err := e.c.FindCommentWithMarker(context.Background(), testRepo, 999, marker)
	if !errors.Is(err, ErrNotFound) || got != nil {
		t.Fatalf("got %v, %v; want ErrNotFound", got, err)
	}
	if errors.Is(err, ErrForbidden) {
		t.Error("a 404 also matches ErrForbidden")
	}
	if !strings.Contains(err.Error(), "lablup/mlxcel#999") {
		t.Errorf("error %q does not name the issue", err)
	}
}

// Without Options.Login a token Client asks GitHub who it is, once.
func TestLoginLookup(t *testing.T) {
	t.Parallel()
	t.Run("GET /user", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(o *Options) { o.Login = "" })
		e.s.Expect("GET", "/user", e.s.Example(200, "private-user-response-with-public-and-private-profile-information", nil))
		e.s.Expect("GET", commentsPath, fakegithub.JSON(200, []any{comment(t, 3, "octocat", marker)})).Times(2)
		for range 2 {
			got, err := e.c.FindCommentWithMarker(context.Background(), testRepo, 12, marker)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.ID != 3 {
				t.Fatalf("found %+v", got)
			}
		}
	})
	t.Run("an Actions token cannot ask", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(o *Options) { o.Login = "" })
		e.s.Expect("GET", "/user", fakegithub.JSON(403, map[string]string{
			"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user",
		}))
		_, err := e.c.FindCommentWithMarker(context.Background(), testRepo, 12, marker)
		if err == nil || !strings.Contains(err.Error(), "set Options.Login (github-actions[bot]") {
			t.Errorf("error %v", err)
		}
	})
}
