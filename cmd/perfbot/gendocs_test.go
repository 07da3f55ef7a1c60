package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/testfix"
)

var update = flag.Bool("update", false, "rewrite the generated sections of README.md and docs/config.md")

// regenerate is the command that rewrites every generated section.
const regenerate = "go test ./cmd/perfbot -run TestGeneratedDocs -update"

// generatedDocs is what goes between the markers of each file, by block id: the
// command reference from the command registry, the configuration reference from
// config.Keys.
func generatedDocs(ctx context.Context) map[string]map[string]string {
	docs := map[string]map[string]string{
		"README.md": {
			"commands": helpMarkdown(ctx),
			"config":   config.KeyTable(config.Keys),
		},
		"docs/config.md": {},
	}
	byParent := map[string][]config.Key{}
	for _, k := range config.Keys {
		byParent[k.Parent()] = append(byParent[k.Parent()], k)
	}
	for parent, keys := range byParent {
		if parent == "" {
			parent = "top"
		}
		// Links in Keys are relative to the repository root; this page sits in docs/.
		docs["docs/config.md"]["config:"+parent] = strings.ReplaceAll(config.KeyTable(keys), "](docs/", "](")
	}
	return docs
}

// blockRE finds a generated section: `<!-- generated:ID -->` and `<!-- end -->`, each
// on a line of its own.
var blockRE = regexp.MustCompile(`(?ms)^<!-- generated:(\S+) -->\n(.*?)^<!-- end -->$`)

// splice puts the blocks between their markers. It reports a block without markers,
// markers without a block, a block marked twice and a begin marker without its end.
func splice(doc string, blocks map[string]string) (string, []string) {
	var problems []string
	seen := map[string]bool{}
	out := blockRE.ReplaceAllStringFunc(doc, func(m string) string {
		id := blockRE.FindStringSubmatch(m)[1]
		body, ok := blocks[id]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("<!-- generated:%s --> names no generated section (known: %s)", id, strings.Join(slices.Sorted(maps.Keys(blocks)), ", ")))
			return m
		case seen[id]:
			problems = append(problems, fmt.Sprintf("<!-- generated:%s --> is there twice", id))
			return m
		}
		seen[id] = true
		return "<!-- generated:" + id + " -->\n\n" + strings.TrimRight(body, "\n") + "\n\n<!-- end -->"
	})
	if n, m := strings.Count(doc, "<!-- generated:"), len(blockRE.FindAllString(doc, -1)); n != m {
		problems = append(problems, fmt.Sprintf("%d <!-- generated:ID --> markers but %d sections: a section lacks its <!-- end --> line", n, m))
	}
	for _, id := range slices.Sorted(maps.Keys(blocks)) {
		if !seen[id] {
			problems = append(problems, fmt.Sprintf("no generated section %s: put `<!-- generated:%s -->` and `<!-- end -->` lines where it belongs", id, id))
		}
	}
	return out, problems
}

// The generated sections of README.md and docs/config.md are what the command registry
// and config.Keys make of them now: a command, flag or key added, changed or removed
// fails here until the sections are regenerated.
func TestGeneratedDocs(t *testing.T) {
	root := testfix.RepoRoot(t)
	for file, blocks := range generatedDocs(t.Context()) {
		p := filepath.Join(root, filepath.FromSlash(file))
		old, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, problems := splice(string(old), blocks)
		for _, pr := range problems {
			t.Errorf("%s: %s", file, pr)
		}
		if got == string(old) {
			continue
		}
		if *update && len(problems) == 0 {
			if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: regenerated", file)
			continue
		}
		t.Errorf("%s: the generated sections are out of date; run\n\n    %s\n\nfirst difference:\n%s", file, regenerate, firstDiff(string(old), got))
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  now:  %q\n  want: %q", i+1, x, y)
		}
	}
	return ""
}

func TestSpliceFindsBrokenMarkers(t *testing.T) {
	t.Parallel()
	blocks := map[string]string{"a": "A\n", "b": "B"}
	for _, c := range []struct {
		name, doc, want, problem string
	}{
		{"both filled", "x\n<!-- generated:a -->\nold\n<!-- end -->\ny\n<!-- generated:b -->\n<!-- end -->\n",
			"x\n<!-- generated:a -->\n\nA\n\n<!-- end -->\ny\n<!-- generated:b -->\n\nB\n\n<!-- end -->\n", ""},
		{"a section missing", "<!-- generated:a -->\n<!-- end -->\n", "", "no generated section b"},
		{"an unknown id", "<!-- generated:a -->\n<!-- end -->\n<!-- generated:b -->\n<!-- end -->\n<!-- generated:c -->\n<!-- end -->\n", "", "generated:c --> names no generated section"},
		{"an end line missing", "<!-- generated:a -->\nold\n<!-- generated:b -->\n<!-- end -->\n", "", "lacks its <!-- end --> line"},
		{"a section twice", "<!-- generated:a -->\n<!-- end -->\n<!-- generated:b -->\n<!-- end -->\n<!-- generated:a -->\n<!-- end -->\n", "", "is there twice"},
	} {
		got, problems := splice(c.doc, blocks)
		all := strings.Join(problems, "\n")
		switch {
		case c.problem == "" && (len(problems) > 0 || got != c.want):
			t.Errorf("%s: got %q, problems %q; want %q", c.name, got, all, c.want)
		case c.problem != "" && !strings.Contains(all, c.problem):
			t.Errorf("%s: problems %q, want one with %q", c.name, all, c.problem)
		}
	}
}
