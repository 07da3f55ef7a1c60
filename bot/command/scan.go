package command

import "strings"

// line is one command line found in a comment: a line whose first word is a perfbot verb.
type line struct {
	n    int    // 1-based line number in the comment
	text string // the line without its indentation and line ending
}

// scan finds the command lines of a Markdown comment body: lines whose first word is
// one of verbs, at the start of the line (at most three spaces in, as Markdown allows for
// a paragraph), outside block quotes (and the lines a quote runs on into), fenced code
// blocks, indented code blocks and HTML comments. It keeps the first keep lines and
// counts all of them.
//
// It errs on the side of ignoring: a line Markdown might render as code or quote is not
// a command. A quoted reply of someone's command must never start a run.
func scan(body string, verbs []string, keep int) (found []line, total int) {
	var (
		fenceChar  byte // '`' or '~' inside a fenced code block, 0 outside
		fenceLen   int
		inComment  bool // inside <!-- ... -->
		inQuote    bool // the previous line belonged to a block quote
		lineNumber int
	)
	for rest := body; rest != ""; {
		var raw string
		raw, rest, _ = strings.Cut(rest, "\n")
		lineNumber++
		raw = strings.TrimSuffix(raw, "\r")

		if inComment {
			if strings.Contains(raw, "-->") {
				inComment = false
			}
			continue
		}
		text, code := indentOf(raw)
		if fenceChar != 0 {
			if !code && closesFence(text, fenceChar, fenceLen) {
				fenceChar = 0
			}
			continue
		}
		if strings.TrimSpace(raw) == "" {
			inQuote = false
			continue
		}
		if code {
			// Indented code, or a line a quote or list runs on into: either way not a
			// command written at the start of a line.
			continue
		}
		if strings.HasPrefix(text, ">") {
			inQuote = true
			continue
		}
		if inQuote {
			continue // a lazy continuation line renders inside the quote
		}
		if c, n, ok := opensFence(text); ok {
			fenceChar, fenceLen = c, n
			continue
		}
		if strings.HasPrefix(text, "<!--") {
			if !strings.Contains(text[4:], "-->") {
				inComment = true
			}
			continue
		}
		if !startsWithVerb(text, verbs) {
			continue
		}
		total++
		if len(found) < keep {
			found = append(found, line{n: lineNumber, text: strings.TrimRight(text, " \t")})
		}
	}
	return found, total
}

// indentOf strips a line's leading spaces. code reports an indentation that Markdown
// reads as an indented code block: four spaces, or a tab anywhere in the leading
// whitespace (a tab stop is four columns).
func indentOf(raw string) (text string, code bool) {
	i := 0
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t') {
		if raw[i] == '\t' {
			return raw[i:], true
		}
		i++
	}
	return raw[i:], i >= 4
}

// opensFence reports whether text opens a fenced code block (CommonMark: three or more
// backticks or tildes; a backtick fence's info string may not hold a backtick).
func opensFence(text string) (byte, int, bool) {
	if text == "" || (text[0] != '`' && text[0] != '~') {
		return 0, 0, false
	}
	c := text[0]
	n := 0
	for n < len(text) && text[n] == c {
		n++
	}
	if n < 3 {
		return 0, 0, false
	}
	if c == '`' && strings.IndexByte(text[n:], '`') >= 0 {
		return 0, 0, false
	}
	return c, n, true
}

// closesFence reports whether text closes a fence of c repeated at least n times.
func closesFence(text string, c byte, n int) bool {
	k := 0
	for k < len(text) && text[k] == c {
		k++
	}
	return k >= n && strings.TrimRight(text[k:], " \t") == ""
}

// startsWithVerb reports whether text's first word is one of verbs, exactly.
func startsWithVerb(text string, verbs []string) bool {
	for _, v := range verbs {
		if strings.HasPrefix(text, v) && (len(text) == len(v) || isSpace(text[len(v)])) {
			return true
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }
