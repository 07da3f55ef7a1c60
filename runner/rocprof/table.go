package rocprof

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/internal/safetext"
)

// maxTableBytes bounds the small profiler files read whole: a real kernel_stats.csv
// has a few hundred rows of a few hundred bytes.
const maxTableBytes = 16 << 20

// table is a small profiler CSV (stats, agent info) read whole: these files have a few
// hundred rows at most, unlike the kernel trace.
type table struct {
	file   string
	header []string
	cols   map[string]int // lower-case header name -> column
	rows   [][]string
	lines  []int // line number of each row
}

// parseTable splits data into a header and rows, with the same lazy quoting, BOM and
// CRLF handling as the kernel trace reader. Every row must have the header's width.
func parseTable(data []byte, file string) (*table, error) {
	data = bytes.TrimPrefix(data, bom)
	t := &table{file: file, cols: map[string]int{}}
	line := 0
	for len(data) > 0 {
		var l []byte
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			l, data = data[:nl], data[nl+1:]
		} else {
			l, data = data, nil
		}
		line++
		l = trimLine(l)
		if len(l) == 0 {
			continue
		}
		// Count before splitting: a row (or header) of a million commas must not become
		// a million strings.
		n, err := countCells(l)
		if err != nil {
			return nil, &ParseError{File: file, Line: line, Msg: err.Error()}
		}
		if t.header == nil && n > maxColumns {
			return nil, &ParseError{File: file, Line: line,
				Msg: fmt.Sprintf("header: %d columns, more than the %d a profiler CSV can have: is this a rocprofv3 file?", n, maxColumns)}
		}
		if t.header != nil && n != len(t.header) {
			return nil, &ParseError{File: file, Line: line,
				Msg: fmt.Sprintf("row has %d cells, the header has %d (truncated row: was the profiler stopped before it finished writing?)", n, len(t.header))}
		}
		cells, _ := splitCells(l)
		if t.header == nil {
			t.header = cells
			for i, c := range cells {
				k := strings.ToLower(strings.TrimSpace(c))
				if _, dup := t.cols[k]; !dup {
					t.cols[k] = i
				}
			}
			continue
		}
		t.rows = append(t.rows, cells)
		t.lines = append(t.lines, line)
	}
	if t.header == nil {
		return nil, &ParseError{File: file, Line: 1, Msg: "empty file: no header row (did the profiler exit before writing it?)"}
	}
	return t, nil
}

// require returns the columns of the given names, or an error naming the first one the
// header lacks.
func (t *table) require(names ...string) ([]int, error) {
	idx := make([]int, len(names))
	for i, n := range names {
		c, ok := t.cols[strings.ToLower(n)]
		if !ok {
			return nil, &ParseError{File: t.file, Line: 1, Column: n,
				Msg: fmt.Sprintf("no %s column (have: %s)", n, safetext.Clean(strings.Join(t.header, ", ")))}
		}
		idx[i] = c
	}
	return idx, nil
}

// optional returns the column of name, or -1.
func (t *table) optional(name string) int {
	if c, ok := t.cols[strings.ToLower(name)]; ok {
		return c
	}
	return -1
}

// cellInt parses row r's integer cell in column c; a missing column (c < 0) is 0.
func (t *table) cellInt(r, c int) (int64, error) {
	if c < 0 {
		return 0, nil
	}
	v, ok := parseInt([]byte(t.rows[r][c]))
	if !ok {
		return 0, t.notNumber(r, c)
	}
	return v, nil
}

// cellFloat parses row r's float cell in column c (fixed or scientific notation).
func (t *table) cellFloat(r, c int) (float64, error) {
	if c < 0 {
		return 0, nil
	}
	v, err := strconv.ParseFloat(t.rows[r][c], 64)
	if err != nil {
		return 0, t.notNumber(r, c)
	}
	return v, nil
}

func (t *table) cellText(r, c int) string {
	if c < 0 {
		return ""
	}
	return t.rows[r][c]
}

func (t *table) notNumber(r, c int) error {
	col := safetext.Clean(t.header[c])
	return &ParseError{File: t.file, Line: t.lines[r], Column: col,
		Msg: fmt.Sprintf("%s %s: not a number", col, safetext.Quote(t.rows[r][c]))}
}
