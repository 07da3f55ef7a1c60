package gh

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
)

const (
	pullsPath  = "/repos/lablup/mlxcel/pulls"
	listOpenPR = pullsPath + "?state=open&head=lablup:perfbot/rocm-profile"
)

var spec = PRSpec{
	Head:   "perfbot/rocm-profile",
	Base:   "main",
	Title:  "perf: gfx1151 decode profile",
	Body:   "Profiled at abc1234.\n",
	Draft:  true,
	Labels: []string{"Foo", "bAr", "baZ"},
}

// listed is one open PR as GET /pulls lists it, from GitHub's documented example.
func listed(t *testing.T, overrides map[string]any) map[string]any {
	t.Helper()
	items, err := fakegithub.Items(example(t, "pull-request-simple-items"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range overrides {
		if err := fakegithub.Set(items[0], k, v); err != nil {
			t.Fatal(err)
		}
	}
	return items[0]
}

func labels(names ...string) []any {
	var out []any
	for i, n := range names {
		out = append(out, map[string]any{"id": i + 1, "node_id": "x", "url": "https://api.github.com/repos/lablup/mlxcel/labels/" + n,
			"name": n, "description": "", "color": "ededed", "default": false})
	}
	return out
}

func TestUpsertPRCreates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{}))
	e.s.Expect("POST", pullsPath, fakegithub.JSONFileWith(201, example(t, "pull-request"), map[string]any{
		"number": 7, "title": spec.Title, "body": spec.Body, "head.ref": spec.Head, "base.ref": spec.Base, "draft": true, "labels": []any{},
		"html_url": "https://github.com/lablup/mlxcel/pull/7",
	})).JSONBody(map[string]any{"title": spec.Title, "head": spec.Head, "base": spec.Base, "body": spec.Body, "draft": true})
	// The labels answer is octokit's recording of this very call.
	scenario := testfix.Path(t, "github", "octokit-fixtures", "add-labels-to-issue.normalized-fixture.json")
	e.s.Expect("POST", "/repos/lablup/mlxcel/issues/7/labels", fakegithub.Octokit(scenario, 1)).
		Match(fakegithub.BodyEquals([]string{"Foo", "bAr", "baZ"}))

	pr, action, err := e.c.UpsertPR(context.Background(), testRepo, spec)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Created)
	want := PR{Number: 7, URL: "https://github.com/lablup/mlxcel/pull/7", Title: spec.Title, Body: spec.Body, Head: spec.Head,
		Base: "main", HeadSHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", Draft: true, Labels: []string{"Foo", "bAr", "baZ"}}
	if diff := cmp.Diff(want, pr); diff != "" {
		t.Errorf("PR (-want +got):\n%s", diff)
	}
}

func TestUpsertPRUpdatesTitleAndBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{listed(t, map[string]any{
		"number": 7, "title": "perf: old", "head.ref": spec.Head, "base.ref": "main", "labels": labels("Foo", "BAR", "baz"),
	})}))
	e.s.Expect("PATCH", pullsPath+"/7", fakegithub.JSONFileWith(200, example(t, "pull-request"), map[string]any{
		"number": 7, "title": spec.Title, "body": spec.Body, "head.ref": spec.Head, "base.ref": "main", "labels": labels("Foo", "BAR", "baz"),
	})).JSONBody(map[string]any{"title": spec.Title, "body": spec.Body, "base": fakegithub.Absent})

	pr, action, err := e.c.UpsertPR(context.Background(), testRepo, spec)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Updated)
	eq(t, "title", pr.Title, spec.Title)
	if diff := cmp.Diff([]string{"Foo", "BAR", "baz"}, pr.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestUpsertPRMovesBase(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{listed(t, map[string]any{
		"number": 7, "title": spec.Title, "body": spec.Body, "head.ref": spec.Head, "base.ref": "master", "labels": labels("Foo", "bAr", "baZ"),
	})}))
	e.s.Expect("PATCH", pullsPath+"/7", fakegithub.JSONFileWith(200, example(t, "pull-request"), map[string]any{
		"number": 7, "title": spec.Title, "body": spec.Body, "head.ref": spec.Head, "base.ref": "main", "labels": labels("Foo", "bAr", "baZ"),
	})).JSONBody(map[string]any{"base": "main"})
	pr, action, err := e.c.UpsertPR(context.Background(), testRepo, spec)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Updated)
	eq(t, "base", pr.Base, "main")
}

func TestUpsertPRUnchanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{listed(t, map[string]any{
		"number": 7, "title": spec.Title, "body": strings.ReplaceAll(spec.Body, "\n", "\r\n"), "head.ref": spec.Head, "base.ref": "main",
		"draft": false, "labels": labels("foo", "bar", "BAZ", "perf"),
	})}))
	pr, action, err := e.c.UpsertPR(context.Background(), testRepo, spec)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Unchanged)
	eq(t, "number", pr.Number, 7)
	eq(t, "draft", pr.Draft, false)
	// The differing draft state is noted, not silently ignored.
	if !strings.Contains(e.log.String(), "draft state differs") {
		t.Errorf("log lacks the draft note:\n%s", e.log.String())
	}
}

func TestUpsertPRAddsMissingLabelOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{listed(t, map[string]any{
		"number": 7, "title": spec.Title, "body": spec.Body, "head.ref": spec.Head, "base.ref": "main", "draft": true, "labels": labels("Foo", "bAr"),
	})}))
	e.s.Expect("POST", "/repos/lablup/mlxcel/issues/7/labels", fakegithub.JSON(200, labels("Foo", "bAr", "baZ"))).
		Match(fakegithub.BodyEquals([]string{"baZ"}))
	_, action, err := e.c.UpsertPR(context.Background(), testRepo, spec)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Updated)
}

// A concurrent run (or a retried POST that went through) makes GitHub refuse the
// duplicate with 422; the PR that exists is adopted.
func TestUpsertPRAdoptsOnDuplicate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := spec
	s.Labels = nil
	e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{}))
	e.s.Expect("POST", pullsPath, fakegithub.JSON(422, map[string]any{
		"message": "Validation Failed",
		"errors":  []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for lablup:perfbot/rocm-profile."}},
	}))
	e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{listed(t, map[string]any{
		"number": 8, "title": s.Title, "body": s.Body, "head.ref": s.Head, "base.ref": "main", "draft": true,
	})}))
	pr, action, err := e.c.UpsertPR(context.Background(), testRepo, s)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "action", action, Created)
	eq(t, "number", pr.Number, 8)
}

func TestUpsertPRErrors(t *testing.T) {
	t.Parallel()
	t.Run("forbidden names the permission", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{}))
		e.s.Expect("POST", pullsPath, fakegithub.JSON(403, map[string]string{
			"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
		}))
		_, _, err := e.c.UpsertPR(context.Background(), testRepo, spec)
		if !errors.Is(err, ErrForbidden) {
			t.Fatalf("error %v, want ErrForbidden", err)
		}
		want := "creating a pull request from perfbot/rocm-profile into main in lablup/mlxcel needs `pull_requests: write` (GitHub answered 403: Resource not accessible by integration); grant it to the token or the App installation"
		eq(t, "message", err.Error(), want)
	})
	t.Run("validation details", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		// Any 422 makes UpsertPR look again for a PR it could adopt.
		e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{})).Times(2)
		// The body of octokit's recorded 422, for a call of ours.
		scenario := testfix.Path(t, "github", "octokit-fixtures", "errors.normalized-fixture.json")
		e.s.Expect("POST", pullsPath, fakegithub.Octokit(scenario, 0))
		_, _, err := e.c.UpsertPR(context.Background(), testRepo, spec)
		if err == nil || !strings.Contains(err.Error(), "GitHub answered 422: Validation Failed (Label color: invalid)") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("several open PRs", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", listOpenPR, fakegithub.JSON(200, []any{
			listed(t, map[string]any{"number": 3, "base.ref": "dev"}),
			listed(t, map[string]any{"number": 4, "base.ref": "release"}),
		}))
		_, _, err := e.c.UpsertPR(context.Background(), testRepo, spec)
		if err == nil || !strings.Contains(err.Error(), "2 open pull requests (#3, #4); close all but one") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("bad spec", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		_, _, err := e.c.UpsertPR(context.Background(), testRepo, PRSpec{Head: "a b", Base: "main..x", Title: " "})
		for _, want := range []string{`head "a b" is not a valid branch name`, `base "main..x"`, "the title is empty"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v lacks %q", err, want)
			}
		}
	})
}

func TestMissingLabels(t *testing.T) {
	t.Parallel()
	got := missingLabels([]string{"Perf", "rocm"}, []string{"perf", "ROCm", "gfx1151", "gfx1151", "bot"})
	if diff := cmp.Diff([]string{"bot", "gfx1151"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
