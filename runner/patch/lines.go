package patch

import "strings"

// line is one source line and the exact line ending that followed it ("\n", "\r\n" or
// "" for a last line without one), so a file is rebuilt byte for byte.
type line struct {
	text string
	eol  string
}

func splitLines(src string) []line {
	var out []line
	for src != "" {
		i := strings.IndexByte(src, '\n')
		if i < 0 {
			out = append(out, line{text: src})
			break
		}
		l := line{text: src[:i], eol: "\n"}
		if strings.HasSuffix(l.text, "\r") {
			l.text, l.eol = l.text[:len(l.text)-1], "\r\n"
		}
		out = append(out, l)
		src = src[i+1:]
	}
	return out
}

func joinLines(ls []line) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.text)
		b.WriteString(l.eol)
	}
	return b.String()
}

// newline returns the ending new lines should get: the file's first one, so a CRLF
// file stays CRLF.
func newline(ls []line) string {
	for _, l := range ls {
		if l.eol != "" {
			return l.eol
		}
	}
	return "\n"
}

// indentOf returns the leading spaces and tabs of s.
func indentOf(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// splice replaces ls[from:to] with repl and returns a new slice.
func splice(ls []line, from, to int, repl ...line) []line {
	out := make([]line, 0, len(ls)-(to-from)+len(repl))
	out = append(out, ls[:from]...)
	out = append(out, repl...)
	return append(out, ls[to:]...)
}
