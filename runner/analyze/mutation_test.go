package analyze

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/modelcfg"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
)

// The decode window is [decode_start, measured_end], both ends included: a dispatch
// starting exactly on an edge is decode, one a nanosecond outside is not. The whole
// metrics are compared, straddlers and the idle gap included.
func TestMeasureWindowEdges(t *testing.T) {
	t.Parallel()
	d := func(start, end int64, name uint32) rocprof.Dispatch {
		return rocprof.Dispatch{Start: start, End: end, Name: name}
	}
	w := Window{Clock: "boottime", Lo: 100, Hi: 200}
	cases := []struct {
		name string
		ds   []rocprof.Dispatch
		want Metrics
	}{
		{"on both edges", []rocprof.Dispatch{d(90, 100, 1), d(100, 110, 2), d(150, 160, 3), d(200, 230, 4), d(201, 210, 5)}, Metrics{
			Window: w, First: 1, WallNs: 100, GPUSumNs: 10 + 10 + 30, GPUBusyNs: 20,
			GapNs: []int64{0, 40, 40}, TailNs: 0, IdleGapNs: 0, HasIdleGap: true, LastBefore: 1,
		}},
		{"one nanosecond inside each edge", []rocprof.Dispatch{d(99, 100, 1), d(101, 110, 2), d(199, 205, 3)}, Metrics{
			Window: w, First: 1, WallNs: 100, GPUSumNs: 9 + 6, GPUBusyNs: 10,
			GapNs: []int64{1, 89}, TailNs: 0, IdleGapNs: 1, HasIdleGap: true, LastBefore: 1,
		}},
		{"a straddler and one ending a nanosecond after lo", []rocprof.Dispatch{d(50, 60, 7), d(95, 101, 8), d(99, 130, 9), d(120, 140, 2)}, Metrics{
			Window: w, First: 2 + 1, WallNs: 100, GPUSumNs: 20, GPUBusyNs: 20,
			GapNs: []int64{20}, TailNs: 60, Straddlers: 2, IdleGapNs: 60, HasIdleGap: true, LastBefore: 7,
		}},
		{"a zero-length dispatch on lo is decode, not the last one before it", []rocprof.Dispatch{d(80, 90, 1), d(100, 100, 2), d(100, 150, 3)}, Metrics{
			Window: w, First: 1, WallNs: 100, GPUSumNs: 50, GPUBusyNs: 50,
			GapNs: []int64{0, 0}, TailNs: 50, IdleGapNs: 10, HasIdleGap: true, LastBefore: 1,
		}},
		{"nothing ended before lo", []rocprof.Dispatch{d(99, 101, 1), d(100, 120, 2)}, Metrics{
			Window: w, First: 1, WallNs: 100, GPUSumNs: 20, GPUBusyNs: 20,
			GapNs: []int64{0}, TailNs: 80, Straddlers: 1,
		}},
	}
	for _, c := range cases {
		got, err := Measure(c.ds, w)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		c.want.Decode = c.ds[c.want.First : c.want.First+len(c.want.GapNs)]
		if diff := cmp.Diff(&c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: metrics (-want +got):\n%s", c.name, diff)
		}
		if sum := sumGaps(got) + got.TailNs + got.GPUBusyNs; sum != got.WallNs {
			t.Errorf("%s: gaps + tail + busy = %d, wall %d", c.name, sum, got.WallNs)
		}
	}
	for _, ds := range [][]rocprof.Dispatch{
		{d(50, 99, 1), d(99, 150, 2), d(201, 300, 3)},
		{d(201, 300, 3)},
		nil,
	} {
		_, err := Measure(ds, w)
		var nd *NoDecodeError
		if !errors.As(err, &nd) || nd.Window != w || !strings.Contains(err.Error(), "on the boottime clock") {
			t.Errorf("Measure(%v) = %v, want the empty window named", ds, err)
		}
	}
}

func sumGaps(m *Metrics) int64 {
	var s int64
	for _, g := range m.GapNs {
		s += g
	}
	return s
}

// The clock is the one with more dispatches in [warmup_start, measured_end], edges
// included; boottime wins a tie.
func TestPickWindowEdges(t *testing.T) {
	t.Parallel()
	marks := func(warm, dec, end int64) benchlog.Marks {
		return benchlog.Marks{WarmupStart: warm, MeasuredStart: warm, DecodeStart: dec, MeasuredEnd: end, OK: true}
	}
	starts := func(ss ...int64) []rocprof.Dispatch {
		var ds []rocprof.Dispatch
		for _, s := range ss {
			ds = append(ds, rocprof.Dispatch{Start: s, End: s + 1})
		}
		return ds
	}
	cases := []struct {
		name string
		ds   []rocprof.Dispatch
		log  benchlog.Log
		want Window
		err  string
	}{
		{"edges count on monotonic", starts(10, 20, 1000, 2000), benchlog.Log{Boottime: marks(1000, 1500, 1999), Monotonic: marks(10, 15, 20)},
			Window{Clock: "monotonic", Lo: 15, Hi: 20}, ""},
		{"a tie goes to boottime", starts(10, 20), benchlog.Log{Boottime: marks(20, 20, 30), Monotonic: marks(0, 5, 10)},
			Window{Clock: "boottime", Lo: 20, Hi: 30}, ""},
		{"boottime with more", starts(10, 20, 30), benchlog.Log{Boottime: marks(10, 15, 30), Monotonic: marks(10, 15, 20)},
			Window{Clock: "boottime", Lo: 15, Hi: 30}, ""},
		{"only monotonic marks", starts(10), benchlog.Log{Monotonic: marks(10, 10, 10)}, Window{Clock: "monotonic", Lo: 10, Hi: 10}, ""},
		{"one nanosecond outside", starts(9, 21), benchlog.Log{Boottime: marks(10, 15, 20)}, Window{}, ErrNoPhaseMarks.Error()},
		{"no marks", starts(10), benchlog.Log{}, Window{}, "no complete set of phase marks on either clock"},
		{"decode after the end", starts(10), benchlog.Log{Boottime: marks(10, 21, 20)}, Window{},
			"phase marks out of order on the boottime clock: decode_start 21 is after measured_end 20"},
	}
	for _, c := range cases {
		got, err := PickWindow(c.ds, &c.log)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
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
