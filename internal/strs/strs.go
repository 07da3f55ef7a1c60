// Package strs holds the small string helpers every layer needs: cutting text to a
// byte budget without splitting a UTF-8 character or to a number of characters, the
// short form of a commit id, and splitting a separated list. It imports nothing of
// perfbot.
package strs

import (
	"strings"
	"unicode/utf8"
)

// Clip returns s cut to at most n bytes plus mark when it is longer than n. The cut
// never splits a UTF-8 character: it moves back to the start of the character that
// would be cut. n < 0 is taken as 0.
func Clip(s string, n int, mark string) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + mark
}

// ClipRunes returns s cut to at most n characters (runes), mark included, when it has
// more than n: the first n minus the mark's characters, then mark. It is for text
// measured in characters (a table cell, a line of a comment) rather than bytes. When
// the mark alone is longer than n, the result is the mark.
func ClipRunes(s string, n int, mark string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	keep := max(n-utf8.RuneCountInString(mark), 0)
	return string([]rune(s)[:keep]) + mark
}

// ShortSHA is the first eight characters of a commit id (the whole id when shorter),
// the form perfbot writes in titles, folder names and comments.
func ShortSHA(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}

// SplitList splits s at sep, trims each item and drops the empty ones: "a, b,,c" is
// [a b c]. An empty or blank s is nil.
func SplitList(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
