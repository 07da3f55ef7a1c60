package command_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/command"
)

// TestWhatHidesALineAfterIt: the HTML of one line decides whether the next lines are
// read: an element GitHub shows as code or a quote hides them (whatever the case of its
// name), while the same text inside a code span or an HTML comment, a comment closed on
// its line, or a stray < or backtick does not.
func TestWhatHidesALineAfterIt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		first  string
		hidden bool
	}{
		{"see <samp>", true},
		{"see <SAMP>", true},
		{"`<pre>", true},                   // a backtick without its closing run is literal
		{"see <!-- x --> <pre>", true},     // the tag after a closed comment counts
		{"see ```<q>``` here", false},      // a code span of three backticks
		{"see `<q>` here", false},          // and of one
		{"see <!----> here", false},        // an empty comment is closed on its line
		{"see <!--<q>--> here", false},     // a tag that ends the comment's text
		{"see <!-- <pre> --> here", false}, // a tag inside a comment
		{"a <", false},                     // a < at the end of the line
		{"see <prez> and <q z>", true},     // <q ...> is a tag; prez is not one of them
		{"see <prez>", false},
	} {
		body := c.first + "\n/profile rocm\n"
		lines, total := command.Lines(body)
		if hidden := total == 0; hidden != c.hidden || (!hidden && (len(lines) != 1 || lines[0] != "/profile rocm")) {
			t.Errorf("%q then a command: lines %q (%d), want hidden %v", c.first, lines, total, c.hidden)
		}
	}
}

// TestLinesKeepsTheFirstMaxLines: Lines returns the first MaxLines command lines and
// counts them all.
func TestLinesKeepsTheFirstMaxLines(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range command.MaxLines + 1 {
		b.WriteString("/perfbot status " + strconv.Itoa(i) + "\n")
	}
	lines, total := command.Lines(b.String())
	if total != command.MaxLines+1 || len(lines) != command.MaxLines || lines[command.MaxLines-1] != "/perfbot status "+strconv.Itoa(command.MaxLines-1) {
		t.Errorf("lines %q, total %d", lines, total)
	}
}
