package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/synth"
)

// hostileRun is a small synthetic Llama run to break in various ways.
func hostileRun(t *testing.T) (*synth.Output, string) {
	t.Helper()
	dir := t.TempDir()
	out, err := synth.Generate(synth.Options{Model: "llama", Tokens: 4, Warmup: 1, Sampling: results.Greedy, Seed: 3, Layout: "7"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return out, dir
}

// analyzeArgs are the flags of a clean analysis of run, writing to outDir.
func analyzeArgs(out *synth.Output, outDir string, extra ...string) []string {
	return append([]string{"analyze", "--trace", out.TraceFile, "--log", out.BenchLog, "--model-dir", out.ModelDir,
		"--name", out.Run, "--out-dir", outDir}, extra...)
}

// withArg returns args with the value of flag replaced.
func withArg(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if out[i] == flag {
			out[i+1] = value
		}
	}
	return out
}

func writeVariant(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A run name becomes two file names: it must be one plain path element.
func TestAnalyzeRefusesANameThatIsAPath(t *testing.T) {
	t.Parallel()
	out, dir := hostileRun(t)
	resDir := filepath.Join(dir, "a", "b", "results")
	for _, c := range []struct{ name, want string }{
		{"../../x_greedy", `--name: run name "../../x_greedy" holds a / or \`},
		{"x\n_greedy", `--name: run name "x\n_greedy" holds a character that is not printable`},
		{".x_greedy", "starts with a dot"},
	} {
		code, _, stderr := runCLI(t, withArg(analyzeArgs(out, resDir), "--name", c.name)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("--name %q: exit %d, stderr %q; want 2 and %q", c.name, code, stderr, c.want)
		}
	}
	for _, escaped := range []string{filepath.Join(dir, "x_greedy_summary.json"), filepath.Join(dir, "a", "x_greedy_summary.json")} {
		if _, err := os.Stat(escaped); err == nil {
			t.Errorf("%s was written outside --out-dir", escaped)
		}
	}
}

// The run tag in --name decides how the ranking reads the run: a name that says greedy
// cannot be analyzed as t0.7, and a tag alone sets the sampling.
func TestAnalyzeNameTagAndSamplingAgree(t *testing.T) {
	t.Parallel()
	out, dir := hostileRun(t)
	res := filepath.Join(dir, "results")
	cases := []struct {
		name  string
		extra []string
		code  int
		msg   string
		temp  float64
	}{
		{out.Run, []string{"--sampling", "t0.7"}, 2, "ends with the run tag greedy, but --sampling t0.7", 0},
		{out.Run, []string{"--temperature", "0.7"}, 2, "ends with the run tag greedy, but --temperature/--top-p, which make t0.7", 0},
		{"Llama_t0.7-p0.95", []string{"--temperature", "0.7"}, 2, "ends with the run tag t0.7-p0.95, but --temperature/--top-p, which make t0.7", 0},
		{"Llama_t0.7", []string{"--sampling", "t0.7", "--temperature", "0.5"}, 2, "--sampling t0.7 and --temperature/--top-p (t0.5) disagree", 0},
		{"Llama_t0.7", nil, 0, "", 0.7},
		{"Llama_t0.7", []string{"--temperature", "0.7"}, 0, "", 0.7},
		{out.Run, []string{"--sampling", "greedy"}, 0, "", 0},
		{"untagged", []string{"--sampling", "t1"}, 0, "", 1},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, append(withArg(analyzeArgs(out, res), "--name", c.name), c.extra...)...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%s %v: exit %d, stderr %q; want %d and %q", c.name, c.extra, code, stderr, c.code, c.msg)
			continue
		}
		if code == 0 {
			s, err := results.ReadSummary(filepath.Join(res, c.name+"_summary.json"))
			if err != nil || float64(s.Temperature) != c.temp {
				t.Errorf("%s %v: summary temperature %v (%v), want %v", c.name, c.extra, s.Temperature, err, c.temp)
			}
		}
	}
}

// NaN passes every comparison: each float flag is checked for a finite value in range.
func TestFloatFlagsMustBeFiniteAndInRange(t *testing.T) {
	t.Parallel()
	out, dir := hostileRun(t)
	res := filepath.Join(dir, "results")
	untagged := withArg(analyzeArgs(out, res), "--name", "run")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{append(untagged, "--temperature", "NaN"), "--temperature/--top-p: temperature NaN: want a number in 0..100"},
		{append(untagged, "--temperature", "+Inf"), "temperature +Inf"},
		{append(untagged, "--temperature", "-1"), "temperature -1"},
		{append(untagged, "--temperature", "0.7", "--top-p", "NaN"), "top-p NaN: want a number in (0, 1]"},
		{append(untagged, "--temperature", "0.7", "--top-p", "1.5"), "top-p 1.5"},
		{append(untagged, "--sampling", "t1e400"), "want greedy, t<T> or t<T>-p<P>"},
		{append(untagged, "--sampling", "t"+strings.Repeat("9", 400)), "the temperature must be at most 100"},
		{[]string{"synth", "--model", "llama", "--noise", "NaN", "--out", dir}, "noise NaN"},
		{[]string{"synth", "--model", "llama", "--overlap", "Inf", "--out", dir}, "overlap +Inf"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args[len(c.args)-2:], code, stderr, c.msg)
		}
	}
}

// The metrics need `Generated tokens:` and `Decode:`; a block without `Prefill:` or
// `MLX peak memory:` is analyzed, with a warning naming the line. No block is an error.
func TestAnalyzeLogWithoutOptionalResultLines(t *testing.T) {
	t.Parallel()
	out, dir := hostileRun(t)
	res := filepath.Join(dir, "results")
	log, _ := os.ReadFile(out.BenchLog)
	var kept []string
	for _, l := range strings.SplitAfter(string(log), "\n") {
		if !strings.HasPrefix(l, "  Prefill:") && !strings.HasPrefix(l, "  MLX peak memory:") {
			kept = append(kept, l)
		}
	}
	trimmed := writeVariant(t, dir, "trimmed.log", strings.Join(kept, ""))
	code, stdout, stderr := runCLI(t, withArg(analyzeArgs(out, res), "--log", trimmed)...)
	if code != 0 || !strings.Contains(stdout, "decode dispatches") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	for _, line := range []string{`has no "Prefill:" line`, `has no "MLX peak memory:" line`} {
		if !strings.Contains(stderr, "perfbot analyze: warning: bench log: the results block (line ") || !strings.Contains(stderr, line) {
			t.Errorf("stderr does not warn %q:\n%s", line, stderr)
		}
	}
	s, err := results.ReadSummary(filepath.Join(res, out.Run+"_summary.json"))
	if err != nil || !strings.Contains(strings.Join(s.Notes, "\n"), `has no "Prefill:" line`) || s.ProfiledPrefillTokS != 0 {
		t.Errorf("summary notes %q (%v)", s.Notes, err)
	}
	noBlock := writeVariant(t, dir, "noblock.log", string(log[:strings.Index(string(log), "[Profile Results]")]))
	if code, _, stderr := runCLI(t, withArg(analyzeArgs(out, res), "--log", noBlock)...); code != 1 || !strings.Contains(stderr, "no results block with `Generated tokens:`") {
		t.Errorf("no results block: exit %d, stderr %s", code, stderr)
	}
}

// A row repeated in the trace is one dispatch: counted once, and said.
func TestAnalyzeRepeatedDispatchRows(t *testing.T) {
	t.Parallel()
	out, dir := hostileRun(t)
	clean := filepath.Join(dir, "clean")
	if code, _, stderr := runCLI(t, analyzeArgs(out, clean)...); code != 0 {
		t.Fatal(stderr)
	}
	want, _ := results.ReadSummary(filepath.Join(clean, out.Run+"_summary.json"))
	data, _ := os.ReadFile(out.TraceFile)
	lines := strings.SplitAfter(string(data), "\n")
	n := len(lines) - 2 // the last decode rows are near the end
	doubled := strings.Join(lines[:n], "") + lines[n-1] + lines[n-2] + strings.Join(lines[n:], "")
	trace := writeVariant(t, dir, "doubled_kernel_trace.csv", doubled)
	res := filepath.Join(dir, "results")
	code, _, stderr := runCLI(t, withArg(analyzeArgs(out, res), "--trace", trace)...)
	if code != 0 || !strings.Contains(stderr, "perfbot analyze: warning: kernel trace: 2 row(s) repeat the Dispatch_Id of an earlier row") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	got, _ := results.ReadSummary(filepath.Join(res, out.Run+"_summary.json"))
	if got.DecodeDispatches != want.DecodeDispatches || got.GPUMsPerToken != want.GPUMsPerToken {
		t.Errorf("with repeated rows: %d dispatches, %v GPU ms/token; without: %d, %v",
			got.DecodeDispatches, got.GPUMsPerToken, want.DecodeDispatches, want.GPUMsPerToken)
	}
}

// A kernel name with invalid UTF-8 is spelled the same in the CSV and the JSON.
func TestAnalyzeInvalidUTF8KernelName(t *testing.T) {
	t.Parallel()
	out, dir := hostileRun(t)
	data, _ := os.ReadFile(out.TraceFile)
	const name = "void mlx::core::rocm::rms_norm_kernel"
	broken := strings.ReplaceAll(string(data), name, name+"\xff\xfe")
	if broken == string(data) {
		t.Fatalf("no %q in the synthetic trace", name)
	}
	trace := writeVariant(t, dir, "bad_kernel_trace.csv", broken)
	res := filepath.Join(dir, "results")
	if code, _, stderr := runCLI(t, withArg(analyzeArgs(out, res), "--trace", trace)...); code != 0 {
		t.Fatal(stderr)
	}
	csvBytes, _ := os.ReadFile(filepath.Join(res, out.Run+"_decode_kernels.csv"))
	if !utf8.Valid(csvBytes) {
		t.Error("decode_kernels.csv is not valid UTF-8")
	}
	rows, err := results.ReadKernelsFile(filepath.Join(res, out.Run+"_decode_kernels.csv"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := results.ReadSummary(filepath.Join(res, out.Run+"_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	inCSV, inJSON := "", ""
	for _, r := range rows {
		if strings.HasPrefix(r.Kernel, name) {
			inCSV = r.Kernel
		}
	}
	for _, k := range s.TopKernels {
		if strings.HasPrefix(k.Kernel, name) {
			inJSON = k.Kernel
		}
	}
	if inCSV == "" || inCSV != inJSON || !strings.HasPrefix(inCSV, name+"\uFFFD") {
		t.Errorf("CSV names it %q, JSON %q; want one spelling with U+FFFD", inCSV, inJSON)
	}
}

// Outputs that exist are replaced and said to be; a directory in the way is an error
// that leaves no temp file.
func TestAnalyzeSaysWhatItReplaced(t *testing.T) {
	t.Parallel()
	out, dir := hostileRun(t)
	res := filepath.Join(dir, "results")
	if code, _, stderr := runCLI(t, analyzeArgs(out, res)...); code != 0 || strings.Contains(stderr, "replaced") {
		t.Fatalf("first run: exit %d, %s", code, stderr)
	}
	code, _, stderr := runCLI(t, analyzeArgs(out, res)...)
	for _, f := range []string{"_decode_kernels.csv", "_summary.json"} {
		if want := "perfbot analyze: replaced the existing " + filepath.Join(res, out.Run+f); code != 0 || !strings.Contains(stderr, want) {
			t.Errorf("second run: exit %d, stderr %q; want %q", code, stderr, want)
		}
	}
	blocked := filepath.Join(dir, "blocked")
	os.MkdirAll(filepath.Join(blocked, out.Run+"_summary.json"), 0o755)
	code, _, stderr = runCLI(t, analyzeArgs(out, blocked)...)
	if code != 1 || !strings.Contains(stderr, "_summary.json is a directory") {
		t.Errorf("directory in the way: exit %d, stderr %q", code, stderr)
	}
	entries, _ := os.ReadDir(blocked)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file %s left behind", e.Name())
		}
	}
}
