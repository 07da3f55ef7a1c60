package synth

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lablup/perfbot/runner/results"
)

// Options shape one synthetic run. Zero values of Tokens, Prompt, Layout and ClockNA
// take the defaults, and a zero TopP means 1; Warmup, Noise, Overlap, Straddlers and
// ClockOffset are used as given (DefaultOptions has the command's defaults).
type Options struct {
	Model       string // llama, qwen3-moe, granite-hybrid or nemotron-hybrid
	Tokens      int    // generated tokens (the first comes out of the prefill)
	Warmup      int    // warmup tokens generated before the measured run
	Prompt      int    // prompt tokens
	Sampling    results.Sampling
	Seed        int64
	Layout      string  // kernel_trace layout: 7, 6.4, 6.2 or rocpd-csv
	Noise       float64 // relative standard deviation of dispatch durations
	Overlap     float64 // fraction of dispatches that start before the previous one ends
	Straddlers  int     // dispatches in flight across decode_start
	ClockNA     string  // which phase-mark clock prints "na": none, boottime or monotonic
	ClockOffset int64   // boottime - monotonic, in ns
	// Change, when set, plants a known change in the decode step (ParseChange).
	Change *Change
}

// DefaultOptions returns the defaults of `perfbot synth`.
func DefaultOptions() Options {
	return Options{Model: "llama", Tokens: 128, Warmup: 20, Prompt: 512, Sampling: results.Greedy,
		Seed: 1, Layout: "7", Noise: 0.05, ClockNA: "none", ClockOffset: 40}
}

// ClockNAs lists the values --clock-na accepts.
var ClockNAs = []string{"none", "boottime", "monotonic"}

// Limits of the options: beyond them a run stops looking like a decode profile.
const (
	MaxTokens     = 1 << 16
	MaxStraddlers = 64
	maxOffset     = 10_000 * 1_000_000_000 // the trace's boot time is at least 1e14 ns
)

func (o *Options) normalize() error {
	m, ok := models[o.Model]
	if !ok {
		return &OptionsError{fmt.Errorf("unknown model %q: want one of %s", o.Model, strings.Join(Models(), ", "))}
	}
	if o.Tokens == 0 {
		o.Tokens = 128
	}
	if o.Prompt == 0 {
		o.Prompt = 512
	}
	if o.Layout == "" {
		o.Layout = "7"
	}
	if o.ClockNA == "" {
		o.ClockNA = "none"
	}
	if o.Sampling.TopP == 0 {
		o.Sampling.TopP = 1
	}
	var errs []error
	if o.Tokens < 2 || o.Tokens > MaxTokens {
		errs = append(errs, fmt.Errorf("tokens %d: want 2..%d (the first token comes out of the prefill, the decode window needs at least one more)", o.Tokens, MaxTokens))
	}
	if o.Prompt < 1 || o.Prompt+o.Tokens > m.maxContext {
		errs = append(errs, fmt.Errorf("prompt %d: want 1..%d (prompt plus tokens within the model's %d context)", o.Prompt, max(1, m.maxContext-o.Tokens), m.maxContext))
	}
	if o.Warmup < 0 || o.Warmup > MaxTokens {
		errs = append(errs, fmt.Errorf("warmup %d: want 0..%d", o.Warmup, MaxTokens))
	}
	if s := o.Sampling; s.Check() != nil || (s.Temperature == 0 && s.TopP != 1) {
		errs = append(errs, fmt.Errorf("sampling t=%v p=%v: want greedy, a temperature above 0, and top-p in (0, 1] only with a temperature", s.Temperature, s.TopP))
	}
	if !slices.Contains(Layouts, o.Layout) {
		errs = append(errs, fmt.Errorf("layout %q: want one of %s", o.Layout, strings.Join(Layouts, ", ")))
	}
	// Written as "not inside" so that NaN, which fails every comparison, is refused.
	if !(o.Noise >= 0 && o.Noise <= 0.5) {
		errs = append(errs, fmt.Errorf("noise %v: want 0..0.5 (a relative standard deviation)", o.Noise))
	}
	if !(o.Overlap >= 0 && o.Overlap <= 0.5) {
		errs = append(errs, fmt.Errorf("overlap %v: want 0..0.5 (a fraction of dispatches)", o.Overlap))
	}
	if o.Straddlers < 0 || o.Straddlers > MaxStraddlers {
		errs = append(errs, fmt.Errorf("straddlers %d: want 0..%d", o.Straddlers, MaxStraddlers))
	}
	if !slices.Contains(ClockNAs, o.ClockNA) {
		errs = append(errs, fmt.Errorf("clock-na %q: want one of %s", o.ClockNA, strings.Join(ClockNAs, ", ")))
	}
	if o.ClockOffset < 0 || o.ClockOffset > maxOffset {
		errs = append(errs, fmt.Errorf("clock offset %d ns: want 0..%d (boot time minus monotonic time never goes negative)", o.ClockOffset, int64(maxOffset)))
	}
	if len(errs) > 0 {
		return &OptionsError{errors.Join(errs...)}
	}
	return nil
}

// OptionsError says an option was out of range or inconsistent: the caller's input is
// wrong, not the machine.
type OptionsError struct{ Err error }

func (e *OptionsError) Error() string { return e.Err.Error() }
func (e *OptionsError) Unwrap() error { return e.Err }

// Output names what Generate wrote.
type Output struct {
	Run           string
	ModelDir      string
	TraceFile     string
	StatsFile     string
	AgentInfoFile string
	BenchLog      string
	PlainLog      string
	TruthFile     string
	Truth         *Truth
}

// clock is one of the two clocks of the phase marks: its value is boottime - shift.
type clock struct {
	name  string
	shift int64
}

// Generate writes one synthetic run into outDir (created if needed) and returns the
// files and the truth. The same options always write the same bytes.
func Generate(opts Options, outDir string) (*Output, error) {
	o := opts
	if err := o.normalize(); err != nil {
		return nil, err
	}
	m := models[o.Model]
	p, err := newPlan(m, o.Sampling, o.Prompt, o.Change)
	if err != nil {
		return nil, &OptionsError{err}
	}
	run := results.RunName(m.dirBase, o.Sampling)
	out := &Output{
		Run:           run,
		ModelDir:      filepath.Join(outDir, m.dirBase),
		TraceFile:     filepath.Join(outDir, traceFileName(o.Layout, run)),
		StatsFile:     filepath.Join(outDir, run+"_kernel_stats.csv"),
		AgentInfoFile: filepath.Join(outDir, run+"_agent_info.csv"),
		BenchLog:      filepath.Join(outDir, run+"_bench.log"),
		PlainLog:      filepath.Join(outDir, run+"_plain_bench.log"),
		TruthFile:     filepath.Join(outDir, run+"_truth.json"),
	}
	// Pass 1: the phase marks. Pass 2: the clock the analysis will pick and whether its
	// window holds exactly the decode steps. Pass 3: write the trace and measure.
	mk := p.run(&o, nil)
	c, counts, err := p.chooseClock(&o, mk)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out.ModelDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating output folder: %w", err)
	}
	acc, stats, rows, err := p.writeTrace(&o, out.TraceFile, c, mk)
	if err != nil {
		return nil, err
	}
	t := p.truth(&o, run, acc, c.name)
	t.TraceRows = rows
	t.ClockCounts = counts
	out.Truth = t

	plainRng := rand.New(rand.NewPCG(uint64(o.Seed), stream(&o, 0x706c61696e)))
	decodeNs := mk.measuredEnd - mk.decodeStart
	// The plain run is a few % faster: no profiler adding host time per dispatch.
	faster := min(0.02+0.04*plainRng.Float64(), 0.8*float64(t.HostGapNs)/float64(t.WallNs))
	prof := benchLog{m: m, prompt: o.Prompt, tokens: o.Tokens, loadWallNs: mk.loadWallNs, prefillNs: mk.prefillNs,
		decodeNs: decodeNs, marks: &mk, clockNA: o.ClockNA, offset: o.ClockOffset, hipblaslt: m.prefillGEMM == "cijk"}
	plain := prof
	plain.marks = nil
	plain.loadWallNs = int64(float64(mk.loadWallNs) * (1.05 + 0.25*plainRng.Float64()))
	plain.prefillNs = int64(float64(mk.prefillNs) * (0.97 + 0.06*plainRng.Float64()))
	plain.decodeNs = int64(float64(decodeNs) * (1 - faster))

	cfg, err := configJSON(m)
	if err != nil {
		return nil, fmt.Errorf("writing config.json: %w", err)
	}
	truth, err := marshalTruth(t)
	if err != nil {
		return nil, fmt.Errorf("writing truth: %w", err)
	}
	for _, f := range []struct {
		path string
		data []byte
	}{
		{out.StatsFile, formatStats(p.cat, stats)},
		{out.AgentInfoFile, []byte(agentInfo)},
		{out.BenchLog, []byte(prof.String())},
		{out.PlainLog, []byte(plain.String())},
		{filepath.Join(out.ModelDir, "config.json"), cfg},
		{out.TruthFile, truth},
	} {
		if err := results.WriteFileAtomic(f.path, f.data); err != nil {
			return nil, fmt.Errorf("writing %s: %w", filepath.Base(f.path), err)
		}
	}
	return out, nil
}

// chooseClock is docs/analysis.md §2.1 on the run: the printed clock with more dispatches
// between warmup_start and measured_end (boot time on ties). Its decode window must
// hold exactly the decode steps, or the truth's roles would not be the rules' roles.
func (p *plan) chooseClock(o *Options, mk marks) (clock, map[string]int, error) {
	var clocks []clock
	if o.ClockNA != "boottime" {
		clocks = append(clocks, clock{"boottime", 0})
	}
	if o.ClockNA != "monotonic" {
		clocks = append(clocks, clock{"monotonic", o.ClockOffset})
	}
	counts := make([]int, len(clocks))
	misplaced := make([]int, len(clocks))
	before := make([]int, len(clocks))
	p.run(o, func(d *disp) {
		for i, c := range clocks {
			if d.start >= mk.warmupStart-c.shift && d.start <= mk.measuredEnd-c.shift {
				counts[i]++
			}
			if in := d.start >= mk.decodeStart-c.shift && d.start <= mk.measuredEnd-c.shift; in != d.decode {
				misplaced[i]++
			}
			if d.end <= mk.decodeStart-c.shift {
				before[i]++
			}
		}
	})
	chosen := 0
	if len(clocks) == 2 && counts[1] > counts[0] {
		chosen = 1
	}
	if misplaced[chosen] > 0 || before[chosen] == 0 {
		return clock{}, nil, &OptionsError{fmt.Errorf("clock offset %d ns moves the %s decode window off the decode steps "+
			"(%d dispatches misplaced): with --clock-na %s use a small --clock-offset (a real host shows tens of ns)",
			o.ClockOffset, clocks[chosen].name, misplaced[chosen], o.ClockNA)}
	}
	byName := map[string]int{}
	for i, c := range clocks {
		byName[c.name] = counts[i]
	}
	return clocks[chosen], byName, nil
}

// writeTrace streams the trace to path (through a temp file, renamed when complete)
// while aggregating kernel_stats and measuring the decode window on clock c.
func (p *plan) writeTrace(o *Options, path string, c clock, mk marks) (*truthAcc, []kstat, int, error) {
	acc := newTruthAcc(mk.decodeStart-c.shift, mk.measuredEnd-c.shift, (o.Tokens-1)*len(p.step)+64)
	stats := make([]kstat, len(p.cat.kernels))
	tid := 2_000_000 + rand.New(rand.NewPCG(uint64(o.Seed), stream(o, 0x746964))).Int64N(2_000_000)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".trace-*.csv")
	if err != nil {
		return nil, nil, 0, fmt.Errorf("creating trace: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	tw := newTraceWriter(bufio.NewWriterSize(tmp, 1<<20), o.Layout, p.cat, o.Seed, stream(o, 0x73687566666c65), tid)
	werr := tw.header()
	p.run(o, func(d *disp) {
		if werr != nil {
			return
		}
		werr = tw.add(d)
		stats[d.k].add(d.end - d.start)
		acc.add(d)
	})
	if werr == nil {
		werr = tw.flush()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		return nil, nil, 0, fmt.Errorf("writing trace: %w", werr)
	}
	if acc.outside > 0 || acc.n != acc.designed || !acc.haveLastBefore {
		return nil, nil, 0, fmt.Errorf("measuring the decode window: %d of %d dispatches misplaced", acc.outside, acc.designed)
	}
	return acc, stats, tw.rows, nil
}

// truth assembles the Truth from the window's measurements.
func (p *plan) truth(o *Options, run string, a *truthAcc, clockName string) *Truth {
	t := &Truth{
		Run: run, Model: p.m.key, ModelType: p.m.modelType,
		Temperature: results.Num(o.Sampling.Temperature), TopP: results.Num(o.Sampling.TopP),
		GeneratedTokens: o.Tokens, Steps: o.Tokens - 1, Clock: clockName,
		DecodeDispatches: a.n, DispatchesPerStep: len(p.step),
		GPUSumNs: a.sum, GPUBusyNs: a.busy, WallNs: a.hi - a.lo, HostGapNs: a.hi - a.lo - a.busy,
		Straddlers: a.straddlers, IdleGapBeforeFirstNs: a.firstStart - a.lastBeforeEnd,
		RolesPerStep: map[string]int{}, RoleGPUNs: map[string]int64{}, RoleHostGapNs: map[string]int64{},
		RoleDispatches: map[string]int{}, RoleNames: slices.Clone(RoleNames),
		PromptTokens: o.Prompt, Layout: o.Layout, Seed: o.Seed,
		DecodeStartNs: a.lo, MeasuredEndNs: a.hi,
	}
	if p.m.rope != "" {
		r := p.m.rope
		t.RopeScaling = &r
	}
	full := p.cat.kernels[a.lastBeforeK].name
	t.LastBeforeDecodeFull = full
	t.LastBeforeDecode = full[:min(len(full), 120)]
	for _, op := range p.step {
		t.RolesPerStep[op.role.String()]++
	}
	for r := range numRoles {
		if a.roleN[r] == 0 {
			continue
		}
		t.RoleDispatches[r.String()] = a.roleN[r]
		t.RoleGPUNs[r.String()] = a.roleGPU[r]
		t.RoleHostGapNs[r.String()] = a.roleGap[r]
	}
	t.RoleHostGapNs["tail"] = a.hi - a.frontier
	t.DecodeRoles = make([]int, len(a.roles))
	for i, r := range a.roles {
		t.DecodeRoles[i] = int(r)
	}
	return t
}
