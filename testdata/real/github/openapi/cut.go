//go:build ignore

// cut writes the slice of GitHub's 2022-06 OpenAPI description that perfbot's fake
// GitHub (internal/fakegithub) checks answers against: the operations of the path
// templates matched below, and every component they reference, transitively. Run from
// the repository root:
//
//	go run testdata/real/github/openapi/cut.go FULL.json > testdata/real/github/openapi/api.github.com.2022-06.slice.json
//
// FULL.json is octokit/openapi cache/api.github.com.json (see ../../SOURCES.md). Values
// are kept as they are; only the set of paths and components is cut. Add a pattern when
// the fake must answer an endpoint outside them, and run it again.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

var keep = regexp.MustCompile(`^(` + strings.Join([]string{
	`/app`,
	`/app/hook/deliveries(/\{delivery_id\}(/attempts)?)?`,
	`/app/installations(/\{installation_id\}(/access_tokens)?)?`,
	`/rate_limit`,
	`/user`,
	`/users/\{username\}`,
	`/installation/repositories`,
	`/repos/\{owner\}/\{repo\}`,
	`/repos/\{owner\}/\{repo\}/installation`,
	`/repos/\{owner\}/\{repo\}/(issues|pulls|check-runs|check-suites|git|collaborators|branches|commits|contents|compare)(/.*)?`,
	`/repos/\{owner\}/\{repo\}/actions/(workflows|runs)(/.*)?`,
}, "|") + `)$`)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run cut.go FULL.json > SLICE.json")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	paths := map[string]any{}
	for p, v := range doc["paths"].(map[string]any) {
		if keep.MatchString(p) {
			paths[p] = v
		}
	}
	comps := doc["components"].(map[string]any)
	out := map[string]map[string]any{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
				if len(parts) == 2 {
					kind, name := parts[0], parts[1]
					if out[kind] == nil {
						out[kind] = map[string]any{}
					}
					if _, seen := out[kind][name]; !seen {
						c := comps[kind].(map[string]any)[name]
						out[kind][name] = c
						walk(c)
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(paths)
	slice := map[string]any{"openapi": doc["openapi"], "info": doc["info"], "servers": doc["servers"], "paths": paths, "components": out}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(slice); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
