package rocprof

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/streamtest"
)

// A file without newlines is not buffered whole: the reader gives up on the first line
// longer than any real row, having read little more than that line.
func TestParseKernelTraceBoundsLineLength(t *testing.T) {
	t.Parallel()
	hdr := strings.Join(quoteAll(header7), ",") + "\n"
	row := strings.Split(renderTrace(layoutSpec{header: header7}, sample[:1], "\n"), "\n")[1] + "\n"
	cases := []struct {
		name string
		r    func() io.Reader
		line int
	}{
		{"NULs from the start", func() io.Reader { return streamtest.Zeros{} }, 1},
		{"NULs after two rows", func() io.Reader { return io.MultiReader(strings.NewReader(hdr+row+row), streamtest.Zeros{}) }, 4},
		{"one long name", func() io.Reader {
			return io.MultiReader(strings.NewReader(hdr+row+`"KERNEL_DISPATCH","Agent 2",1,1,1,2,3,"`), &streamtest.Repeat{Text: "x"})
		}, 3},
	}
	for _, c := range cases {
		for _, opt := range []parseOptions{{}, {chunkSize: 4096, workers: 2}} {
			w := &watchedReader{r: io.LimitReader(c.r(), 10<<30)}
			counted := &streamtest.Counting{R: w}
			_, err := parseKernelTrace(counted, "trace.csv", opt)
			want := fmt.Sprintf("trace.csv:%d: a line longer than 1024 KiB", c.line)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s %+v: got %v, want %s...", c.name, opt, err, want)
			}
			if counted.N > 8<<20 {
				t.Errorf("%s %+v: read %d MiB of the stream before giving up", c.name, opt, counted.N>>20)
			}
		}
	}
}

// A 10 GiB sparse trace (all NUL) is refused at its first line, from the file itself.
func TestReadKernelTraceSparseFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "run_kernel_trace.csv")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(10 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadKernelTrace(p)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 || !strings.Contains(err.Error(), "a line longer than 1024 KiB") {
		t.Fatalf("got %v, want a ParseError at line 1 about the line length", err)
	}
}

func TestParseKernelTraceBoundsHeaderWidth(t *testing.T) {
	t.Parallel()
	wide := `"Kernel_Name","Start_Timestamp","End_Timestamp"` + strings.Repeat(",x", 5000) + "\n"
	_, err := parseString(t, wide, parseOptions{})
	want := "trace.csv:1: header: 5003 columns, more than the 1024 a kernel trace can have: is this a rocprofv3 kernel_trace.csv?"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	for _, parse := range []func([]byte, string) error{
		func(b []byte, n string) error { _, err := ParseKernelStats(b, n); return err },
		func(b []byte, n string) error { _, err := ParseAgentInfo(b, n); return err },
	} {
		err := parse([]byte(strings.Repeat("a,", 2000)+"a\n"), "t.csv")
		if want := "t.csv:1: header: 2001 columns, more than the 1024 a profiler CSV can have: is this a rocprofv3 file?"; err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
		err = parse([]byte(statsHeader+"\n"+strings.Repeat(",", 1<<20)+"\n"), "t.csv")
		if want := "t.csv:2: row has 1048577 cells, the header has 8"; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got %v, want %s...", err, want)
		}
	}
}

// Header text quoted in an error is cut and has its control characters escaped.
func TestParseErrorsEscapeTheirQuotes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content, want string
	}{
		{"terminal escapes", "\"\x1b[2J\x1b[31mKernel\",\"Start_Timestamp\",\"End_Timestamp\"\n",
			`trace.csv:1: no Kernel_Name column (have: \x1b[2J\x1b[31mKernel, Start_Timestamp, End_Timestamp)`},
		{"a NUL header", strings.Repeat("\x00", 1000) + "\n",
			`trace.csv:1: no Kernel_Name column (have: ` + strings.Repeat(`\x00`, 200) + `... (800 more bytes))`},
		{"a bad cell", `"Kernel_Name","Start_Timestamp","End_Timestamp"` + "\n\"k\",1\x07\x1b]0;pwned\x07,2\n",
			`trace.csv:2: Start_Timestamp "1\a\x1b]0;pwned\a": not a number`},
	}
	for _, c := range cases {
		_, err := parseString(t, c.content, parseOptions{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, err, c.want)
		}
	}
	_, err := ParseKernelStats([]byte("\"Name\x1b[5m\",\"Calls\"\n"), "stats.csv")
	if want := `stats.csv:1: no Name column (have: Name\x1b[5m, Calls)`; err == nil || err.Error() != want {
		t.Errorf("stats: got %q, want %q", err, want)
	}
}

// A row repeating an earlier row's Dispatch_Id is the same dispatch written twice: it is
// left out and counted, wherever the chunks are cut.
func TestParseKernelTraceDuplicateDispatchIDs(t *testing.T) {
	t.Parallel()
	text := renderTrace(layoutSpec{header: header7}, sample, "\n")
	lines := strings.SplitAfter(text, "\n")
	// Lines 2..6 have Dispatch_Id 1..5. Repeat id 2 twice and id 5 once, far apart.
	dup := lines[0] + lines[1] + lines[2] + lines[3] + lines[2] + lines[4] + lines[5] + lines[2] + lines[5]
	want, err := parseString(t, text, parseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []parseOptions{{}, {chunkSize: 1, workers: 2}, {chunkSize: 90, workers: 3}} {
		got, err := parseString(t, dup, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got.Duplicates != 3 || got.FirstDuplicate != 2 || got.Rows != len(sample) {
			t.Errorf("%+v: %d duplicates (first id %d), %d rows; want 3 (first id 2), %d rows", opt, got.Duplicates, got.FirstDuplicate, got.Rows, len(sample))
		}
		diff(t, flatten(want), flatten(got))
	}
	// Without the column (ROCm 6.2) nothing can be told apart: rows count as they come.
	text62 := renderTrace(layoutSpec{header: header62, agentAsInt: true}, sample[:2], "\n")
	l62 := strings.SplitAfter(text62, "\n")
	got, err := parseString(t, l62[0]+l62[1]+l62[1]+l62[2], parseOptions{})
	if err != nil || got.Duplicates != 0 || got.Rows != 3 {
		t.Errorf("6.2 layout: %+v, %v; want 3 rows and no duplicate count", got, err)
	}
}

// Kernel names that are not valid UTF-8 get one spelling, with U+FFFD, in every output.
func TestParseKernelTraceInvalidUTF8Names(t *testing.T) {
	t.Parallel()
	rows := []flatDispatch{
		{Start: 1, End: 2, Grid: 1, Name: "k\xff<int>", Agent: "Agent 1"},
		{Start: 3, End: 4, Grid: 1, Name: "k\xfe\xfd<int>", Agent: "Agent 1"},
		{Start: 5, End: 6, Grid: 1, Name: "ok_µ", Agent: "Agent\xc0 2"},
	}
	for _, opt := range []parseOptions{{}, {chunkSize: 1, workers: 2}} {
		tr, err := parseString(t, renderTrace(layoutSpec{header: header7}, rows, "\n"), opt)
		if err != nil {
			t.Fatal(err)
		}
		diff(t, []string{"k\uFFFD<int>", "ok_µ"}, tr.Names)
		diff(t, []string{"Agent 1", "Agent\uFFFD 2"}, tr.Agents)
		if tr.Dispatches[0].Name != tr.Dispatches[1].Name {
			t.Errorf("%+v: the two names that differ only in invalid bytes are two kernels", opt)
		}
	}
}

// A long read stops within one chunk of its context being cancelled.
func TestReadKernelTraceStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := writeFile(t, "run_kernel_trace.csv", renderTrace(layoutSpec{header: header7}, sample, "\n"))
	if _, err := ReadKernelTraceContext(ctx, p); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before the read: %v, want context.Canceled", err)
	}

	// An endless stream of valid rows ends only by cancellation.
	hdr := strings.Join(quoteAll(header62), ",") + "\n"
	row := strings.SplitAfter(renderTrace(layoutSpec{header: header62, agentAsInt: true}, sample[:1], "\n"), "\n")[1]
	for _, opt := range []parseOptions{{}, {chunkSize: 4096, workers: 2}} {
		ctx, cancel := context.WithCancel(context.Background())
		r := &cancelAfter{r: io.MultiReader(strings.NewReader(hdr), &streamtest.Repeat{Text: row}), n: 50, cancel: cancel}
		done := make(chan error, 1)
		go func() {
			_, err := parseKernelTrace(infile.Reader(ctx, r), "trace.csv", opt)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%+v: got %v, want context.Canceled", opt, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%+v: the read did not stop after the cancel", opt)
		}
		cancel()
	}
}

// cancelAfter cancels its context after n reads.
type cancelAfter struct {
	r      io.Reader
	n      int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return c.r.Read(p)
}
