package strs

import (
	"slices"
	"testing"
	"unicode/utf8"
)

func TestClipKeepsCharactersWhole(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijk", 10, "abcdefghij…"},
		{"ab€", 3, "ab…"}, // € is three bytes: cutting at 3 would split it
		{"€€", 4, "€…"},
		{"€", 0, "…"},
		{"abc", -1, "…"},
	} {
		got := Clip(c.s, c.n, "…")
		if got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q is not valid UTF-8", c.s, c.n, got)
		}
	}
}

func TestClipRunesCountsCharacters(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		mark string
		want string
	}{
		{"short", 10, "…", "short"},
		{"€€€€€", 5, "…", "€€€€€"}, // 15 bytes, 5 characters: fits
		{"€€€€€€", 5, "…", "€€€€…"},
		{"abcdefghij", 8, "...", "abcde..."},
		{"abc", 2, "...", "..."},
		{"abc", -1, "", ""},
	} {
		got := ClipRunes(c.s, c.n, c.mark)
		if got != c.want {
			t.Errorf("ClipRunes(%q, %d, %q) = %q, want %q", c.s, c.n, c.mark, got, c.want)
		}
	}
}

func TestShortSHA(t *testing.T) {
	if got := ShortSHA("0123456789abcdef"); got != "01234567" {
		t.Errorf("ShortSHA = %q", got)
	}
	if got := ShortSHA("abc"); got != "abc" {
		t.Errorf("ShortSHA of a short id = %q", got)
	}
}

func TestSplitList(t *testing.T) {
	if got := SplitList(" a, b,,c ,", ","); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("SplitList = %q", got)
	}
	if got := SplitList("  ", ";"); got != nil {
		t.Errorf("SplitList of a blank string = %q, want nil", got)
	}
	if got := SplitList("x;y", ";"); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("SplitList with ; = %q", got)
	}
}
