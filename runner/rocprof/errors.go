package rocprof

import "fmt"

// ParseError is malformed input at one line of a profiler CSV file.
type ParseError struct {
	File   string
	Line   int    // 1-based; the header is line 1
	Column string // header name of the offending cell, "" when the row or file is at fault
	Msg    string // what was wrong, starting with the column when there is one
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}
