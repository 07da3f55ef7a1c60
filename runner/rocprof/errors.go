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

// maxShown bounds how much of a bad cell an error quotes: a misaligned row can put a
// kilobyte-long kernel name where a number belongs.
const maxShown = 64

// quoteCell quotes a cell's text for an error message, cut to maxShown bytes.
func quoteCell(b []byte) string {
	if len(b) > maxShown {
		return fmt.Sprintf("%q...", b[:maxShown])
	}
	return fmt.Sprintf("%q", b)
}
