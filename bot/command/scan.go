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
// blocks, indented code blocks, HTML comments and the HTML elements GitHub shows as
// code, quotes or struck text (hiddenTags: <pre>, <code>, <blockquote> ...). It keeps
// the first keep lines and counts all of them.
//
// It errs on the side of ignoring: a line Markdown might render as code or quote is not
// a command. A quoted reply of someone's command must never start a run. Content of
// <details> (and <div>, <p> ...) is not hidden: GitHub shows it as ordinary text once
// the reader opens it, so a command there is read as one.
func scan(body string, verbs []string, keep int) (found []line, total int) {
	var (
		fenceChar  byte // '`' or '~' inside a fenced code block, 0 outside
		fenceLen   int
		inComment  bool // inside <!-- ... -->
		inQuote    bool // the previous line belonged to a block quote
		hidden     int  // hiddenTags elements open (opening tags less closing ones)
		lineNumber int
	)
	for rest := body; rest != ""; {
		var raw string
		raw, rest, _ = strings.Cut(rest, "\n")
		lineNumber++
		raw = strings.TrimSuffix(raw, "\r")

		if inComment {
			if _, after, ok := strings.Cut(raw, "-->"); ok {
				inComment = false
				hidden, inComment = htmlTags(after, hidden)
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
		if hidden > 0 {
			// Inside <pre>, <blockquote> ...: nothing is a command; look for the end.
			if c, n, ok := opensFence(text); ok && !code {
				fenceChar, fenceLen = c, n
				continue
			}
			hidden, inComment = htmlTags(raw, hidden)
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
			if _, after, ok := strings.Cut(text[4:], "-->"); ok {
				hidden, inComment = htmlTags(after, hidden)
			} else {
				inComment = true
			}
			continue
		}
		if startsWithVerb(text, verbs) {
			total++
			if len(found) < keep {
				found = append(found, line{n: lineNumber, text: strings.TrimRight(text, " \t")})
			}
		}
		// A tag on this line hides the lines after it until it is closed.
		hidden, inComment = htmlTags(text, hidden)
	}
	return found, total
}

// hiddenTags are the HTML elements whose content GitHub renders as code (pre, code,
// tt, samp, kbd, xmp, listing, plaintext, textarea), as a quote (blockquote, q), as
// struck out (del, s, strike), or not at all (script, style): a command inside one is
// not a command.
var hiddenTags = map[string]bool{
	"pre": true, "code": true, "tt": true, "samp": true, "kbd": true, "xmp": true, "listing": true,
	"plaintext": true, "textarea": true, "blockquote": true, "q": true, "del": true, "s": true,
	"strike": true, "script": true, "style": true,
}

// htmlTags reads the HTML of one line: each opening tag of hiddenTags adds one to
// depth, each closing one takes one off (never below 0). Tags inside code spans
// (`<pre>`), escaped ones (\<pre>) and HTML comments do not count; a comment left
// open at the end of the line is reported (open), and the rest of the line is in it.
func htmlTags(s string, depth int) (int, bool) {
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2 // an escaped character is literal
			continue
		case '`':
			n := run(s, i, '`')
			if end := closingRun(s, i+n, n); end >= 0 {
				i = end + n // a code span: literal
			} else {
				i += n
			}
			continue
		case '<':
		default:
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "<!--") {
			end := strings.Index(s[i+4:], "-->")
			if end < 0 {
				return depth, true
			}
			i += 4 + end + 3
			continue
		}
		j := i + 1
		closing := j < len(s) && s[j] == '/'
		if closing {
			j++
		}
		k := j
		for k < len(s) && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z') {
			k++
		}
		// A tag: its name, then the end of its name; and its '>' later on the line,
		// unless it starts the line (an HTML block may open with "<pre" alone).
		tag := k > j && (k == len(s) || strings.IndexByte(" \t>/", s[k]) >= 0) &&
			(strings.IndexByte(s[k:], '>') >= 0 || strings.TrimLeft(s[:i], " \t") == "")
		if tag && hiddenTags[strings.ToLower(s[j:k])] {
			if closing {
				depth = max(depth-1, 0)
			} else {
				depth++
			}
		}
		i = k
	}
	return depth, false
}

// run is the length of the run of c at s[i:].
func run(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// closingRun finds the next run of exactly n backticks at or after i; -1 if none.
func closingRun(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s, i, '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
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
