package webhook

import (
	"strings"
	"testing"
)

// A header value reaches a log line or an answer as at most 64 bytes of printable
// ASCII: the space and '~' stay, controls, DEL and every character beyond ASCII become '?'.
func TestHeaderTextIsBoundedAndPrintable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		" ~!":                   " ~!",
		"a\x1fb\x7fc\u00e9":     "a?b?c?",
		"\t\n":                  "??",
		strings.Repeat("x", 64): strings.Repeat("x", 64),
		strings.Repeat("y", 65): strings.Repeat("y", 64),
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}
