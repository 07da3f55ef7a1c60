package rocprof

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
)

// merger joins parsed chunks in file order: it maps each worker's name and agent
// indices to global ones (numbered by first appearance in the file, so the result does
// not depend on which worker took which chunk), counts inversions and line numbers.
type merger struct {
	name       string
	size       int64 // bytes in the input, -1 when unknown
	consumed   int64 // bytes of rows merged so far
	line       int   // the last line merged so far; starts at the header's
	t          *Trace
	names      *interner // global tables; the Trace takes their lists
	agents     *interner
	nameRemap  [][]int32 // per worker: local index -> global index, -1 when not seen yet
	agentRemap [][]int32
	prevStart  int64
	seen       *idSet // Dispatch_Ids merged so far; nil without the column
}

func (m *merger) merge(r result) error {
	if r.rerr != nil {
		return &ParseError{File: m.name, Line: m.line + r.rerr.line, Column: r.rerr.column, Msg: r.rerr.msg}
	}
	for len(m.nameRemap) <= r.wid {
		m.nameRemap = append(m.nameRemap, nil)
		m.agentRemap = append(m.agentRemap, nil)
	}
	nr := extend(m.nameRemap[r.wid], len(r.names))
	ar := extend(m.agentRemap[r.wid], len(r.agents))
	m.nameRemap[r.wid], m.agentRemap[r.wid] = nr, ar

	t := m.t
	disp, ids := r.s.disp, r.s.ids
	m.reserve(len(disp), r.bytes)
	for k, d := range disp {
		if m.seen != nil && !m.seen.add(ids[k]) {
			if t.Duplicates == 0 {
				t.FirstDuplicate = ids[k]
			}
			t.Duplicates++
			continue
		}
		g := nr[d.Name]
		if g < 0 {
			g = int32(m.names.getString(validText(r.names[d.Name])))
			nr[d.Name] = g
		}
		d.Name = uint32(g)
		if len(r.agents) > 0 {
			a := ar[d.Agent]
			if a < 0 {
				a = int32(m.agents.getString(validText(r.agents[d.Agent])))
				if a > math16 {
					return &ParseError{File: m.name, Line: m.line + 1, Column: "Agent_Id",
						Msg: fmt.Sprintf("Agent_Id: more than %d distinct agents", math16+1)}
				}
				ar[d.Agent] = a
			}
			d.Agent = uint16(a)
		}
		if len(t.Dispatches) > 0 && d.Start < m.prevStart {
			t.Inversions++
		}
		m.prevStart = d.Start
		t.Dispatches = append(t.Dispatches, d)
	}
	m.line += r.lines
	m.consumed += int64(r.bytes)
	return nil
}

// extend grows a remap table to n entries, new ones unset.
func extend(s []int32, n int) []int32 {
	for len(s) < n {
		s = append(s, -1)
	}
	return s
}

// reserve makes room for n more records before a chunk of nbytes is appended. Growing
// by doubling would briefly hold three times the final array; instead the capacity is
// projected from the rows per byte seen so far, so a file is usually one allocation.
// The first projection rests on one chunk, whose rows may be longer than the rest
// (the load and prefill kernels come first), so it is padded more: pages of the array
// that are never written are never resident either.
func (m *merger) reserve(n, nbytes int) {
	d := m.t.Dispatches
	need := len(d) + n
	if need <= cap(d) {
		return
	}
	c := max(need, 2*cap(d))
	if done := m.consumed + int64(nbytes); m.size > 0 && done > 0 {
		pad := 1.1
		if cap(d) == 0 {
			pad = 1.5
		}
		proj := int(float64(need)*float64(m.size)/float64(done)*pad) + 64
		// A huge file of tiny rows (or of blank lines after a few rows) must not ask
		// for an array the size of the file up front: past maxProjected the array
		// grows with the rows actually read.
		proj = min(proj, need+maxProjected)
		c = max(need, proj, cap(d)+cap(d)/4)
	}
	grown := make([]Dispatch, len(d), c)
	copy(grown, d)
	m.t.Dispatches = grown
}

// maxProjected bounds how many records reserve adds ahead of the rows read (512 MiB of
// address space; a real trace of up to 16M rows is still one allocation).
const maxProjected = 1 << 24

// validText is the one rule for text from a trace that is not valid UTF-8: each run of
// invalid bytes becomes U+FFFD, here, once, so the decode_kernels CSV and the summary
// JSON name a kernel the same way (JSON cannot carry the raw bytes). Names that differ
// only in their invalid bytes become one name.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// idSet remembers Dispatch_Ids: a bitmap for the small ids rocprofv3 writes (numbered
// from 1 per process), a map for any other.
type idSet struct {
	bits  []uint64
	other map[int64]struct{}
}

// maxBitmapID bounds the bitmap at 8 MiB; larger or negative ids go to the map.
const maxBitmapID = 1 << 26

// add records id and reports whether it is new.
func (s *idSet) add(id int64) bool {
	if id >= 0 && id < maxBitmapID {
		w := int(id >> 6)
		if w >= len(s.bits) {
			grown := make([]uint64, min(max(2*len(s.bits), w+1, 1024), maxBitmapID>>6))
			copy(grown, s.bits)
			s.bits = grown
		}
		bit := uint64(1) << (id & 63)
		if s.bits[w]&bit != 0 {
			return false
		}
		s.bits[w] |= bit
		return true
	}
	if s.other == nil {
		s.other = map[int64]struct{}{}
	}
	if _, dup := s.other[id]; dup {
		return false
	}
	s.other[id] = struct{}{}
	return true
}

// finish sorts the records and fills in the counts.
func (m *merger) finish(h *traceHeader) *Trace {
	t := m.t
	t.Rows = len(t.Dispatches)
	t.Names, t.Agents = m.names.list, m.agents.list
	if !h.hasAgent && t.Rows > 0 {
		t.Agents = []string{""}
	}
	// rocprofv3 writes rows in buffer flush order: nearly sorted, so check first and
	// use a stable sort that is fast on nearly sorted input.
	if !slices.IsSortedFunc(t.Dispatches, compareDispatch) {
		slices.SortStableFunc(t.Dispatches, compareDispatch)
	}
	return t
}

func compareDispatch(a, b Dispatch) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	return cmp.Compare(a.End, b.End)
}

// sizeHint returns how many bytes r holds, or -1 when it cannot tell.
func sizeHint(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len())
	case *os.File:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		off, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			off = 0
		}
		return fi.Size() - off
	}
	return -1
}
