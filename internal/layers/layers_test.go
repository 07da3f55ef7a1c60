package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/lablup/perfbot"

// rule says that the packages from (but except) never depend on the packages never,
// directly or through other packages of the module. A pattern "x/..." is x and every
// package below it; "..." is every package. Names are relative to the module.
type rule struct {
	name   string
	from   []string
	except []string
	never  []string
	tests  bool // the test files of the from packages count too
}

var (
	jobs       = []string{"runner/job", "runner/guard", "runner/proc", "runner/sandbox"}
	aboveInner = []string{"bot/...", "runner/...", "cmd/...", "action"}
)

// rules are the layering rules the code meets; TestLayers checks every one.
var rules = []rule{
	{
		name:  "the runner never depends on the bot",
		from:  []string{"runner/..."},
		never: []string{"bot/..."},
		tests: true,
	},
	{
		name:   "internal helpers stay below bot, runner, cmd and action",
		from:   []string{"internal/..."},
		except: []string{"internal/demo", "internal/synthtest"},
		never:  aboveInner,
	},
	{
		name:  "internal/synthtest sits on the runner, below the bot",
		from:  []string{"internal/synthtest"},
		never: []string{"bot/...", "cmd/...", "action"},
	},
	{
		name:  "the format packages do not run jobs",
		from:  []string{"runner/results", "runner/benchcsv", "runner/benchlog", "config"},
		never: jobs,
		tests: true,
	},
	{
		name:  "bot/report renders: it does not run jobs, start processes or apply patches",
		from:  []string{"bot/report"},
		never: append(append([]string{}, jobs...), "runner/patch"),
	},
	{
		name:  "publishing and the artifact intake read results: they do not run jobs",
		from:  []string{"bot/publish", "bot/intake"},
		never: []string{"runner/job", "runner/guard"},
	},
	{
		name:  "bot/publish and bot/intake do not start processes (runner/proc, runner/sandbox, runner/patch/patchrun)",
		from:  []string{"bot/publish", "bot/intake"},
		never: []string{"runner/proc", "runner/sandbox", "runner/patch/patchrun"},
	},
	{
		name:   "nothing but cmd/perfbot imports cmd/... or internal/demo",
		from:   []string{"..."},
		except: []string{"cmd/perfbot"},
		never:  []string{"cmd/...", "internal/demo"},
		tests:  true,
	},
}

// pending are rules the code does not meet yet. They are not run: each moves into
// rules once the code meets it. There are none at present.
var pending = []rule{}

// pkg is a package as go list describes it.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// graph maps each package of the module (relative name) to what it imports of the
// module: imports for its code, tests for its test files.
type graph map[string]struct{ imports, tests []string }

// load lists the module's packages with one go list, offline.
func load(t *testing.T) graph {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", module+"/...")
	// Never the network: every module is in go.sum and the module cache already.
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	return parse(t, out)
}

func parse(t *testing.T, out []byte) graph {
	t.Helper()
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		if p.Error != nil {
			t.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	rel := func(path string) (string, bool) {
		r, ok := strings.CutPrefix(path, module+"/")
		return r, ok
	}
	g := graph{}
	for _, p := range pkgs {
		name, ok := rel(p.ImportPath)
		if !ok {
			t.Fatalf("go list named %s, outside %s", p.ImportPath, module)
		}
		e := g[name]
		for _, i := range p.Imports {
			if r, ok := rel(i); ok {
				e.imports = append(e.imports, r)
			}
		}
		for _, i := range slices.Concat(p.TestImports, p.XTestImports) {
			if r, ok := rel(i); ok && r != name && !slices.Contains(e.tests, r) {
				e.tests = append(e.tests, r)
			}
		}
		g[name] = e
	}
	if len(g) == 0 {
		t.Fatal("go list found no packages")
	}
	return g
}

func match(pattern, name string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return name == base || strings.HasPrefix(name, base+"/")
	}
	return name == pattern
}

func matchAny(patterns []string, name string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return match(p, name) })
}

// check returns one line per package of r.from that breaks r: the shortest chain of
// imports from it to a package of r.never.
func check(g graph, r rule) []string {
	var bad []string
	for _, name := range slices.Sorted(maps.Keys(g)) {
		if !matchAny(r.from, name) || matchAny(r.except, name) {
			continue
		}
		first := g[name].imports
		if r.tests {
			first = slices.Concat(first, g[name].tests)
		}
		// Breadth first, so the chain shown is a shortest one.
		parent := map[string]string{}
		queue := []string{}
		for _, i := range first {
			if _, seen := parent[i]; !seen && i != name {
				parent[i] = name
				queue = append(queue, i)
			}
		}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			if matchAny(r.never, cur) {
				chain := []string{cur}
				for p := parent[cur]; ; p = parent[p] {
					chain = append(chain, p)
					if p == name {
						break
					}
				}
				slices.Reverse(chain)
				bad = append(bad, strings.Join(chain, " -> "))
				break
			}
			for _, i := range g[cur].imports {
				if _, seen := parent[i]; !seen && i != name {
					parent[i] = cur
					queue = append(queue, i)
				}
			}
		}
	}
	return bad
}

func describe(r rule) string {
	s := strings.Join(r.from, ", ")
	if len(r.except) > 0 {
		s += " (except " + strings.Join(r.except, ", ") + ")"
	}
	s += " must not import " + strings.Join(r.never, ", ")
	if r.tests {
		s += ", test files included"
	}
	return s
}

// TestLayers checks every rule against the module as it is.
func TestLayers(t *testing.T) {
	g := load(t)
	for _, r := range rules {
		// A pattern that matches nothing (a package renamed) would make a rule check
		// nothing.
		for _, p := range slices.Concat(r.from, r.except, r.never) {
			if !slices.ContainsFunc(slices.Collect(maps.Keys(g)), func(n string) bool { return match(p, n) }) {
				t.Errorf("rule %q: %s names no package of the module", r.name, p)
			}
		}
		for _, chain := range check(g, r) {
			t.Errorf("layering rule %q (%s) is broken: %s", r.name, describe(r), chain)
		}
	}
}

// TestCheckNamesTheChain: on a made-up module, a rule broken through other packages
// is reported with its shortest chain, exceptions and test files as the rule says.
func TestCheckNamesTheChain(t *testing.T) {
	out := []byte(`{"ImportPath": "` + module + `/runner/job", "Imports": ["fmt", "` + module + `/config"]}
{"ImportPath": "` + module + `/config", "Imports": ["` + module + `/internal/x", "` + module + `/internal/y"]}
{"ImportPath": "` + module + `/internal/x", "Imports": ["` + module + `/bot/gh"]}
{"ImportPath": "` + module + `/internal/y", "Imports": ["` + module + `/internal/x"]}
{"ImportPath": "` + module + `/internal/fake", "TestImports": ["` + module + `/bot/gh"]}
{"ImportPath": "` + module + `/runner/rank", "XTestImports": ["` + module + `/runner/rank", "` + module + `/internal/fake"]}
{"ImportPath": "` + module + `/bot/gh"}
`)
	g := parse(t, out)
	for _, c := range []struct {
		r    rule
		want []string
	}{
		{rule{from: []string{"runner/..."}, never: []string{"bot/..."}},
			[]string{"runner/job -> config -> internal/x -> bot/gh"}},
		{rule{from: []string{"internal/..."}, never: []string{"bot/..."}},
			[]string{"internal/x -> bot/gh", "internal/y -> internal/x -> bot/gh"}},
		{rule{from: []string{"internal/..."}, except: []string{"internal/x"}, never: []string{"bot/..."}},
			[]string{"internal/y -> internal/x -> bot/gh"}},
		{rule{from: []string{"internal/..."}, never: []string{"bot/..."}, tests: true},
			[]string{"internal/fake -> bot/gh", "internal/x -> bot/gh", "internal/y -> internal/x -> bot/gh"}},
		// A test file's import counts from the package itself, not from what it imports.
		{rule{from: []string{"runner/rank"}, never: []string{"bot/..."}, tests: true}, nil},
		{rule{from: []string{"..."}, except: []string{"runner/job"}, never: []string{"runner/..."}}, nil},
	} {
		if got := check(g, c.r); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", describe(c.r), got, c.want)
		}
	}
}

// docs/architecture.md gives every package outside internal/ and bench/ its one job in
// a table row, so a new package cannot land without a place on the map.
func TestArchitecturePageNamesEveryPackage(t *testing.T) {
	g := load(t)
	page, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range g {
		if strings.HasPrefix(name, "internal/") || strings.HasPrefix(name, "bench/") || name == "bot" || name == "runner" || name == "docs" || name == "examples" {
			continue
		}
		if !strings.Contains(string(page), "| `"+name+"` |") {
			t.Errorf("docs/architecture.md has no row for %s: add its one job to the table", name)
		}
	}
}
