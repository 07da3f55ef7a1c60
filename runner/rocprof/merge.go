package rocprof

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
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
	disp := r.s.disp
	m.reserve(len(disp), r.bytes)
	for _, d := range disp {
		g := nr[d.Name]
		if g < 0 {
			g = int32(m.names.getString(r.names[d.Name]))
			nr[d.Name] = g
		}
		d.Name = uint32(g)
		if len(r.agents) > 0 {
			a := ar[d.Agent]
			if a < 0 {
				a = int32(m.agents.getString(r.agents[d.Agent]))
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
		c = max(need, proj, cap(d)+cap(d)/4)
	}
	grown := make([]Dispatch, len(d), c)
	copy(grown, d)
	m.t.Dispatches = grown
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
