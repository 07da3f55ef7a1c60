package fakegithub

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/internal/strs"
)

// TB is the part of testing.TB the fake uses; *testing.T, *testing.B and testing.TB
// satisfy it. The package does not import testing, so the perfbot binary can serve the
// fake for `perfbot demo`.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
	Cleanup(func())
}

// maxBody bounds what the fake reads of one request body.
const maxBody = 8 << 20

// Server is a running fake GitHub API. New starts one for a test, Start one for the
// demo.
type Server struct {
	t        TB     // nil outside a test: nothing is checked or reported
	base     string // always starts and ends with "/"
	validate bool
	srv      *http.Server
	origin   string       // "http://127.0.0.1:PORT"
	world    http.Handler // the App's stateful routes; nil without App

	xmu  sync.Mutex
	exps []*Expectation
	reqs []Request

	mu         sync.Mutex // guards the world below
	app        bool
	users      map[string]*User
	repos      map[string]*Repo
	comments   map[int64]*Comment
	checks     map[int64]*CheckRun
	tokens     map[string]string // token -> login
	appID      int64
	appSlug    string
	appKey     *rsa.PublicKey
	nextID     int64
	dispatch   []Dispatch
	runs       map[int64]*Run
	artifacts  map[int64][]Artifact // by run id
	log        []string
	onDispatch func(Dispatch)
}

// Stub is Server under the name the expectation-style tests know it by.
type Stub = Server

// Option configures New and Start.
type Option func(*Server)

// BasePath mounts the API under p instead of /api/v3/. "/" mounts it at the root, as
// api.github.com is.
func BasePath(p string) Option {
	return func(s *Server) {
		s.base = "/" + strings.Trim(p, "/") + "/"
		if s.base == "//" {
			s.base = "/"
		}
	}
}

// WithoutSchemaCheck turns off the check of answers against the REST description, for
// tests that serve deliberately odd answers.
func WithoutSchemaCheck() Option { return func(s *Server) { s.validate = false } }

// App gives the fake a stateful GitHub with one App whose JWTs must verify with key:
// calls that no expectation takes are answered from its users, repositories, issues,
// comments, check runs and workflow runs (see AddRepo and the other Add methods)
// instead of failing the test.
func App(id int64, slug string, key *rsa.PublicKey) Option {
	return func(s *Server) { s.app, s.appID, s.appSlug, s.appKey = true, id, slug, key }
}

// New starts a fake for a test, mounted under /api/v3/ (as GitHub Enterprise Server)
// so that a client building absolute URLs fails loudly. Without App it is a strict
// registry: any call no expectation takes fails the test. Every 2xx JSON answer is
// checked against the operation's response schema in GitHub's REST description. The
// fake stops at the end of the test, then reports expectations left unused.
func New(t TB, opts ...Option) *Server {
	t.Helper()
	s := newServer(t, opts)
	if s.validate {
		// Fail here, not inside a handler, if the description is missing.
		if _, err := loadSpec(t); err != nil {
			t.Fatalf("fakegithub: %v", err)
		}
	}
	if err := s.listen(); err != nil {
		t.Fatalf("fakegithub: %v", err)
	}
	t.Cleanup(func() {
		s.Close()
		s.checkUsed()
	})
	return s
}

// Start serves a fake outside a test (the demo, with App) on a free port of 127.0.0.1
// until Close. Nothing is checked or reported, and Expect is not for it: a call the
// App's world does not serve gets GitHub's 404.
func Start(opts ...Option) (*Server, error) {
	s := newServer(nil, opts)
	if err := s.listen(); err != nil {
		return nil, err
	}
	return s, nil
}

func newServer(t TB, opts []Option) *Server {
	s := &Server{t: t, base: "/api/v3/", validate: true}
	for _, o := range opts {
		o(s)
	}
	if s.app {
		s.users, s.repos, s.comments = map[string]*User{}, map[string]*Repo{}, map[int64]*Comment{}
		s.checks, s.tokens, s.runs = map[int64]*CheckRun{}, map[string]string{}, map[int64]*Run{}
		s.nextID = 1000
		s.AddUser(User{Login: s.appSlug + "[bot]", Bot: true})
		s.world = http.StripPrefix(strings.TrimSuffix(s.base, "/"), s.routes())
	}
	return s
}

func (s *Server) listen() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	s.origin = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // ends with Close
	return nil
}

// URL is the API base URL to give the client, with a trailing slash.
func (s *Server) URL() string { return s.origin + s.base }

// AbsURL is the absolute URL of an API path, as GitHub writes it in Link headers.
func (s *Server) AbsURL(path string) string { return s.URL() + strings.TrimPrefix(path, "/") }

// Close stops serving, waiting (a while) for the calls being answered.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

// Request is one call the fake received. Path is relative to the base path and starts
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
func (s *Server) Requests() []Request {
	s.xmu.Lock()
	defer s.xmu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// errorf reports a failure of the test the fake serves; outside a test it does nothing.
func (s *Server) errorf(format string, args ...any) {
	if s.t != nil {
		s.t.Errorf("fakegithub: "+format, args...)
	}
}

// ServeHTTP answers one API call: from the first expectation that takes it, else from
// the App's world, else as an unexpected call.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody+1))
	if err != nil {
		s.errorf("reading the %s %s body: %v", hr.Method, hr.URL.Path, err)
	}
	req := Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.Query(), Header: hr.Header.Clone(), Body: body}
	rel, inside := strings.CutPrefix(hr.URL.Path, s.base)
	if !inside {
		s.record(req)
		s.errorf("%s %s is outside the API base path %s: the client built an absolute URL instead of resolving against its base URL", hr.Method, hr.URL.Path, s.base)
		writeError(w, http.StatusNotFound, "outside the API base path")
		return
	}
	req.Path = "/" + rel
	if len(body) > maxBody {
		s.record(req)
		s.errorf("the %s body is over %d bytes", req, maxBody)
		writeError(w, http.StatusRequestEntityTooLarge, "body too large")
		return
	}
	hit, misses := s.take(req)
	switch {
	case hit != nil:
		s.reply(w, req.Method, req.Path, hit.resp.fn(s, req), !hit.resp.unchecked)
	case s.world != nil:
		hr.Body = io.NopCloser(bytes.NewReader(body))
		s.world.ServeHTTP(w, hr)
	default:
		msg := "unexpected call " + req.String()
		if len(req.Body) > 0 {
			msg += " with body " + bodyText(req.Body)
		}
		if len(misses) > 0 {
			msg += "\nclosest expectations:\n" + strings.Join(misses, "\n")
		}
		s.errorf("%s", msg)
		writeError(w, http.StatusNotImplemented, "unexpected call")
	}
}

// reply writes an answer. It is the one place answers are checked against GitHub's REST
// description: in a test, a 2xx JSON answer must have the documented shape.
func (s *Server) reply(w http.ResponseWriter, method, path string, resp Response, check bool) {
	if check && s.t != nil && s.validate && resp.Status/100 == 2 && len(resp.Body) > 0 && isJSON(resp.Header.Get("Content-Type")) {
		if err := checkAnswer(s.t, method, path, resp.Status, resp.Body); err != nil {
			s.errorf("the answer to %s %s does not match GitHub's documented shape: %v", method, path, err)
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

// isJSON tells whether a Content-Type (empty: the fake's default) is a JSON one.
func isJSON(contentType string) bool {
	if contentType == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

func (s *Server) record(req Request) {
	s.xmu.Lock()
	s.reqs = append(s.reqs, req)
	s.xmu.Unlock()
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": "fakegithub: " + msg})
}

// bodyText is a body as a report quotes it: trimmed, and clipped to 300 bytes.
func bodyText(b []byte) string { return strs.Clip(string(bytes.TrimSpace(b)), 300, "...") }
