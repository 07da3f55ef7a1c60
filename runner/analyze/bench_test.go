package analyze

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/modelcfg"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
	"github.com/lablup/perfbot/runner/synth"
)

// The benchmark run of the foundation issue: a synthetic Llama trace of 1,024 decode
// tokens (about 480k dispatches, 135 MB), written once per process.
var (
	benchOnce sync.Once
	benchOut  *synth.Output
	benchErr  error
	benchDir  string
)

func benchRun(b *testing.B) *synth.Output {
	b.Helper()
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "perfbot-analyze-bench-")
		if benchErr != nil {
			return
		}
		benchOut, benchErr = synth.Generate(synth.Options{Model: "llama", Tokens: 1024, Warmup: 20, Prompt: 512,
			Sampling: results.Greedy, Seed: 1, Layout: "7"}, benchDir)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchOut
}

func loadInput(b *testing.B, out *synth.Output) Input {
	b.Helper()
	tr, err := rocprof.ReadKernelTrace(out.TraceFile)
	if err != nil {
		b.Fatal(err)
	}
	lg, err := benchlog.ParseFile(out.BenchLog)
	if err != nil {
		b.Fatal(err)
	}
	plain, err := benchlog.ParseFile(out.PlainLog)
	if err != nil {
		b.Fatal(err)
	}
	mc, err := modelcfg.Read(filepath.Join(out.ModelDir, "config.json"))
	if err != nil {
		b.Fatal(err)
	}
	return Input{Name: out.Run, Trace: tr, Log: lg, Plain: plain, Model: mc, Sampling: results.Greedy}
}

// BenchmarkAnalyzeWhole is everything `perfbot analyze` does: read the trace and logs,
// measure, attribute, write both outputs.
func BenchmarkAnalyzeWhole(b *testing.B) {
	out := benchRun(b)
	st, _ := os.Stat(out.TraceFile)
	b.SetBytes(st.Size())
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		in := loadInput(b, out)
		res, err := Analyze(in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := res.WriteOutputs(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAttributionStep is the attribution alone on the same trace: classes, roles,
// units and reach over the decode dispatches (the step that must stay under 20 % of
// the whole).
func BenchmarkAttributionStep(b *testing.B) {
	out := benchRun(b)
	in := loadInput(b, out)
	w, err := PickWindow(in.Trace.Dispatches, in.Log)
	if err != nil {
		b.Fatal(err)
	}
	m, err := Measure(in.Trace.Dispatches, w)
	if err != nil {
		b.Fatal(err)
	}
	ai := attribInput(in, m)
	rules := attrib.Default()
	b.ReportMetric(float64(len(m.Decode)), "dispatches")
	b.ResetTimer()
	for b.Loop() {
		if _, err := rules.Attribute(ai); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}
