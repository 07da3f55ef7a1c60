package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/synth"
)

func init() {
	register(command{name: "synth", summary: "write a synthetic profile run (trace, stats, logs, config, truth)", run: runSynth})
}

const synthUsage = "--model llama|qwen3-moe|granite-hybrid|nemotron-hybrid [--tokens N] [--warmup N] [--prompt N] " +
	"[--sampling greedy|t0.7|t0.7-p0.95] [--seed N] [--layout 7|6.4|6.2|rocpd-csv] [--noise FRACTION] [--overlap FRACTION] " +
	"[--straddlers N] [--clock-na boottime|monotonic|none] [--clock-offset NS] [--change FILE] --out DIR\n\n" +
	"examples:\n" +
	"  perfbot synth --model qwen3-moe --out /tmp/synth\n" +
	"  perfbot synth --model llama --tokens 64 --sampling t0.7-p0.95 --layout rocpd-csv --seed 7 --out /tmp/synth-llama"

func runSynth(_ context.Context, args []string, stdout, stderr io.Writer) error {
	d := synth.DefaultOptions()
	fs := newFlags("synth", synthUsage, stderr)
	model := fs.String("model", "", "model to synthesize: "+strings.Join(synth.Models(), ", "))
	tokens := fs.Int("tokens", d.Tokens, "generated tokens")
	warmup := fs.Int("warmup", d.Warmup, "warmup tokens before the measured run")
	prompt := fs.Int("prompt", d.Prompt, "prompt tokens")
	sampling := fs.String("sampling", "greedy", "sampling tag: greedy, t<T> or t<T>-p<P>")
	seed := fs.Int64("seed", d.Seed, "random seed (same seed, same bytes)")
	layout := fs.String("layout", d.Layout, "kernel trace layout: "+strings.Join(synth.Layouts, ", "))
	noise := fs.Float64("noise", d.Noise, "relative jitter of dispatch durations")
	overlap := fs.Float64("overlap", d.Overlap, "fraction of dispatches that overlap the previous one")
	straddlers := fs.Int("straddlers", d.Straddlers, "dispatches in flight across decode_start")
	clockNA := fs.String("clock-na", d.ClockNA, "phase-mark clock printed as na: none, boottime or monotonic")
	offset := fs.Int64("clock-offset", d.ClockOffset, "boottime minus monotonic time of the phase marks, ns")
	change := fs.String("change", "", "a known change to plant in the decode step (faster, removed, added kernels; docs/ab.md)")
	outDir := fs.String("out", "", "folder to write the run into (created if missing)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q: every input is a flag (see perfbot synth -h)", fs.Arg(0))
	}
	if *model == "" {
		return usageError("--model is required: one of %s", strings.Join(synth.Models(), ", "))
	}
	if *outDir == "" {
		return usageError("--out is required: the folder to write the run into")
	}
	s, err := results.ParseSampling(*sampling)
	if err != nil {
		return usageError("--sampling: %v", err)
	}
	o := synth.Options{Model: *model, Tokens: *tokens, Warmup: *warmup, Prompt: *prompt, Sampling: s, Seed: *seed,
		Layout: *layout, Noise: *noise, Overlap: *overlap, Straddlers: *straddlers, ClockNA: *clockNA, ClockOffset: *offset}
	if *change != "" {
		b, err := infile.ReadFile(*change, synth.MaxChangeBytes)
		if err != nil {
			return usageError("--change: %v", err)
		}
		c, err := synth.ParseChange(b)
		if err != nil {
			return usageError("--change %s: %v", *change, err)
		}
		o.Change = &c
	}
	// Zero would silently mean "default" in the library; on the command line it is a mistake.
	if *tokens < 2 {
		return usageError("--tokens %d: want at least 2 (the first token comes out of the prefill)", *tokens)
	}
	if *prompt < 1 {
		return usageError("--prompt %d: want at least 1", *prompt)
	}
	if *layout == "" || *clockNA == "" {
		return usageError("--layout and --clock-na need a value (see perfbot synth -h)")
	}
	out, err := synth.Generate(o, *outDir)
	var oe *synth.OptionsError
	if errors.As(err, &oe) {
		return usageError("%v", err)
	}
	if err != nil {
		return err
	}
	t := out.Truth
	fmt.Fprintf(stdout, "%s: %d trace rows, %d decode dispatches over %d steps (%s clock)\n",
		out.Run, t.TraceRows, t.DecodeDispatches, t.Steps, t.Clock)
	fmt.Fprintf(stdout, "  GPU %.4f ms/token, host gap %.4f ms/token, %.1f dispatches/token\n",
		float64(t.GPUBusyNs)/1e6/float64(t.GeneratedTokens), float64(t.HostGapNs)/1e6/float64(t.GeneratedTokens),
		float64(t.DecodeDispatches)/float64(t.GeneratedTokens))
	for _, f := range []string{out.TraceFile, out.StatsFile, out.AgentInfoFile, out.BenchLog, out.PlainLog,
		filepath.Join(out.ModelDir, "config.json"), out.TruthFile} {
		fmt.Fprintf(stdout, "  %s\n", f)
	}
	return nil
}
