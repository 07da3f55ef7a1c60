package gh

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/logtest"
	"github.com/lablup/perfbot/internal/testfix"
)

// testNow is the date of the real secondary-limit answer in the fixtures.
var testNow = time.Date(2026, 4, 7, 19, 57, 11, 0, time.UTC)

var testRepo = Repo{Owner: "lablup", Name: "mlxcel"}

const (
	botLogin = "perfbot[bot]"
	marker   = "<!-- perfbot:port-ranking -->"
)

// sleeps records the waits a Client asks for and returns at once: tests take no time.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// syncBuffer is a log sink safe for the transport's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

type env struct {
	s      *fakegithub.Stub
	c      *Client
	sleeps *sleeps
	log    *syncBuffer
}

// expectCompare declares GitHub's compare of basehead (BASE...HEAD, with the query a
// test pins) in testRepo, answered with r.
func (e *env) expectCompare(basehead string, r fakegithub.Responder) {
	e.s.Expect("GET", "/repos/lablup/mlxcel/compare/"+basehead, r)
}

// comparison is GitHub's commit-comparison example with fields set over it.
func (e *env) comparison(fields map[string]any) fakegithub.Responder {
	return e.s.Example(200, "commit-comparison", fields)
}

// notFound is GitHub's 404 answer.
func notFound() fakegithub.Responder {
	return fakegithub.JSON(404, map[string]string{"message": "Not Found"})
}

// newEnv starts a stub and a token Client pointed at it, with a fixed clock, recorded
// sleeps and a captured log. mods adjust the options.
func newEnv(t *testing.T, mods ...func(*Options)) *env {
	t.Helper()
	e := &env{s: fakegithub.New(t), sleeps: &sleeps{}, log: &syncBuffer{}}
	o := Options{
		BaseURL: e.s.URL(),
		Login:   botLogin,
		Sleep:   e.sleeps.sleep,
		Now:     func() time.Time { return testNow },
		Logger:  slog.New(logtest.NoDurations(t, slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}
	for _, m := range mods {
		m(&o)
	}
	c, err := NewTokenClient("ghp_testtoken0123456789", o)
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	return e
}

func example(t testing.TB, name string) string {
	return testfix.Path(t, "github", "rest-openapi-examples", name+".json")
}

func rateLimitFile(t testing.TB, name string) string {
	return testfix.Path(t, "github", "rate-limit", name)
}

// comment builds an issue comment answer from GitHub's documented example.
func comment(t testing.TB, id int64, user, body string) map[string]any {
	t.Helper()
	m, err := fakegithub.Object(example(t, "issue-comment"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"id": id, "user.login": user, "body": body,
		"html_url": "https://github.com/lablup/mlxcel/issues/12#issuecomment-" + strconv.FormatInt(id, 10)} {
		if err := fakegithub.Set(m, k, v); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
