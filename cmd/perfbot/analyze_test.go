package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/synth"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestAnalyzeCommandOnASynthRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := results.ParseSampling("t0.7")
	out, err := synth.Generate(synth.Options{Model: "qwen3-moe", Tokens: 8, Warmup: 2, Sampling: s, Seed: 5, Layout: "6.4"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	resDir := filepath.Join(dir, "results")
	// The profiler's output folder works as well as the trace file itself.
	code, stdout, stderr := runCLI(t, "analyze", "--trace", filepath.Dir(out.TraceFile), "--log", out.BenchLog, "--plain-log", out.PlainLog,
		"--model-dir", out.ModelDir, "--sampling", "t0.7", "--name", out.Run, "--out-dir", resDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := regexp.MustCompile(`^Qwen3-30B-A3B-4bit_t0\.7: ` + strconv.Itoa(out.Truth.DecodeDispatches) + ` decode dispatches, [0-9.]+ GPU ms/token, [0-9.]+ host gap ms/token\n$`)
	if !want.MatchString(stdout) {
		t.Errorf("stdout = %q", stdout)
	}
	sum, err := results.ReadSummary(filepath.Join(resDir, out.Run+"_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.DecodeDispatches != out.Truth.DecodeDispatches || sum.ModelType != "qwen3_moe" || float64(sum.Temperature) != 0.7 || sum.PlainDecodeTokS == nil {
		t.Errorf("summary = %+v", sum)
	}
	if _, ok := sum.PortUnits.Get("2064"); !ok {
		t.Errorf("summary has no port unit 2064")
	}
	rows, err := results.ReadKernelsFile(filepath.Join(resDir, out.Run+"_decode_kernels.csv"))
	if err != nil || len(rows) == 0 || rows[0].Class == "" {
		t.Fatalf("decode_kernels: %d rows, %v", len(rows), err)
	}
}

func TestAnalyzeCommandErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, err := synth.Generate(synth.Options{Model: "llama", Tokens: 4, Warmup: 1, Sampling: results.Greedy, Seed: 1, Layout: "7"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad_kernel_trace.csv")
	data, _ := os.ReadFile(out.TraceFile)
	lines := strings.SplitAfter(string(data), "\n")
	// Corrupt the End_Timestamp of the third data row (line 4).
	cells := strings.Split(lines[3], ",")
	cells[len(cells)-12] = "12x"
	lines[3] = strings.Join(cells, ",")
	os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644)
	noMarks := filepath.Join(dir, "nomarks.log")
	os.WriteFile(noMarks, []byte("  Prompt tokens:    512\n"), 0o644)

	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no flags", []string{"analyze"}, 2, "--trace, --log, --name and --out-dir are required"},
		{"bad sampling", []string{"analyze", "--trace", out.TraceFile, "--log", out.BenchLog, "--name", "x", "--out-dir", dir, "--sampling", "hot"}, 2, "want greedy"},
		{"stray argument", []string{"analyze", "extra"}, 2, "unexpected argument"},
		{"missing trace", []string{"analyze", "--trace", filepath.Join(dir, "nope.csv"), "--log", out.BenchLog, "--name", "x", "--out-dir", dir}, 1, "reading trace"},
		{"bad number", []string{"analyze", "--trace", bad, "--log", out.BenchLog, "--name", "x", "--out-dir", dir}, 1, `bad_kernel_trace.csv:4: End_Timestamp "12x": not a number`},
		{"log without results", []string{"analyze", "--trace", out.TraceFile, "--log", noMarks, "--name", "x", "--out-dir", dir}, 1, "Generated tokens"},
		{"bad rules", []string{"analyze", "--sample", "--rules", noMarks}, 1, "loading rules"},
		{"folder without a trace", []string{"analyze", "--trace", t.TempDir(), "--log", out.BenchLog, "--name", "x", "--out-dir", dir}, 1, "no kernel_trace.csv in"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", c.name, code, stderr, c.code, c.msg)
		}
	}
}

func TestAnalyzeSampleRanksThePorts(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "sample")
	code, stdout, stderr := runCLI(t, "analyze", "--sample", "--out-dir", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, r := range sampleRuns {
		if !strings.Contains(stdout, "_"+r.sampling+": ") {
			t.Errorf("no line for %s %s in:\n%s", r.model, r.sampling, stdout)
		}
	}
	if !strings.Contains(stdout, "Ranked port order: #2067, #2065, #2064") {
		t.Errorf("the sample's ranking does not put SSM, MoE, samplers first:\n%s", stdout)
	}
	m, _ := filepath.Glob(filepath.Join(out, "*_summary.json"))
	if len(m) != len(sampleRuns) {
		t.Errorf("%d summaries written, want %d", len(m), len(sampleRuns))
	}
}
