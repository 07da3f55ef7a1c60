package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/analyze"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/modelcfg"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
	"github.com/lablup/perfbot/runner/synth"
)

func init() {
	register(command{
		name:    "analyze",
		summary: "analyze a profiled decode run: decode window, GPU ms/token, host gap, attribution",
		run:     runAnalyze,
	})
}

type analyzeOptions struct {
	trace, log, plainLog, modelDir string
	sampling                       string
	temperature, topP              float64
	name, outDir, rules            string
	sample                         bool
	stdout, stderr                 io.Writer
}

func runAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := analyzeOptions{stdout: stdout, stderr: stderr}
	fs := newFlags("analyze", "--trace FILE --log FILE [--plain-log FILE] [--model-dir DIR] [--sampling TAG | --temperature T --top-p P] [--rules FILE] --name NAME --out-dir DIR\n"+
		"       perfbot analyze --sample [--out-dir DIR]\n\n"+
		"examples:\n"+
		"  perfbot analyze --trace traces/Qwen3-30B-A3B-4bit_greedy --log bench.log --plain-log plain.log \\\n"+
		"      --model-dir models/Qwen3-30B-A3B-4bit --sampling greedy --name Qwen3-30B-A3B-4bit_greedy --out-dir results\n"+
		"  perfbot analyze --sample --out-dir /tmp/sample", stderr)
	fs.StringVar(&o.trace, "trace", "", "rocprofv3 `kernel_trace.csv` of the profiled run, or the profiler's output folder (-d)")
	fs.StringVar(&o.log, "log", "", "the profiled run's bench log (with phase marks)")
	fs.StringVar(&o.plainLog, "plain-log", "", "the plain (unprofiled) run's bench log")
	fs.StringVar(&o.modelDir, "model-dir", "", "the model directory (its config.json gives model_type and rope_scaling)")
	fs.StringVar(&o.sampling, "sampling", "", "sampling run tag: greedy, t0.7, t0.7-p0.95 (overrides --temperature/--top-p)")
	fs.Float64Var(&o.temperature, "temperature", 0, "sampling temperature of the run")
	fs.Float64Var(&o.topP, "top-p", 1, "top-p of the run")
	fs.StringVar(&o.name, "name", "", "run name, e.g. Meta-Llama-3.1-8B-Instruct-4bit_greedy")
	fs.StringVar(&o.outDir, "out-dir", "", "folder for <name>_decode_kernels.csv and <name>_summary.json")
	fs.StringVar(&o.rules, "rules", "", "attribution rules file (default: the shipped rules)")
	fs.BoolVar(&o.sample, "sample", false, "analyze the embedded sample runs")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	rules, err := loadRules(o.rules)
	if err != nil {
		return fmt.Errorf("loading rules: %w", err)
	}
	if o.sample {
		return analyzeSample(ctx, o, rules)
	}
	if o.trace == "" || o.log == "" || o.name == "" || o.outDir == "" {
		return usageError("--trace, --log, --name and --out-dir are required (or --sample)")
	}
	if err := results.CheckRunName(o.name); err != nil {
		return usageError("--name: %v", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	s, err := runSampling(o, set)
	if err != nil {
		return err
	}
	res, err := analyzeRun(ctx, o.name, o.trace, o.log, o.plainLog, o.modelDir, s, rules)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "perfbot analyze: warning: %s\n", w)
	}
	if err := os.MkdirAll(o.outDir, 0o755); err != nil {
		return err
	}
	written, err := res.WriteOutputs(o.outDir)
	if err != nil {
		return err
	}
	for _, p := range written.Replaced {
		fmt.Fprintf(stderr, "perfbot analyze: replaced the existing %s\n", p)
	}
	printRunLine(stdout, res.Summary)
	return nil
}

// runSampling is the run's sampling setting: --sampling, else --temperature and
// --top-p, else the run tag that ends --name, else greedy. A run tag in --name that
// says otherwise is refused: the name decides how the ranking reads the run.
func runSampling(o analyzeOptions, set map[string]bool) (results.Sampling, error) {
	fromFlags := set["temperature"] || set["top-p"]
	flagS := results.Sampling{Temperature: o.temperature, TopP: o.topP}
	if fromFlags {
		if err := flagS.Check(); err != nil {
			return flagS, usageError("--temperature/--top-p: %v", err)
		}
	}
	nameS, nameTag, named := results.TagOfName(o.name)
	var s results.Sampling
	var from string
	switch {
	case o.sampling != "":
		var err error
		if s, err = results.ParseSampling(o.sampling); err != nil {
			return s, usageError("%v", err)
		}
		if fromFlags && flagS.Tag() != s.Tag() {
			return s, usageError("--sampling %s and --temperature/--top-p (%s) disagree: give one of them", s.Tag(), flagS.Tag())
		}
		from = "--sampling " + s.Tag()
	case fromFlags:
		s, from = flagS, "--temperature/--top-p, which make "+flagS.Tag()
	case named:
		return nameS, nil
	default:
		return results.Greedy, nil
	}
	if named && nameS.Tag() != s.Tag() {
		return s, usageError("--name %s ends with the run tag %s, but %s: give the run's real sampling or fix the name",
			safetext.Quote(o.name), nameTag, from)
	}
	return s, nil
}

// analyzeRun reads one run's files and analyzes them; ctx stops the long reads.
func analyzeRun(ctx context.Context, name, tracePath, logPath, plainPath, modelDir string, s results.Sampling, rules *attrib.Rules) (*analyze.Result, error) {
	fi, err := os.Stat(tracePath)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	if fi.IsDir() {
		// The profiler's -d folder: find the trace as rocprofv3 names it, -o <name> first.
		outs, err := rocprof.FindOutputs(tracePath, name)
		if err != nil || outs.KernelTrace == "" {
			if outs, err = rocprof.FindOutputs(tracePath, ""); err != nil {
				return nil, fmt.Errorf("finding the kernel trace in %s: %w", tracePath, err)
			}
		}
		if outs.KernelTrace == "" {
			return nil, fmt.Errorf("no kernel_trace.csv in %s (was rocprofv3 run with --kernel-trace and csv output?)", tracePath)
		}
		tracePath = outs.KernelTrace
	}
	tr, err := rocprof.ReadKernelTraceContext(ctx, tracePath)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	lg, err := benchlog.ParseFileContext(ctx, logPath)
	if err != nil {
		return nil, fmt.Errorf("reading bench log: %w", err)
	}
	in := analyze.Input{Name: name, Trace: tr, Log: lg, Sampling: s, Rules: rules}
	if plainPath != "" {
		if in.Plain, err = benchlog.ParseFileContext(ctx, plainPath); err != nil {
			return nil, fmt.Errorf("reading plain bench log: %w", err)
		}
	}
	if modelDir != "" {
		if in.Model, err = modelcfg.Read(filepath.Join(modelDir, "config.json")); err != nil {
			return nil, fmt.Errorf("reading model config: %w", err)
		}
	}
	res, err := analyze.Analyze(in)
	if err != nil {
		return nil, fmt.Errorf("analyzing %s: %w", name, err)
	}
	return res, nil
}

func printRunLine(w io.Writer, s *results.Summary) {
	fmt.Fprintf(w, "%s: %d decode dispatches, %s GPU ms/token, %s host gap ms/token\n",
		s.Name, s.DecodeDispatches, results.PyFloat(float64(s.GPUMsPerToken)), results.PyFloat(float64(s.HostGapMsPerToken)))
}

// sampleRuns are the embedded sample: the four model families of the published profile,
// synthesized deterministically (same seed, same files) and then read back through the
// same path as a real run.
var sampleRuns = []struct {
	model, sampling string
}{
	{"llama", "greedy"},
	{"qwen3-moe", "greedy"},
	{"granite-hybrid", "greedy"},
	{"nemotron-hybrid", "greedy"},
	{"granite-hybrid", "t0.7-p0.95"},
}

const sampleTokens = 32

func analyzeSample(ctx context.Context, o analyzeOptions, rules *attrib.Rules) error {
	fmt.Fprintf(o.stderr, "synthesizing and analyzing %d sample runs (%d decode tokens each)\n", len(sampleRuns), sampleTokens)
	work, err := os.MkdirTemp("", "perfbot-sample-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	out := o.outDir
	if out == "" {
		out = filepath.Join(work, "results")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for i, r := range sampleRuns {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, _ := results.ParseSampling(r.sampling)
		start := time.Now()
		gen, err := synth.Generate(synth.Options{Model: r.model, Tokens: sampleTokens, Warmup: 20, Prompt: 512, Sampling: s, Seed: int64(i + 1), Layout: "7"}, work)
		if err != nil {
			return fmt.Errorf("synthesizing the %s sample: %w", r.model, err)
		}
		res, err := analyzeRun(ctx, gen.Run, gen.TraceFile, gen.BenchLog, gen.PlainLog, gen.ModelDir, s, rules)
		if err != nil {
			return err
		}
		if _, err := res.WriteOutputs(out); err != nil {
			return err
		}
		fmt.Fprintf(o.stderr, "  %d/%d %s: %.1fs\n", i+1, len(sampleRuns), gen.Run, time.Since(start).Seconds())
		printRunLine(o.stdout, res.Summary)
	}
	// The point of the runs is the decision they support: rank the port units over them.
	ranked, err := rankDir(rankOptions{dir: out, rules: o.rules, format: "md"})
	if err != nil {
		return fmt.Errorf("ranking the sample runs: %w", err)
	}
	fmt.Fprintf(o.stdout, "\n%s", ranked)
	if o.outDir != "" {
		fmt.Fprintf(o.stderr, "results written to %s\n", o.outDir)
	}
	return nil
}
