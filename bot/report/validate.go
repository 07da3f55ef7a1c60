package report

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/lablup/perfbot/internal/strs"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Validate parses a rendered document back with goldmark (GitHub Flavored Markdown) and
// checks what a broken rendering would get wrong: every table row has as many cells as
// its header and every table has rows, no line that starts with `|` fell out of a
// table, no section is empty (a heading followed by nothing, or by a heading of the
// same or a higher level), and every link into the repository names a file in
// committed (repo-relative paths).
//
// base says where links resolve from: for a document committed to the repository, its
// repo-relative path (docs/benchmark_results/page.md; "" for the root); for a document
// shown on GitHub (a pull request body, a comment), the URL its repo links start with,
// e.g. https://github.com/o/r/blob/<sha>/. Links elsewhere are not checked.
func Validate(md string, committed map[string]bool, base string) error {
	src := []byte(md)
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	v := &validator{src: src, committed: committed}
	if err := v.setBase(base); err != nil {
		return err
	}
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *east.Table:
			v.table(n)
		case *ast.Paragraph:
			v.paragraph(n)
		case *ast.Link:
			v.link(string(n.Destination))
		case *ast.Image:
			v.link(string(n.Destination))
		case *ast.AutoLink:
			v.link(string(n.URL(src)))
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		return fmt.Errorf("walking the document: %w", err)
	}
	v.sections(doc)
	if len(v.errs) > 0 {
		return &InvalidError{Problems: v.errs}
	}
	return nil
}

// InvalidError lists every problem Validate found.
type InvalidError struct {
	Problems []string
}

func (e *InvalidError) Error() string {
	return "the rendered document is not valid Markdown for publishing:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// ErrInvalid matches (errors.Is) every InvalidError.
var ErrInvalid = errors.New("invalid document")

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

type validator struct {
	src       []byte
	committed map[string]bool
	// Exactly one of these is set: a document path in the repo, or a URL root.
	docDir  string
	rootURL *url.URL
	errs    []string
}

func (v *validator) setBase(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("validating: base %q is neither a repo path nor a URL: %w", base, err)
	}
	if u.Scheme != "" {
		if !strings.HasSuffix(u.Path, "/") {
			return fmt.Errorf("validating: base URL %q must end with / (the repository root its links start with)", base)
		}
		v.rootURL = u
		return nil
	}
	v.docDir = path.Dir(strings.TrimPrefix(base, "/"))
	return nil
}

func (v *validator) addf(format string, a ...any) {
	v.errs = append(v.errs, fmt.Sprintf(format, a...))
}

// lineOf returns the 1-based line number of a byte offset and that line's text.
func (v *validator) lineOf(pos int) (int, string) {
	pos = max(0, min(pos, len(v.src)))
	n := bytes.Count(v.src[:pos], []byte("\n")) + 1
	start := bytes.LastIndexByte(v.src[:pos], '\n') + 1
	end := bytes.IndexByte(v.src[start:], '\n')
	if end < 0 {
		end = len(v.src) - start
	}
	return n, string(v.src[start : start+end])
}

func (v *validator) table(t *east.Table) {
	want := len(t.Alignments)
	rows := 0
	for c := t.FirstChild(); c != nil; c = c.NextSibling() {
		row, ok := c.(*east.TableRow)
		if !ok {
			continue
		}
		rows++
		n, line := v.lineOf(row.Pos())
		if got := countCells(line); got != want {
			v.addf("line %d: a table row has %d cells, its header %d: %s", n, got, want, clip(line))
		}
	}
	if rows == 0 {
		n, line := v.lineOf(t.Pos())
		v.addf("line %d: a table has a header but no rows: %s", n, clip(line))
	}
}

// countCells counts a row's cells the way GFM splits them: an optional leading and
// trailing pipe, then every pipe not escaped with a backslash.
func countCells(line string) int {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	if line == "" {
		return 0
	}
	cells := 1
	for i := 0; i < len(line); i++ {
		if line[i] == '|' && (i == 0 || line[i-1] != '\\') {
			cells++
		}
	}
	return cells
}

// paragraph flags lines that look like table rows but are not in a table: a header
// whose cell count does not match its delimiter row, or rows after a break.
func (v *validator) paragraph(p *ast.Paragraph) {
	lines := p.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		if l := strings.TrimSpace(string(seg.Value(v.src))); strings.HasPrefix(l, "|") {
			n, line := v.lineOf(seg.Start)
			v.addf("line %d: a table line is not part of a table (a broken header or a row cut off): %s", n, clip(line))
		}
	}
}

func (v *validator) link(dest string) {
	if dest == "" {
		v.addf("a link has no target")
		return
	}
	if strings.HasPrefix(dest, "#") {
		return
	}
	u, err := url.Parse(dest)
	if err != nil {
		v.addf("link %q is not a valid URL: %v", clip(dest), err)
		return
	}
	var rel string
	switch {
	case v.rootURL != nil:
		abs := v.rootURL.ResolveReference(u)
		root := v.rootURL.String()
		abs.RawQuery, abs.Fragment = "", ""
		s := abs.String()
		if !strings.HasPrefix(s, root) {
			return
		}
		p, err := url.PathUnescape(strings.TrimPrefix(s, root))
		if err != nil {
			v.addf("link %q has a bad escape: %v", clip(dest), err)
			return
		}
		rel = p
	case u.Scheme != "" || u.Host != "":
		return
	case strings.HasPrefix(u.Path, "/"):
		rel = strings.TrimPrefix(u.Path, "/")
	default:
		rel = path.Join(v.docDir, u.Path)
	}
	rel = path.Clean(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		v.addf("link %q leaves the repository", clip(dest))
		return
	}
	if !v.committed[rel] {
		v.addf("link %q points to %s, which is not in the commit", clip(dest), rel)
	}
}

// sections flags headings with nothing under them before the next heading of the same
// or a higher level, or the end. Hidden HTML comments are not content.
func (v *validator) sections(doc ast.Node) {
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		h, ok := c.(*ast.Heading)
		if !ok {
			continue
		}
		empty := true
		for n := c.NextSibling(); n != nil; n = n.NextSibling() {
			if next, ok := n.(*ast.Heading); ok {
				empty = next.Level <= h.Level
				break
			}
			if v.hidden(n) {
				continue
			}
			empty = false
			break
		}
		if empty {
			pos := h.Pos() // a heading without text has no lines
			if h.Lines().Len() > 0 {
				pos = h.Lines().At(0).Start
			}
			n, line := v.lineOf(pos)
			v.addf("line %d: section %q is empty", n, clip(strings.TrimLeft(strings.TrimSpace(line), "# ")))
		}
	}
}

// hidden reports an HTML block that holds only comments.
func (v *validator) hidden(n ast.Node) bool {
	hb, ok := n.(*ast.HTMLBlock)
	if !ok {
		return false
	}
	var b strings.Builder
	lines := hb.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(v.src))
	}
	if hb.HasClosure() {
		b.Write(hb.ClosureLine.Value(v.src))
	}
	s := strings.TrimSpace(b.String())
	for s != "" {
		if !strings.HasPrefix(s, "<!--") {
			return false
		}
		end := strings.Index(s, "-->")
		if end < 0 {
			return false
		}
		s = strings.TrimSpace(s[end+3:])
	}
	return true
}

// clip shortens text quoted in an error to 120 characters.
func clip(s string) string { return strs.ClipRunes(s, 120, "...") }
