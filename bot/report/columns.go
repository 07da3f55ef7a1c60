package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// leadingNumber is the number a table cell starts with ("37.08 (plain)", "-4.1%").
var leadingNumber = regexp.MustCompile(`^[-+]?\d+(?:\.(\d+))?(?:[^\d.]|$)`)

// MixedPrecision lists the table columns of a rendered document whose numbers are
// printed with different numbers of decimals (1.685 beside 3.4252): each column of
// figures must hold one precision. A cell is read by the number it starts with; cells
// that do not start with one ("—", "unknown") are skipped.
func MixedPrecision(md string) []string {
	src := []byte(md)
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	var out []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		t, ok := n.(*east.Table)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		var head []string
		seen := map[int]map[int]string{} // column -> decimals -> first cell
		for r := t.FirstChild(); r != nil; r = r.NextSibling() {
			col := 0
			for c := r.FirstChild(); c != nil; c = c.NextSibling() {
				cell := strings.TrimSpace(cellText(c, src))
				if _, isHead := r.(*east.TableHeader); isHead {
					head = append(head, cell)
					col++
					continue
				}
				if m := leadingNumber.FindStringSubmatch(cell); m != nil {
					if seen[col] == nil {
						seen[col] = map[int]string{}
					}
					if _, ok := seen[col][len(m[1])]; !ok {
						seen[col][len(m[1])] = cell
					}
				}
				col++
			}
		}
		for col := range len(head) {
			if len(seen[col]) > 1 {
				var cells []string
				for _, c := range seen[col] {
					cells = append(cells, fmt.Sprintf("%q", c))
				}
				out = append(out, fmt.Sprintf("column %q of the table under %q mixes precisions: %s", head[col], strings.Join(head, " | "), strings.Join(slices.Sorted(slices.Values(cells)), ", ")))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	return out
}

func cellText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
		case *ast.String:
			b.Write(t.Value)
		case *ast.CodeSpan:
			for k := t.FirstChild(); k != nil; k = k.NextSibling() {
				if tx, ok := k.(*ast.Text); ok {
					b.Write(tx.Segment.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}
