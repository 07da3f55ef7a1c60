// Package mdtest reads the tables of a generated Markdown page the way GitHub's
// Markdown splits them, so that a test can check a page's figures cell by cell. It is
// for tests only and must not be imported by production code.
package mdtest

import (
	"strings"
	"testing"
)

// Table is a Markdown table: its header's cells and its rows' cells, in order, as
// written (escapes kept).
type Table struct {
	Header []string
	Rows   [][]string
}

// Row returns the first row whose first cell is key, or nil.
func (tb Table) Row(key string) []string {
	for _, r := range tb.Rows {
		if r[0] == key {
			return r
		}
	}
	return nil
}

// Under returns the first table after the line heading (a whole line of md). A missing
// heading, or another heading before any table, fails the test.
func Under(t testing.TB, md, heading string) Table {
	t.Helper()
	i := strings.Index(md, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("no heading %q in:\n%s", heading, md)
	}
	var tb Table
	n := 0
	for _, line := range strings.Split(md[i+len(heading)+2:], "\n") {
		if !strings.HasPrefix(line, "|") {
			if n > 0 {
				break
			}
			if strings.HasPrefix(line, "#") {
				t.Fatalf("no table under %q", heading)
			}
			continue
		}
		n++
		switch cells := SplitRow(line); n {
		case 1:
			tb.Header = cells
		case 2: // the delimiter row
		default:
			tb.Rows = append(tb.Rows, cells)
		}
	}
	if n == 0 {
		t.Fatalf("no table under %q", heading)
	}
	return tb
}

// SplitRow splits a table row into its cells, trimmed, at the pipes that are not
// escaped, as GitHub's Markdown does (an escaped pipe stays in its cell as `\|`).
func SplitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	var cells []string
	start := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '|' && (i == 0 || line[i-1] != '\\') {
			cells = append(cells, strings.TrimSpace(line[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(line[start:]))
}
