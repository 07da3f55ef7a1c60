package rocprof

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

// sample is a handful of dispatches with the awkward parts of real names: commas,
// spaces, <>, (), ::, an embedded quote, plus out-of-order rows and a Start tie.
var sample = []flatDispatch{
	{Start: 100, End: 150, Grid: 512, Name: "__amd_rocclr_copyBuffer", Agent: "Agent 2"},
	{Start: 160, End: 400, Grid: 40960, Name: "void mlx::core::rocm::qmv_wide_kernel<__half, __half, 64, 4>(__half const*, unsigned char const*, int, bool)", Agent: "Agent 2"},
	{Start: 155, End: 158, Grid: 256, Name: `op<"b">(int, char const*)`, Agent: "Agent 2"},
	{Start: 500, End: 520, Grid: 2048, Name: "__amd_rocclr_copyBuffer", Agent: "Agent 3"},
	{Start: 500, End: 510, Grid: 1, Name: "rocm::Add_Multiply_contiguous<float>", Agent: "Agent 2"},
}

// sortedSample is sample in the order the reader must return.
func sortedSample() []flatDispatch {
	return []flatDispatch{sample[0], sample[2], sample[1], sample[4], sample[3]}
}

func parseString(t *testing.T, content string, opt parseOptions) (*Trace, error) {
	t.Helper()
	return parseKernelTrace(strings.NewReader(content), "trace.csv", opt)
}

func TestParseKernelTraceLayouts(t *testing.T) {
	t.Parallel()
	noGrid := func() []flatDispatch {
		s := sortedSample()
		for i := range s {
			s[i].Grid = 0
		}
		return s
	}
	lowered := make([]string, len(header7))
	for i, h := range header7 {
		lowered[i] = strings.ToUpper(h)
	}
	cases := []struct {
		name    string
		content string
		layout  string
		want    []flatDispatch
		hasGrid bool
	}{
		{"rocm7", renderTrace(layoutSpec{header: header7}, sample, "\n"), Layout7, sortedSample(), true},
		{"rocm6.4", renderTrace(layoutSpec{header: header64, agentAsInt: true}, sample, "\n"), Layout64, nil, true},
		{"rocm6.2", renderTrace(layoutSpec{header: header62, agentAsInt: true}, sample, "\n"), Layout62, nil, true},
		{"rocpd-csv", renderTrace(layoutSpec{header: headerRocpd}, sample, "\n"), LayoutRocpdCSV, sortedSample(), true},
		{"upper-case header", renderTrace(layoutSpec{header: lowered}, sample, "\n"), Layout7, sortedSample(), true},
		{"legacy aliases", renderTrace(layoutSpec{header: headerLegacy, agentAsInt: true}, sample, "\n"), LayoutLegacy, nil, false},
		{"crlf", renderTrace(layoutSpec{header: header7}, sample, "\r\n"), Layout7, sortedSample(), true},
		{"bom", "\xEF\xBB\xBF" + renderTrace(layoutSpec{header: header7}, sample, "\n"), Layout7, sortedSample(), true},
		{"bom and crlf", "\xEF\xBB\xBF" + renderTrace(layoutSpec{header: header7}, sample, "\r\n"), Layout7, sortedSample(), true},
		{"no final newline", strings.TrimSuffix(renderTrace(layoutSpec{header: header7}, sample, "\n"), "\n"), Layout7, sortedSample(), true},
		{"blank lines", strings.ReplaceAll(renderTrace(layoutSpec{header: header7}, sample, "\n"), "\n", "\n\n"), Layout7, sortedSample(), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := tc.want
			if want == nil {
				// Up to 6.4 the agent is the bare KFD node id.
				want = sortedSample()
				if !tc.hasGrid {
					want = noGrid()
				}
				for i := range want {
					want[i].Agent = strings.TrimPrefix(want[i].Agent, "Agent ")
				}
			}
			for _, opt := range []parseOptions{{}, {chunkSize: 1, workers: 3}, {chunkSize: 64, workers: 2}} {
				tr, err := parseString(t, tc.content, opt)
				if err != nil {
					t.Fatalf("%+v: %v", opt, err)
				}
				if tr.Layout != tc.layout || tr.HasGrid != tc.hasGrid || tr.Rows != len(sample) || tr.Inversions != 1 {
					t.Errorf("%+v: layout %q hasGrid %v rows %d inversions %d; want %q %v %d 1",
						opt, tr.Layout, tr.HasGrid, tr.Rows, tr.Inversions, tc.layout, tc.hasGrid, len(sample))
				}
				diff(t, want, flatten(tr))
				// Interned: each distinct text once, numbered by first appearance.
				diff(t, []string{sample[0].Name, sample[1].Name, sample[2].Name, sample[4].Name}, tr.Names)
			}
		})
	}
}

func TestParseKernelTraceQuotedNumbersAndIntegerAgent(t *testing.T) {
	t.Parallel()
	content := `"Kind","Agent_Id","Kernel_Name","Start_Timestamp","End_Timestamp","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"` + "\n" +
		`"KERNEL_DISPATCH",4,"k","10","20",0,8,"2"` + "\n"
	tr, err := parseString(t, content, parseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A zero grid factor counts as 1: the product stays meaningful.
	diff(t, []flatDispatch{{Start: 10, End: 20, Grid: 16, Name: "k", Agent: "4"}}, flatten(tr))
}

func TestParseKernelTraceNoAgentColumn(t *testing.T) {
	t.Parallel()
	tr, err := parseString(t, "\"KernelName\",\"BeginNs\",\"EndNs\"\n\"k\",1,2\n", parseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, []string{""}, tr.Agents)
	diff(t, []flatDispatch{{Start: 1, End: 2, Name: "k"}}, flatten(tr))
}

func TestParseKernelTraceHeaderOnly(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"lf":         strings.Join(quoteAll(header7), ",") + "\n",
		"no newline": strings.Join(quoteAll(header7), ","),
		"crlf bom":   "\xEF\xBB\xBF" + strings.Join(quoteAll(header62), ",") + "\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr, err := parseString(t, content, parseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Rows != 0 || len(tr.Dispatches) != 0 || len(tr.Names) != 0 || tr.Layout == "" {
				t.Errorf("got %+v, want zero records and a layout", tr)
			}
		})
	}
}

func quoteAll(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = `"` + c + `"`
	}
	return out
}

func TestParseKernelTraceErrors(t *testing.T) {
	t.Parallel()
	hdr := strings.Join(quoteAll(header7), ",") + "\n"
	good := renderTrace(layoutSpec{header: header7}, sample[:2], "\n")
	row := strings.Split(good, "\n")[1] // Start 100, End 150
	cells := strings.Split(row, ",")
	with := func(col int, v string) string {
		c := append([]string(nil), cells...)
		c[col] = v
		return strings.Join(c, ",")
	}
	cases := []struct {
		name, content, want string
		column              string
	}{
		{"bad end", hdr + row + "\n" + with(10, "12x") + "\n", `trace.csv:3: End_Timestamp "12x": not a number`, "End_Timestamp"},
		{"blank lines before the header", "\n\r\n" + hdr + with(10, "12x") + "\n", `trace.csv:4: End_Timestamp "12x": not a number`, "End_Timestamp"},
		{"bad start crlf", hdr + row + "\r\n" + row + "\r\n" + with(9, "") + "\r\n", `trace.csv:4: Start_Timestamp "": not a number`, "Start_Timestamp"},
		{"long bad cell is cut", hdr + with(9, strings.Repeat("7x", 150)) + "\n",
			`trace.csv:2: Start_Timestamp "` + strings.Repeat("7x", 100) + `"... (100 more bytes): not a number`, "Start_Timestamp"},
		{"bad grid", hdr + with(20, "1.5") + "\n", `trace.csv:2: Grid_Size_Y "1.5": not a number`, "Grid_Size_Y"},
		{"overflow", hdr + with(9, "99999999999999999999") + "\n", `trace.csv:2: Start_Timestamp "99999999999999999999": not a number`, "Start_Timestamp"},
		{"truncated row", hdr + row + "\n" + strings.Join(cells[:12], ",") + "\n",
			"trace.csv:3: row has 12 cells, the header has 22 (truncated row: was the profiler stopped before it finished writing?)", ""},
		{"truncated last line", hdr + row + "\n" + strings.Join(cells[:10], ",") + ",13",
			"trace.csv:3: row has 11 cells, the header has 22 (truncated row: was the profiler stopped before it finished writing?)", ""},
		{"extra cells", hdr + row + ",7,8\n",
			"trace.csv:2: row has 24 cells, the header has 22 (an unquoted comma or a stray quote in a cell?)", ""},
		// rocprofv3 does not double an embedded quote, so `",` inside a name ends the
		// cell early; the cell count gives that away instead of a silent misparse.
		{"quote comma in a name", hdr + with(7, `"op<"a", 1>"`) + "\n",
			"trace.csv:2: row has 23 cells, the header has 22 (an unquoted comma or a stray quote in a cell?)", ""},
		{"end before start", hdr + with(10, "99") + "\n", "trace.csv:2: End_Timestamp 99 is before Start_Timestamp 100", "End_Timestamp"},
		{"unterminated quote", hdr + with(7, `"never closed`) + "\n", "trace.csv:2: Kernel_Name: unterminated quoted cell", "Kernel_Name"},
		{"no name column", `"Kind","Agent_Id","Start_Timestamp","End_Timestamp"` + "\n",
			"trace.csv:1: no Kernel_Name column (have: Kind, Agent_Id, Start_Timestamp, End_Timestamp)", "Kernel_Name"},
		{"no start column", `"Kernel_Name","End_Timestamp"` + "\n" + `"k",1` + "\n",
			"trace.csv:1: no Start_Timestamp column (have: Kernel_Name, End_Timestamp)", "Start_Timestamp"},
		{"no end column", `"kernel_name","start_timestamp"` + "\n",
			"trace.csv:1: no End_Timestamp column (have: kernel_name, start_timestamp)", "End_Timestamp"},
		{"empty file", "", "trace.csv:1: empty file: no header row (did the profiler exit before writing it?)", ""},
		{"only bom and newline", "\xEF\xBB\xBF\r\n", "trace.csv:1: empty file: no header row (did the profiler exit before writing it?)", ""},
		{"bad header quote", `"Kernel_Name","Start_Timestamp` + "\n", "trace.csv:1: header: unterminated quoted cell", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, opt := range []parseOptions{{}, {chunkSize: 1, workers: 2}, {chunkSize: 100, workers: 3}} {
				_, err := parseString(t, tc.content, opt)
				if err == nil {
					t.Fatalf("%+v: no error, want %q", opt, tc.want)
				}
				if err.Error() != tc.want {
					t.Errorf("%+v:\n got %q\nwant %q", opt, err, tc.want)
				}
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Column != tc.column || pe.File != "trace.csv" {
					t.Errorf("%+v: error %#v, want a *ParseError with column %q", opt, err, tc.column)
				}
			}
		})
	}
}

// TestParseKernelTraceErrorLineDeep puts a bad row deep in a file that spans many
// chunks, so the line number must be assembled from the other workers' line counts.
func TestParseKernelTraceErrorLineDeep(t *testing.T) {
	t.Parallel()
	rows := make([]flatDispatch, 3000)
	for i := range rows {
		rows[i] = flatDispatch{Start: int64(1000 + 10*i), End: int64(1005 + 10*i), Grid: 64, Name: fmt.Sprintf("kernel_%d<float>(int, int)", i%7), Agent: "Agent 1"}
	}
	for _, eol := range []string{"\n", "\r\n"} {
		text := renderTrace(layoutSpec{header: header7}, rows, eol)
		lines := strings.SplitAfter(text, eol)
		for _, bad := range []int{2, 777, 2999, 3001} { // 1-based line numbers; line 1 is the header
			broken := slices.Clone(lines)
			broken[bad-1] = strings.Replace(broken[bad-1], fmt.Sprintf(",%d,", rows[bad-2].End), ",12x,", 1)
			content := strings.Join(broken, "")
			want := fmt.Sprintf(`trace.csv:%d: End_Timestamp "12x": not a number`, bad)
			for _, opt := range []parseOptions{{}, {chunkSize: 1000, workers: 2}, {chunkSize: 4096, workers: 5}, {chunkSize: 37, workers: 1}} {
				_, err := parseString(t, content, opt)
				if err == nil || err.Error() != want {
					t.Errorf("eol %q line %d %+v: got %v, want %s", eol, bad, opt, err, want)
				}
			}
		}
	}
}

// TestParseKernelTraceChunkInvariance checks that how the file is cut into chunks and
// how many workers parse them changes nothing, on the 12,263-row real trace.
func TestParseKernelTraceChunkInvariance(t *testing.T) {
	t.Parallel()
	path := fixture(t, qwenTrace...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	base, err := parseKernelTrace(bytes.NewReader(data), path, parseOptions{workers: 1, chunkSize: len(data) + 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []parseOptions{{}, {chunkSize: 1, workers: 2}, {chunkSize: 300, workers: 4}, {chunkSize: 65536, workers: 3}} {
		readers := map[string]io.Reader{
			"bytes":   bytes.NewReader(data),
			"unsized": iotest.HalfReader(bytes.NewReader(data)), // no size hint: capacity grows
		}
		for rn, r := range readers {
			got, err := parseKernelTrace(r, path, opt)
			if err != nil {
				t.Fatalf("%s %+v: %v", rn, opt, err)
			}
			diff(t, base, got)
		}
	}
}

func TestParseKernelTraceReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	content := renderTrace(layoutSpec{header: header7}, sample, "\n")
	for _, opt := range []parseOptions{{}, {chunkSize: 50, workers: 2}} {
		r := io.MultiReader(strings.NewReader(content), iotest.ErrReader(boom))
		_, err := parseKernelTrace(r, "trace.csv", opt)
		if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "trace.csv: reading: ") {
			t.Errorf("%+v: got %v, want the read error wrapped with the file name", opt, err)
		}
	}
}

func TestReadKernelTraceFiles(t *testing.T) {
	t.Parallel()
	tr, err := ReadKernelTrace(t.TempDir() + "/absent_kernel_trace.csv")
	if err != nil || tr == nil || tr.Rows != 0 || len(tr.Dispatches) != 0 {
		t.Errorf("missing file: got %+v, %v; want an empty trace and no error", tr, err)
	}
	p := writeFile(t, "run_kernel_trace.csv", renderTrace(layoutSpec{header: header7}, sample, "\n")+"oops\n")
	_, err = ReadKernelTrace(p)
	want := p + ":7: row has 1 cells, the header has 22 (truncated row: was the profiler stopped before it finished writing?)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if _, err := ReadKernelTrace(t.TempDir()); err == nil {
		t.Error("reading a directory: no error")
	}
}

func TestParseInt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1382947541921184", 1382947541921184, true}, {"-5", -5, true}, {"+7", 7, true},
		{"9223372036854775807", 9223372036854775807, true}, {"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"18446744073709551616", 0, false}, {"", 0, false}, {"-", 0, false},
		{"1e3", 0, false}, {" 1", 0, false}, {"12x", 0, false}, {"Agent 2", 0, false},
	}
	for _, c := range cases {
		got, ok := parseInt([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// watchedReader counts reads and whether one is in progress.
type watchedReader struct {
	r      io.Reader
	reads  atomic.Int64
	inRead atomic.Int64
}

func (w *watchedReader) Read(p []byte) (int, error) {
	w.inRead.Add(1)
	defer w.inRead.Add(-1)
	w.reads.Add(1)
	return w.r.Read(p)
}

// TestParseKernelTraceStopsOnError: a bad row near the top of a long file stops the
// reading early, and no read is still going on when the parse returns.
func TestParseKernelTraceStopsOnError(t *testing.T) {
	t.Parallel()
	rows := make([]flatDispatch, 20000)
	for i := range rows {
		rows[i] = flatDispatch{Start: int64(i), End: int64(i + 1), Grid: 1, Name: "k", Agent: "Agent 1"}
	}
	text := renderTrace(layoutSpec{header: header7}, rows, "\n")
	text = strings.Replace(text, `"k",3,2,3,`, `"k",3,2x,3,`, 1) // line 4: Start 2
	w := &watchedReader{r: strings.NewReader(text)}
	_, err := parseKernelTrace(struct{ io.Reader }{w}, "trace.csv", parseOptions{chunkSize: 256, workers: 2})
	if inRead := w.inRead.Load(); inRead != 0 {
		t.Errorf("%d reads still running after the parse returned", inRead)
	}
	if want := `trace.csv:4: Start_Timestamp "2x": not a number`; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if total := int64(len(text) / 256); w.reads.Load() > total/2 {
		t.Errorf("%d reads of 256 bytes for an error in the first chunk: it did not stop (file %d bytes)", w.reads.Load(), len(text))
	}
}

// A Dispatch holds its agent in 16 bits: 65,536 distinct Agent_Id texts are read, one
// more is refused, whether one worker sees them all or the merge of several chunks
// numbers them.
func TestAgentLimitAtItsEdge(t *testing.T) {
	t.Parallel()
	trace := func(agents int) string {
		var b strings.Builder
		b.WriteString("Agent_Id,Kernel_Name,Start_Timestamp,End_Timestamp\n")
		for i := range agents {
			fmt.Fprintf(&b, "%x,k,%d,%d\n", i, i, i)
		}
		return b.String()
	}
	atLimit, past := trace(math16+1), trace(math16+2)
	// One worker numbers them all; two workers each see some, and the merge numbers them.
	for _, opt := range []parseOptions{{workers: 1, chunkSize: 1 << 16}, {workers: 2, chunkSize: 1 << 16}} {
		tr, err := parseString(t, atLimit, opt)
		if err != nil {
			t.Fatalf("%+v: %d agents: %v", opt, math16+1, err)
		}
		if len(tr.Agents) != math16+1 || tr.Agents[math16] != fmt.Sprintf("%x", math16) || tr.Dispatches[math16].Agent != math16 {
			t.Errorf("%+v: %d agents, the last %q", opt, len(tr.Agents), tr.Agents[len(tr.Agents)-1])
		}
		_, err = parseString(t, past, opt)
		if err == nil || !strings.Contains(err.Error(), "Agent_Id: more than 65536 distinct agents") {
			t.Errorf("%+v: %d agents: %v, want the limit named", opt, math16+2, err)
		}
	}
}

// An inversion is a row that starts before the row above it: the first row has none
// above it, even when its timestamp is negative.
func TestInversionsStartAtTheSecondRow(t *testing.T) {
	t.Parallel()
	ds := []flatDispatch{{Start: -5, End: 1, Grid: 1, Name: "a", Agent: "Agent 1"}, {Start: 10, End: 20, Grid: 1, Name: "b", Agent: "Agent 1"}, {Start: 7, End: 9, Grid: 1, Name: "c", Agent: "Agent 1"}}
	tr, err := parseString(t, renderTrace(layoutSpec{header: header7}, ds, "\n"), parseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Inversions != 1 || tr.Rows != 3 || tr.Dispatches[0].Start != -5 {
		t.Errorf("inversions %d rows %d first start %d, want 1, 3, -5", tr.Inversions, tr.Rows, tr.Dispatches[0].Start)
	}
}

// A trace of a header alone has no agents, with or without an agent column.
func TestEmptyTraceHasNoAgents(t *testing.T) {
	t.Parallel()
	noAgent := []string{"Kernel_Name", "Start_Timestamp", "End_Timestamp"}
	for _, h := range [][]string{header7, headerLegacy, noAgent} {
		tr, err := parseString(t, renderTrace(layoutSpec{header: h}, nil, "\n"), parseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Rows != 0 || len(tr.Agents) != 0 || len(tr.Names) != 0 {
			t.Errorf("%s: rows %d agents %q names %q", tr.Layout, tr.Rows, tr.Agents, tr.Names)
		}
	}
	// Without the column, each dispatch's agent is the one empty text.
	tr, err := parseString(t, renderTrace(layoutSpec{header: noAgent}, []flatDispatch{{Start: 1, End: 2, Name: "k"}}, "\n"), parseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Agents) != 1 || tr.Agents[0] != "" || tr.Dispatches[0].Agent != 0 {
		t.Errorf("no agent column: agents %q", tr.Agents)
	}
}

// The agent and Dispatch_Id columns count wherever the header puts them, first too.
func TestAgentAndIDInTheFirstColumn(t *testing.T) {
	t.Parallel()
	tr, err := parseString(t, "Dispatch_Id,Agent_Id,Kernel_Name,Start_Timestamp,End_Timestamp\n1,\"Agent 2\",k,10,20\n1,\"Agent 2\",k,10,20\n2,\"Agent 3\",k,30,40\n", parseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Rows != 2 || tr.Duplicates != 1 || tr.FirstDuplicate != 1 {
		t.Errorf("Dispatch_Id first: rows %d duplicates %d", tr.Rows, tr.Duplicates)
	}
	tr, err = parseString(t, "Agent_Id,Kernel_Name,Start_Timestamp,End_Timestamp\n\"Agent 2\",k,10,20\n\"Agent 3\",k,30,40\n", parseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Agents) != 2 || tr.Agents[1] != "Agent 3" || tr.Dispatches[1].Agent != 1 {
		t.Errorf("Agent_Id first: agents %q", tr.Agents)
	}
}

// Row shapes at the edges of the hand-written row reader: an empty quoted cell, an
// empty last cell, one cell too many through a trailing comma, and a numeric cell of
// letters that the eight-digits-at-a-time path must not take for digits.
func TestRowEdges(t *testing.T) {
	t.Parallel()
	const hdr = "Kernel_Name,Start_Timestamp,End_Timestamp,Agent_Id\n"
	tr, err := parseString(t, hdr+"\"\",10,20,\"\"\nk,30,40,\n", parseOptions{})
	if err != nil {
		t.Fatalf("empty quoted and empty last cells: %v", err)
	}
	if tr.Rows != 2 || tr.Names[tr.Dispatches[0].Name] != "" || tr.Names[tr.Dispatches[1].Name] != "k" || len(tr.Agents) != 1 || tr.Agents[0] != "" {
		t.Errorf("names %q agents %q", tr.Names, tr.Agents)
	}
	for _, c := range []struct{ rows, want string }{
		{"k,10,20,\"Agent 1\",\n", "trace.csv:2: row has 5 cells, the header has 4 (an unquoted comma or a stray quote in a cell?)"},
		{"k,10\n", "trace.csv:2: row has 2 cells, the header has 4 (truncated row: was the profiler stopped before it finished writing?)"},
		{"k,10,zzzzzzzzzzzzzzzz,a\n", `End_Timestamp "zzzzzzzzzzzzzzzz": not a number`},
		{"k,GGGGGGGGHHHHHHHH,20,a\n", `Start_Timestamp "GGGGGGGGHHHHHHHH": not a number`},
		{"k,10,20\n", "row has 3 cells, the header has 4"},
	} {
		_, err := parseString(t, hdr+c.rows, parseOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.rows, err, c.want)
		}
	}
	_, err = parseString(t, "Kernel_Name,Start_Timestamp,End_Timestamp\nk,10,\n", parseOptions{})
	if err == nil || !strings.Contains(err.Error(), `End_Timestamp "": not a number`) {
		t.Errorf("an empty last number: %v", err)
	}
}

// Header edges: the first of two columns of one name counts, so does the first of two
// single total grid columns (in the first place too), and a header with a trailing
// comma has an empty last column that rows must fill.
func TestHeaderEdges(t *testing.T) {
	t.Parallel()
	tr, err := parseString(t, "Kernel_Name,Start_Timestamp,End_Timestamp,Kernel_Name\nk1,1,2,k2\n", parseOptions{})
	if err != nil || tr.Names[tr.Dispatches[0].Name] != "k1" {
		t.Errorf("two Kernel_Name columns: %v, %v", tr, err)
	}
	tr, err = parseString(t, "Grid_Size,Kernel_Name,Start_Timestamp,End_Timestamp,Grd\n256,k,1,2,999\n", parseOptions{})
	if err != nil || !tr.HasGrid || tr.Dispatches[0].Grid != 256 {
		t.Errorf("Grid_Size first: %+v, %v", tr, err)
	}
	tb, err := parseTable([]byte("A,B,\n1,2,\n"), "s.csv")
	if err != nil || len(tb.header) != 3 || tb.header[2] != "" || len(tb.rows) != 1 || tb.rows[0][2] != "" {
		t.Errorf("a trailing comma: %+v, %v", tb, err)
	}
	// A row with more cells than the header, the extra one an unterminated quote.
	_, err = parseString(t, "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2,\"x\n", parseOptions{})
	if err == nil || !strings.Contains(err.Error(), "row has 4 cells, the header has 3 (an unquoted comma") {
		t.Errorf("an extra unterminated cell: %v", err)
	}
}
