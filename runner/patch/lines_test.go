package patch

import (
	"strings"
	"testing"
)

// splice replaces a range of lines, at the end of the file too.
func TestSplice(t *testing.T) {
	t.Parallel()
	ls := []line{{text: "a"}, {text: "b"}, {text: "c"}}
	for _, c := range []struct {
		from, to int
		repl     []line
		want     string
	}{{2, 3, nil, "ab"}, {0, 3, []line{{text: "x"}}, "x"}, {1, 1, []line{{text: "x"}, {text: "y"}}, "axybc"}, {3, 3, []line{{text: "z"}}, "abcz"}} {
		var got strings.Builder
		for _, l := range splice(ls, c.from, c.to, c.repl...) {
			got.WriteString(l.text)
		}
		if got.String() != c.want {
			t.Errorf("splice(%d, %d) = %q, want %q", c.from, c.to, got.String(), c.want)
		}
	}
}
