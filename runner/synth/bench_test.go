package synth

import (
	"os"
	"testing"
)

// BenchmarkGenerateLlama1024 writes the 1,024-token Llama run (about 517k trace rows,
// 147 MB): the size the demo and the analysis benchmarks read.
func BenchmarkGenerateLlama1024(b *testing.B) {
	o := DefaultOptions()
	o.Tokens = 1024
	dir := b.TempDir()
	for b.Loop() {
		out, err := Generate(o, dir)
		if err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(out.TraceFile)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(st.Size())
	}
}
