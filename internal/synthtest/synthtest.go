// Package synthtest is test setup shared by the packages that need an analyzed run: a
// synthetic run (runner/synth) read back through the real readers and analyzed as
// `perfbot analyze` does. runner/analyze's own tests keep their copy, since this
// package imports it.
package synthtest

import (
	"path/filepath"
	"testing"

	"github.com/lablup/perfbot/runner/analyze"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/modelcfg"
	"github.com/lablup/perfbot/runner/rocprof"
	"github.com/lablup/perfbot/runner/synth"
)

// Analyze writes the synthetic run o describes, reads its trace, logs and model config
// with the real readers and analyzes it; any error fails t.
func Analyze(t testing.TB, o synth.Options) *analyze.Result {
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
	mc, err := modelcfg.Read(filepath.Join(out.ModelDir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := analyze.Analyze(analyze.Input{Name: out.Run, Trace: tr, Log: lg, Plain: plain, Model: mc, Sampling: o.Sampling})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
