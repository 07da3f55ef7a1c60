package safetext

import (
	"strings"
	"testing"
)

func TestQuoteAndClean(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, quote, clean string
	}{
		{"plain", "Kernel_Name", `"Kernel_Name"`, "Kernel_Name"},
		{"terminal escape", "\x1b[31mred\x1b[0m", `"\x1b[31mred\x1b[0m"`, `\x1b[31mred\x1b[0m`},
		{"newline and NUL", "a\nb\x00", `"a\nb\x00"`, `a\nb\x00`},
		{"invalid UTF-8", "k\xffx", `"k\xffx"`, `k\xffx`},
		{"real replacement char", "k\uFFFDx", `"k�x"`, "k\uFFFDx"},
		{"printable unicode", "μs ✓", `"μs ✓"`, "μs ✓"},
	}
	for _, c := range cases {
		if got := Quote(c.in); got != c.quote {
			t.Errorf("%s: Quote = %s, want %s", c.name, got, c.quote)
		}
		if got := QuoteBytes([]byte(c.in)); got != c.quote {
			t.Errorf("%s: QuoteBytes = %s, want %s", c.name, got, c.quote)
		}
		if got := Clean(c.in); got != c.clean {
			t.Errorf("%s: Clean = %s, want %s", c.name, got, c.clean)
		}
	}
}

// A gigabyte-long "header" must not become a gigabyte-long message, and a cut never
// splits a character.
func TestLongInputIsCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("\x00", 1<<20)
	for _, got := range []string{Quote(long), QuoteBytes([]byte(long)), Clean(long)} {
		if len(got) > 5*Max {
			t.Errorf("message of %d bytes from a 1 MiB input", len(got))
		}
		if !strings.HasSuffix(got, "... (1048376 more bytes)") {
			t.Errorf("message does not say how much was cut: ...%s", got[len(got)-40:])
		}
	}
	// "x" then 2-byte characters: byte Max falls inside one, which is left out whole.
	odd := "x" + strings.Repeat("é", Max)
	head := "x" + strings.Repeat("é", Max/2-1)
	if got, want := Quote(odd), `"`+head+`"... (202 more bytes)`; got != want {
		t.Errorf("Quote cut a character: %s", got)
	}
	if got, want := Clean(odd), head+"... (202 more bytes)"; got != want {
		t.Errorf("Clean cut a character: %s", got)
	}
}
