package fakegithub

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
)

// spec is GitHub's OpenAPI description of the REST API, read once per test binary.
type spec struct {
	doc    map[string]any
	routes []route
}

type route struct {
	template string
	segs     []string
	ops      map[string]any
}

var (
	specMu  sync.Mutex
	specVal *spec
)

// loadSpec reads the description once per test binary. A plain mutex rather than
// sync.Once: a missing fixture ends the test inside the load, and the next caller must
// try again rather than find a half-done Once.
func loadSpec(t TB) (*spec, error) {
	specMu.Lock()
	defer specMu.Unlock()
	if specVal != nil {
		return specVal, nil
	}
	path := testfix.Path(t, "github", "openapi", "api.github.com.2022-06.slice.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the REST description: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("decoding the REST description: %w", err)
	}
	sp := &spec{doc: doc}
	paths, _ := doc["paths"].(map[string]any)
	for tmpl, v := range paths {
		ops, _ := v.(map[string]any)
		sp.routes = append(sp.routes, route{template: tmpl, segs: strings.Split(strings.Trim(tmpl, "/"), "/"), ops: ops})
	}
	sort.Slice(sp.routes, func(i, j int) bool { return sp.routes[i].template < sp.routes[j].template })
	specVal = sp
	return sp, nil
}

// findRoute matches a concrete path to the description's path templates, preferring
// the template with the most literal segments. A template ending in a ref, path or branch
// parameter may take several segments, as {ref} does for "heads/feature/x".
func (sp *spec) findRoute(path string) (route, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	best, bestScore, found := route{}, -1, false
	for _, r := range sp.routes {
		score, ok := matchSegs(r.segs, segs)
		if ok && score > bestScore {
			best, bestScore, found = r, score, true
		}
	}
	return best, found
}

// slashParams are the path parameters whose values may hold slashes (branch and file
// names); clients send them with the slashes unescaped.
var slashParams = map[string]bool{"{ref}": true, "{path}": true, "{branch}": true}

func matchSegs(tmpl, segs []string) (int, bool) {
	literal := 0
	for i, t := range tmpl {
		isParam := strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}")
		if i >= len(segs) {
			return 0, false
		}
		if i == len(tmpl)-1 && isParam && len(segs) > len(tmpl) && slashParams[t] {
			return literal - 1, true // a tail match ranks below an exact one
		}
		if isParam {
			if segs[i] == "" {
				return 0, false
			}
			continue
		}
		if t != segs[i] {
			return 0, false
		}
		literal += 2
	}
	return literal, len(segs) == len(tmpl)
}

func (sp *spec) resolve(v any) map[string]any {
	m, _ := v.(map[string]any)
	for i := 0; i < 8 && m != nil; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = sp.doc
		for _, k := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			obj, _ := cur.(map[string]any)
			cur = obj[k]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

// response returns the documented answer of an operation for a status.
func (sp *spec) response(method, path string, status int) (op string, resp map[string]any, err error) {
	r, ok := sp.findRoute(path)
	if !ok {
		return "", nil, fmt.Errorf("%s %s is not an operation in GitHub's REST description", method, path)
	}
	o := sp.resolve(r.ops[strings.ToLower(method)])
	if o == nil {
		return "", nil, fmt.Errorf("%s %s: the REST description has no %s on %s", method, path, method, r.template)
	}
	op, _ = o["operationId"].(string)
	responses, _ := o["responses"].(map[string]any)
	resp = sp.resolve(responses[strconv.Itoa(status)])
	if resp == nil {
		var codes []string
		for c := range responses {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		return op, nil, fmt.Errorf("%s (%s %s) does not document status %d (documented: %s)", op, method, r.template, status, strings.Join(codes, ", "))
	}
	return op, resp, nil
}

func jsonContent(resp map[string]any) map[string]any {
	content, _ := resp["content"].(map[string]any)
	for _, k := range []string{"application/json", "application/vnd.github.v3+json"} {
		if c, ok := content[k].(map[string]any); ok {
			return c
		}
	}
	return nil
}

// checkAnswer validates a served 2xx JSON answer against the documented schema.
func checkAnswer(t TB, method, path string, status int, body []byte) error {
	sp, err := loadSpec(t)
	if err != nil {
		return err
	}
	op, resp, err := sp.response(method, path, status)
	if err != nil {
		return err
	}
	content := jsonContent(resp)
	if content == nil {
		return fmt.Errorf("%s documents status %d without a JSON body, but the fake sends one", op, status)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("the answer is not JSON: %w", err)
	}
	if err := sp.check(content["schema"], v, "$", 0); err != nil {
		return fmt.Errorf("%s, status %d: %w", op, status, err)
	}
	return nil
}

// check is a small JSON Schema (OpenAPI 3.0 subset) validator: $ref, allOf, oneOf,
// anyOf, type, nullable, required, properties, items, string enums, date-time format.
// It is strict on what GitHub clients rely on and lenient elsewhere.
func (sp *spec) check(schemaV any, v any, at string, depth int) error {
	schema := sp.resolve(schemaV)
	if schema == nil || depth > 64 {
		return nil
	}
	for _, sub := range list(schema["allOf"]) {
		if err := sp.check(sub, v, at, depth+1); err != nil {
			return err
		}
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts := list(schema[key])
		if len(alts) == 0 {
			continue
		}
		var first error
		matched := false
		for _, sub := range alts {
			err := sp.check(sub, v, at, depth+1)
			if err == nil {
				matched = true
				break
			}
			if first == nil {
				first = err
			}
		}
		if !matched {
			return fmt.Errorf("%s matches none of the %d %s alternatives (first: %v)", at, len(alts), key, first)
		}
	}
	typ, _ := schema["type"].(string)
	if v == nil {
		if typ == "" || schema["nullable"] == true {
			return nil
		}
		return fmt.Errorf("%s is null but the schema does not allow null", at)
	}
	switch typ {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is %s, want an object", at, kind(v))
		}
		return sp.checkObject(schema, m, at, depth)
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s is %s, want an array", at, kind(v))
		}
		for i, item := range a {
			if err := sp.check(schema["items"], item, fmt.Sprintf("%s[%d]", at, i), depth+1); err != nil {
				return err
			}
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s is %s, want a string", at, kind(v))
		}
		if enum := list(schema["enum"]); len(enum) > 0 && !contains(enum, s) {
			return fmt.Errorf("%s = %q is not one of %v", at, s, enum)
		}
		if schema["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				return fmt.Errorf("%s = %q is not an RFC 3339 date-time", at, s)
			}
		}
	case "integer":
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) {
			return fmt.Errorf("%s is %s, want an integer", at, kind(v))
		}
	case "number":
		if _, ok := v.(float64); !ok {
			return fmt.Errorf("%s is %s, want a number", at, kind(v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s is %s, want a boolean", at, kind(v))
		}
	case "":
		if m, ok := v.(map[string]any); ok && schema["properties"] != nil {
			return sp.checkObject(schema, m, at, depth)
		}
	}
	return nil
}

func (sp *spec) checkObject(schema map[string]any, m map[string]any, at string, depth int) error {
	for _, r := range list(schema["required"]) {
		k, _ := r.(string)
		if _, ok := m[k]; !ok {
			return fmt.Errorf("%s lacks the required key %q", at, k)
		}
	}
	props, _ := schema["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if val, ok := m[k]; ok {
			if err := sp.check(props[k], val, at+"."+k, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func list(v any) []any { a, _ := v.([]any); return a }

func contains(enum []any, s string) bool {
	for _, e := range enum {
		if e == s {
			return true
		}
	}
	return false
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

func exampleValue(t TB, name string) (any, error) {
	sp, err := loadSpec(t)
	if err != nil {
		return nil, err
	}
	examples, _ := sp.doc["components"].(map[string]any)["examples"].(map[string]any)
	ex, ok := examples[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the REST description has no example %q", name)
	}
	// Round-trip so callers may modify their copy.
	b, err := json.Marshal(ex["value"])
	if err != nil {
		return nil, err
	}
	var v any
	err = json.Unmarshal(b, &v)
	return v, err
}

// CheckDocumented fails the test unless the JSON file is one of the examples GitHub's
// REST description documents for the operation's answer with that status, and matches
// the answer's schema. path is a concrete or template API path, e.g.
// "/repos/{owner}/{repo}/issues/comments/{comment_id}".
func CheckDocumented(t TB, method, path string, status int, file string) {
	t.Helper()
	sp, err := loadSpec(t)
	if err != nil {
		t.Fatal(err)
	}
	op, resp, err := sp.response(method, path, status)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	content := jsonContent(resp)
	if content == nil {
		t.Fatalf("%s documents status %d without a JSON body", op, status)
	}
	examples, _ := content["examples"].(map[string]any)
	var names []string
	found := false
	for _, ex := range examples {
		ref, _ := ex.(map[string]any)["$ref"].(string)
		names = append(names, ref)
		if reflect.DeepEqual(sp.resolve(ex)["value"], got) {
			found = true
		}
	}
	if !found {
		sort.Strings(names)
		t.Errorf("%s is not an example documented for %s status %d (documented: %s)", file, op, status, strings.Join(names, ", "))
	}
	if err := sp.check(content["schema"], got, "$", 0); err != nil {
		t.Errorf("%s does not match the schema of %s status %d: %v", file, op, status, err)
	}
}
