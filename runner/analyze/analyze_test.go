package analyze

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/modelcfg"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
)

func marks(w, m, d, e int64) benchlog.Marks {
	return benchlog.Marks{WarmupStart: w, MeasuredStart: m, DecodeStart: d, MeasuredEnd: e, OK: true}
}

func disp(name uint32, start, end int64) rocprof.Dispatch {
	return rocprof.Dispatch{Name: name, Start: start, End: end, Grid: 1}
}

func TestPickWindowClocks(t *testing.T) {
	t.Parallel()
	// The trace is on one clock; the log has marks on two, offset by 1e9 ns.
	ds := []rocprof.Dispatch{disp(0, 1000, 1010), disp(0, 2000, 2010), disp(0, 3000, 3010), disp(0, 4000, 4010)}
	onTrace := marks(900, 1500, 2500, 5000)
	offset := marks(900+1e9, 1500+1e9, 2500+1e9, 5000+1e9)
	cases := []struct {
		name      string
		boot, mon benchlog.Marks
		want      string
		wantErr   string
	}{
		{"boottime matches", onTrace, offset, "boottime", ""},
		{"monotonic matches, boottime offset", offset, onTrace, "monotonic", ""},
		{"tie goes to boottime", onTrace, onTrace, "boottime", ""},
		{"boottime na", benchlog.Marks{}, onTrace, "monotonic", ""},
		{"monotonic na", onTrace, benchlog.Marks{}, "boottime", ""},
		{"both na", benchlog.Marks{}, benchlog.Marks{}, "", "MLXCEL_BENCH_PHASE_MARKS=1"},
		{"neither matches", offset, offset, "", "phase marks"},
	}
	for _, c := range cases {
		w, err := PickWindow(ds, &benchlog.Log{Boottime: c.boot, Monotonic: c.mon})
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || w.Clock != c.want || w.Lo != 2500 && w.Lo != 2500+1e9 {
			t.Errorf("%s: got %+v, %v; want clock %s", c.name, w, err, c.want)
		}
	}
}

func TestMeasureUnionGapsAndChecks(t *testing.T) {
	t.Parallel()
	w := Window{Clock: "boottime", Lo: 100, Hi: 200}
	ds := []rocprof.Dispatch{
		disp(0, 10, 20),   // ends before lo
		disp(1, 30, 60),   // the last one ending by lo (start order)
		disp(2, 50, 120),  // straddles lo, not in decode
		disp(3, 100, 110), // decode starts: [100,110]
		disp(3, 105, 130), // overlaps: union adds 20
		disp(4, 140, 150), // gap 10
		disp(4, 150, 150), // zero length
		disp(5, 190, 230), // runs past hi: clipped to 10
		disp(6, 201, 205), // after hi: not decode
	}
	m, err := Measure(ds, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Decode) != 5 || m.First != 3 {
		t.Fatalf("decode = %d dispatches from %d, want 5 from 3", len(m.Decode), m.First)
	}
	if m.GPUSumNs != 10+25+10+0+40 {
		t.Errorf("GPUSumNs = %d", m.GPUSumNs)
	}
	if m.GPUBusyNs != 30+10+10 {
		t.Errorf("GPUBusyNs = %d, want 50", m.GPUBusyNs)
	}
	wantGaps := []int64{0, 0, 10, 0, 40}
	var sum int64
	for i, g := range m.GapNs {
		sum += g
		if g != wantGaps[i] {
			t.Errorf("gap[%d] = %d, want %d", i, g, wantGaps[i])
		}
	}
	if m.TailNs != 0 {
		t.Errorf("tail = %d, want 0 (the last dispatch runs past hi)", m.TailNs)
	}
	if sum+m.TailNs != m.WallNs-m.GPUBusyNs {
		t.Errorf("gaps %d + tail %d != wall %d - busy %d", sum, m.TailNs, m.WallNs, m.GPUBusyNs)
	}
	if m.Straddlers != 1 {
		t.Errorf("straddlers = %d, want 1", m.Straddlers)
	}
	if !m.HasIdleGap || m.LastBefore != 1 || m.IdleGapNs != 100-60 {
		t.Errorf("idle gap = %v %d after name %d, want 40 after name 1", m.HasIdleGap, m.IdleGapNs, m.LastBefore)
	}
}

func TestMeasureTailAndEmptyWindow(t *testing.T) {
	t.Parallel()
	ds := []rocprof.Dispatch{disp(0, 100, 120), disp(0, 130, 140)}
	m, err := Measure(ds, Window{Lo: 90, Hi: 200})
	if err != nil {
		t.Fatal(err)
	}
	if m.TailNs != 60 || m.GapNs[0] != 10 || m.GapNs[1] != 10 || m.HasIdleGap {
		t.Errorf("tail %d gaps %v idle %v", m.TailNs, m.GapNs, m.HasIdleGap)
	}
	if _, err := Measure(ds, Window{Clock: "boottime", Lo: 300, Hi: 400}); err == nil || !strings.Contains(err.Error(), "decode window") {
		t.Errorf("empty window: err = %v", err)
	}
}

// traceFromKernels lays out the dispatches that a decode_kernels.csv describes inside the
// decode window of a real bench log, plus the real last dispatch before the cut, so the
// analysis can be checked against the maintainers' own numbers for that run.
func traceFromKernels(t *testing.T, rows []results.KernelRow, lo, hi int64, lastName string, idleGapNs int64) *rocprof.Trace {
	t.Helper()
	tr := &rocprof.Trace{HasGrid: true, Layout: "7"}
	tr.Names = append(tr.Names, lastName)
	var n int64
	var busy int64
	for _, r := range rows {
		n += r.Calls
		busy += r.TotalNs
	}
	gapTotal := (hi - lo) - busy
	// One gap per dispatch (the first gap is the cut's own) plus a tail, spread evenly.
	per := gapTotal / (n + 1)
	tail := gapTotal - per*n
	tr.Dispatches = append(tr.Dispatches, rocprof.Dispatch{Name: 0, Start: lo - idleGapNs - 5000, End: lo - idleGapNs, Grid: 1})
	at := lo
	first := true
	for _, r := range rows {
		id := uint32(len(tr.Names))
		tr.Names = append(tr.Names, r.Kernel)
		base, extra := r.TotalNs/r.Calls, r.TotalNs%r.Calls
		for c := int64(0); c < r.Calls; c++ {
			d := base
			if c < extra {
				d++
			}
			if !first {
				at += per
			}
			first = false
			tr.Dispatches = append(tr.Dispatches, rocprof.Dispatch{Name: id, Start: at, End: at + d, Grid: 1})
			at += d
		}
	}
	_ = tail
	if at > hi {
		t.Fatalf("layout overran the window: %d > %d", at, hi)
	}
	// The first decode dispatch starts exactly at lo, so the wall minus busy is all gap.
	idleDelta := lo - tr.Dispatches[1].Start
	if idleDelta != 0 {
		t.Fatalf("first decode dispatch at %d, want lo %d", tr.Dispatches[1].Start, lo)
	}
	tr.Rows = len(tr.Dispatches)
	return tr
}

func TestReproducesTheMaintainersNumbersForTheFixtureRuns(t *testing.T) {
	t.Parallel()
	dir := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
	for _, run := range []struct{ name, modelType string }{
		{"Meta-Llama-3.1-8B-Instruct-4bit_greedy", "llama"},
		{"Qwen3-30B-A3B-4bit_greedy", "qwen3_moe"},
	} {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel()
			want, err := results.ReadSummary(filepath.Join(dir, run.name+"_summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := results.ReadKernelsFile(filepath.Join(dir, run.name+"_decode_kernels.csv"))
			if err != nil {
				t.Fatal(err)
			}
			lg, err := benchlog.ParseFile(filepath.Join(dir, run.name+"_bench.log"))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := benchlog.ParseFile(filepath.Join(dir, run.name+"_plain_bench.log"))
			if err != nil {
				t.Fatal(err)
			}
			// The last dispatch before the cut: the fixture keeps its first 120 characters,
			// which is all the analysis prints of it.
			last := want.Checks.LastDispatchBeforeDecode + " const*, unsigned long, int)"
			idle := int64(float64(want.Checks.IdleGapBeforeFirstDecodeDispatchUs) * 1000)
			tr := traceFromKernels(t, rows, lg.Boottime.DecodeStart, lg.Boottime.MeasuredEnd, last, idle)
			res, err := Analyze(Input{Name: run.name, Trace: tr, Log: lg, Plain: plain,
				Model: modelcfg.Model{ModelType: run.modelType}, Sampling: results.Greedy})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Summary
			checkNum := func(key string, got, want results.Num) {
				t.Helper()
				if got != want {
					t.Errorf("%s = %v, the maintainers' file says %v", key, got, want)
				}
			}
			checkPtr := func(key string, got, want *results.Num) {
				t.Helper()
				if got == nil || want == nil || *got != *want {
					t.Errorf("%s = %v, the maintainers' file says %v", key, got, want)
				}
			}
			if got.DecodeDispatches != want.DecodeDispatches || got.Clock != want.Clock || got.GeneratedTokens != want.GeneratedTokens {
				t.Errorf("dispatches/clock/tokens = %d %s %d, want %d %s %d", got.DecodeDispatches, got.Clock, got.GeneratedTokens, want.DecodeDispatches, want.Clock, want.GeneratedTokens)
			}
			checkNum("dispatches_per_token", got.DispatchesPerToken, want.DispatchesPerToken)
			checkNum("decode_wall_ms", got.DecodeWallMs, want.DecodeWallMs)
			checkNum("decode_gpu_sum_ms", got.DecodeGPUSumMs, want.DecodeGPUSumMs)
			checkNum("decode_gpu_busy_ms", got.DecodeGPUBusyMs, want.DecodeGPUBusyMs)
			checkNum("gpu_ms_per_token", got.GPUMsPerToken, want.GPUMsPerToken)
			checkNum("host_gap_ms_per_token", got.HostGapMsPerToken, want.HostGapMsPerToken)
			checkNum("host_gap_pct_of_wall", got.HostGapPctOfWall, want.HostGapPctOfWall)
			checkNum("profiled_decode_tok_s", got.ProfiledDecodeTokS, want.ProfiledDecodeTokS)
			checkPtr("plain_decode_tok_s", got.PlainDecodeTokS, want.PlainDecodeTokS)
			checkPtr("profiler_decode_slowdown_pct", got.ProfilerDecodeSlowdownPct, want.ProfilerDecodeSlowdownPct)
			checkPtr("plain_wall_ms_per_token", got.PlainWallMsPerToken, want.PlainWallMsPerToken)
			checkPtr("plain_host_gap_ms_per_token_est", got.PlainHostGapMsPerTokenEst, want.PlainHostGapMsPerTokenEst)
			checkNum("idle_gap_before_first_decode_dispatch_us", got.Checks.IdleGapBeforeFirstDecodeDispatchUs, want.Checks.IdleGapBeforeFirstDecodeDispatchUs)
			if got.Checks.LastDispatchBeforeDecode != want.Checks.LastDispatchBeforeDecode {
				t.Errorf("last_dispatch_before_decode = %q, want %q", got.Checks.LastDispatchBeforeDecode, want.Checks.LastDispatchBeforeDecode)
			}
			if len(res.Kernels) != len(rows) {
				t.Fatalf("%d kernel rows, want %d", len(res.Kernels), len(rows))
			}
			byName := map[string]results.KernelRow{}
			for _, r := range res.Kernels {
				byName[r.Kernel] = r
			}
			for _, w := range rows {
				g := byName[w.Kernel]
				if g.Calls != w.Calls || g.TotalNs != w.TotalNs || g.AvgNs != w.AvgNs || g.CallsPerToken != w.CallsPerToken ||
					results.Round(g.SharePct, 3) != w.SharePct || g.Class != w.Class {
					t.Errorf("row %.60s: got %+v", w.Kernel, g)
				}
			}
			if len(got.ClassSharePct) != len(want.ClassSharePct) {
				t.Errorf("class_share_pct has %d classes, want %d", len(got.ClassSharePct), len(want.ClassSharePct))
			}
			for _, kv := range want.ClassSharePct {
				if v, ok := got.ClassSharePct.Get(kv.Key); !ok || v != float64(kv.Value) {
					t.Errorf("class_share_pct[%s] = %v, want %v", kv.Key, v, kv.Value)
				}
			}
			for i, k := range want.TopKernels {
				if i >= len(got.TopKernels) || got.TopKernels[i].Kernel != k.Kernel || got.TopKernels[i].SharePct != k.SharePct || got.TopKernels[i].Class != k.Class {
					t.Errorf("top kernel %d differs from the maintainers' file", i)
				}
			}
		})
	}
}
