// Package safetext makes text taken from an input file safe to put in an error message
// or a log line: it cuts it to a few hundred bytes and escapes control characters and
// invalid UTF-8, so a hostile file can neither flood the terminal nor send it escape
// sequences. Every message that quotes a file's content goes through it. It must not
// format anything else (Markdown escaping is internal/mdtext's).
package safetext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Max is how many bytes of the input a message shows; the rest is counted, not shown.
const Max = 200

// Quote returns s as a Go-quoted string ("...", control characters and invalid UTF-8
// as escapes), cut to Max bytes of s with the number of bytes left out after it.
func Quote(s string) string {
	head, rest := cut(s, Max)
	q := strconv.Quote(head)
	if rest > 0 {
		q += "... (" + strconv.Itoa(rest) + " more bytes)"
	}
	return q
}

// QuoteBytes is Quote for a byte slice, without copying more than Max bytes.
func QuoteBytes(b []byte) string {
	if len(b) <= Max+utf8.UTFMax {
		return Quote(string(b))
	}
	head, _ := cut(string(b[:Max+utf8.UTFMax]), Max)
	return strconv.Quote(head) + "... (" + strconv.Itoa(len(b)-len(head)) + " more bytes)"
}

// Clean returns s unquoted, for text that reads as part of a sentence (a list of
// header names): printable characters stay as they are, control characters and invalid
// UTF-8 become escapes (\x1b, \n), and it is cut to Max bytes of s.
func Clean(s string) string {
	head, rest := cut(s, Max)
	var b strings.Builder
	for i, r := range head {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(head[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, head[i])
		case strconv.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	if rest > 0 {
		b.WriteString("... (" + strconv.Itoa(rest) + " more bytes)")
	}
	return b.String()
}

// cut returns the first at most n bytes of s, ended on a character boundary, and the
// number of bytes left out.
func cut(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	end := n
	// Back up over a character cut in the middle (at most UTFMax-1 continuation bytes).
	for i := 0; i < utf8.UTFMax-1 && end > 0 && !utf8.RuneStart(s[end]); i++ {
		end--
	}
	return s[:end], len(s) - end
}
