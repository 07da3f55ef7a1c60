package gh

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/fakegithub"
)

func TestPullHead(t *testing.T) {
	t.Parallel()
	const path = "/repos/lablup/mlxcel/pulls/7"
	const sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	cases := []struct {
		name      string
		overrides map[string]any
		fork      bool
		repo      string
	}{
		{"same repository", map[string]any{"number": 7}, false, "octocat/Hello-World"},
		{"fork", map[string]any{"number": 7, "head.repo.id": 42, "head.repo.full_name": "mallory/Hello-World"}, true, "mallory/Hello-World"},
		{"deleted fork", map[string]any{"number": 7, "head.repo": nil}, true, ""},
		// A repository that is itself a fork runs its own branches: not a fork head.
		{"branch of a repository that is a fork", map[string]any{"number": 7, "head.repo.fork": true, "base.repo.fork": true}, false, "octocat/Hello-World"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.s.Expect("GET", path, e.s.Example(200, "pull-request", c.overrides))
			h, err := e.c.PullHead(context.Background(), testRepo, 7)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "number", h.Number, 7)
			eq(t, "sha", h.SHA, sha)
			eq(t, "ref", h.Ref, "new-topic")
			eq(t, "base", h.Base, "master")
			eq(t, "fork", h.Fork, c.fork)
			eq(t, "repo", h.Repo, c.repo)
			eq(t, "state", h.State, "open")
		})
	}
	t.Run("not a pull request", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", path, notFound())
		if _, err := e.c.PullHead(context.Background(), testRepo, 7); !errors.Is(err, ErrNotFound) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("odd head SHA", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", path, e.s.Example(200, "pull-request", map[string]any{"head.sha": "main"}))
		if _, err := e.c.PullHead(context.Background(), testRepo, 7); err == nil || !strings.Contains(err.Error(), "unexpected head commit") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("bad number", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		if _, err := e.c.PullHead(context.Background(), testRepo, 0); err == nil {
			t.Error("accepted pull request 0")
		}
	})
}

// shaAnswer is GitHub's answer to the sha media type: the 40 digits as text, which the
// REST description documents only in its JSON form.
func shaAnswer(body string) fakegithub.Responder {
	return fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
		return fakegithub.Response{Status: 200, Header: http.Header{"Content-Type": {"application/vnd.github.sha; charset=utf-8"}}, Body: []byte(body)}
	}).Unchecked()
}

func TestCommitSHA(t *testing.T) {
	t.Parallel()
	const full = "9fceb02d0ae598e95dc970b74767f19372d61af8"
	t.Run("short SHA", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", "/repos/lablup/mlxcel/commits/9fceb02", shaAnswer(full)).
			Match(fakegithub.Header("Accept", "application/vnd.github.v3.sha"))
		got, err := e.c.CommitSHA(context.Background(), testRepo, "9fceb02")
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "sha", got, full)
	})
	for _, c := range []struct {
		name   string
		status int
		msg    string
		is     error
	}{
		{"unknown", 404, "No commit found for SHA: 9fceb02", ErrNotFound},
		{"ambiguous", 422, "No commit found for SHA: 9fceb02", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.s.Expect("GET", "/repos/lablup/mlxcel/commits/9fceb02", fakegithub.JSON(c.status, map[string]string{"message": c.msg}))
			_, err := e.c.CommitSHA(context.Background(), testRepo, "9fceb02")
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != c.status || (c.is != nil && !errors.Is(err, c.is)) {
				t.Errorf("error %v", err)
			}
		})
	}
	t.Run("answer that is not a SHA", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", "/repos/lablup/mlxcel/commits/main", shaAnswer("<html>"+strings.Repeat("x", 500)))
		if _, err := e.c.CommitSHA(context.Background(), testRepo, "main"); err == nil || !strings.Contains(err.Error(), "unexpected SHA") || len(err.Error()) > 300 {
			t.Errorf("error %v", err)
		}
	})
	t.Run("ref that would leave the path", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for _, ref := range []string{"../../x", "a b", "", "x?y"} {
			if _, err := e.c.CommitSHA(context.Background(), testRepo, ref); err == nil {
				t.Errorf("ref %q accepted", ref)
			}
		}
	})
}

func TestContains(t *testing.T) {
	t.Parallel()
	const sha = "9fceb02d0ae598e95dc970b74767f19372d61af8"
	for _, c := range []struct {
		status string
		want   bool
	}{{"ahead", true}, {"identical", true}, {"behind", false}, {"diverged", false}} {
		t.Run(c.status, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.expectCompare(sha+"...main?per_page=1", e.comparison(map[string]any{"status": c.status}))
			got, err := e.c.Contains(context.Background(), testRepo, "main", sha)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "contains", got, c.want)
		})
	}
	t.Run("unknown status", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.expectCompare(sha+"...main", e.comparison(map[string]any{"status": "sideways"}).Unchecked())
		if _, err := e.c.Contains(context.Background(), testRepo, "main", sha); err == nil || !strings.Contains(err.Error(), "unknown status") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("commit unknown to the repository", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.expectCompare(sha+"...main", notFound())
		if _, err := e.c.Contains(context.Background(), testRepo, "main", sha); !errors.Is(err, ErrNotFound) {
			t.Errorf("error %v", err)
		}
	})
}

func TestFileContent(t *testing.T) {
	t.Parallel()
	const path = "/repos/lablup/mlxcel/contents/.github/perfbot.yml?ref=main"
	text := "version: 1\nmodels: {}\n"
	// GitHub wraps base64 content at 60 characters.
	enc := base64.StdEncoding.EncodeToString([]byte(text))
	wrapped := enc[:20] + "\n" + enc[20:] + "\n"
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", path, e.s.Example(200, "content-file-response-if-content-is-a-file",
			map[string]any{"content": wrapped, "size": len(text), "path": ".github/perfbot.yml"}))
		got, err := e.c.FileContent(context.Background(), testRepo, ".github/perfbot.yml", "main")
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "content", string(got), text)
	})
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", path, notFound())
		if _, err := e.c.FileContent(context.Background(), testRepo, ".github/perfbot.yml", "main"); !errors.Is(err, ErrNotFound) {
			t.Errorf("error %v", err)
		}
	})
	for _, c := range []struct {
		name      string
		overrides map[string]any
		want      string
	}{
		{"symlink", map[string]any{"type": "symlink"}, "not a file"},
		{"too large", map[string]any{"size": MaxFileBytes + 1}, "perfbot reads at most"},
		{"not base64", map[string]any{"encoding": "none", "content": ""}, "encoding \"none\""},
		{"bad base64", map[string]any{"content": "!!!"}, "decoding the content"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.s.Expect("GET", path, e.s.Example(200, "content-file-response-if-content-is-a-file", c.overrides))
			if _, err := e.c.FileContent(context.Background(), testRepo, ".github/perfbot.yml", "main"); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
	t.Run("paths that leave the repository", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for _, p := range []string{"../x", "/etc/passwd", "a/../../b", "", "./a"} {
			if _, err := e.c.FileContent(context.Background(), testRepo, p, "main"); err == nil {
				t.Errorf("path %q accepted", p)
			}
		}
		if _, err := e.c.FileContent(context.Background(), testRepo, "a", "x y"); err == nil {
			t.Error("bad ref accepted")
		}
	})
}

func TestCommitPulls(t *testing.T) {
	t.Parallel()
	const sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	const path = "/repos/lablup/mlxcel/commits/" + sha + "/pulls?per_page=100"
	t.Run("merged first", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		open := listed(t, map[string]any{"number": 9, "state": "open", "merged_at": nil, "title": "later work"})
		merged := listed(t, map[string]any{"number": 12, "state": "closed", "merged_at": "2026-10-20T10:00:00Z", "title": "faster decode", "html_url": "https://github.com/lablup/mlxcel/pull/12"})
		e.s.Expect("GET", path, fakegithub.JSON(200, []any{open, merged}))
		got, err := e.c.CommitPulls(context.Background(), testRepo, sha)
		if err != nil {
			t.Fatal(err)
		}
		want := []CommitPull{{Number: 12, URL: "https://github.com/lablup/mlxcel/pull/12", Title: "faster decode", State: "closed", Merged: true},
			{Number: 9, URL: open["html_url"].(string), Title: "later work", State: "open"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pull requests (-want +got):\n%s", diff)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", path, fakegithub.JSON(200, []any{}))
		got, err := e.c.CommitPulls(context.Background(), testRepo, sha)
		if err != nil || len(got) != 0 {
			t.Errorf("got %v, %v", got, err)
		}
	})
	t.Run("unknown commit", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", path, fakegithub.JSON(422, map[string]string{"message": "No commit found for SHA: " + sha}))
		_, err := e.c.CommitPulls(context.Background(), testRepo, sha)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 422 || !strings.Contains(err.Error(), "listing the pull requests of commit 6dcb09b5") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("short SHA refused before asking", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		if _, err := e.c.CommitPulls(context.Background(), testRepo, "6dcb09b"); err == nil || !strings.Contains(err.Error(), "not a full 40-hex-digit SHA") {
			t.Errorf("error %v", err)
		}
	})
}
