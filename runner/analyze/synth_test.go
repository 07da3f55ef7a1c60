package analyze

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/modelcfg"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
	"github.com/lablup/perfbot/runner/synth"
)

// analyzeSynth writes a synthetic run, reads it back through the real readers and
// analyzes it, returning the analysis and the synthesizer's ground truth.
func analyzeSynth(t *testing.T, o synth.Options) (*Result, *synth.Truth) {
	t.Helper()
	out, err := synth.Generate(o, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := rocprof.ReadKernelTrace(out.TraceFile)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := benchlog.ParseFile(out.BenchLog)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := benchlog.ParseFile(out.PlainLog)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := modelcfg.Read(out.ModelDir + "/config.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(Input{Name: out.Run, Trace: tr, Log: lg, Plain: plain, Model: mc, Sampling: o.Sampling})
	if err != nil {
		t.Fatal(err)
	}
	return res, out.Truth
}

// checkTruth compares every figure the synthesizer planted with what the analysis found.
func checkTruth(t *testing.T, res *Result, truth *synth.Truth) {
	t.Helper()
	m := res.Metrics
	if m.Window.Clock != truth.Clock {
		t.Errorf("clock = %s, truth %s", m.Window.Clock, truth.Clock)
	}
	if len(m.Decode) != truth.DecodeDispatches {
		t.Fatalf("decode dispatches = %d, truth %d", len(m.Decode), truth.DecodeDispatches)
	}
	for _, c := range []struct {
		what      string
		got, want int64
	}{
		{"wall ns", m.WallNs, truth.WallNs},
		{"gpu sum ns", m.GPUSumNs, truth.GPUSumNs},
		{"gpu busy ns", m.GPUBusyNs, truth.GPUBusyNs},
		{"host gap ns", m.WallNs - m.GPUBusyNs, truth.HostGapNs},
		{"straddlers", int64(m.Straddlers), int64(truth.Straddlers)},
		{"idle gap before first ns", m.IdleGapNs, truth.IdleGapBeforeFirstNs},
		{"tail ns", m.TailNs, truth.RoleHostGapNs["tail"]},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, truth %d", c.what, c.got, c.want)
		}
	}
	if got := cut(res.Summary.Checks.LastDispatchBeforeDecode, 120); got != cut(truth.LastBeforeDecode, 120) {
		t.Errorf("last dispatch before decode = %q, truth %q", got, truth.LastBeforeDecode)
	}
	// The gap attribution adds up exactly to wall - busy.
	var gaps int64
	for _, g := range m.GapNs {
		gaps += g
	}
	if gaps+m.TailNs != m.WallNs-m.GPUBusyNs {
		t.Errorf("gaps %d + tail %d != wall - busy %d", gaps, m.TailNs, m.WallNs-m.GPUBusyNs)
	}
	// Every dispatch's role is the one the synthesizer gave it.
	att := res.Attribution
	roleGap := map[string]int64{}
	perStep := map[string]int{}
	wrong := 0
	for i := range m.Decode {
		got := att.RoleNames[att.Roles[i]]
		want := truth.RoleNames[truth.DecodeRoles[i]]
		if got != want {
			if wrong < 5 {
				t.Errorf("dispatch %d (name %d): role %s, truth %s", i, m.Decode[i].Name, got, want)
			}
			wrong++
		}
		roleGap[got] += m.GapNs[i]
		perStep[got]++
	}
	if wrong > 0 {
		t.Errorf("%d of %d dispatches got another role than the truth", wrong, len(m.Decode))
	}
	for role, want := range truth.RoleHostGapNs {
		if role == "tail" {
			continue
		}
		if roleGap[role] != want {
			t.Errorf("host gap charged to %s = %d ns, truth %d", role, roleGap[role], want)
		}
	}
	for role, n := range truth.RoleDispatches {
		if perStep[role] != n {
			t.Errorf("%s: %d dispatches, truth %d", role, perStep[role], n)
		}
	}
	// Per forward pass, the attributed roles repeat exactly (47 / 50 ssm_step per Mamba2
	// layer, 3 expert GEMVs per MoE layer, ...); unattributed also holds the window's
	// edges, which belong to no step.
	for role, n := range truth.RolesPerStep {
		if role == "unattributed" {
			continue
		}
		if got := perStep[role]; got != n*truth.Steps {
			t.Errorf("%s: %d dispatches in the window, truth %d per step x %d steps", role, got, n, truth.Steps)
		}
	}
}

func TestAnalysisEqualsThePlantedTruth(t *testing.T) {
	t.Parallel()
	sampled, _ := results.ParseSampling("t0.7-p0.95")
	for _, model := range []string{"llama", "qwen3-moe", "granite-hybrid", "nemotron-hybrid"} {
		for _, layout := range []string{"7", "6.4", "6.2", "rocpd-csv"} {
			o := synth.DefaultOptions()
			o.Model, o.Layout, o.Tokens, o.Seed = model, layout, 6, 7
			if layout == "6.4" {
				o.Sampling = sampled
			}
			t.Run(model+"/"+layout, func(t *testing.T) {
				t.Parallel()
				res, truth := analyzeSynth(t, o)
				checkTruth(t, res, truth)
			})
		}
	}
}

func TestClockPickAndStraddlersOnSynthRuns(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		tweak func(*synth.Options)
		clock string
	}{
		{"boottime na", func(o *synth.Options) { o.ClockNA = "boottime" }, "monotonic"},
		{"monotonic na", func(o *synth.Options) { o.ClockNA = "monotonic" }, "boottime"},
		{"large offset", func(o *synth.Options) { o.ClockOffset = 5_000_000_000 }, "boottime"},
		{"straddlers and overlap", func(o *synth.Options) { o.Straddlers = 3; o.Overlap = 0.2 }, "boottime"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := synth.DefaultOptions()
			o.Model, o.Tokens, o.Seed = "granite-hybrid", 4, 3
			c.tweak(&o)
			res, truth := analyzeSynth(t, o)
			checkTruth(t, res, truth)
			if res.Summary.Clock != c.clock && truth.Clock == c.clock {
				t.Errorf("clock = %s, want %s", res.Summary.Clock, c.clock)
			}
			if o.Straddlers > 0 {
				if res.Summary.Checks.KernelsStraddlingDecodeStart != o.Straddlers {
					t.Errorf("straddlers = %d, planted %d", res.Summary.Checks.KernelsStraddlingDecodeStart, o.Straddlers)
				}
				if res.Metrics.GPUBusyNs == res.Metrics.GPUSumNs {
					t.Errorf("overlapping dispatches planted but busy == sum")
				}
			}
		})
	}
}

// The ranked order over synthetic runs of the four families, greedy and top-p, shaped
// by the published figures: SSM first, MoE second, samplers third (docs/analysis.md §7).
func TestRankOverSynthRunsOfTheFourFamilies(t *testing.T) {
	t.Parallel()
	topP, _ := results.ParseSampling("t0.7-p0.95")
	var sums []*results.Summary
	for i, model := range []string{"llama", "qwen3-moe", "granite-hybrid", "nemotron-hybrid"} {
		for j, s := range []results.Sampling{results.Greedy, topP} {
			o := synth.DefaultOptions()
			o.Model, o.Tokens, o.Sampling, o.Seed = model, 8, s, int64(10*i+j)
			res, _ := analyzeSynth(t, o)
			sums = append(sums, res.Summary)
		}
	}
	rk, err := rank.Rank(sums, attrib.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(rk.Order) < 3 || rk.Order[0] != "2067" || rk.Order[1] != "2065" || rk.Order[2] != "2064" {
		t.Fatalf("ranked order %v, want 2067, 2065, 2064 first", rk.Order)
	}
	// The ranking shows the units' figures as each run's summary holds them.
	byName := map[string]*results.Summary{}
	for _, s := range sums {
		byName[s.Name] = s
	}
	for _, u := range rk.Units {
		s, ok := byName[u.Best.Run]
		if !ok {
			continue
		}
		su, _ := s.PortUnits.Get(u.ID)
		if u.Best.ReachedSharePct != float64(su.ReachedDefaultSharePct) || u.Best.FallbackSharePct != float64(su.FallbackSharePct) ||
			u.Best.DispatchesPerTokenRemoved != float64(su.ReachedDefaultDispatchesPerToken) {
			t.Errorf("unit %s in %s: ranking shows %.2f %% reached / %.2f %% fallback / %.1f dispatches, the summary %v / %v / %v",
				u.ID, s.Name, u.Best.ReachedSharePct, u.Best.FallbackSharePct, u.Best.DispatchesPerTokenRemoved,
				su.ReachedDefaultSharePct, su.FallbackSharePct, su.ReachedDefaultDispatchesPerToken)
		}
		if su.RecoverableDefaultMsPerToken != nil && u.Best.RecoverableMsPerToken != float64(*su.RecoverableDefaultMsPerToken) {
			t.Errorf("unit %s: recoverable %.4f, the summary %v", u.ID, u.Best.RecoverableMsPerToken, *su.RecoverableDefaultMsPerToken)
		}
	}
	md := rk.Markdown()
	for _, want := range []string{"granite-4.0-h-tiny-4bit", "Qwen3-30B-A3B-4bit_", "_t0.7-p0.95", "| rank | unit |"} {
		if !strings.Contains(md, want) {
			t.Errorf("evidence table lacks %q:\n%s", want, md)
		}
	}
}
