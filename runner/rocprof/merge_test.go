package rocprof

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

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
