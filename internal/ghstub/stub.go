// Package ghstub is the GitHub REST API double for tests: a real HTTP server on
// 127.0.0.1, mounted under a base path (/api/v3/ by default, as on GitHub Enterprise
// Server) so that a client building absolute URLs fails loudly.
//
// It works as a registry: a test declares each call it expects with a responder, and
// the test fails on any call nobody expected and, at cleanup, on any expectation left
// unused. Every request is recorded for later asserts, and every 2xx JSON answer is
// checked against the operation's response schema in GitHub's OpenAPI description, so a
// stub cannot drift from the documented shapes.
//
// It must only be used from tests, and it must never write to the real data under testdata/real.
package ghstub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Stub is a running fake GitHub API.
type Stub struct {
	t        testing.TB
	srv      *httptest.Server
	base     string // always starts and ends with "/"
	validate bool

	mu   sync.Mutex
	exps []*Expectation
	reqs []Request
}

// Option configures New.
type Option func(*Stub)

// BasePath mounts the API under p instead of /api/v3/. "/" mounts it at the root, as
// api.github.com is.
func BasePath(p string) Option {
	return func(s *Stub) {
		s.base = "/" + strings.Trim(p, "/") + "/"
		if s.base == "//" {
			s.base = "/"
		}
	}
}

// WithoutSchemaCheck turns off the check of answers against the OpenAPI description,
// for tests that serve deliberately odd answers.
func WithoutSchemaCheck() Option { return func(s *Stub) { s.validate = false } }

// New starts a stub; it stops at the end of the test, then reports unused expectations.
func New(t testing.TB, opts ...Option) *Stub {
	t.Helper()
	s := &Stub{t: t, base: "/api/v3/", validate: true}
	for _, o := range opts {
		o(s)
	}
	if s.validate {
		// Fail here, not inside a handler, if the description is missing.
		if _, err := loadSpec(t); err != nil {
			t.Fatalf("ghstub: %v", err)
		}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.srv.Close()
		s.checkUsed()
	})
	return s
}

// URL is the API base URL to give the client, with a trailing slash.
func (s *Stub) URL() string { return s.srv.URL + s.base }

// AbsURL is the absolute URL of an API path, as GitHub writes it in Link headers.
func (s *Stub) AbsURL(path string) string {
	return s.srv.URL + s.base + strings.TrimPrefix(path, "/")
}

// Request is one call the stub received. Path is relative to the base path and starts
// with "/".
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// JSON decodes the request body into a generic value.
func (r Request) JSON() (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return nil, fmt.Errorf("decoding the %s %s body: %w", r.Method, r.Path, err)
	}
	return m, nil
}

func (r Request) String() string {
	s := r.Method + " " + r.Path
	if len(r.Query) > 0 {
		s += "?" + r.Query.Encode()
	}
	return s
}

// Requests returns every request received so far, in order.
func (s *Stub) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Expectation is one declared call. By default it must happen exactly once.
type Expectation struct {
	method   string
	path     string
	query    url.Values
	resp     Responder
	matchers []Matcher
	times    int
	calls    int
}

// Expect declares that the client will call method on path (relative to the base path,
// e.g. "/repos/o/r/issues/1/comments"). A query in path ("?page=2") must be present in
// the request with those values; other parameters are free. Expectations are tried in
// the order declared, so a 502 followed by a 200 is two Expect calls.
func (s *Stub) Expect(method, path string, r Responder) *Expectation {
	s.t.Helper()
	if r.err != nil {
		s.t.Fatalf("ghstub: responder for %s %s: %v", method, path, r.err)
	}
	if r.fn == nil {
		s.t.Fatalf("ghstub: empty responder for %s %s: build one with JSON, JSONFile, Status ...", method, path)
	}
	p, q, _ := strings.Cut(path, "?")
	query, err := url.ParseQuery(q)
	if err != nil {
		s.t.Fatalf("ghstub: query of %s %s: %v", method, path, err)
	}
	e := &Expectation{method: strings.ToUpper(method), path: "/" + strings.TrimPrefix(p, "/"), query: query, resp: r, times: 1}
	s.mu.Lock()
	s.exps = append(s.exps, e)
	s.mu.Unlock()
	return e
}

// Times sets how many calls the expectation takes (exactly).
func (e *Expectation) Times(n int) *Expectation {
	e.times = n
	return e
}

// AnyTimes lets the expectation take any number of calls, none included: for a stub
// serving a real process whose call count depends on timing (a crash test, a load
// test). Prefer Times wherever the count is known.
func (e *Expectation) AnyTimes() *Expectation {
	e.times = -1
	return e
}

// Match adds a condition on the request; a request failing it is not this call.
func (e *Expectation) Match(m Matcher) *Expectation {
	e.matchers = append(e.matchers, m)
	return e
}

// JSONBody is Match(BodyFields(fields)).
func (e *Expectation) JSONBody(fields map[string]any) *Expectation {
	return e.Match(BodyFields(fields))
}

func (e *Expectation) String() string {
	s := e.method + " " + e.path
	if len(e.query) > 0 {
		s += "?" + e.query.Encode()
	}
	return s
}

// why returns "" when req is this call, or the reason it is not.
func (e *Expectation) why(req Request) string {
	if req.Method != e.method || req.Path != e.path {
		return "other method or path"
	}
	for k, want := range e.query {
		if got := req.Query[k]; strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Sprintf("query %s=%q, want %q", k, got, want)
		}
	}
	for _, m := range e.matchers {
		if err := m.fn(req); err != nil {
			return fmt.Sprintf("%s: %v", m.desc, err)
		}
	}
	if e.times >= 0 && e.calls >= e.times {
		return fmt.Sprintf("already called %d time(s)", e.calls)
	}
	return ""
}

func (s *Stub) serve(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		s.t.Errorf("ghstub: reading the %s %s body: %v", hr.Method, hr.URL.Path, err)
	}
	req := Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.Query(), Header: hr.Header.Clone(), Body: body}
	if !strings.HasPrefix(hr.URL.Path, s.base) {
		s.record(req)
		s.t.Errorf("ghstub: %s %s is outside the API base path %s: the client built an absolute URL instead of resolving against its base URL", hr.Method, hr.URL.Path, s.base)
		writeError(w, http.StatusNotFound, "outside the API base path")
		return
	}
	req.Path = "/" + strings.TrimPrefix(hr.URL.Path, s.base)

	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	var hit *Expectation
	var misses []string
	for _, e := range s.exps {
		why := e.why(req)
		if why == "" {
			hit = e
			e.calls++
			break
		}
		if why != "other method or path" {
			misses = append(misses, fmt.Sprintf("  %s: %s", e, why))
		}
	}
	s.mu.Unlock()

	if hit == nil {
		msg := fmt.Sprintf("ghstub: unexpected call %s", req)
		if len(req.Body) > 0 {
			msg += fmt.Sprintf(" with body %s", clip(req.Body))
		}
		if len(misses) > 0 {
			msg += "\nclosest expectations:\n" + strings.Join(misses, "\n")
		}
		s.t.Errorf("%s", msg)
		writeError(w, http.StatusNotImplemented, "unexpected call")
		return
	}
	resp := hit.resp.fn(s, req)
	if s.validate && !hit.resp.unchecked && resp.Status >= 200 && resp.Status < 300 && len(resp.Body) > 0 {
		if err := checkAnswer(s.t, req.Method, req.Path, resp.Status, resp.Body); err != nil {
			s.t.Errorf("ghstub: the answer to %s does not match GitHub's documented shape: %v", req, err)
		}
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if w.Header().Get("Content-Type") == "" && len(resp.Body) > 0 {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

func (s *Stub) record(req Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
}

func (s *Stub) checkUsed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var unused []string
	for _, e := range s.exps {
		if e.times >= 0 && e.calls != e.times {
			unused = append(unused, fmt.Sprintf("  %s: called %d of %d time(s)", e, e.calls, e.times))
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		s.t.Errorf("ghstub: expected calls that did not happen:\n%s", strings.Join(unused, "\n"))
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": "ghstub: " + msg})
}

func clip(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
