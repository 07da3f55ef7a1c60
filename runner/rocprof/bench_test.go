package rocprof

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"
)

// llamaStep is one decode step of the Llama-3.1-8B fixture: its kernel names, each
// repeated as often per step as the maintainers' decode_kernels.csv says, with their
// mean durations.
type stepKernel struct {
	name  string
	avgNs int64
}

func llamaStep(t testing.TB) []stepKernel {
	t.Helper()
	header, rows := csvRecords(t, fixture(t, llamaKernels...))
	kc, cc, ac := column(t, header, "kernel"), column(t, header, "calls"), column(t, header, "avg_ns")
	var step []stepKernel
	for _, r := range rows {
		calls, _ := strconv.Atoi(r[cc])
		avg, _ := strconv.ParseInt(r[ac], 10, 64)
		// The window holds 127 forward passes.
		for range max(1, (calls+63)/127) {
			step = append(step, stepKernel{r[kc], avg})
		}
	}
	// The same op order every step, as MLX evaluates the graph; a fixed shuffle.
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(step), func(i, j int) { step[i], step[j] = step[j], step[i] })
	return step
}

// writeSyntheticTrace writes a ROCm 7 kernel trace of rows dispatches shaped like the
// gfx1201 fixture rows, with the long mlxcel kernel names of the Llama decode, and
// about 2 % of rows out of order as in the real 12,263-row trace. It returns the size.
func writeSyntheticTrace(t testing.TB, path string, rows int) int64 {
	t.Helper()
	step := llamaStep(t)
	ids := map[string]int{}
	for _, k := range step {
		if _, ok := ids[k.name]; !ok {
			ids[k.name] = len(ids) + 1
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"` + "\n")
	rng := rand.New(rand.NewPCG(3, 4))
	ts := int64(1382947541921184)
	var line, held []byte
	for i := 0; i < rows; i++ {
		k := step[i%len(step)]
		dur := k.avgNs/2 + rng.Int64N(k.avgNs+1)
		line = append(line[:0], `"KERNEL_DISPATCH","Agent 2",1,1,1204063,`...)
		line = strconv.AppendInt(line, int64(i+1), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(ids[k.name]), 10)
		line = append(line, `,"`...)
		line = append(line, k.name...)
		line = append(line, `",`...)
		line = strconv.AppendInt(line, int64(2*i+26), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, ts, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, ts+dur, 10)
		line = append(line, ",0,0,16,0,128,256,1,1,"...)
		line = strconv.AppendInt(line, int64(256*ids[k.name]), 10)
		line = append(line, ",1,1\n"...)
		ts += dur + 1000 + rng.Int64N(3000)
		// Buffer flush order: now and then a row comes out after its successor.
		switch {
		case held != nil:
			w.Write(line)
			w.Write(held)
			held = nil
		case i%50 == 7 && i+1 < rows:
			held = append([]byte(nil), line...)
		default:
			w.Write(line)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// benchRows is the synthetic Llama trace of 1,024 decode tokens: about 480k
// dispatches, 135 MB.
const benchRows = 480_000

// BenchmarkParseKernelTrace reads the 135 MB synthetic trace from a file (warm page
// cache) and reports MB/s, bytes allocated per read (an upper bound of the heap it
// needs), the peak heap sampled while it runs, and the process's peak RSS.
func BenchmarkParseKernelTrace(b *testing.B) {
	path := filepath.Join(b.TempDir(), "llama_kernel_trace.csv")
	size := writeSyntheticTrace(b, path, benchRows)
	b.Run("llama-1024-tokens", func(b *testing.B) {
		// One read alone first, from a collected heap: it warms the page cache and
		// gives the peak heap of a single read.
		runtime.GC()
		stop := sampleHeap()
		first, err := ReadKernelTrace(path)
		peak := stop()
		if err != nil {
			b.Fatal(err)
		}
		rows := first.Rows // the first read is dead after this: the GC below frees it
		runtime.GC()

		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ReadKernelTrace(path); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		if rss := peakRSS(); rss > 0 {
			b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
		}
		b.ReportMetric(float64(rows), "rows")
	})
}

// sampleHeap samples the live heap objects until the returned stop is called, which
// returns the largest sample. A measurement aid for the benchmark, not an assertion.
func sampleHeap() (stop func() uint64) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-ctx.Done():
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		cancel()
		return <-done
	}
}

// TestParseKernelTraceHoldsNoText checks the memory promise deterministically: all the
// bytes a parse allocates (an upper bound of its peak heap) are the compact records and
// a bounded set of chunk buffers, a small fraction of the file. Not parallel: it reads
// process-wide allocation counters.
func TestParseKernelTraceHoldsNoText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kernel_trace.csv")
	const rows = 40_000
	size := writeSyntheticTrace(t, path, rows)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const chunk = 64 << 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr, err := parseKernelTrace(f, path, parseOptions{chunkSize: chunk, workers: 2})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Rows != rows {
		t.Fatalf("rows = %d, want %d", tr.Rows, rows)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	records := uint64(rows) * 32
	// Records (the first capacity projection is padded by half: the pages it does not
	// write are never resident, but they count here), 4 slots of chunk text and
	// records, the interned names, and small change.
	budget := records*3/2 + 4*(chunk+chunk/100*32) + 256<<10
	t.Logf("file %d bytes, %d rows: allocated %d bytes (budget %d, records %d)", size, rows, allocated, budget, records)
	if allocated > budget {
		t.Errorf("a parse allocated %d bytes, over the budget of %d for %d rows (file %d bytes)", allocated, budget, rows, size)
	}
	if allocated > uint64(size)/3 {
		t.Errorf("a parse allocated %d bytes for a %d-byte file: it must not hold the text", allocated, size)
	}
}
