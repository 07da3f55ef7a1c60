package patch

import (
	"testing"
)

// A problem about the whole file names no line.
func TestProblemString(t *testing.T) {
	t.Parallel()
	if got := (Problem{Path: "a.py", Msg: "m"}).String(); got != "a.py: m" {
		t.Errorf("line 0: %q", got)
	}
	if got := (Problem{Path: "a.py", Line: 1, Msg: "m"}).String(); got != "a.py:1: m" {
		t.Errorf("line 1: %q", got)
	}
}
