package synth

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/results"
)

func synthRun(t *testing.T, o Options) *Output {
	t.Helper()
	out, err := Generate(o, t.TempDir())
	if err != nil {
		t.Fatalf("Generate(%+v): %v", o, err)
	}
	return out
}

func small(model string) Options {
	o := DefaultOptions()
	o.Model, o.Tokens, o.Warmup = model, 6, 2
	return o
}

func TestEveryLayoutWritesExactlyItsHeader(t *testing.T) {
	t.Parallel()
	for _, layout := range Layouts {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			o := small("qwen3-moe")
			o.Layout = layout
			out := synthRun(t, o)
			want := map[string]string{"7": out.Run + "_kernel_trace.csv", "6.4": out.Run + "_kernel_trace.csv",
				"6.2": out.Run + "_kernel_trace.csv", "rocpd-csv": "out_kernel_trace.csv"}[layout]
			if filepath.Base(out.TraceFile) != want {
				t.Errorf("trace file %s, want %s", filepath.Base(out.TraceFile), want)
			}
			data, err := os.ReadFile(out.TraceFile)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte("\r")) || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
				t.Error("trace has CR or a BOM")
			}
			first, _, _ := bytes.Cut(data, []byte("\n"))
			head, _ := TraceHeader(layout)
			if string(first) != head {
				t.Fatalf("header\n got %s\nwant %s", first, head)
			}
			cols := strings.Split(head, ",")
			wantCols := map[string]int{"7": 22, "6.4": 18, "6.2": 16, "rocpd-csv": 23}[layout]
			if len(cols) != wantCols {
				t.Fatalf("%d header columns, want %d", len(cols), wantCols)
			}
			for _, c := range cols {
				if len(c) < 3 || c[0] != '"' || c[len(c)-1] != '"' {
					t.Errorf("header cell %s not quoted", c)
				}
			}
			header, rows, firstRow := readTraceCSV(t, out.TraceFile)
			if len(rows) != out.Truth.TraceRows {
				t.Errorf("%d rows, truth says %d", len(rows), out.Truth.TraceRows)
			}
			// Strings quoted, numbers not: look at the raw text of one row.
			line := strings.SplitN(string(data), "\n", 3)[1]
			agent := firstRow[indexOf(header, "Agent_Id")]
			switch layout {
			case "7", "rocpd-csv":
				if agent != "Agent 1" || !strings.Contains(line, `"KERNEL_DISPATCH","Agent 1",1,1,`) {
					t.Errorf("agent %q in %s", agent, line)
				}
			default:
				if agent != "1" || !strings.HasPrefix(line, `"KERNEL_DISPATCH",1,1,`) {
					t.Errorf("agent %q in %s", agent, line)
				}
			}
			if !strings.HasSuffix(line, ",1048576,1,1") {
				t.Errorf("numbers must be unquoted: %s", line)
			}
		})
	}
}

func indexOf(header []string, name string) int {
	for i, h := range header {
		if strings.EqualFold(h, name) {
			return i
		}
	}
	return -1
}

// The truth must agree with an independent analysis of the written files, for every
// model, sampling, layout and timeline option.
func TestTruthAgreesWithIndependentAnalysis(t *testing.T) {
	t.Parallel()
	mk := func(model, sampling, layout string, f func(*Options)) Options {
		o := small(model)
		o.Sampling, _ = results.ParseSampling(sampling)
		o.Layout = layout
		if f != nil {
			f(&o)
		}
		return o
	}
	cases := map[string]Options{
		"llama greedy 7":              mk("llama", "greedy", "7", nil),
		"llama t0.7 6.4":              mk("llama", "t0.7", "6.4", nil),
		"qwen t0.7-p0.95 6.2":         mk("qwen3-moe", "t0.7-p0.95", "6.2", nil),
		"granite greedy rocpd":        mk("granite-hybrid", "greedy", "rocpd-csv", nil),
		"nemotron t0.7-p0.95 7":       mk("nemotron-hybrid", "t0.7-p0.95", "7", nil),
		"llama overlap":               mk("llama", "greedy", "7", func(o *Options) { o.Overlap = 0.2 }),
		"qwen straddlers":             mk("qwen3-moe", "greedy", "7", func(o *Options) { o.Straddlers = 3 }),
		"llama boottime na":           mk("llama", "greedy", "7", func(o *Options) { o.ClockNA = "boottime"; o.ClockOffset = 1000 }),
		"llama monotonic na":          mk("llama", "t0.7", "6.2", func(o *Options) { o.ClockNA = "monotonic"; o.ClockOffset = 5e9 }),
		"llama far monotonic":         mk("llama", "greedy", "7", func(o *Options) { o.ClockOffset = 3e11 }),
		"granite no noise, no warmup": mk("granite-hybrid", "greedy", "6.4", func(o *Options) { o.Noise = 0; o.Warmup = 0 }),
		"nemotron grows cache":        mk("nemotron-hybrid", "greedy", "7", func(o *Options) { o.Prompt = 250; o.Tokens = 9 }),
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := synthRun(t, o)
			tr := out.Truth
			_, rows, _ := readTraceCSV(t, out.TraceFile)
			bi := readBenchLog(t, out.BenchLog)
			a := analyze(t, rows, bi)

			if a.clock != tr.Clock || !cmp.Equal(a.clockCounts, tr.ClockCounts) {
				t.Errorf("clock %s %v, truth %s %v", a.clock, a.clockCounts, tr.Clock, tr.ClockCounts)
			}
			got := map[string]int64{"decode": int64(len(a.decode)), "sum": a.sum, "busy": a.busy, "wall": a.wall,
				"gap": a.wall - a.busy, "straddlers": int64(a.straddlers), "idle": a.idleGap, "lo": a.lo, "hi": a.hi}
			want := map[string]int64{"decode": int64(tr.DecodeDispatches), "sum": tr.GPUSumNs, "busy": tr.GPUBusyNs,
				"wall": tr.WallNs, "gap": tr.HostGapNs, "straddlers": int64(tr.Straddlers), "idle": tr.IdleGapBeforeFirstNs,
				"lo": tr.DecodeStartNs, "hi": tr.MeasuredEndNs}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("window figures (-truth +files):\n%s", d)
			}
			if a.lastBefore != tr.LastBeforeDecode || !strings.Contains(a.lastBefore, "arg_reduce_final") {
				t.Errorf("last before decode %q, truth %q", a.lastBefore, tr.LastBeforeDecode)
			}
			if len(tr.DecodeRoles) != len(a.roles) {
				t.Fatalf("%d decode roles in the truth, %d dispatches", len(tr.DecodeRoles), len(a.roles))
			}
			bad := 0
			for i, r := range a.roles {
				if tr.RoleNames[tr.DecodeRoles[i]] != r {
					if bad++; bad <= 5 {
						t.Errorf("dispatch %d %.80s: rules say %s, truth %s", i, a.decode[i].name, r, tr.RoleNames[tr.DecodeRoles[i]])
					}
				}
			}
			gap := map[string]int64{"tail": a.tail}
			cnt := map[string]int{}
			for r, v := range a.roleGap {
				gap[r] = v
			}
			for r, v := range a.roleCnt {
				cnt[r] = int(v)
			}
			if d := cmp.Diff(tr.RoleGPUNs, a.roleGPU); d != "" {
				t.Errorf("role GPU ns (-truth +files):\n%s", d)
			}
			if d := cmp.Diff(tr.RoleHostGapNs, gap); d != "" {
				t.Errorf("role host gap ns (-truth +files):\n%s", d)
			}
			if d := cmp.Diff(tr.RoleDispatches, cnt); d != "" {
				t.Errorf("role dispatches (-truth +files):\n%s", d)
			}
			var sumGap int64
			for _, v := range tr.RoleHostGapNs {
				sumGap += v
			}
			if sumGap != tr.HostGapNs || tr.HostGapNs != tr.WallNs-tr.GPUBusyNs {
				t.Errorf("role gaps add to %d, host gap %d, wall-busy %d", sumGap, tr.HostGapNs, tr.WallNs-tr.GPUBusyNs)
			}
			if (o.Overlap > 0) != (tr.GPUBusyNs < tr.GPUSumNs) {
				t.Errorf("overlap %v: busy %d, sum %d", o.Overlap, tr.GPUBusyNs, tr.GPUSumNs)
			}
			if tr.Straddlers != o.Straddlers {
				t.Errorf("straddlers %d, asked %d", tr.Straddlers, o.Straddlers)
			}
			if bi.tokens != tr.GeneratedTokens || tr.Steps != tr.GeneratedTokens-1 {
				t.Errorf("log says %d tokens, truth %d tokens %d steps", bi.tokens, tr.GeneratedTokens, tr.Steps)
			}
			checkStats(t, out, rows)
			if t.Failed() {
				t.Logf("options %+v", o)
			}
		})
	}
}

// checkStats re-aggregates the whole trace and compares it with kernel_stats.csv.
func checkStats(t *testing.T, out *Output, rows []tDisp) {
	t.Helper()
	type agg struct {
		calls, total, min, max int64
		durs                   []float64
	}
	byName := map[string]*agg{}
	var grand int64
	for _, d := range rows {
		a := byName[d.name]
		if a == nil {
			a = &agg{min: math.MaxInt64}
			byName[d.name] = a
		}
		dur := d.end - d.start
		a.calls++
		a.total += dur
		a.min, a.max = min(a.min, dur), max(a.max, dur)
		a.durs = append(a.durs, float64(dur))
		grand += dur
	}
	f, err := os.Open(out.StatsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.LazyQuotes = true
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != "Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev" {
		t.Fatalf("stats header %v", recs[0])
	}
	if len(recs)-1 != len(byName) {
		t.Errorf("%d stats rows, %d kernel names in the trace", len(recs)-1, len(byName))
	}
	prevTotal := int64(math.MaxInt64)
	var pctSum float64
	for _, rec := range recs[1:] {
		a := byName[rec[0]]
		if a == nil {
			t.Errorf("stats row for a kernel not in the trace: %.60s", rec[0])
			continue
		}
		ints := []int64{a.calls, a.total, a.min, a.max}
		for i, col := range []int{1, 2, 5, 6} {
			if v, _ := strconv.ParseInt(rec[col], 10, 64); v != ints[i] {
				t.Errorf("%.50s column %d = %s, trace gives %d", rec[0], col, rec[col], ints[i])
			}
		}
		if a.total > prevTotal {
			t.Errorf("stats not sorted by total at %.50s", rec[0])
		}
		prevTotal = a.total
		avg := strconv.FormatFloat(float64(a.total)/float64(a.calls), 'f', 6, 64)
		if rec[3] != avg {
			t.Errorf("%.50s AverageNs %s, want %s", rec[0], rec[3], avg)
		}
		pct, _ := strconv.ParseFloat(rec[4], 64)
		pctSum += pct
		if want := 100 * float64(a.total) / float64(grand); math.Abs(pct-want) > 0.006*math.Max(1, want/100) && math.Abs(pct-want)/want > 0.001 {
			t.Errorf("%.50s Percentage %s, want %v", rec[0], rec[4], want)
		}
		// two-pass sample standard deviation
		mean := float64(a.total) / float64(a.calls)
		var ss float64
		for _, d := range a.durs {
			ss += (d - mean) * (d - mean)
		}
		std := 0.0
		if a.calls > 1 {
			std = math.Sqrt(ss / float64(a.calls-1))
		}
		got, _ := strconv.ParseFloat(rec[7], 64)
		if math.Abs(got-std) > 1e-6*math.Max(1, std) {
			t.Errorf("%.50s StdDev %s, want %.6f", rec[0], rec[7], std)
		}
		if std == 0 && rec[7] != "0.00000000e+00" {
			t.Errorf("zero StdDev printed %s", rec[7])
		}
	}
	if math.Abs(pctSum-100) > 0.05 {
		t.Errorf("percentages add to %v", pctSum)
	}
}

// published is the table of docs/analysis.md §5 (greedy, 128 tokens).
var published = map[string]struct {
	gpu, gap, disp float64
	shares         map[string]float64 // role or class share of decode GPU time, %
}{
	"llama":           {23.34, 1.80, 492, map[string]float64{"class:qmv": 94.8, "class:sdpa": 2.1, "class:rms_norm": 1.2}},
	"qwen3-moe":       {13.36, 3.63, 1540, map[string]float64{"moe": 46.8, "moe_expert_gemv": 42.1, "class:qmv": 33.1, "class:sort": 4.3}},
	"granite-hybrid":  {11.47, 8.59, 3197, map[string]float64{"ssm_step": 29.8, "moe": 25.4, "class:qmv": 24.3}},
	"nemotron-hybrid": {14.28, 8.93, 2008, map[string]float64{"ssm_step": 20.0, "moe": 29.2, "class:qmv": 38.6}},
}

// shares computes the share table of an analysed run.
func shares(a analysis) map[string]float64 {
	s := map[string]float64{}
	for i, d := range a.decode {
		dur := float64(d.end-d.start) / float64(a.sum) * 100
		s["class:"+classify(d.name)] += dur
		s[a.roles[i]] += dur
		if strings.HasPrefix(a.roles[i], "moe_") {
			s["moe"] += dur
		}
	}
	return s
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*want {
		t.Errorf("%s = %.4g, published %.4g (more than %.0f%% off)", what, got, want, tol*100)
	}
}

// The one full-size run: Llama, 128 tokens, the default shape, compared with the
// published figures and with the real decode_kernels.csv of the same model.
func TestLlama128MatchesThePublishedProfile(t *testing.T) {
	t.Parallel()
	out := synthRun(t, DefaultOptions())
	tr := out.Truth
	p := published["llama"]
	within(t, "GPU ms/token", float64(tr.GPUBusyNs)/1e6/128, p.gpu, 0.10)
	within(t, "host gap ms/token", float64(tr.HostGapNs)/1e6/128, p.gap, 0.10)
	within(t, "dispatches/token", float64(tr.DecodeDispatches)/128, p.disp, 0.10)
	_, rows, _ := readTraceCSV(t, out.TraceFile)
	a := analyze(t, rows, readBenchLog(t, out.BenchLog))
	sh := shares(a)
	for k, v := range p.shares {
		within(t, k+" share", sh[k], v, 0.10)
	}

	// Rows are written a little out of order, as real buffer flushes do.
	inv := 0
	for i := 1; i < len(rows); i++ {
		if rows[i].start < rows[i-1].start {
			inv++
		}
	}
	if frac := float64(inv) / float64(len(rows)); inv == 0 || frac > 0.05 {
		t.Errorf("%d of %d rows out of order, want a few %%", inv, len(rows))
	}

	// The bench log: decode tok/s is tokens over the decode window, as in the fixture.
	bi := readBenchLog(t, out.BenchLog)
	wall := float64(*bi.marks["measured_end"][1]-*bi.marks["decode_start"][1]) / 1e9
	if got := strconv.FormatFloat(128/wall, 'f', 2, 64); got != strconv.FormatFloat(bi.decodeTokS, 'f', 2, 64) {
		t.Errorf("decode tok/s %v, marks give %s", bi.decodeTokS, got)
	}
	if got := strconv.FormatFloat(wall*1e3, 'f', 2, 64); got != strconv.FormatFloat(bi.decodeMs, 'f', 2, 64) {
		t.Errorf("decode ms %v, marks give %s", bi.decodeMs, got)
	}
	within(t, "prefill tok/s", bi.prefillTok, 1069.42, 0.10)
	within(t, "idle gap before decode us", float64(tr.IdleGapBeforeFirstNs)/1e3, 35000, 0.5)
}

// Per kernel name, the decode window holds the calls of the real profile's window and
// their average durations.
func TestDecodeKernelsMatchTheRealProfile(t *testing.T) {
	t.Parallel()
	for file, o := range map[string]Options{
		"Meta-Llama-3.1-8B-Instruct-4bit_greedy_decode_kernels.csv": DefaultOptions(),
		"Qwen3-30B-A3B-4bit_greedy_decode_kernels.csv":              {Model: "qwen3-moe", Tokens: 128, Warmup: 2, Noise: 0.05},
	} {
		t.Run(o.Model, func(t *testing.T) {
			t.Parallel()
			out := synthRun(t, o)
			_, rows, _ := readTraceCSV(t, out.TraceFile)
			a := analyze(t, rows, readBenchLog(t, out.BenchLog))
			calls, total := map[string]int64{}, map[string]int64{}
			for _, d := range a.decode {
				calls[d.name]++
				total[d.name] += d.end - d.start
			}
			fixture, err := results.ReadKernelsFile(testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", file))
			if err != nil {
				t.Fatal(err)
			}
			if len(fixture) != len(calls) {
				t.Errorf("%d kernel names in the window, the real profile has %d", len(calls), len(fixture))
			}
			for _, r := range fixture {
				c := calls[r.Kernel]
				if math.Abs(float64(c-r.Calls)) > max(1, 0.01*float64(r.Calls)) {
					t.Errorf("%.70s: %d calls, real %d", r.Kernel, c, r.Calls)
				}
				if c > 0 {
					within(t, "avg ns of "+r.Kernel[:60], float64(total[r.Kernel])/float64(c), float64(r.AvgNs), 0.10)
				}
			}
		})
	}
}

// The other models, on a few tokens: per-step figures scaled to 128 tokens.
func TestOtherModelsMatchThePublishedTable(t *testing.T) {
	t.Parallel()
	perLayer := map[string]map[string]int{
		"qwen3-moe":       {"moe_expert_gemv": 48 * 3, "moe_gather_indices": 48 * 3, "moe_weighted_sum": 48 * 4, "moe_activation": 48},
		"granite-hybrid":  {"ssm_step": 36 * 47},
		"nemotron-hybrid": {"ssm_step": 23 * 50},
	}
	for _, m := range []string{"qwen3-moe", "granite-hybrid", "nemotron-hybrid"} {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			o := small(m)
			o.Tokens, o.Prompt = 17, 600 // no cache growth in the window
			out := synthRun(t, o)
			tr := out.Truth
			p := published[m]
			scale := 127.0 / 128 / float64(tr.Steps)
			within(t, "GPU ms/token", float64(tr.GPUBusyNs)/1e6*scale, p.gpu, 0.10)
			within(t, "host gap ms/token", float64(tr.HostGapNs)/1e6*scale, p.gap, 0.10)
			within(t, "dispatches/token", float64(tr.DecodeDispatches)*scale, p.disp, 0.10)
			_, rows, _ := readTraceCSV(t, out.TraceFile)
			s := shares(analyze(t, rows, readBenchLog(t, out.BenchLog)))
			for k, v := range p.shares {
				within(t, k+" share", s[k], v, 0.10)
			}
			for r, n := range perLayer[m] {
				if got := tr.RoleDispatches[r]; got != n*tr.Steps || tr.RolesPerStep[r] != n {
					t.Errorf("%s: %d dispatches (%d per step), want %d per step", r, got, tr.RolesPerStep[r], n)
				}
			}
			if tr.DecodeDispatches != tr.Steps*tr.DispatchesPerStep {
				t.Errorf("%d decode dispatches, %d steps of %d", tr.DecodeDispatches, tr.Steps, tr.DispatchesPerStep)
			}
		})
	}
}

func TestSampledRunsAddTheirSamplerTail(t *testing.T) {
	t.Parallel()
	for _, m := range Models() {
		for _, tag := range []string{"t0.7", "t0.7-p0.95"} {
			t.Run(m+"/"+tag, func(t *testing.T) {
				t.Parallel()
				o := small(m)
				o.Sampling, _ = results.ParseSampling(tag)
				o.Prompt = 600
				tr := synthRun(t, o).Truth
				share := 100 * float64(tr.RoleGPUNs["sampler_tail"]) / float64(tr.GPUSumNs)
				lo, hi := 0.4, 0.7
				if tag != "t0.7" {
					lo, hi = 1.2, 3.8
				}
				if share < lo || share > hi {
					t.Errorf("sampler tail %.2f%% of decode GPU time, want %v-%v", share, lo, hi)
				}
				perToken := float64(tr.RoleDispatches["sampler_tail"]) * 127 / 128 / float64(tr.Steps)
				if perToken < 32 || perToken > 65 {
					t.Errorf("%.1f sampler dispatches per token, want 32-65", perToken)
				}
				if float64(tr.Temperature) != 0.7 || (tag == "t0.7") != (tr.TopP == 1) {
					t.Errorf("truth sampling t=%v p=%v", tr.Temperature, tr.TopP)
				}
			})
		}
	}
}

func TestSameSeedSameBytes(t *testing.T) {
	t.Parallel()
	o := small("granite-hybrid")
	o.Overlap, o.Straddlers = 0.05, 2
	a, b := synthRun(t, o), synthRun(t, o)
	o.Seed++
	c := synthRun(t, o)
	files := func(out *Output) []string {
		return []string{out.TraceFile, out.StatsFile, out.AgentInfoFile, out.BenchLog, out.PlainLog,
			filepath.Join(out.ModelDir, "config.json"), out.TruthFile}
	}
	fb, fc := files(b), files(c)
	for i, f := range files(a) {
		x, _ := os.ReadFile(f)
		y, _ := os.ReadFile(fb[i])
		z, _ := os.ReadFile(fc[i])
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs of one seed", filepath.Base(f))
		}
		if i == 0 && bytes.Equal(x, z) {
			t.Error("another seed wrote the same trace")
		}
	}
}

func TestConfigBenchLogsAndAgentInfo(t *testing.T) {
	t.Parallel()
	wantType := map[string]string{"llama": "llama", "qwen3-moe": "qwen3_moe", "granite-hybrid": "granitemoehybrid", "nemotron-hybrid": "nemotron_h"}
	fixtureAgent, err := os.ReadFile(testfix.Path(t, "rocprofv3", "gfx1201-sllm-component-rocm7.2.1", "component-m8_agent_info.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Models() {
		for _, na := range ClockNAs {
			t.Run(m+"/"+na, func(t *testing.T) {
				t.Parallel()
				o := small(m)
				o.ClockNA, o.ClockOffset = na, 40
				out := synthRun(t, o)
				var cfg struct {
					ModelType   string `json:"model_type"`
					RopeScaling *struct {
						RopeType string `json:"rope_type"`
					} `json:"rope_scaling"`
				}
				data, err := os.ReadFile(filepath.Join(out.ModelDir, "config.json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, &cfg); err != nil {
					t.Fatal(err)
				}
				if cfg.ModelType != wantType[m] || out.Truth.ModelType != wantType[m] {
					t.Errorf("model_type %q (truth %q), want %q", cfg.ModelType, out.Truth.ModelType, wantType[m])
				}
				if (m == "llama") != (cfg.RopeScaling != nil && cfg.RopeScaling.RopeType == "llama3") {
					t.Errorf("rope_scaling %+v", cfg.RopeScaling)
				}
				if dir, _ := ModelDirName(m); filepath.Base(out.ModelDir) != dir || !strings.HasPrefix(out.Run, dir+"_") {
					t.Errorf("model dir %s, run %s", out.ModelDir, out.Run)
				}

				bi := readBenchLog(t, out.BenchLog)
				for _, name := range []string{"warmup_start", "measured_start", "decode_start", "measured_end"} {
					v, ok := bi.marks[name]
					if !ok {
						t.Fatalf("no %s mark", name)
					}
					mono, boot := v[0], v[1]
					switch {
					case na == "monotonic" && (mono != nil || boot == nil),
						na == "boottime" && (boot != nil || mono == nil),
						na == "none" && (mono == nil || boot == nil || *boot-*mono != 40):
						t.Errorf("%s with --clock-na %s: monotonic %v boottime %v", name, na, mono, boot)
					}
				}
				plain := readBenchLog(t, out.PlainLog)
				if len(plain.marks) != 0 {
					t.Error("plain log has phase marks")
				}
				if x := plain.decodeTokS/bi.decodeTokS - 1; x <= 0 || x > 0.07 {
					t.Errorf("plain run %.1f%% faster, want a few %%", 100*x)
				}
				if plain.tokens != o.Tokens || plain.prompt != o.Prompt || bi.prompt != o.Prompt {
					t.Errorf("results blocks: %+v %+v", plain, bi)
				}
				log, _ := os.ReadFile(out.BenchLog)
				if !strings.HasPrefix(string(log), "[mlx-rocm] bound HIP device 0: gfx1151 (AMD Radeon 8060S Graphics)") ||
					!strings.Contains(string(log), "\n[Load] wall: ") {
					t.Errorf("bench log lacks the bench's noise lines:\n%s", log)
				}

				agent, _ := os.ReadFile(out.AgentInfoFile)
				r := csv.NewReader(bytes.NewReader(agent))
				recs, err := r.ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				fr, _ := csv.NewReader(bytes.NewReader(fixtureAgent)).ReadAll()
				if !cmp.Equal(recs[0], fr[0]) || len(recs[0]) != 53 {
					t.Errorf("agent_info header differs from the real one")
				}
				gpu := recs[2]
				if gpu[indexOf(recs[0], "Agent_Type")] != "GPU" || gpu[indexOf(recs[0], "Name")] != "gfx1151" ||
					gpu[indexOf(recs[0], "Logical_Node_Id")] != "1" || gpu[indexOf(recs[0], "Gfx_Target_Version")] != "110501" {
					t.Errorf("GPU agent row %v", gpu)
				}
			})
		}
	}
}

// Every kernel name must fall in the class it was written for (docs/analysis.md §4): a stray
// "conv" or "take" in a name would change the roles the analysis finds.
func TestKernelNamesFallInTheirClasses(t *testing.T) {
	t.Parallel()
	for _, m := range Models() {
		for _, tag := range []string{"greedy", "t0.7", "t0.7-p0.95"} {
			s, _ := results.ParseSampling(tag)
			p, _ := newPlan(models[m], s, 512, nil)
			for _, k := range p.cat.kernels {
				if got := classify(k.name); got != k.class {
					t.Errorf("%s %s: %.90s is %s, written as %s", m, tag, k.name, got, k.class)
				}
				if strings.Contains(k.name, "$") {
					t.Errorf("unfilled placeholder in %s", k.name)
				}
			}
			var widest, next int64
			for _, o := range p.step {
				if p.cat.kernels[o.k].class != "qmv" {
					continue
				}
				g := o.grid[0] * o.grid[1] * o.grid[2]
				if o.flags&fLMHead != 0 {
					widest = g
				} else {
					next = max(next, g)
				}
			}
			if widest <= next {
				t.Errorf("%s: lm_head grid %d is not the widest qmv (%d)", m, widest, next)
			}
		}
	}
}

func TestStatsNumberFormatsMatchRocprof(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"Meta-Llama-3.1-8B-Instruct-4bit_greedy_kernel_stats.csv", "Qwen3-30B-A3B-4bit_greedy_kernel_stats.csv"} {
		data, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab", f))
		if err != nil {
			t.Fatal(err)
		}
		r := csv.NewReader(bytes.NewReader(data))
		r.LazyQuotes = true
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(data), "\n"); first != StatsHeader {
			t.Errorf("header %s", first)
		}
		for _, rec := range recs[1:] {
			calls, _ := strconv.ParseInt(rec[1], 10, 64)
			total, _ := strconv.ParseInt(rec[2], 10, 64)
			if got := strconv.FormatFloat(float64(total)/float64(calls), 'f', 6, 64); got != rec[3] {
				t.Errorf("AverageNs %s printed %s", rec[3], got)
			}
			pct, _ := strconv.ParseFloat(rec[4], 64)
			if got := statsPercent(pct); got != rec[4] {
				t.Errorf("Percentage %s printed %s", rec[4], got)
			}
			std, _ := strconv.ParseFloat(rec[7], 64)
			if got := statsStdDev(std); got != rec[7] {
				t.Errorf("StdDev %s printed %s", rec[7], got)
			}
		}
	}
	if got := statsStdDev(0); got != "0.00000000e+00" {
		t.Errorf("zero StdDev printed %s", got)
	}
	var s kstat
	for _, d := range []int64{26920, 27201, 27440} {
		s.add(d)
	}
	if got := statsStdDev(s.stdDev()); got != "260.282539" { // the gfx1201 fixture's first row
		t.Errorf("sample StdDev %s, want 260.282539", got)
	}
}

func TestBadOptionsAreOptionsErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]func(*Options){
		"unknown model":      func(o *Options) { o.Model = "gpt2" },
		"one token":          func(o *Options) { o.Tokens = 1 },
		"too many tokens":    func(o *Options) { o.Tokens = MaxTokens + 1 },
		"negative prompt":    func(o *Options) { o.Prompt = -5 },
		"prompt over ctx":    func(o *Options) { o.Prompt = 131072 },
		"negative warmup":    func(o *Options) { o.Warmup = -1 },
		"top-p, greedy":      func(o *Options) { o.Sampling = results.Sampling{Temperature: 0, TopP: 0.9} },
		"negative temp":      func(o *Options) { o.Sampling = results.Sampling{Temperature: -1, TopP: 1} },
		"layout":             func(o *Options) { o.Layout = "7.0" },
		"noise":              func(o *Options) { o.Noise = 2 },
		"overlap":            func(o *Options) { o.Overlap = -0.1 },
		"straddlers":         func(o *Options) { o.Straddlers = MaxStraddlers + 1 },
		"clock-na":           func(o *Options) { o.ClockNA = "both" },
		"negative offset":    func(o *Options) { o.ClockOffset = -1 },
		"offset off the run": func(o *Options) { o.ClockNA = "boottime"; o.ClockOffset = 5_000_000_000 },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := small("llama")
			f(&o)
			dir := t.TempDir()
			out, err := Generate(o, dir)
			var oe *OptionsError
			if !errors.As(err, &oe) || out != nil {
				t.Fatalf("Generate = %v, %v; want an *OptionsError", out, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("bad options still wrote %d entries", len(entries))
			}
		})
	}
}

func TestTruthFileReadsBack(t *testing.T) {
	t.Parallel()
	out := synthRun(t, small("nemotron-hybrid"))
	got, err := ReadTruth(out.TruthFile)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(out.Truth, got); d != "" {
		t.Errorf("truth file differs from the returned truth:\n%s", d)
	}
	data, _ := os.ReadFile(out.TruthFile)
	if bytes.Contains(data, []byte(`\u003c`)) || !bytes.Contains(data, []byte(`"temperature": 0.0`)) {
		t.Errorf("truth JSON escapes names or prints 0 for 0.0")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run", "model", "model_type", "rope_scaling", "temperature", "top_p", "generated_tokens",
		"steps", "clock", "decode_dispatches", "dispatches_per_step", "gpu_sum_ns", "gpu_busy_ns", "wall_ns",
		"host_gap_ns", "straddlers", "idle_gap_before_first_ns", "last_before_decode", "roles_per_step",
		"role_gpu_ns", "role_host_gap_ns", "role_names", "decode_roles"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("truth lacks %s", k)
		}
	}
}
