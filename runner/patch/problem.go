package patch

import (
	"fmt"
	"strings"
)

// Problem is one way a target file differs from what the patcher expects.
type Problem struct {
	Path string `json:"path"` // repo-relative
	Line int    `json:"line"` // 1-based; 0 when it concerns the whole file
	Msg  string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.Path, p.Msg)
}

// RefusedError says the patcher found the target files in a shape it will not edit.
// Nothing was written when it is returned.
type RefusedError struct {
	Problems []Problem
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("refusing to patch the grouped_gemm gates (nothing was written):")
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	b.WriteString("\nfix these in the target repo by hand (or update perfbot if the file format changed on purpose), then run again")
	return b.String()
}

// problems collects Problems for one file.
type problems struct {
	path string
	list []Problem
}

func (ps *problems) add(line int, format string, a ...any) {
	ps.list = append(ps.list, Problem{Path: ps.path, Line: line, Msg: fmt.Sprintf(format, a...)})
}

// quote shows found source text in a message: trimmed, in backticks, shortened.
func quote(s string) string {
	return "`" + oneLine(strings.TrimSpace(s), 100) + "`"
}
