package patchrun

import (
	"testing"
)

// The output tail keeps the last limit bytes, and when it had to cut, starts at a line
// boundary in its first half or at least at a rune.
func TestTailBuffer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		limit     int
		writes    []string
		want      string
		truncated bool
	}{
		{10, []string{"abc\ndefghi"}, "abc\ndefghi", false},
		{10, []string{"01234", "abcd\nfghij"}, "fghij", true},
		{10, []string{"01234", "abcde\nghij"}, "abcde\nghij", true},
		{10, []string{"0123456789", "abcdefg\nij"}, "abcdefg\nij", true},
		{4, []string{"éééé"}, "éé", true},
		{3, []string{"a", "\x80\x80\x80"}, "", true},
	} {
		tb := &tailBuffer{limit: c.limit}
		for _, w := range c.writes {
			tb.Write([]byte(w))
		}
		got, _, truncated := tb.result()
		if got != c.want || truncated != c.truncated {
			t.Errorf("limit %d, writes %q: %q (truncated %v), want %q (%v)", c.limit, c.writes, got, truncated, c.want, c.truncated)
		}
	}
}
