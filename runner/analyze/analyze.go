package analyze

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/modelcfg"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
)

// Input is one profiled run.
type Input struct {
	Name     string
	Trace    *rocprof.Trace
	Log      *benchlog.Log  // the profiled run's log
	Plain    *benchlog.Log  // the plain run's log, or nil
	Model    modelcfg.Model // zero when unknown
	Sampling results.Sampling
	Rules    *attrib.Rules // nil: attrib.Default()
}

// Result is the analysis of one run.
type Result struct {
	Metrics     *Metrics
	Attribution *attrib.Result
	Kernels     []results.KernelRow
	Summary     *results.Summary
	// Warnings are what the inputs lacked or held twice and the analysis worked
	// around: the caller shows them. The summary's notes carry them too.
	Warnings []string
}

// Analyze computes the decode metrics, the attribution and the output tables of a run.
func Analyze(in Input) (*Result, error) {
	if in.Trace == nil || in.Log == nil {
		return nil, errors.New("analyze: a trace and a bench log are required")
	}
	tokens := in.Log.GeneratedTokens
	if !in.Log.HasResults || tokens <= 0 {
		return nil, errors.New("the bench log has no results block with `Generated tokens:` (did the bench finish?)")
	}
	if len(in.Trace.Dispatches) == 0 {
		return nil, errors.New("the kernel trace holds no dispatch (missing or empty kernel_trace.csv: was --kernel-trace passed?)")
	}
	w, err := PickWindow(in.Trace.Dispatches, in.Log)
	if err != nil {
		return nil, err
	}
	m, err := Measure(in.Trace.Dispatches, w)
	if err != nil {
		return nil, err
	}
	rules := in.Rules
	if rules == nil {
		rules = attrib.Default()
	}
	att, err := rules.Attribute(attribInput(in, m))
	if err != nil {
		return nil, fmt.Errorf("attributing dispatches: %w", err)
	}
	rows := kernelRows(in.Trace.Names, m, att, tokens)
	warnings := inputWarnings(in)
	sum := summarize(in, m, att, rows)
	sum.Notes = append(sum.Notes, warnings...)
	return &Result{Metrics: m, Attribution: att, Kernels: rows, Summary: sum, Warnings: warnings}, nil
}

// inputWarnings says what the inputs lacked or repeated ("What the analysis works around"
// in docs/inputs.md).
func inputWarnings(in Input) []string {
	var w []string
	for _, x := range in.Log.Warnings {
		w = append(w, "bench log: "+x)
	}
	if in.Plain != nil {
		for _, x := range in.Plain.Warnings {
			w = append(w, "plain bench log: "+x)
		}
	}
	if n := in.Trace.Duplicates; n > 0 {
		w = append(w, fmt.Sprintf("kernel trace: %d row(s) repeat the Dispatch_Id of an earlier row (the first: %d); each dispatch is counted once",
			n, in.Trace.FirstDuplicate))
	}
	return w
}

func attribInput(in Input, m *Metrics) attrib.Input {
	n := len(m.Decode)
	ai := attrib.Input{
		Names:       in.Trace.Names,
		Name:        make([]uint32, n),
		Grid:        make([]int64, n),
		DurNs:       make([]int64, n),
		GapNs:       m.GapNs,
		TailGapNs:   m.TailNs,
		HasGrid:     in.Trace.HasGrid,
		Tokens:      in.Log.GeneratedTokens,
		GPUSumNs:    m.GPUSumNs,
		ModelType:   in.Model.ModelType,
		RopeScaling: in.Model.RopeScalingType,
		Temperature: in.Sampling.Temperature,
		TopP:        in.Sampling.TopP,
	}
	for i := range m.Decode {
		d := &m.Decode[i]
		ai.Name[i], ai.Grid[i], ai.DurNs[i] = d.Name, d.Grid, d.End-d.Start
	}
	return ai
}

// kernelRows aggregates the decode dispatches per kernel name, sorted by total time
// descending (then by name, so equal totals print in a stable order).
func kernelRows(names []string, m *Metrics, att *attrib.Result, tokens int) []results.KernelRow {
	calls := make([]int64, len(names))
	total := make([]int64, len(names))
	for i := range m.Decode {
		d := &m.Decode[i]
		calls[d.Name]++
		total[d.Name] += d.End - d.Start
	}
	var rows []results.KernelRow
	for id, c := range calls {
		if c == 0 {
			continue
		}
		r := results.KernelRow{
			Kernel:        names[id],
			Calls:         c,
			CallsPerToken: results.Round(float64(c)/float64(tokens), 2),
			TotalNs:       total[id],
			AvgNs:         results.AvgNs(total[id], c),
		}
		if m.GPUSumNs > 0 {
			r.SharePct = 100 * float64(total[id]) / float64(m.GPUSumNs)
		}
		if att != nil {
			r.Class = att.Classes[id]
			r.Roles = att.KernelRoles[id]
			r.Units = att.KernelUnits[id]
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b results.KernelRow) int {
		if a.TotalNs != b.TotalNs {
			if a.TotalNs > b.TotalNs {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Kernel, b.Kernel)
	})
	return rows
}

func num(x float64, decimals int) results.Num { return results.Num(results.Round(x, decimals)) }

func numPtr(x float64, decimals int) *results.Num {
	n := num(x, decimals)
	return &n
}

func summarize(in Input, m *Metrics, att *attrib.Result, rows []results.KernelRow) *results.Summary {
	tokens := float64(in.Log.GeneratedTokens)
	wall, busy := float64(m.WallNs), float64(m.GPUBusyNs)
	gpuPerTok := busy / 1e6 / tokens
	s := &results.Summary{
		Name:                in.Name,
		ModelType:           in.Model.ModelType,
		Temperature:         results.Num(in.Sampling.Temperature),
		Clock:               m.Window.Clock,
		PromptTokens:        in.Log.PromptTokens,
		GeneratedTokens:     in.Log.GeneratedTokens,
		ProfiledDecodeTokS:  results.Num(in.Log.DecodeTokS),
		ProfiledPrefillTokS: results.Num(in.Log.PrefillTokS),
		DecodeDispatches:    len(m.Decode),
		DispatchesPerToken:  num(float64(len(m.Decode))/tokens, 1),
		DecodeWallMs:        num(wall/1e6, 3),
		DecodeGPUSumMs:      num(float64(m.GPUSumNs)/1e6, 3),
		DecodeGPUBusyMs:     num(busy/1e6, 3),
		GPUMsPerToken:       num(gpuPerTok, 4),
		HostGapMsPerToken:   num((wall-busy)/1e6/tokens, 4),
		HostGapPctOfWall:    num(100*(wall-busy)/wall, 2),
		TopP:                numPtr(in.Sampling.TopP, 4),
		Sampling:            in.Sampling.Tag(),
		RopeScaling:         in.Model.RopeScalingType,
		HostGapTailMs:       numPtr(float64(m.TailNs)/1e6, 3),
		Trace: &results.TraceInfo{
			Layout: in.Trace.Layout, Rows: in.Trace.Rows, HasGrid: in.Trace.HasGrid,
		},
	}
	if in.Plain != nil && in.Plain.HasResults && in.Plain.DecodeTokS > 0 && in.Log.DecodeTokS > 0 {
		plainWall := 1000 / in.Plain.DecodeTokS
		s.PlainDecodeTokS = numPtr(in.Plain.DecodeTokS, 2)
		s.PlainPrefillTokS = numPtr(in.Plain.PrefillTokS, 2)
		slow := 100 * (in.Plain.DecodeTokS/in.Log.DecodeTokS - 1)
		s.ProfilerDecodeSlowdownPct = numPtr(slow, 2)
		s.PlainWallMsPerToken = numPtr(plainWall, 4)
		s.PlainHostGapMsPerTokenEst = numPtr(plainWall-gpuPerTok, 4)
		if slow < 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("profiler_decode_slowdown_pct is negative (%.2f): one plain and one profiled run differ by run-to-run noise; this is not a speed-up from profiling", slow))
		}
	}
	s.Checks = results.Checks{
		KernelsStraddlingDecodeStart: m.Straddlers,
	}
	if m.HasIdleGap {
		s.Checks.IdleGapBeforeFirstDecodeDispatchUs = num(float64(m.IdleGapNs)/1e3, 1)
		s.Checks.LastDispatchBeforeDecode = cut(in.Trace.Names[m.LastBefore], 120)
	} else {
		s.Notes = append(s.Notes, "no dispatch ends before decode_start: the idle gap before the first decode dispatch is unknown")
	}
	if m.Straddlers > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d dispatch(es) straddle decode_start: the cut is not clean", m.Straddlers))
	}
	for i, r := range rows {
		if i == 10 {
			break
		}
		s.TopKernels = append(s.TopKernels, results.TopKernel{
			Kernel: r.Kernel, Class: r.Class,
			CallsPerToken: results.Num(r.CallsPerToken), SharePct: num(r.SharePct, 2),
		})
	}
	if steps, why := Steps(in.Trace.Names, m.Decode, in.Log.GeneratedTokens); steps != nil {
		s.DecodeSteps = steps
	} else {
		s.Notes = append(s.Notes, why)
	}
	s.NumHiddenLayers = in.Model.NumHiddenLayers
	// A model known by its model_type alone says nothing of its size: no note then.
	if in.Model.Shape.HiddenSize > 0 || in.Model.NumHiddenLayers > 0 {
		if w, err := in.Model.WeightsPerToken(); err == nil {
			s.WeightBytesPerToken, s.WeightBytesBasis = numPtr(w.Bytes, 0), w.Basis
		} else {
			s.Notes = append(s.Notes, "the bytes of weights a decode step reads are not known: "+err.Error())
		}
	}
	if att != nil {
		s.ClassSharePct = att.ClassSharePct
		s.RoleSharePct = att.RoleSharePct
		s.RoleDispatchesPerToken = att.RoleDispatchesPerToken
		s.RoleGPUMsPerToken = att.RoleGPUMsPerToken
		s.RoleHostGapMsPerToken = att.RoleHostGapMsPerToken
		s.PortUnits = att.Units
		s.Notes = append(s.Notes, att.Notes...)
	}
	return s
}

// cut keeps the first n characters of s.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// Written says where WriteOutputs put the two files, and which of them replaced a
// file of the same name.
type Written struct {
	Kernels, Summary string
	Replaced         []string
}

// WriteOutputs writes `<run>_decode_kernels.csv` and `<run>_summary.json` into dir. The
// run name must be one plain file name element (results.CheckRunName).
func (r *Result) WriteOutputs(dir string) (Written, error) {
	if err := results.CheckRunName(r.Summary.Name); err != nil {
		return Written{}, err
	}
	w := Written{
		Kernels: filepath.Join(dir, r.Summary.Name+"_decode_kernels.csv"),
		Summary: filepath.Join(dir, r.Summary.Name+"_summary.json"),
	}
	var b bytes.Buffer
	if err := results.WriteKernels(&b, r.Kernels); err != nil {
		return Written{}, fmt.Errorf("writing %s: %w", w.Kernels, err)
	}
	sum, err := r.Summary.MarshalIndent()
	if err != nil {
		return Written{}, fmt.Errorf("encoding %s: %w", w.Summary, err)
	}
	for _, f := range []struct {
		path string
		data []byte
	}{{w.Kernels, b.Bytes()}, {w.Summary, sum}} {
		replaced, err := results.ReplaceFile(f.path, f.data)
		if err != nil {
			return Written{}, fmt.Errorf("writing %s: %w", f.path, err)
		}
		if replaced {
			w.Replaced = append(w.Replaced, f.path)
		}
	}
	return w, nil
}
