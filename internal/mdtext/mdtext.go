// Package mdtext escapes untrusted text (kernel names, command output, comment text) for
// GitHub-flavoured Markdown, so that it can never break a table or turn into markup.
// It is shared by the report renderer and the ranking table; it formats nothing else.
package mdtext

import (
	"net/url"
	"regexp"
	"strings"
)

// Text escapes untrusted text for inline Markdown, in a paragraph, a list item or a
// table cell: every character that could open emphasis, code, a link, an HTML tag, an
// entity, strikethrough or a cell boundary is backslash-escaped, a leading character
// that could start a block (heading, list, quote) is escaped too, and line breaks
// become spaces so a row never splits.
func Text(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	first := true   // no visible character yet: block markers count here
	digits := false // only digits so far: "1." or "1)" would start a list
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '&':
			b.WriteString("&amp;")
		case '\n', '\r', '\t', '\v', '\f', 0x85, 0x2028, 0x2029:
			b.WriteByte(' ')
			continue
		case '#', '-', '+', '=':
			if first {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case '.', ')':
			if digits {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case ' ':
			b.WriteRune(r)
			if first {
				continue
			}
		default:
			if r < 0x20 || r == 0x7f {
				continue
			}
			b.WriteRune(r)
			if r >= '0' && r <= '9' && (first || digits) {
				first, digits = false, true
				continue
			}
		}
		first, digits = false, false
	}
	return b.String()
}

// Code renders untrusted text as an inline code span for a paragraph: the fence is
// longer than any backtick run inside, and line breaks become spaces.
func Code(s string) string {
	s = oneLine(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || (strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") && strings.TrimSpace(s) != "") {
		s = " " + s + " "
	}
	if s == "" {
		return "` `"
	}
	return fence + s + fence
}

// CellCode is Code for a GFM table cell, where even inside a code span a bare `|`
// would end the cell; GFM reads the escaped pipe back as `|`.
func CellCode(s string) string {
	return strings.ReplaceAll(Code(s), "|", `\|`)
}

// Fenced wraps untrusted multi-line text in a fenced code block whose fence is longer
// than any backtick run in it.
func Fenced(s string) string {
	s = strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if s == "" {
		s = "(no output)"
	}
	return fence + "text\n" + s + "\n" + fence
}

// lineAnchor is the anchor of a line of a file on GitHub (`#L12`).
var lineAnchor = regexp.MustCompile(`#L[0-9]+$`)

// LinkURL makes a link target from a URL or a repo-relative path: each path segment is
// percent-encoded so spaces, parentheses or brackets in file names cannot end the link.
// A path may end in a line anchor (`data.csv#L12`), which is kept.
func LinkURL(target string) string {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme == "" && u.Host == "") {
		anchor := lineAnchor.FindString(target)
		segs := strings.Split(strings.TrimSuffix(target, anchor), "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		return strings.Join(segs, "/") + anchor
	}
	return strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "<", "%3C", ">", "%3E").Replace(u.String())
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == 0x85 || r == 0x2028 || r == 0x2029:
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
}
