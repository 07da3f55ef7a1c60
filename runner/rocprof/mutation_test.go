package rocprof

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

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

// reserve sizes the dispatch array from the bytes read so far: the first projection
// padded by half, later ones by a tenth, at least a quarter more than it has, at most
// maxProjected past the rows in hand, and plain doubling when the input's size is
// unknown. Room already there is used as it is.
func TestReserve(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		size, consumed  int64
		have, n, nbytes int
		want            int
	}{
		{"unknown size", -1, 0, 0, 100, 1000, 100},
		{"unknown size doubles", -1, 1000, 100, 10, 100, 200},
		{"empty input means unknown", 0, 0, 0, 10, 100, 10},
		{"first projection", 10000, 0, 0, 100, 1000, 1564},
		{"later projection", 10000, 1000, 1564, 200, 1000, 9766},
		{"a quarter more at least", 11000, 10000, 1000, 10, 1000, 1250},
		{"projection bounded", 1 << 40, 0, 0, 10, 100, 10 + maxProjected},
	}
	for _, c := range cases {
		m := &merger{size: c.size, consumed: c.consumed, t: &Trace{Dispatches: make([]Dispatch, c.have)}}
		m.reserve(c.n, c.nbytes)
		if got := cap(m.t.Dispatches); got != c.want || len(m.t.Dispatches) != c.have {
			t.Errorf("%s: cap %d len %d, want cap %d len %d", c.name, got, len(m.t.Dispatches), c.want, c.have)
		}
	}
	d := make([]Dispatch, 10, 20)
	m := &merger{size: -1, t: &Trace{Dispatches: d}}
	m.reserve(10, 100)
	if cap(m.t.Dispatches) != 20 || &m.t.Dispatches[:1][0] != &d[:1][0] {
		t.Errorf("room for exactly the new rows: reallocated to cap %d", cap(m.t.Dispatches))
	}
	if s := extend([]int32{3}, 4); len(s) != 4 || s[0] != 3 || s[1] != -1 || s[3] != -1 {
		t.Errorf("extend([3], 4) = %v", s)
	}
}

// idSet: small ids in the bitmap up to its last one, larger and negative ones in the
// map; each is new once.
func TestIDSet(t *testing.T) {
	t.Parallel()
	var s idSet
	ids := []int64{0, 5, 63, 64, 1 << 20, maxBitmapID - 1, maxBitmapID, -3, 1 << 40}
	for _, id := range ids {
		if !s.add(id) {
			t.Errorf("add(%d) the first time: not new", id)
		}
	}
	for _, id := range ids {
		if s.add(id) {
			t.Errorf("add(%d) again: new", id)
		}
	}
	if len(s.bits) != maxBitmapID>>6 || len(s.other) != 3 {
		t.Errorf("bitmap of %d words, %d ids in the map; want %d and 3", len(s.bits), len(s.other), maxBitmapID>>6)
	}
}

// sizeHint counts the bytes from the reader's position, and knows nothing of a pipe.
func TestSizeHint(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "t.csv", strings.Repeat("x", 100))
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := sizeHint(f); got != 100 {
		t.Errorf("at 0: %d", got)
	}
	if _, err := f.Seek(30, 0); err != nil {
		t.Fatal(err)
	}
	if got := sizeHint(f); got != 70 {
		t.Errorf("at 30: %d, want 70", got)
	}
	if got := sizeHint(strings.NewReader("abc")); got != 3 {
		t.Errorf("a strings.Reader of 3: %d", got)
	}
	if got := sizeHint(io.MultiReader(strings.NewReader("abc"))); got != -1 {
		t.Errorf("a reader that cannot tell: %d, want -1", got)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := sizeHint(r); got != -1 {
		t.Errorf("a pipe: %d, want -1", got)
	}
}

// OpenedResultFiles reads every line, blank ones first or between included.
func TestOpenedResultFilesBlankLines(t *testing.T) {
	t.Parallel()
	got := OpenedResultFiles([]byte("\n\nW20261201 rocprofv3: Opened result file: /o/a_agent_info.csv\n\nOpened result file: /o/b.csv"))
	if len(got) != 2 || got[0] != "/o/a_agent_info.csv" || got[1] != "/o/b.csv" {
		t.Errorf("got %q", got)
	}
}

func TestIsDigits(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{"": false, "0": true, "9": true, "4242": true, "42a": false, "a42": false, "4/2": false, "4:2": false, " 42": false} {
		if got := isDigits(s); got != want {
			t.Errorf("isDigits(%q) = %v, want %v", s, got, want)
		}
	}
}

// A header of maxColumns columns is read; one more is refused, in the small tables and
// in the kernel trace.
func TestColumnLimitAtItsEdge(t *testing.T) {
	t.Parallel()
	header := func(n int) string {
		cells := make([]string, n)
		for i := range cells {
			cells[i] = fmt.Sprintf("C%d", i)
		}
		return strings.Join(cells, ",")
	}
	if tb, err := parseTable([]byte(header(maxColumns)+"\n"), "s.csv"); err != nil || len(tb.header) != maxColumns {
		t.Errorf("table of %d columns: %v", maxColumns, err)
	}
	if _, err := parseTable([]byte(header(maxColumns+1)+"\n"), "s.csv"); err == nil || !strings.Contains(err.Error(), "1025 columns, more than the 1024") {
		t.Errorf("table of %d columns: %v", maxColumns+1, err)
	}
	if h, err := parseTraceHeader([]byte(header(maxColumns-3)+",Kernel_Name,Start_Timestamp,End_Timestamp"), "t.csv", 1); err != nil || len(h.cells) != maxColumns {
		t.Errorf("trace header of %d columns: %v", maxColumns, err)
	}
	if _, err := parseTraceHeader([]byte(header(maxColumns-2)+",Kernel_Name,Start_Timestamp,End_Timestamp"), "t.csv", 1); err == nil || !strings.Contains(err.Error(), "1025 columns, more than the 1024") {
		t.Errorf("trace header of %d columns: %v", maxColumns+1, err)
	}
}

// A float column is read wherever the header puts it, the first column too; a missing
// column reads as 0.
func TestCellFloatAnyColumn(t *testing.T) {
	t.Parallel()
	tb, err := parseTable([]byte("Percentage,Name\n12.5,k\n"), "s.csv")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := tb.cellFloat(0, 0); err != nil || v != 12.5 {
		t.Errorf("column 0: %v, %v", v, err)
	}
	if v, err := tb.cellFloat(0, -1); err != nil || v != 0 {
		t.Errorf("no column: %v, %v", v, err)
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

// When the merge of several workers' chunks finds the agent past the limit, it names
// the first line of the chunk holding that row (the merge does not see rows' lines).
// Rows of 16 bytes make the chunks' bounds known: the first chunk holds what fits in
// 64 KiB after the header, each later one exactly 4096 rows.
func TestAgentLimitLineAtTheMerge(t *testing.T) {
	t.Parallel()
	const header = "Agent_Id,Kernel_Name,Start_Timestamp,End_Timestamp\n"
	var b strings.Builder
	b.WriteString(header)
	for i := range math16 + 2 {
		fmt.Fprintf(&b, "%05x,k,%03d,%03d\n", i, i%1000, i%1000)
	}
	if b.Len() != len(header)+16*(math16+2) {
		t.Fatal("rows are not 16 bytes each")
	}
	const chunk = 1 << 16
	first := (chunk - len(header)) / 16 // rows in the first chunk
	row := math16 + 1                   // 0-based: the 65,537th agent
	start := first + (row-first)/(chunk/16)*(chunk/16)
	_, err := parseKernelTrace(strings.NewReader(b.String()), "trace.csv", parseOptions{workers: 2, chunkSize: chunk})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1+start+1 || pe.Column != "Agent_Id" {
		t.Errorf("err %v, want a parse error at line %d (the chunk holding line %d)", err, 1+start+1, row+2)
	}
}
