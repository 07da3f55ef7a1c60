package mdtest

import (
	"slices"
	"testing"
)

func TestSplitRowKeepsEscapedPipes(t *testing.T) {
	got := SplitRow(`| a | b \| c |  d  |`)
	if want := []string{"a", `b \| c`, "d"}; !slices.Equal(got, want) {
		t.Errorf("SplitRow = %q, want %q", got, want)
	}
}

func TestUnderReadsTheFirstTableAfterTheHeading(t *testing.T) {
	md := "# page\n\n| x | y |\n|---|---|\n| 0 | 0 |\n\n## T\n\ntext\n\n| k | v |\n| --- | ---: |\n| a | 1 |\n| b | 2 |\n| a | 3 |\n\n| z | z |\n"
	tb := Under(t, md, "## T")
	if !slices.Equal(tb.Header, []string{"k", "v"}) || len(tb.Rows) != 3 {
		t.Fatalf("Under = %q", tb)
	}
	if r := tb.Row("a"); !slices.Equal(r, []string{"a", "1"}) {
		t.Errorf(`Row("a") = %q, want the first`, r)
	}
	// A heading that opens the text is found too.
	if first := Under(t, "\n## T\n\n| k |\n|---|\n| z |\n", "## T"); first.Row("z") == nil {
		t.Errorf("the table under a heading at the start: %q", first)
	}
	if tb.Row("c") != nil {
		t.Error(`Row("c") found a row`)
	}
	if r := tb.Row("b"); !slices.Equal(r, []string{"b", "2"}) {
		t.Errorf(`Row("b") = %q`, r)
	}
}

// fatal records a test helper's failure instead of ending the test.
type fatal struct {
	testing.TB
	failed bool
}

func (f *fatal) Helper() {}
func (f *fatal) Fatalf(string, ...any) {
	f.failed = true
	panic(f)
}

func TestUnderFailsWithoutATable(t *testing.T) {
	for name, md := range map[string]string{
		"no heading":                 "# page\n\n| a |\n|---|\n",
		"a heading before any table": "## T\n\ntext\n\n## U\n\n| a |\n|---|\n",
		"nothing after it":           "## T\n\ntext\n",
	} {
		f := &fatal{TB: t}
		func() {
			defer func() { recover() }()
			Under(f, "\n"+md, "## T")
		}()
		if !f.failed {
			t.Errorf("%s: Under did not fail the test", name)
		}
	}
}
