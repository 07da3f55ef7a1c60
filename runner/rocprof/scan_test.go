package rocprof

import (
	"slices"
	"strings"
	"testing"
)

// The chunker hands out whole lines: a chunk ends at the last newline read (the first
// byte too), and a line of exactly maxLineBytes is read through a buffer that grows to
// that size.
func TestChunkerEdges(t *testing.T) {
	t.Parallel()
	c := &chunker{r: strings.NewReader("\nabcdefghij\nxy")}
	var chunks []string
	buf := make([]byte, 8)
	for {
		data, kept, err := c.fill(buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 && c.eof {
			break
		}
		chunks = append(chunks, string(data))
		buf = kept
	}
	if want := []string{"\n", "abcdefghij\nxy"}; !slices.Equal(chunks, want) {
		t.Errorf("chunks %q, want %q", chunks, want)
	}
	line := strings.Repeat("a", maxLineBytes)
	c = &chunker{r: strings.NewReader(line + "\n")}
	data, _, err := c.fill(make([]byte, 8))
	if err != nil || len(data) != maxLineBytes+1 {
		t.Errorf("a line of %d bytes: %d bytes, %v", maxLineBytes, len(data), err)
	}
}
