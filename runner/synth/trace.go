package synth

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Layouts lists the kernel_trace.csv layouts --layout accepts (docs/formats.md §1.3).
var Layouts = []string{"7", "6.4", "6.2", "rocpd-csv"}

// traceHeaders are the exact header lines of each layout.
var traceHeaders = map[string]string{
	"7": `"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id",` +
		`"Start_Timestamp","End_Timestamp","LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count",` +
		`"Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"`,
	"6.4": `"Kind","Agent_Id","Queue_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id",` +
		`"Start_Timestamp","End_Timestamp","Private_Segment_Size","Group_Segment_Size",` +
		`"Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"`,
	"6.2": `"Kind","Agent_Id","Queue_Id","Kernel_Id","Kernel_Name","Correlation_Id",` +
		`"Start_Timestamp","End_Timestamp","Private_Segment_Size","Group_Segment_Size",` +
		`"Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"`,
	"rocpd-csv": `"Guid","Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id",` +
		`"Start_Timestamp","End_Timestamp","Lds_Block_Size","Scratch_Size","Vgpr_Count","Accum_Vgpr_Count","Sgpr_Count",` +
		`"Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"`,
}

// TraceHeader returns the exact header line of a layout.
func TraceHeader(layout string) (string, error) {
	h, ok := traceHeaders[layout]
	if !ok {
		return "", fmt.Errorf("unknown trace layout %q: want one of %s", layout, strings.Join(Layouts, ", "))
	}
	return h, nil
}

// traceFileName is the trace's file name: the database converter always names it
// out_kernel_trace.csv, rocprofv3 itself `<prefix>_kernel_trace.csv`.
func traceFileName(layout, run string) string {
	if layout == "rocpd-csv" {
		return "out_kernel_trace.csv"
	}
	return run + "_kernel_trace.csv"
}

// Identity of the GPU agent in the trace: logical node 1 (the CPU is 0), also its KFD node.
const (
	gpuAgentName = "Agent 1"
	gpuNode      = 1
)

// row is a dispatch with the ids it got in dispatch order, waiting to be written.
type row struct {
	d        disp
	dispatch int64
	corr     int64
}

// traceWriter streams rows in a layout. A few rows leave out of order, the way
// rocprofv3's buffers flush; the ids keep their dispatch order.
type traceWriter struct {
	w       *bufio.Writer
	layout  string
	prefix  []byte   // the constant leading columns
	names   [][]byte // per kernel: ,"name",
	kid     [][]byte // per kernel: Kernel_Id
	mid     [][]byte // per kernel: the launch columns before the grid
	rng     *rand.Rand
	pending [8]row
	n       int
	buf     []byte
	dispID  int64
	corr    int64
	rows    int
}

func newTraceWriter(w *bufio.Writer, layout string, cat *catalog, seed int64, streamWord uint64, tid int64) *traceWriter {
	t := &traceWriter{w: w, layout: layout, rng: rand.New(rand.NewPCG(uint64(seed), streamWord)), buf: make([]byte, 0, 1024)}
	tidS := strconv.FormatInt(tid, 10)
	switch layout {
	case "7":
		t.prefix = []byte(`"KERNEL_DISPATCH","` + gpuAgentName + `",1,1,` + tidS + ",")
	case "rocpd-csv":
		t.prefix = []byte(`"` + guid(seed, streamWord) + `","KERNEL_DISPATCH","` + gpuAgentName + `",1,1,` + tidS + ",")
	case "6.4":
		t.prefix = []byte(`"KERNEL_DISPATCH",` + strconv.Itoa(gpuNode) + ",1," + tidS + ",")
	case "6.2":
		t.prefix = []byte(`"KERNEL_DISPATCH",` + strconv.Itoa(gpuNode) + ",1,")
	}
	for i, k := range cat.kernels {
		t.names = append(t.names, []byte(`,"`+k.name+`",`))
		t.kid = append(t.kid, []byte(strconv.Itoa(kernelID(i))))
		var m string
		if layout == "7" || layout == "rocpd-csv" {
			m = fmt.Sprintf(",%d,0,%d,0,%d,%d,1,1,", k.lds, k.vgpr, k.sgpr, k.wg)
		} else {
			m = fmt.Sprintf(",0,%d,%d,1,1,", k.lds, k.wg)
		}
		t.mid = append(t.mid, []byte(m))
	}
	return t
}

// kernelID is the profiler's id of a kernel symbol: a few runtime kernels come first.
func kernelID(i int) int { return i + 3 }

// guid is the database's per-process id, as the converter prints it.
func guid(seed int64, streamWord uint64) string {
	r := rand.New(rand.NewPCG(uint64(seed), streamWord^0x67756964))
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, 0x7000|r.Uint32()&0x0fff,
		0x8000|r.Uint32()&0x3fff, r.Uint64()&0xffffffffffff)
}

func (t *traceWriter) header() error {
	_, err := t.w.WriteString(traceHeaders[t.layout] + "\n")
	return err
}

// add queues a dispatch (in start order).
func (t *traceWriter) add(d *disp) error {
	t.dispID++
	t.corr += 1 + int64(t.rng.IntN(4)/3) // other HIP calls take correlation ids too
	t.pending[t.n] = row{d: *d, dispatch: t.dispID, corr: t.corr}
	t.n++
	if t.n < len(t.pending) {
		return nil
	}
	if t.rng.IntN(1000) < 6 { // a buffer flushed in reverse: a short run leaves backwards
		m := 2 + t.rng.IntN(5)
		for i, j := 0, m-1; i < j; i, j = i+1, j-1 {
			t.pending[i], t.pending[j] = t.pending[j], t.pending[i]
		}
	}
	err := t.write(&t.pending[0])
	copy(t.pending[:], t.pending[1:])
	t.n--
	return err
}

func (t *traceWriter) flush() error {
	for i := range t.n {
		if err := t.write(&t.pending[i]); err != nil {
			return err
		}
	}
	t.n = 0
	return t.w.Flush()
}

func (t *traceWriter) write(r *row) error {
	b := append(t.buf[:0], t.prefix...)
	if t.layout != "6.2" {
		b = strconv.AppendInt(b, r.dispatch, 10)
		b = append(b, ',')
	}
	b = append(b, t.kid[r.d.k]...)
	b = append(b, t.names[r.d.k]...)
	b = strconv.AppendInt(b, r.corr, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.d.start, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.d.end, 10)
	b = append(b, t.mid[r.d.k]...)
	b = strconv.AppendInt(b, r.d.grid[0], 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.d.grid[1], 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.d.grid[2], 10)
	b = append(b, '\n')
	t.buf = b
	t.rows++
	_, err := t.w.Write(b)
	return err
}
