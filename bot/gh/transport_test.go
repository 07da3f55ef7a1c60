package gh

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/fakegithub"
)

const repoPath = "/repos/lablup/mlxcel"

func fullRepo(t *testing.T) fakegithub.Responder {
	return fakegithub.JSONFile(200, example(t, "full-repository"))
}

func TestRetries(t *testing.T) {
	t.Parallel()
	reset := testNow.Add(30 * time.Second)
	rateLimited := func(status int, headers map[string]string) fakegithub.Responder {
		r := fakegithub.JSON(status, map[string]string{
			"message":           "API rate limit exceeded for installation ID 12770951.",
			"documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting",
		})
		for k, v := range headers {
			r = r.Header(k, v)
		}
		return r
	}
	cases := []struct {
		name   string
		first  func(t *testing.T) fakegithub.Responder
		sleeps []time.Duration
	}{
		{"502 then success", func(*testing.T) fakegithub.Responder { return fakegithub.Status(502) }, []time.Duration{time.Second}},
		{"503 with retry-after", func(*testing.T) fakegithub.Responder { return fakegithub.Status(503).Header("Retry-After", "5") }, []time.Duration{5 * time.Second}},
		{"real secondary limit: 403 + retry-after 60", func(t *testing.T) fakegithub.Responder {
			return fakegithub.Recorded(rateLimitFile(t, "secondary-403.headers.txt"), rateLimitFile(t, "secondary-403.body.json"))
		}, []time.Duration{60 * time.Second}},
		{"secondary limit without retry-after waits a minute", func(*testing.T) fakegithub.Responder {
			return fakegithub.JSON(403, map[string]string{
				"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
				"documentation_url": "https://docs.github.com/en/free-pro-team@latest/rest/overview/resources-in-the-rest-api#secondary-rate-limits",
			})
		}, []time.Duration{time.Minute}},
		{"429 with retry-after", func(*testing.T) fakegithub.Responder {
			return rateLimited(429, map[string]string{"Retry-After": "7"})
		}, []time.Duration{7 * time.Second}},
		{"429 with an HTTP-date retry-after", func(*testing.T) fakegithub.Responder {
			return rateLimited(429, map[string]string{"Retry-After": testNow.Add(90 * time.Second).Format(http.TimeFormat)})
		}, []time.Duration{90 * time.Second}},
		{"primary limit waits for the reset", func(*testing.T) fakegithub.Responder {
			return rateLimited(403, map[string]string{
				"X-Ratelimit-Limit": "5000", "X-Ratelimit-Remaining": "0", "X-Ratelimit-Used": "5000",
				"X-Ratelimit-Reset": strconv.FormatInt(reset.Unix(), 10), "X-Ratelimit-Resource": "core",
			})
		}, []time.Duration{31 * time.Second}},
		{"primary limit as 429", func(*testing.T) fakegithub.Responder {
			return rateLimited(429, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": strconv.FormatInt(reset.Unix(), 10)})
		}, []time.Duration{31 * time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.s.Expect("GET", repoPath, c.first(t))
			e.s.Expect("GET", repoPath, fullRepo(t))
			got, err := e.c.DefaultBranch(context.Background(), testRepo)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "default branch", got, "master")
			if diff := cmp.Diff(c.sleeps, e.sleeps.got()); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
			if want := fmt.Sprintf(" wait_ms=%d ", c.sleeps[0].Milliseconds()); !strings.Contains(e.log.String(), "github: retrying") || !strings.Contains(e.log.String(), want) {
				t.Errorf("no retry logged with%s:\n%s", want, e.log.String())
			}
		})
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.MaxRetries = 2 })
	e.s.Expect("GET", repoPath, fakegithub.JSON(502, map[string]string{"message": "Server Error"})).Times(3)
	_, err := e.c.DefaultBranch(context.Background(), testRepo)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 502 || ae.Path != "/api/v3"+repoPath || ae.Method != "GET" {
		t.Fatalf("error %#v", err)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, e.sleeps.got()); diff != "" {
		t.Errorf("sleeps (-want +got):\n%s", diff)
	}
}

func TestRetriesCanBeDisabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.MaxRetries = -1 })
	e.s.Expect("GET", repoPath, fakegithub.Status(503))
	if _, err := e.c.DefaultBranch(context.Background(), testRepo); err == nil {
		t.Fatal("no error")
	}
	if len(e.sleeps.got()) != 0 {
		t.Errorf("slept %v", e.sleeps.got())
	}
}

// A reset beyond MaxWait fails at once with the time to retry, and the next call on the
// same Client is held back without reaching GitHub.
func TestPrimaryLimitBeyondMaxWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reset := testNow.Add(40 * time.Minute)
	e.s.Expect("GET", repoPath, fakegithub.JSON(403, map[string]string{"message": "API rate limit exceeded for user ID 1."}).
		Header("X-Ratelimit-Remaining", "0").Header("X-Ratelimit-Reset", strconv.FormatInt(reset.Unix(), 10)))

	for i := range 2 {
		_, err := e.c.DefaultBranch(context.Background(), testRepo)
		var rl *RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("call %d: error %v, want a RateLimitError", i, err)
		}
		eq(t, "retry at", rl.RetryAt, reset.Add(time.Second))
		eq(t, "secondary", rl.Secondary, false)
		want := "reading the default branch of lablup/mlxcel: GitHub primary (hourly quota) rate limit reached (API rate limit exceeded for user ID 1.); retry after 2026-04-07T20:37:12Z"
		eq(t, "message", err.Error(), want)
		if errors.Is(err, ErrForbidden) {
			t.Error("a rate limit matches ErrForbidden")
		}
	}
	if len(e.sleeps.got()) != 0 {
		t.Errorf("slept %v", e.sleeps.got())
	}
}

func TestRateLimitRetriesExhausted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.MaxRetries = 1 })
	e.s.Expect("GET", repoPath, fakegithub.Recorded(rateLimitFile(t, "secondary-403.headers.txt"), rateLimitFile(t, "secondary-403.body.json"))).Times(2)
	_, err := e.c.DefaultBranch(context.Background(), testRepo)
	var rl *RateLimitError
	if !errors.As(err, &rl) || !rl.Secondary || !rl.RetryAt.Equal(testNow.Add(time.Minute)) {
		t.Fatalf("error %v", err)
	}
	if !strings.Contains(err.Error(), "(You have exceeded a secondary rate limit.)") {
		t.Errorf("message %q", err)
	}
}

// The last call of the quota succeeds with remaining 0: the next call waits for the
// reset before it is sent, instead of being refused.
func TestQuotaUsedUpOnSuccessWaitsBeforeNextCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reset := testNow.Add(20 * time.Second)
	e.s.Expect("GET", repoPath, fullRepo(t).Header("X-Ratelimit-Remaining", "0").Header("X-Ratelimit-Reset", strconv.FormatInt(reset.Unix(), 10)))
	e.s.Expect("GET", repoPath, fullRepo(t))
	for range 2 {
		if _, err := e.c.DefaultBranch(context.Background(), testRepo); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]time.Duration{21 * time.Second}, e.sleeps.got()); diff != "" {
		t.Errorf("sleeps (-want +got):\n%s", diff)
	}
}

func TestCancelledWhileWaiting(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	e := newEnv(t, func(o *Options) {
		o.Sleep = func(context.Context, time.Duration) error { cancel(); return ctx.Err() }
	})
	e.s.Expect("GET", repoPath, fakegithub.Status(502))
	_, err := e.c.DefaultBranch(ctx, testRepo)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestPlainForbiddenIsNotRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", repoPath, fakegithub.JSON(403, map[string]string{"message": "Resource not accessible by integration"}))
	_, err := e.c.DefaultBranch(context.Background(), testRepo)
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("error %v", err)
	}
	eq(t, "message", err.Error(), "reading the default branch of lablup/mlxcel needs `metadata: read` (GitHub answered 403: Resource not accessible by integration); grant it to the token or the App installation")
	if len(e.sleeps.got()) != 0 {
		t.Errorf("slept %v", e.sleeps.got())
	}
}

func TestRetryAfterParsing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"60", time.Minute, true},
		{" 0 ", 0, true},
		{testNow.Add(10 * time.Second).Format(http.TimeFormat), 10 * time.Second, true},
		{testNow.Add(-10 * time.Second).Format(http.TimeFormat), 0, true},
		{"soon", 0, false},
		{"-5", 0, false},
		{"", 0, false},
	}
	for _, c := range cases {
		h := make(map[string][]string)
		if c.value != "" {
			h["Retry-After"] = []string{c.value}
		}
		got, ok := retryAfter(h, testNow)
		if got != c.want || ok != c.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", c.value, got, ok, c.want, c.ok)
		}
	}
}
