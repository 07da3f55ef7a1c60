package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"
)

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
func (s *Server) Expect(method, path string, r Responder) *Expectation {
	if s.t == nil {
		panic("fakegithub: Expect needs a fake made by New in a test")
	}
	s.t.Helper()
	if r.err != nil {
		s.t.Fatalf("fakegithub: responder for %s %s: %v", method, path, r.err)
	}
	if r.fn == nil {
		s.t.Fatalf("fakegithub: empty responder for %s %s: build one with JSON, JSONFile, Status ...", method, path)
	}
	p, q, _ := strings.Cut(path, "?")
	query, err := url.ParseQuery(q)
	if err != nil {
		s.t.Fatalf("fakegithub: query of %s %s: %v", method, path, err)
	}
	e := &Expectation{method: strings.ToUpper(method), path: "/" + strings.TrimPrefix(p, "/"), query: query, resp: r, times: 1}
	s.xmu.Lock()
	s.exps = append(s.exps, e)
	s.xmu.Unlock()
	return e
}

// Times sets how many calls the expectation takes (exactly).
func (e *Expectation) Times(n int) *Expectation {
	e.times = n
	return e
}

// AnyTimes lets the expectation take any number of calls, none included: for a fake
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

// take records req and finds the expectation that takes it, or says why the others on
// its path did not.
func (s *Server) take(req Request) (hit *Expectation, misses []string) {
	s.xmu.Lock()
	defer s.xmu.Unlock()
	s.reqs = append(s.reqs, req)
	for _, e := range s.exps {
		why := e.why(req)
		if why == "" {
			e.calls++
			return e, nil
		}
		if why != "other method or path" {
			misses = append(misses, fmt.Sprintf("  %s: %s", e, why))
		}
	}
	return nil, misses
}

func (s *Server) checkUsed() {
	s.xmu.Lock()
	defer s.xmu.Unlock()
	var unused []string
	for _, e := range s.exps {
		if e.times >= 0 && e.calls != e.times {
			unused = append(unused, fmt.Sprintf("  %s: called %d of %d time(s)", e, e.calls, e.times))
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		s.t.Errorf("fakegithub: expected calls that did not happen:\n%s", strings.Join(unused, "\n"))
	}
}

// Matcher is a condition on a request.
type Matcher struct {
	desc string
	fn   func(Request) error
}

// MatchFunc builds a matcher from a function returning why the request does not match.
func MatchFunc(desc string, fn func(Request) error) Matcher { return Matcher{desc: desc, fn: fn} }

// Absent, as a BodyFields value, requires the key to be missing from the body.
var Absent = absent{}

type absent struct{}

// BodyFields requires the request's JSON body to hold these fields (dotted keys reach
// into nested objects) with these values, compared as JSON; other fields are free.
func BodyFields(fields map[string]any) Matcher {
	return Matcher{desc: "body fields", fn: func(req Request) error {
		got, err := req.JSON()
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			want := fields[k]
			val, ok := lookup(got, k)
			if _, isAbsent := want.(absent); isAbsent {
				if ok {
					return fmt.Errorf("%s is present (%s), want it absent", k, jsonText(val))
				}
				continue
			}
			if !ok {
				return fmt.Errorf("%s is missing", k)
			}
			if !jsonEqual(val, want) {
				return fmt.Errorf("%s = %s, want %s", k, jsonText(val), jsonText(want))
			}
		}
		return nil
	}}
}

// BodyEquals requires the request's JSON body to equal v, compared as JSON. Use it for
// bodies that are not objects, such as go-github's bare label arrays.
func BodyEquals(v any) Matcher {
	return Matcher{desc: "body", fn: func(req Request) error {
		var got any
		if err := json.Unmarshal(req.Body, &got); err != nil {
			return fmt.Errorf("decoding the %s %s body: %w", req.Method, req.Path, err)
		}
		if !jsonEqual(got, v) {
			return fmt.Errorf("%s, want %s", bodyText(req.Body), jsonText(v))
		}
		return nil
	}}
}

// Header requires a request header to have a value.
func Header(key, value string) Matcher {
	return Matcher{desc: "header " + key, fn: func(req Request) error {
		if got := req.Header.Get(key); got != value {
			return fmt.Errorf("%q, want %q", got, value)
		}
		return nil
	}}
}

func lookup(m map[string]any, dotted string) (any, bool) {
	var cur any = m
	for _, k := range strings.Split(dotted, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func jsonEqual(got, want any) bool {
	wb, err := json.Marshal(want)
	if err != nil {
		return false
	}
	var w any
	if err := json.Unmarshal(wb, &w); err != nil {
		return false
	}
	return reflect.DeepEqual(got, w)
}

// jsonText is a value as a report quotes it: JSON, clipped as bodyText.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return bodyText(b)
}
