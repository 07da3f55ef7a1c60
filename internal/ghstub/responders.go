package ghstub

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Response is what the stub answers.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Responder builds the answer to an expected call. Construction errors (a missing
// fixture, bad JSON) surface when the expectation is declared.
type Responder struct {
	fn        func(s *Stub, req Request) Response
	err       error
	unchecked bool
}

// Func answers with whatever fn returns.
func Func(fn func(req Request) Response) Responder {
	return Responder{fn: func(_ *Stub, req Request) Response { return fn(req) }}
}

// Status answers with an empty body, e.g. 204 or a bare 502.
func Status(status int) Responder {
	return Responder{fn: func(*Stub, Request) Response { return Response{Status: status, Header: http.Header{}} }}
}

// JSON answers with v encoded as JSON.
func JSON(status int, v any) Responder {
	b, err := json.Marshal(v)
	return Responder{err: err, fn: func(*Stub, Request) Response {
		return Response{Status: status, Header: http.Header{}, Body: b}
	}}
}

// JSONFile answers with a JSON fixture file as it is.
func JSONFile(status int, path string) Responder {
	b, err := os.ReadFile(path)
	if err == nil && !json.Valid(b) {
		err = fmt.Errorf("%s is not valid JSON", path)
	}
	return Responder{err: err, fn: func(*Stub, Request) Response {
		return Response{Status: status, Header: http.Header{}, Body: b}
	}}
}

// JSONFileWith answers with a JSON object fixture whose fields are overridden. Keys are
// dotted paths into nested objects ("user.login"); the fixture file is not touched.
func JSONFileWith(status int, path string, overrides map[string]any) Responder {
	v, err := readObject(path)
	if err == nil {
		for k, val := range overrides {
			if err = Set(v, k, val); err != nil {
				break
			}
		}
	}
	if err != nil {
		return Responder{err: err}
	}
	return JSON(status, v)
}

// Example answers with a named example from the OpenAPI description
// (components.examples), with optional dotted-key overrides.
func (s *Stub) Example(status int, name string, overrides map[string]any) Responder {
	s.t.Helper()
	v, err := exampleValue(s.t, name)
	if err == nil {
		if m, ok := v.(map[string]any); ok {
			for k, val := range overrides {
				if err = Set(m, k, val); err != nil {
					break
				}
			}
		} else if len(overrides) > 0 {
			err = fmt.Errorf("example %q is not an object; it cannot take overrides", name)
		}
	}
	if err != nil {
		return Responder{err: err}
	}
	return JSON(status, v)
}

// Header returns r with a header added to its answers.
func (r Responder) Header(key, value string) Responder {
	inner := r.fn
	if inner == nil {
		return r
	}
	r.fn = func(s *Stub, req Request) Response {
		resp := inner(s, req)
		if resp.Header == nil {
			resp.Header = http.Header{}
		}
		resp.Header.Add(key, value)
		return resp
	}
	return r
}

// Unchecked exempts r's answers from the schema check (for deliberately odd answers).
func (r Responder) Unchecked() Responder {
	r.unchecked = true
	return r
}

// Sequence answers with each responder in turn, then repeats the last one. Use it with
// Times when one expectation covers several calls.
func Sequence(rs ...Responder) Responder {
	var mu sync.Mutex
	var n int
	out := Responder{fn: func(s *Stub, req Request) Response {
		mu.Lock()
		r := rs[min(n, len(rs)-1)]
		n++
		mu.Unlock()
		return r.fn(s, req)
	}}
	for _, r := range rs {
		if r.err != nil {
			out.err = r.err
		}
		out.unchecked = out.unchecked || r.unchecked
	}
	if len(rs) == 0 {
		out.err = fmt.Errorf("empty sequence")
	}
	return out
}

// Recorded answers with a real HTTP answer saved as a header dump (first line
// "HTTP/2 403", then "name: value" lines) plus a body file, such as the secondary
// rate-limit answer in fixtures/github/rate-limit. The recorded content-length is
// dropped: the body file's whitespace may differ from the wire.
func Recorded(headersPath, bodyPath string) Responder {
	status, header, err := readHeaderDump(headersPath)
	var body []byte
	if err == nil && bodyPath != "" {
		body, err = os.ReadFile(bodyPath)
	}
	return Responder{err: err, fn: func(*Stub, Request) Response {
		return Response{Status: status, Header: header.Clone(), Body: body}
	}}
}

func readHeaderDump(path string) (int, http.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, nil, fmt.Errorf("%s: empty header dump", path)
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "HTTP/") {
		return 0, nil, fmt.Errorf("%s:1: want a status line such as \"HTTP/2 403\"", path)
	}
	status, err := strconv.Atoi(fields[1])
	if err != nil {
		return 0, nil, fmt.Errorf("%s:1: status %q: %w", path, fields[1], err)
	}
	h := http.Header{}
	for line := 2; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" {
			continue
		}
		k, v, ok := strings.Cut(text, ":")
		if !ok {
			return 0, nil, fmt.Errorf("%s:%d: want \"name: value\"", path, line)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	dropWireHeaders(h)
	return status, h, sc.Err()
}

func dropWireHeaders(h http.Header) {
	for _, k := range []string{"Content-Length", "Transfer-Encoding", "Connection", "Content-Encoding"} {
		h.Del(k)
	}
}

// Interaction is one recorded request and answer of an octokit/fixtures scenario (the
// nock format: method, path, body, status, response, headers).
type Interaction struct {
	Method   string          `json:"method"`
	Path     string          `json:"path"`
	Body     json.RawMessage `json:"body"`
	Status   int             `json:"status"`
	Response json.RawMessage `json:"response"`
	Headers  map[string]any  `json:"headers"`
}

// OctokitScenario reads an octokit/fixtures normalized-fixture.json file.
func OctokitScenario(path string) ([]Interaction, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var its []Interaction
	if err := json.Unmarshal(b, &its); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range its {
		its[i].Method = strings.ToUpper(its[i].Method)
	}
	return its, nil
}

// Octokit answers with the index-th recorded answer of an octokit/fixtures scenario.
func Octokit(path string, index int) Responder {
	its, err := OctokitScenario(path)
	if err == nil && (index < 0 || index >= len(its)) {
		err = fmt.Errorf("%s has %d interactions, not %d", path, len(its), index+1)
	}
	if err != nil {
		return Responder{err: err}
	}
	it := its[index]
	h := http.Header{}
	for k, v := range it.Headers {
		h.Set(k, fmt.Sprint(v))
	}
	dropWireHeaders(h)
	body := []byte(it.Response)
	if len(body) > 0 && body[0] == '"' {
		// nock stores non-JSON bodies as strings.
		var s string
		if json.Unmarshal(body, &s) == nil {
			body = []byte(s)
		}
	}
	return Responder{fn: func(*Stub, Request) Response {
		return Response{Status: it.Status, Header: h.Clone(), Body: body}
	}}
}

// Payload returns a JSON object (a webhook payload) with dotted-key edits applied as
// Set does, re-encoded: the way tests vary a real payload without touching its file.
func Payload(raw []byte, edits map[string]any) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("want a JSON object: %w", err)
	}
	keys := make([]string, 0, len(edits))
	for k := range edits {
		keys = append(keys, k)
	}
	sort.Strings(keys) // parents before children
	for _, k := range keys {
		if err := Set(m, k, edits[k]); err != nil {
			return nil, err
		}
	}
	return json.Marshal(m)
}

// Object reads a JSON object fixture as a fresh generic map.
func Object(path string) (map[string]any, error) { return readObject(path) }

// Items reads a JSON array-of-objects fixture (such as a documented list answer) as
// fresh generic maps.
func Items(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, fmt.Errorf("%s: want a JSON array of objects: %w", path, err)
	}
	return items, nil
}

func readObject(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object: %w", path, err)
	}
	return m, nil
}

// Set assigns value at a dotted path in a generic JSON object, creating nothing: every
// step but the last must exist, so a typo in a key fails instead of adding a field.
// The last key may be new.
func Set(m map[string]any, dotted string, value any) error {
	keys := strings.Split(dotted, ".")
	cur := m
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return fmt.Errorf("override %q: %q is not an object in the fixture", dotted, k)
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = value
	return nil
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
					return fmt.Errorf("%s is present (%s), want it absent", k, short(val))
				}
				continue
			}
			if !ok {
				return fmt.Errorf("%s is missing", k)
			}
			if !jsonEqual(val, want) {
				return fmt.Errorf("%s = %s, want %s", k, short(val), short(want))
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
			return fmt.Errorf("%s, want %s", clip(req.Body), short(v))
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

func short(v any) string {
	b, _ := json.Marshal(v)
	return clip(bytes.TrimSpace(b))
}
