package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/testfix"
)

// repo is the repository as the checks see it: text files by slash path, and every path
// (files and folders) a link may name.
type repo struct {
	text  map[string][]byte
	paths map[string]bool
}

var (
	walkOnce sync.Once
	walked   repo
	walkErr  error
)

// readRepo returns the repository, walked once for all the tests.
func readRepo(t *testing.T) repo {
	t.Helper()
	root := testfix.RepoRoot(t)
	walkOnce.Do(func() { walked, walkErr = walkRepo(root) })
	if walkErr != nil {
		t.Fatal(walkErr)
	}
	return walked
}

// walkRepo walks the repository from its root. It skips .git and bench/out (ignored
// build output); binary files are kept as paths only.
func walkRepo(root string) (repo, error) {
	r := repo{text: map[string][]byte{}, paths: map[string]bool{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
			return nil
		case rel == ".git" && !d.IsDir():
			return nil // a worktree's pointer to its repository
		}
		if d.IsDir() {
			if rel == ".git" || rel == "bench/out" {
				return filepath.SkipDir
			}
			r.paths[rel] = true
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		r.paths[rel] = true
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Contains(data[:min(len(data), 8000)], []byte{0}) {
			r.text[rel] = data
		}
		return nil
	})
	if err != nil {
		return repo{}, fmt.Errorf("walking the repository: %w", err)
	}
	if len(r.text) < 100 || r.text["docs/formats.md"] == nil {
		return repo{}, fmt.Errorf("walked %d text files from %s: not the repository", len(r.text), root)
	}
	return r, nil
}

// thirdParty says whether a file holds other projects' bytes, kept verbatim: their words
// are not the repository's, so they are not held to its citation rules.
func thirdParty(file string) bool {
	return strings.HasPrefix(file, "testdata/real/") && file != "testdata/real/SOURCES.md"
}

// citeRE finds `<page>.md §N` and `<page>.md §N-§M`, the path optional, the section mark
// possibly on the next line of a comment or a paragraph.
var citeRE = regexp.MustCompile(`((?:[\w.-]+/)*)([\w.-]+)\.md(?:[ \t]+|[ \t]*\r?\n[ \t]*(?://+|#+|\*|>)?[ \t]*)§(\d+(?:\.\d+)*)(?:[ \t]*[-–][ \t]*§?(\d+(?:\.\d+)*))?`)

// citation is one `§` reference to a documentation page.
type citation struct {
	file     string // the citing file
	line     int
	text     string // as written
	page     string // the cited page's repo path; "" when it cannot be told
	from, to string // the section, or the ends of a range (to == from for one section)
}

// findCitations lists the citations in one file. A page named with a folder is taken
// from the repository root (docs/formats.md); a bare page name only inside docs/, where
// it is a sibling.
func findCitations(file string, src []byte) []citation {
	var out []citation
	for _, m := range citeRE.FindAllSubmatchIndex(src, -1) {
		c := citation{
			file: file,
			line: bytes.Count(src[:m[0]], []byte("\n")) + 1,
			text: strings.Join(strings.Fields(string(src[m[0]:m[1]])), " "),
			from: string(src[m[6]:m[7]]),
		}
		c.to = c.from
		if m[8] >= 0 {
			c.to = string(src[m[8]:m[9]])
		}
		dir, page := string(src[m[2]:m[3]]), string(src[m[4]:m[5]])+".md"
		switch {
		case dir != "":
			c.page = path.Clean(dir + page)
		case path.Dir(file) == "docs":
			c.page = "docs/" + page
		}
		out = append(out, c)
	}
	return out
}

// headingRE reads a numbered heading's text: `3. Title` or `1.3 Title`.
var headingRE = regexp.MustCompile(`^(\d+(?:\.\d+)*)\.?\s+\S`)

// sections returns the numbered headings of a Markdown page in order, with the problems
// that would make a citation ambiguous: a number used twice, a subsection whose section
// is missing.
func sections(md []byte) (nums []string, problems []string) {
	doc := goldmark.New().Parser().Parse(text.NewReader(md))
	seen := map[string]bool{}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok || h.Lines().Len() == 0 {
			continue
		}
		seg := h.Lines().At(0)
		m := headingRE.FindSubmatch(seg.Value(md))
		if m == nil {
			continue
		}
		num := string(m[1])
		if seen[num] {
			problems = append(problems, fmt.Sprintf("section %s is numbered twice", num))
		}
		if i := strings.LastIndexByte(num, '.'); i > 0 && !seen[num[:i]] {
			problems = append(problems, fmt.Sprintf("section %s comes without a section %s before it", num, num[:i]))
		}
		seen[num] = true
		nums = append(nums, num)
	}
	return nums, problems
}

// checkCitations resolves every citation in files (repo path -> content) against the
// numbered headings of the pages in files, and returns what does not resolve.
func checkCitations(files map[string][]byte) []string {
	var problems []string
	pages := map[string]map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if thirdParty(name) {
			continue
		}
		for _, c := range findCitations(name, files[name]) {
			where := fmt.Sprintf("%s:%d: %q", c.file, c.line, c.text)
			if c.page == "" {
				problems = append(problems, where+": name the page by its path from the repository root (docs/<page>.md), so a reader can find it")
				continue
			}
			secs, ok := pages[c.page]
			if !ok {
				src, found := files[c.page]
				if found {
					nums, _ := sections(src)
					secs = map[string]bool{}
					for _, n := range nums {
						secs[n] = true
					}
				}
				pages[c.page] = secs
			}
			if secs == nil {
				problems = append(problems, fmt.Sprintf("%s: %s does not exist", where, c.page))
				continue
			}
			if backwards(c.from, c.to) {
				problems = append(problems, fmt.Sprintf("%s: the range runs backwards", where))
				continue
			}
			for _, want := range span(c.from, c.to) {
				if !secs[want] {
					problems = append(problems, fmt.Sprintf("%s: %s has no section %s (no heading numbered %s)", where, c.page, want, want))
				}
			}
		}
	}
	return problems
}

// span lists the sections a range cites: every whole number from..to when both are
// whole numbers, else the two ends.
func span(from, to string) []string {
	a, errA := strconv.Atoi(from)
	b, errB := strconv.Atoi(to)
	switch {
	case errA == nil && errB == nil:
		var out []string
		for i := a; i <= b; i++ {
			out = append(out, strconv.Itoa(i))
		}
		return out
	case from == to:
		return []string{from}
	}
	return []string{from, to}
}

// backwards says whether a range ends before it starts (§4-§2, §2.1-§1.3).
func backwards(from, to string) bool {
	a, b := strings.Split(from, "."), strings.Split(to, ".")
	for i := range min(len(a), len(b)) {
		x, _ := strconv.Atoi(a[i])
		y, _ := strconv.Atoi(b[i])
		if x != y {
			return x > y
		}
	}
	return len(a) > len(b)
}

// notesRE matches a reference to the working notes the repository does not carry: the
// five note files by name, or a path into the folder beside a checkout.
var notesRE = regexp.MustCompile(`\b(` + strings.Join([]string{"FORMATS", "ANALYSIS", "GITHUB", "PRODUCT", "STYLE"}, "|") +
	`)(\.md\b|[ \t]+§)|\.\./shared\b|\bshared/(fixtures|spec)\b`)

// outsideRefs returns the lines of files that point outside the repository.
func outsideRefs(files map[string][]byte) []string {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if thirdParty(name) {
			continue
		}
		src := files[name]
		for _, m := range notesRE.FindAllIndex(src, -1) {
			line := bytes.Count(src[:m[0]], []byte("\n")) + 1
			problems = append(problems, fmt.Sprintf("%s:%d: %q points outside the repository: cite docs/formats.md, docs/analysis.md or another page under docs/ instead", name, line, src[m[0]:m[1]]))
		}
	}
	return problems
}

// checkLinks validates a page with the publisher's own Markdown check: every relative
// link must name a path in paths, and tables and sections must be well formed.
func checkLinks(page string, md []byte, paths map[string]bool) error {
	return report.Validate(string(md), paths, page)
}

// pages are README.md and every Markdown page under docs/.
func pages(r repo) []string {
	out := []string{"README.md"}
	for name := range r.text {
		if path.Dir(name) == "docs" && strings.HasSuffix(name, ".md") {
			out = append(out, name)
		}
	}
	slices.Sort(out[1:])
	return out
}

func TestEveryCitationResolves(t *testing.T) {
	t.Parallel()
	r := readRepo(t)
	for _, p := range checkCitations(r.text) {
		t.Error(p)
	}
	// The citations the code relies on most must be among those found: a scanner that
	// finds nothing would pass the check above.
	var n int
	for name, src := range r.text {
		if strings.HasSuffix(name, ".go") {
			n += len(findCitations(name, src))
		}
	}
	if n < 30 {
		t.Errorf("found %d citations in Go files, want at least 30: is the scanner broken?", n)
	}
}

func TestDocPagesAreNumberedAsCited(t *testing.T) {
	t.Parallel()
	r := readRepo(t)
	for page, want := range map[string][]string{
		"docs/formats.md":  {"1", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "2", "3", "4", "5", "6", "7"},
		"docs/analysis.md": {"1", "2", "2.1", "3", "4", "5", "6", "7", "8"},
	} {
		got, problems := sections(r.text[page])
		if !slices.Equal(got, want) {
			t.Errorf("%s: numbered sections %v, want %v", page, got, want)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", page, p)
		}
	}
	for _, page := range pages(r) {
		if _, problems := sections(r.text[page]); len(problems) > 0 {
			t.Errorf("%s: %s", page, strings.Join(problems, "; "))
		}
	}
}

func TestLinksInTheDocsPointToFiles(t *testing.T) {
	t.Parallel()
	r := readRepo(t)
	for _, page := range pages(r) {
		if err := checkLinks(page, r.text[page], r.paths); err != nil {
			t.Errorf("%s: %v", page, err)
		}
	}
}

func TestReadmeListsEveryPage(t *testing.T) {
	t.Parallel()
	r := readRepo(t)
	readme := string(r.text["README.md"])
	for _, page := range pages(r)[1:] {
		if !strings.Contains(readme, "]("+page+")") {
			t.Errorf("README.md does not link %s: add a row to its Documentation table", page)
		}
	}
}

func TestNothingPointsOutsideTheRepository(t *testing.T) {
	t.Parallel()
	for _, p := range outsideRefs(readRepo(t).text) {
		t.Error(p)
	}
}

// The figures analysis.md §3 quotes for the two real runs are the ones their summaries
// hold, so the page cannot drift from the data the analysis tests reproduce.
func TestAnalysisQuotesTheRealSummaries(t *testing.T) {
	t.Parallel()
	r := readRepo(t)
	var runs []map[string]json.Number
	for _, run := range []string{"Meta-Llama-3.1-8B-Instruct-4bit_greedy", "Qwen3-30B-A3B-4bit_greedy"} {
		runs = append(runs, summaryNumbers(t, testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", run+"_summary.json")))
	}
	rows := 0
	inTable := false
	for i, line := range strings.Split(string(r.text["docs/analysis.md"]), "\n") {
		if strings.HasPrefix(line, "| summary key |") {
			inTable = true
			continue
		}
		if !inTable || strings.HasPrefix(line, "| ---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) != 1+len(runs) {
			t.Errorf("docs/analysis.md:%d: %d cells, want %d", i+1, len(cells), 1+len(runs))
			continue
		}
		key := strings.Trim(strings.TrimSpace(cells[0]), "`")
		for j, run := range runs {
			want, ok := run[key]
			if got := strings.TrimSpace(cells[j+1]); !ok || got != want.String() {
				t.Errorf("docs/analysis.md:%d: %s = %s, the summary holds %q (present %v)", i+1, key, got, want, ok)
			}
		}
		rows++
	}
	if rows < 10 {
		t.Errorf("found %d rows of the summary table in docs/analysis.md, want at least 10", rows)
	}
}

// summaryNumbers returns the numbers of a summary as the file writes them, its checks
// included.
func summaryNumbers(t *testing.T, file string) map[string]json.Number {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string]json.Number{}
	for _, m := range []any{top, top["checks"]} {
		obj, _ := m.(map[string]any)
		for k, v := range obj {
			if n, ok := v.(json.Number); ok {
				out[k] = n
			}
		}
	}
	return out
}

// The checks above must be able to fail: each is run on a small repository with one
// mistake of the kind it exists to catch.
func TestTheChecksCatchDrift(t *testing.T) {
	t.Parallel()
	const page = "# A page\n\n## 1. One\n\ntext\n\n### 1.1 One one\n\ntext\n\n## 2. Two\n\ntext\n\n## 4. Four\n\ntext\n"
	mark := "§" // kept apart from ".md" so that this file holds no citation of its own
	cite := func(s string) string { return strings.ReplaceAll(s, "@", mark) }
	cases := []struct {
		name string
		file string
		src  string
		want string // a substring of the one problem; "" for none
	}{
		{"a section that exists", "x.go", cite("// see docs/page.md @1.1"), ""},
		{"a range that exists", "x.go", cite("// docs/page.md @1-@2 hold it"), ""},
		{"a citation carried over a comment line", "x.go", cite("// the format (docs/page.md\n// @2): ..."), ""},
		{"a bare page inside docs", "docs/other.md", cite("as page.md\n@4. says"), ""},
		{"a missing section", "x.go", cite("// docs/page.md @3"), "docs/page.md has no section 3"},
		{"a missing subsection", "x.go", cite("// docs/page.md @1.2"), "has no section 1.2"},
		{"a range over a missing section", "x.go", cite("// docs/page.md @2-@4"), "has no section 3"},
		{"a backwards range", "x.go", cite("// docs/page.md @4-@2"), "the range runs backwards"},
		{"a backwards range of subsections", "x.go", cite("// docs/page.md @2-@1.1"), "the range runs backwards"},
		{"a missing page", "x.sh", cite("# docs/nopage.md @1"), "docs/nopage.md does not exist"},
		{"a bare page outside docs", "runner/x.go", cite("// page.md @1"), "name the page by its path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := checkCitations(map[string][]byte{"docs/page.md": []byte(page), c.file: []byte(c.src)})
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("problems %q, want none", got)
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
				t.Errorf("problems %q, want one with %q", got, c.want)
			}
		})
	}

	t.Run("sections numbered twice or without their parent", func(t *testing.T) {
		t.Parallel()
		_, problems := sections([]byte("## 1. A\n\nx\n\n## 1. B\n\nx\n\n### 3.1 C\n\nx\n\n```\n## 9. in a code block\n```\n"))
		want := []string{"section 1 is numbered twice", "section 3.1 comes without a section 3 before it"}
		if !slices.Equal(problems, want) {
			t.Errorf("problems %q, want %q", problems, want)
		}
	})

	t.Run("references outside the repository", func(t *testing.T) {
		t.Parallel()
		files := map[string][]byte{
			"a.go":                            []byte("// the layout of " + "FORMATS" + ".md, and\n// ANALYSIS" + " " + mark + "3"),
			"b.md":                            []byte("data in .." + "/shared" + "/" + "fixtures"),
			"c.md":                            []byte("docs/github.md and GITHUB_TOKEN are fine"),
			"testdata/real/x/verbatim.json":   []byte("../" + "shared"),
			"testdata/real/SOURCES.md":        []byte("copied from the " + "shared/" + "fixtures folder"),
			"runner/x/notes_are_not_cited.go": []byte("// PRODUCT" + ".md\n"),
		}
		got := outsideRefs(files)
		if len(got) != 5 || !strings.HasPrefix(got[0], "a.go:1:") || !strings.HasPrefix(got[1], "a.go:2:") ||
			!strings.HasPrefix(got[2], "b.md:1:") || !strings.HasPrefix(got[3], "runner/x/notes_are_not_cited.go:1:") ||
			!strings.HasPrefix(got[4], "testdata/real/SOURCES.md:1:") {
			t.Errorf("problems:\n%s", strings.Join(got, "\n"))
		}
	})

	t.Run("links to files that are not there", func(t *testing.T) {
		t.Parallel()
		paths := map[string]bool{"docs": true, "docs/a.md": true, "README.md": true, "runner": true}
		for _, c := range []struct {
			page, md string
			ok       bool
		}{
			{"docs/b.md", "See [a](a.md), [the readme](../README.md#top), [runner](../runner) and [x](https://example.com/x.md).\n", true},
			{"README.md", "See [a](docs/a.md).\n", true},
			{"docs/b.md", "See [c](c.md).\n", false},
			{"README.md", "See [a](a.md).\n", false},
			{"docs/b.md", "See [up](../../outside.md).\n", false},
		} {
			if err := checkLinks(c.page, []byte(c.md), paths); (err == nil) != c.ok {
				t.Errorf("%s: %q: error %v, want ok=%v", c.page, c.md, err, c.ok)
			}
		}
	})
}
