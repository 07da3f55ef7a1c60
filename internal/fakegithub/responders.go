package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
)

// Response is what an expectation answers.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Responder builds the answer to an expected call. Construction errors (a missing
// fixture, bad JSON) surface when the expectation is declared.
type Responder struct {
	fn        func(s *Server, req Request) Response
	err       error
	unchecked bool
}

// Func answers with whatever fn returns.
func Func(fn func(req Request) Response) Responder {
	return Responder{fn: func(_ *Server, req Request) Response { return fn(req) }}
}

// Status answers with an empty body, e.g. 204 or a bare 502.
func Status(status int) Responder {
	return Responder{fn: func(*Server, Request) Response { return Response{Status: status, Header: http.Header{}} }}
}

// JSON answers with v encoded as JSON.
func JSON(status int, v any) Responder {
	b, err := json.Marshal(v)
	return Responder{err: err, fn: func(*Server, Request) Response {
		return Response{Status: status, Header: http.Header{}, Body: b}
	}}
}

// JSONFile answers with a JSON fixture file as it is.
func JSONFile(status int, path string) Responder {
	b, err := os.ReadFile(path)
	if err == nil && !json.Valid(b) {
		err = fmt.Errorf("%s is not valid JSON", path)
	}
	return Responder{err: err, fn: func(*Server, Request) Response {
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
func (s *Server) Example(status int, name string, overrides map[string]any) Responder {
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
	r.fn = func(s *Server, req Request) Response {
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
	out := Responder{fn: func(s *Server, req Request) Response {
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
