package rocprof

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"sync"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// Dispatch is one kernel dispatch, compact: no text.
type Dispatch struct {
	Start, End int64  // ns, host CLOCK_BOOTTIME
	Grid       int64  // product of Grid_Size_X/Y/Z, each factor at least 1; 0 when the columns are absent
	Name       uint32 // index into Trace.Names (interned)
	Agent      uint16 // index into Trace.Agents (interned Agent_Id text, e.g. "Agent 2" or "4")
}

// Trace is a parsed kernel_trace.csv.
type Trace struct {
	Names      []string   // kernel names in order of first appearance in the file
	Agents     []string   // Agent_Id texts in order of first appearance; "" when the file has no agent column
	Dispatches []Dispatch // sorted by Start (stable: ties keep End asc then file order)
	HasGrid    bool
	Layout     string // "7" (7.0-10.0, 22 cols), "6.4" (6.3/6.4, 18), "6.2" (16), "rocpd-csv", "legacy"
	Rows       int
	Inversions int // rows whose Start was lower than the previous row's (file order)
	// Duplicates counts the rows left out because they repeat the Dispatch_Id of an
	// earlier row (a buffer written twice, files joined twice); FirstDuplicate is the
	// first such id. Layouts without a Dispatch_Id column cannot tell: 0.
	Duplicates     int
	FirstDuplicate int64
}

// Layout names, as set in Trace.Layout.
const (
	Layout7        = "7"
	Layout64       = "6.4"
	Layout62       = "6.2"
	LayoutRocpdCSV = "rocpd-csv"
	LayoutLegacy   = "legacy"
)

// ReadKernelTrace reads a kernel_trace.csv. A missing file means the profiled process
// dispatched no kernel (rocprofv3 writes no file for an empty domain): it returns an
// empty Trace and no error.
func ReadKernelTrace(path string) (*Trace, error) {
	return ReadKernelTraceContext(context.Background(), path)
}

// ReadKernelTraceContext is ReadKernelTrace that stops reading, with ctx's error, within
// one chunk of ctx being done. Only a regular file is read: a FIFO or a device is an
// error, without waiting on it.
func ReadKernelTraceContext(ctx context.Context, path string) (*Trace, error) {
	f, err := infile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Trace{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening kernel trace: %w", err)
	}
	defer f.Close()
	return parseKernelTrace(infile.Reader(ctx, f), path, parseOptions{size: sizeHint(f)})
}

// ParseKernelTrace parses a kernel trace from r; name is the file name errors show.
func ParseKernelTrace(r io.Reader, name string) (*Trace, error) {
	return parseKernelTrace(r, name, parseOptions{})
}

// parseOptions tune the reader; the zero value is the production setting. Tests use
// tiny chunks to push every row boundary through the parallel path.
type parseOptions struct {
	chunkSize int   // bytes per chunk; 0 means defaultChunkSize
	workers   int   // 0 means GOMAXPROCS
	size      int64 // bytes in the input when r cannot tell (a wrapped file); 0: ask r
}

const (
	// defaultChunkSize keeps a chunk in the CPU cache between the read that copies it
	// in and the worker that parses it (larger chunks measured slower), and keeps the
	// buffers in flight, a few per worker, a small part of the memory budget.
	defaultChunkSize = 512 << 10
	maxWorkers       = 16

	// maxLineBytes bounds one line: a real row is under 4 KiB even with the longest
	// template kernel names, and without a bound a file with no newline (/dev/zero
	// copied to disk, a sparse file) would be buffered whole.
	maxLineBytes = 1 << 20
	// maxColumns bounds the header: every layout has fewer than 30 columns.
	maxColumns = 1024
)

// colRole is what the reader does with one column.
type colRole uint8

const (
	roleSkip colRole = iota
	roleName
	roleAgent
	// Roles from roleStart on hold integers.
	roleStart
	roleEnd
	roleGrid     // one factor of the grid product
	roleDispatch // Dispatch_Id, to find repeated rows
)

// traceHeader is the column map of a kernel trace.
type traceHeader struct {
	cells    []string // header cells as written, made safe to print (safetext.Clean)
	roles    []colRole
	startCol int
	endCol   int
	hasGrid  bool
	hasAgent bool
	hasID    bool // a Dispatch_Id column
	layout   string
}

// parseTraceHeader maps the header cells to roles by name, case-insensitively.
func parseTraceHeader(line []byte, name string, lineNo int) (*traceHeader, error) {
	if n := bytes.Count(line, []byte{','}) + 1; n > maxColumns {
		return nil, &ParseError{File: name, Line: lineNo,
			Msg: fmt.Sprintf("header: %d columns, more than the %d a kernel trace can have: is this a rocprofv3 kernel_trace.csv?", n, maxColumns)}
	}
	cells, err := splitCells(line)
	if err != nil {
		return nil, &ParseError{File: name, Line: lineNo, Msg: "header: " + err.Error()}
	}
	shown := make([]string, len(cells))
	for i, c := range cells {
		shown[i] = safetext.Clean(c)
	}
	h := &traceHeader{cells: shown, roles: make([]colRole, len(cells)), startCol: -1, endCol: -1}
	nameCol := -1
	lower := make([]string, len(cells))
	has := map[string]bool{}
	for i, c := range cells {
		lower[i] = strings.ToLower(strings.TrimSpace(c))
		has[lower[i]] = true
	}
	legacy := false
	take := func(col *int, i int, role colRole) {
		if *col < 0 {
			*col = i
			h.roles[i] = role
		}
	}
	agentCol, singleGrid, idCol := -1, -1, -1
	for i, c := range lower {
		switch c {
		case "kernel_name":
			take(&nameCol, i, roleName)
		case "kernelname":
			legacy = true
			take(&nameCol, i, roleName)
		case "start_timestamp":
			take(&h.startCol, i, roleStart)
		case "beginns":
			legacy = true
			take(&h.startCol, i, roleStart)
		case "end_timestamp":
			take(&h.endCol, i, roleEnd)
		case "endns":
			legacy = true
			take(&h.endCol, i, roleEnd)
		case "agent_id":
			take(&agentCol, i, roleAgent)
		case "dispatch_id":
			take(&idCol, i, roleDispatch)
		case "gpu-id", "gpu_id":
			legacy = true
			take(&agentCol, i, roleAgent)
		case "grid_size_x", "grid_size_y", "grid_size_z":
			h.roles[i] = roleGrid
			h.hasGrid = true
		case "grid_size", "grd":
			if singleGrid < 0 {
				singleGrid = i
			}
		}
	}
	// A single total grid column (rocprof v2, the counter collection) counts only when
	// the per-axis ones are absent.
	if !h.hasGrid && singleGrid >= 0 {
		h.roles[singleGrid] = roleGrid
		h.hasGrid = true
	}
	h.hasAgent = agentCol >= 0
	h.hasID = idCol >= 0
	for _, req := range []struct {
		col  int
		want string
	}{{nameCol, "Kernel_Name"}, {h.startCol, "Start_Timestamp"}, {h.endCol, "End_Timestamp"}} {
		if req.col < 0 {
			return nil, &ParseError{File: name, Line: lineNo, Column: req.want,
				Msg: fmt.Sprintf("no %s column (have: %s)", req.want, safetext.Clean(strings.Join(cells, ", ")))}
		}
	}
	switch {
	case legacy:
		h.layout = LayoutLegacy
	case lower[0] == "guid":
		h.layout = LayoutRocpdCSV
	case has["stream_id"]:
		h.layout = Layout7
	case has["dispatch_id"] || has["thread_id"]:
		h.layout = Layout64
	default:
		h.layout = Layout62
	}
	return h, nil
}

// interner gives each distinct text a small index. A lookup keyed by string(b) does
// not allocate, so only a new text costs an allocation.
//
// A trace has a few dozen distinct kernel names of 100-1000 bytes each, looked up once
// per row: hashing them all is a fifth of the reader's time. So a small table indexed
// by a fingerprint of a few bytes remembers the last name seen per slot; a hit is
// confirmed by comparing the text, and a miss falls back to the map.
type interner struct {
	idx   map[string]uint32
	list  []string
	cache [256]uint32 // fingerprint -> index+1; 0 is empty
}

func newInterner() *interner { return &interner{idx: map[string]uint32{}} }

// fingerprint mixes the length with 8 bytes from the middle and 8 from the end, where
// kernel names sharing a long prefix (the namespace) still differ.
func fingerprint(b []byte) uint8 {
	n := len(b)
	var m, e uint64
	if n >= 8 {
		m = binary.LittleEndian.Uint64(b[(n-8)/2:])
		e = binary.LittleEndian.Uint64(b[n-8:])
	} else {
		for _, c := range b {
			e = e<<8 | uint64(c)
		}
	}
	return uint8((m*0x9E3779B97F4A7C15 ^ e*0xC2B2AE3D27D4EB4F ^ uint64(n)*0x165667B19E3779F9) >> 56)
}

func (in *interner) get(b []byte) uint32 {
	f := fingerprint(b)
	if c := in.cache[f]; c != 0 && in.list[c-1] == string(b) {
		return c - 1
	}
	i := in.lookup(b)
	in.cache[f] = i + 1
	return i
}

func (in *interner) lookup(b []byte) uint32 {
	if i, ok := in.idx[string(b)]; ok {
		return i
	}
	return in.getString(string(b))
}

// getString is get for a text that is already a string (no copy is made).
func (in *interner) getString(s string) uint32 {
	if i, ok := in.idx[s]; ok {
		return i
	}
	i := uint32(len(in.list))
	in.idx[s] = i
	in.list = append(in.list, s)
	return i
}

// rowError is a parse error located by its line within a chunk.
type rowError struct {
	line   int // 1-based within the chunk
	column string
	msg    string
}

// worker parses chunks with its own intern tables, so workers never share a map.
type worker struct {
	h      *traceHeader
	names  *interner
	agents *interner
	id     int64 // the Dispatch_Id of the row parseRow read last
}

// parseChunk appends the chunk's dispatches to out, with worker-local name and agent
// indices, and their Dispatch_Ids to ids when the header has the column. It returns the
// number of lines it consumed (all of them, or up to and including a bad one).
func (w *worker) parseChunk(data []byte, out []Dispatch, ids []int64) ([]Dispatch, []int64, int, *rowError) {
	lines := 0
	for pos := 0; pos < len(data); {
		var line []byte
		if nl := bytes.IndexByte(data[pos:], '\n'); nl >= 0 {
			line = data[pos : pos+nl]
			pos += nl + 1
		} else {
			line = data[pos:]
			pos = len(data)
		}
		lines++
		line = trimLine(line)
		if len(line) == 0 {
			continue
		}
		out = append(out, Dispatch{})
		if err := w.parseRow(line, &out[len(out)-1]); err != nil {
			err.line = lines
			return out[:len(out)-1], ids, lines, err
		}
		if w.h.hasID {
			ids = append(ids, w.id)
		}
	}
	return out, ids, lines, nil
}

// parseRow parses one data line. It is the hot loop of the reader: integers are
// parsed while their cell is scanned, and quoted cells are crossed with IndexByte.
func (w *worker) parseRow(line []byte, d *Dispatch) *rowError {
	h := w.h
	grid := int64(1)
	n := len(line)
	p := 0
	for c, role := range h.roles {
		if p > n {
			return cellCountError(line, len(h.roles))
		}
		var cell []byte
		var v int64
		switch {
		case p < n && line[p] == '"':
			q := p + 1
			for {
				i := bytes.IndexByte(line[q:], '"')
				if i < 0 {
					return &rowError{column: h.cells[c], msg: h.cells[c] + ": " + errUnterminated.Error()}
				}
				q += i
				if q+1 == n || line[q+1] == ',' {
					break
				}
				q++
			}
			cell = line[p+1 : q]
			p = q + 2
			if role >= roleStart {
				var ok bool
				if v, ok = parseInt(cell); !ok {
					return w.notNumber(c, cell)
				}
			}
		case role >= roleStart:
			// Digits only, at most 18 of them: no overflow possible. Anything else
			// (a sign, a long or bad cell) goes through parseInt.
			start := p
			// Timestamps have 16 digits: take them 8 at a time.
			for p+8 <= n {
				x := binary.LittleEndian.Uint64(line[p:])
				if !eightDigits(x) {
					break
				}
				v = v*100000000 + int64(parseEight(x))
				p += 8
			}
			for p < n {
				digit := line[p] - '0'
				if digit > 9 {
					break
				}
				v = v*10 + int64(digit)
				p++
			}
			if p == start || p-start > 18 || (p < n && line[p] != ',') {
				for p < n && line[p] != ',' {
					p++
				}
				var ok bool
				if v, ok = parseInt(line[start:p]); !ok {
					return w.notNumber(c, line[start:p])
				}
			}
			p++
		default:
			start := p
			for p < n && line[p] != ',' {
				p++
			}
			cell = line[start:p]
			p++
		}
		switch role {
		case roleName:
			d.Name = w.names.get(cell)
		case roleAgent:
			a := w.agents.get(cell)
			if a > math16 {
				return &rowError{column: h.cells[c], msg: fmt.Sprintf("%s: more than %d distinct agents", h.cells[c], math16+1)}
			}
			d.Agent = uint16(a)
		case roleStart:
			d.Start = v
		case roleEnd:
			d.End = v
		case roleGrid:
			grid *= max(v, 1)
		case roleDispatch:
			w.id = v
		}
	}
	if p <= n {
		return cellCountError(line, len(h.roles))
	}
	if d.End < d.Start {
		return &rowError{column: h.cells[h.endCol], msg: fmt.Sprintf("%s %d is before %s %d", h.cells[h.endCol], d.End, h.cells[h.startCol], d.Start)}
	}
	if h.hasGrid {
		d.Grid = grid
	}
	return nil
}

// eightDigits reports whether all 8 bytes of x are ASCII digits.
func eightDigits(x uint64) bool {
	return ((x+0x4646464646464646)|(x-0x3030303030303030))&0x8080808080808080 == 0
}

// parseEight converts 8 ASCII digits, loaded little-endian (first digit lowest), to
// their value, with three multiplications instead of eight.
func parseEight(x uint64) uint64 {
	x -= 0x3030303030303030
	x = x*10 + x>>8 // pairs of digits
	x = ((x&0x000000FF000000FF)*(100+1000000<<32) + ((x>>16)&0x000000FF000000FF)*(1+10000<<32)) >> 32
	return x
}

func (w *worker) notNumber(c int, cell []byte) *rowError {
	col := w.h.cells[c]
	return &rowError{column: col, msg: fmt.Sprintf("%s %s: not a number", col, safetext.QuoteBytes(cell))}
}

// cellCountError is the error for a row whose cell count differs from the header's.
func cellCountError(line []byte, want int) *rowError {
	got, _ := countCells(line)
	if got < want {
		return &rowError{msg: fmt.Sprintf("row has %d cells, the header has %d (truncated row: was the profiler stopped before it finished writing?)", got, want)}
	}
	return &rowError{msg: fmt.Sprintf("row has %d cells, the header has %d (an unquoted comma or a stray quote in a cell?)", got, want)}
}

// math16 is the largest agent index a Dispatch can hold.
const math16 = 1<<16 - 1

// slot is one chunk's worth of reusable memory: the text buffer and the records.
type slot struct {
	buf  []byte
	disp []Dispatch
	ids  []int64 // Dispatch_Id of each record, when the header has the column
}

// job is a chunk handed to a worker, or a read error to pass on in order.
type job struct {
	idx  int
	s    *slot
	data []byte
	err  error
}

// result is a parsed chunk. names and agents are snapshots of the worker's tables:
// the worker only appends to them, so the merger can read the first len entries while
// the worker goes on.
type result struct {
	idx    int
	s      *slot
	names  []string
	agents []string
	wid    int
	bytes  int // length of the chunk's text
	lines  int
	rerr   *rowError
	err    error
}

func parseKernelTrace(r io.Reader, name string, opt parseOptions) (*Trace, error) {
	chunkSize := opt.chunkSize
	if chunkSize <= 0 {
		chunkSize = defaultChunkSize
	}
	nw := opt.workers
	if nw <= 0 {
		nw = min(runtime.GOMAXPROCS(0), maxWorkers)
	}
	size := opt.size
	if size == 0 {
		size = sizeHint(r)
	}

	ch := &chunker{r: r}
	firstBuf := chunkSize
	if size >= 0 && size+1 < int64(firstBuf) {
		firstBuf = int(size) + 1
	}
	// The header is the first line that is not blank; the chunk holding it is the
	// first chunk of rows.
	buf := make([]byte, firstBuf)
	hdrNo := 1
	var hdrLine, rest []byte
	for start := true; ; start = false {
		var data []byte
		var err error
		if data, buf, err = ch.fill(buf); err != nil {
			if errors.Is(err, errLineTooLong) {
				return nil, &ParseError{File: name, Line: hdrNo, Msg: lineTooLong}
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if start {
			data = bytes.TrimPrefix(data, bom)
		}
		for len(data) > 0 && hdrLine == nil {
			line := data
			if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
				line, data = data[:nl], data[nl+1:]
			} else {
				data = nil
			}
			if line = trimLine(line); len(line) > 0 {
				hdrLine = line
				break
			}
			hdrNo++
		}
		if hdrLine != nil {
			rest = data
			break
		}
		if ch.eof {
			return nil, &ParseError{File: name, Line: 1, Msg: "empty file: no header row (did the profiler exit before writing it?)"}
		}
	}
	first := &slot{buf: buf}
	h, err := parseTraceHeader(hdrLine, name, hdrNo)
	if err != nil {
		return nil, err
	}

	m := &merger{name: name, size: size, line: hdrNo, names: newInterner(), agents: newInterner(), t: &Trace{HasGrid: h.hasGrid, Layout: h.layout}}
	if h.hasID {
		m.seen = &idSet{}
	}

	if ch.eof {
		// The whole file fit in one chunk: parse it here, no goroutines.
		w := &worker{h: h, names: newInterner(), agents: newInterner()}
		disp, ids, lines, rerr := w.parseChunk(rest, nil, nil)
		first.disp, first.ids = disp, ids
		res := result{s: first, names: w.names.list, agents: w.agents.list, lines: lines, rerr: rerr}
		res.bytes = len(rest)
		if err := m.merge(res); err != nil {
			return nil, err
		}
		return m.finish(h), nil
	}

	nslots := nw + 2
	free := make(chan *slot, nslots)
	for i := 1; i < nslots; i++ {
		free <- &slot{}
	}
	jobs := make(chan job, nslots)
	results := make(chan result, nslots)
	done := make(chan struct{})
	// Stop and wait for every goroutine before returning, also on an error: none may
	// touch r after the caller gets control back (it may close the file).
	var reader, workers sync.WaitGroup
	defer func() {
		close(done)
		reader.Wait()
		workers.Wait()
	}()

	reader.Go(func() {
		defer close(jobs)
		send := func(j job) bool {
			select {
			case jobs <- j:
				return true
			case <-done:
				return false
			}
		}
		if !send(job{idx: 0, s: first, data: rest}) {
			return
		}
		for idx := 1; ; idx++ {
			var s *slot
			select {
			case s = <-free:
			case <-done:
				return
			}
			if s.buf == nil {
				s.buf = make([]byte, chunkSize)
			}
			data, buf, err := ch.fill(s.buf)
			s.buf = buf
			if err != nil {
				send(job{idx: idx, s: s, err: err})
				return
			}
			if len(data) == 0 {
				return
			}
			if !send(job{idx: idx, s: s, data: data}) {
				return
			}
		}
	})

	for wid := 0; wid < nw; wid++ {
		workers.Go(func() {
			w := &worker{h: h, names: newInterner(), agents: newInterner()}
			for j := range jobs {
				res := result{idx: j.idx, s: j.s, wid: wid, bytes: len(j.data), err: j.err}
				if j.err == nil {
					j.s.disp, j.s.ids, res.lines, res.rerr = w.parseChunk(j.data, j.s.disp[:0], j.s.ids[:0])
					res.names, res.agents = w.names.list, w.agents.list
				}
				select {
				case results <- res:
				case <-done:
					return
				}
			}
		})
	}
	go func() {
		workers.Wait()
		close(results)
	}()

	// Merge in file order as results arrive; a chunk that finished early waits in
	// pending (at most nslots of them, since each holds a slot).
	pending := map[int]result{}
	next := 0
	for res := range results {
		pending[res.idx] = res
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if errors.Is(r.err, errLineTooLong) {
				return nil, &ParseError{File: name, Line: m.line + 1, Msg: lineTooLong}
			}
			if r.err != nil {
				return nil, fmt.Errorf("%s: %w", name, r.err)
			}
			if err := m.merge(r); err != nil {
				return nil, err
			}
			r.s.disp, r.s.ids = r.s.disp[:0], r.s.ids[:0]
			free <- r.s
			next++
		}
	}
	return m.finish(h), nil
}
