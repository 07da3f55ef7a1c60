package gh

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/fakegithub"
)

func TestParseRepo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    Repo
		wantErr string
	}{
		{"lablup/mlxcel", Repo{"lablup", "mlxcel"}, ""},
		{"octo-org/hello.world_2", Repo{"octo-org", "hello.world_2"}, ""},
		{"lablup", Repo{}, "want owner/name"},
		{"lablup/mlxcel/extra", Repo{}, "want owner/name"},
		{"/mlxcel", Repo{}, "not a valid GitHub login"},
		{"-lablup/mlxcel", Repo{}, "not a valid GitHub login"},
		{"lab_lup/mlxcel", Repo{}, "not a valid GitHub login"},
		{"lablup/", Repo{}, "not a valid repository name"},
		{"lablup/..", Repo{}, "not a valid repository name"},
		{"lablup/mlxcel.git", Repo{}, "not ending in .git"},
		{"lablup/ml xcel", Repo{}, "not a valid repository name"},
		{"lablup/mlxcel?x=1", Repo{}, "not a valid repository name"},
		{"https://github.com/lablup/mlxcel", Repo{}, "want owner/name"},
	}
	for _, c := range cases {
		got, err := ParseRepo(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseRepo(%q) error %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseRepo(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		eq(t, "String", got.String(), c.in)
	}
}

func TestReact(t *testing.T) {
	t.Parallel()
	for _, status := range []int{201, 200} { // 200: the reaction was already there
		e := newEnv(t)
		e.s.Expect("POST", "/repos/lablup/mlxcel/issues/comments/1/reactions", fakegithub.JSONFile(status, example(t, "reaction"))).
			JSONBody(map[string]any{"content": "eyes"})
		if err := e.c.React(context.Background(), testRepo, 1, "eyes"); err != nil {
			t.Errorf("status %d: %v", status, err)
		}
	}
	e := newEnv(t)
	if err := e.c.React(context.Background(), testRepo, 1, "party"); err == nil || !strings.Contains(err.Error(), "unknown reaction") {
		t.Errorf("error %v", err)
	}
}

// A reaction is safe to repeat, so a server error on its POST is retried.
func TestReactRetriesServerError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("POST", "/repos/lablup/mlxcel/issues/comments/1/reactions", fakegithub.Status(502))
	e.s.Expect("POST", "/repos/lablup/mlxcel/issues/comments/1/reactions", fakegithub.JSONFile(200, example(t, "reaction"))).
		JSONBody(map[string]any{"content": "rocket"})
	if err := e.c.React(context.Background(), testRepo, 1, "rocket"); err != nil {
		t.Fatal(err)
	}
}

func TestPermission(t *testing.T) {
	t.Parallel()
	const path = "/repos/lablup/mlxcel/collaborators/octocat/permission"
	cases := []struct {
		name      string
		overrides map[string]any
		want      string
	}{
		{"documented example", nil, "admin"},
		{"role_name tells maintain from write", map[string]any{"permission": "write", "role_name": "maintain"}, "maintain"},
		{"role_name tells triage from read", map[string]any{"permission": "read", "role_name": "triage"}, "triage"},
		{"custom role falls back to its base", map[string]any{"permission": "read", "role_name": "security-reviewer"}, "read"},
		{"none", map[string]any{"permission": "none"}, "none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.s.Expect("GET", path, fakegithub.JSONFileWith(200, example(t, "repository-collaborator-permission"), c.overrides))
			got, err := e.c.Permission(context.Background(), testRepo, "octocat")
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "permission", got, c.want)
		})
	}
	t.Run("unknown user", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.s.Expect("GET", path, fakegithub.JSON(404, map[string]string{"message": "Not Found"}))
		if _, err := e.c.Permission(context.Background(), testRepo, "octocat"); !errors.Is(err, ErrNotFound) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("login that would escape the path", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		if _, err := e.c.Permission(context.Background(), testRepo, "../../admin"); err == nil {
			t.Error("accepted")
		}
	})
}

func TestAtLeast(t *testing.T) {
	t.Parallel()
	cases := []struct {
		have, want string
		ok         bool
	}{
		{"admin", "write", true}, {"maintain", "write", true}, {"write", "write", true},
		{"triage", "write", false}, {"read", "write", false}, {"none", "read", false},
		{"triage", "triage", true}, {"owner", "read", false}, {"write", "push", false},
	}
	for _, c := range cases {
		eq(t, c.have+">="+c.want, AtLeast(c.have, c.want), c.ok)
	}
}

func TestBranchHeadAndDefaultBranch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The slash in the branch name stays a slash, as GitHub expects for refs.
	e.s.Expect("GET", "/repos/lablup/mlxcel/git/ref/heads/perfbot/rocm-profile", fakegithub.JSONFile(200, example(t, "git-ref")))
	e.s.Expect("GET", "/repos/lablup/mlxcel", fakegithub.JSONFile(200, example(t, "full-repository")))
	sha, err := e.c.BranchHead(context.Background(), testRepo, "perfbot/rocm-profile")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "sha", sha, "aa218f56b14c9653891f9e74264a383fa43fefbd")
	def, err := e.c.DefaultBranch(context.Background(), testRepo)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "default branch", def, "master")
	if _, err := e.c.BranchHead(context.Background(), testRepo, "main;rm -rf"); err == nil {
		t.Error("accepted a bad branch name")
	}
}

func TestBranchHeadMissingBranch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", "/repos/lablup/mlxcel/git/ref/heads/gone", fakegithub.JSON(404, map[string]string{"message": "Not Found"}))
	_, err := e.c.BranchHead(context.Background(), testRepo, "gone")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "reading the head of branch gone in lablup/mlxcel: not found") {
		t.Errorf("error %v", err)
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	t.Run("without trailing slash", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.New(t)
		c, err := NewTokenClient("t0ken", Options{BaseURL: strings.TrimSuffix(s.URL(), "/"), Login: botLogin})
		if err != nil {
			t.Fatal(err)
		}
		s.Expect("GET", "/repos/lablup/mlxcel", fakegithub.JSONFile(200, example(t, "full-repository"))).
			Match(fakegithub.Header("User-Agent", "perfbot"))
		if _, err := c.DefaultBranch(context.Background(), testRepo); err != nil {
			t.Fatal(err)
		}
	})
	for _, bad := range []string{"ftp://x/", "api.github.com", "https:///api", "https://x/api?v=3"} {
		if _, err := NewTokenClient("t0ken", Options{BaseURL: bad}); err == nil || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("BaseURL %q: error %v", bad, err)
		}
	}
	for _, tok := range []string{"", "  \n", "token abc"} {
		if _, err := NewTokenClient(tok, Options{}); err == nil {
			t.Errorf("token %q accepted", tok)
		}
	}
}
