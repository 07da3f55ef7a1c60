package analyze

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lablup/perfbot/internal/golden"
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

// tinyRun is a profiled run of twelve kernels with distinct total times (so the top-ten
// cut and the order show), four generated tokens, and a plain run at plainTokS.
func tinyRun(plainTokS, profiledTokS float64) Input {
	tr := &rocprof.Trace{Layout: "7", HasGrid: false}
	var start int64 = 1000
	tr.Dispatches = append(tr.Dispatches, rocprof.Dispatch{Start: 500, End: 900, Name: 12})
	for k := range 12 {
		tr.Names = append(tr.Names, "kernel_"+string(rune('a'+k)))
		// kernel k runs k+1 times for 10*(12-k) ns each.
		for range k + 1 {
			dur := int64(10 * (12 - k))
			tr.Dispatches = append(tr.Dispatches, rocprof.Dispatch{Start: start, End: start + dur, Name: uint32(k)})
			start += dur + 5
		}
	}
	tr.Names = append(tr.Names, "before_decode")
	tr.Rows = len(tr.Dispatches)
	log := &benchlog.Log{Boottime: benchlog.Marks{WarmupStart: 400, MeasuredStart: 400, DecodeStart: 1000, MeasuredEnd: start + 100, OK: true},
		PromptTokens: 16, GeneratedTokens: 4, DecodeTokS: profiledTokS, PrefillTokS: 100, HasResults: true}
	plain := &benchlog.Log{GeneratedTokens: 4, DecodeTokS: plainTokS, PrefillTokS: 120, HasResults: true}
	return Input{Name: "tiny_greedy", Trace: tr, Log: log, Plain: plain, Model: modelcfg.Model{ModelType: "llama"}, Sampling: results.Greedy}
}

// The whole summary and kernel table of a small run, against the files under testdata.
func TestAnalyzeGolden(t *testing.T) {
	t.Parallel()
	res, err := Analyze(tinyRun(40, 38))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w, err := res.WriteOutputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for file, p := range map[string]string{"tiny_decode_kernels.csv": w.Kernels, "tiny_summary.json": w.Summary} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "testdata/golden/"+file, string(b))
	}
}

// The profiler's slowdown against the plain run, and its note, flip exactly at zero; a
// plain or profiled rate of zero gives no plain figures at all.
func TestAnalyzeSlowdownEdges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		plain, profiled float64
		slowdown        *float64
		note            bool
	}{
		{"profiled slower", 40, 38, ptr(5.26), false},
		{"equal", 38, 38, ptr(0), false},
		{"profiled faster", 38, 40, ptr(-5), true},
		{"no plain rate", 0, 38, nil, false},
	}
	for _, c := range cases {
		res, err := Analyze(tinyRun(c.plain, c.profiled))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := res.Summary
		var got *float64
		if s.ProfilerDecodeSlowdownPct != nil {
			v := float64(*s.ProfilerDecodeSlowdownPct)
			got = &v
		}
		if diff := cmp.Diff(c.slowdown, got); diff != "" {
			t.Errorf("%s: slowdown (-want +got):\n%s", c.name, diff)
		}
		if (s.PlainDecodeTokS != nil) != (c.slowdown != nil) || (s.PlainWallMsPerToken != nil) != (c.slowdown != nil) {
			t.Errorf("%s: plain figures %v %v, want them only with a plain rate", c.name, s.PlainDecodeTokS, s.PlainWallMsPerToken)
		}
		noted := false
		for _, n := range s.Notes {
			noted = noted || strings.HasPrefix(n, "profiler_decode_slowdown_pct is negative")
		}
		if noted != c.note {
			t.Errorf("%s: negative-slowdown note %v, want %v (notes %q)", c.name, noted, c.note, s.Notes)
		}
	}
	in := tinyRun(40, 0)
	in.Log.DecodeTokS = 0
	if res, err := Analyze(in); err != nil || res.Summary.ProfilerDecodeSlowdownPct != nil {
		t.Errorf("a profiled rate of 0: %v, slowdown %v; want no plain figures", err, res.Summary.ProfilerDecodeSlowdownPct)
	}
}

func ptr(v float64) *float64 { return &v }

// A run needs generated tokens; zero-length dispatches give zero shares, not NaN.
func TestAnalyzeDegenerateInputs(t *testing.T) {
	t.Parallel()
	in := tinyRun(40, 38)
	in.Log.GeneratedTokens = 0
	if _, err := Analyze(in); err == nil || !strings.Contains(err.Error(), "no results block with `Generated tokens:`") {
		t.Errorf("zero generated tokens: %v", err)
	}
	in = tinyRun(40, 38)
	for i := range in.Trace.Dispatches {
		in.Trace.Dispatches[i].End = in.Trace.Dispatches[i].Start
	}
	res, err := Analyze(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Kernels {
		if r.SharePct != 0 {
			t.Errorf("%s: share %v of no GPU time, want 0", r.Kernel, r.SharePct)
		}
	}
}

// What the inputs lacked or repeated is carried into the result's warnings and the
// summary's notes, each naming its input.
func TestAnalyzeInputWarnings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(*Input)
		want []string
	}{
		{"none", func(*Input) {}, nil},
		{"both logs", func(in *Input) {
			in.Log.Warnings = []string{"no `Prefill:` line"}
			in.Plain.Warnings = []string{"no `MLX peak memory:` line"}
		}, []string{"bench log: no `Prefill:` line", "plain bench log: no `MLX peak memory:` line"}},
		{"no plain run", func(in *Input) {
			in.Log.Warnings = []string{"w"}
			in.Plain = nil
		}, []string{"bench log: w"}},
		{"one repeated dispatch", func(in *Input) {
			in.Trace.Duplicates, in.Trace.FirstDuplicate = 1, 77
		}, []string{"kernel trace: 1 row(s) repeat the Dispatch_Id of an earlier row (the first: 77); each dispatch is counted once"}},
	}
	for _, c := range cases {
		in := tinyRun(40, 38)
		c.edit(&in)
		res, err := Analyze(in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(c.want, res.Warnings); diff != "" {
			t.Errorf("%s: warnings (-want +got):\n%s", c.name, diff)
		}
		notes := res.Summary.Notes[len(res.Summary.Notes)-len(c.want):]
		if diff := cmp.Diff(c.want, notes, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: the summary's last notes (-want +got):\n%s", c.name, diff)
		}
	}
}
