package benchlog

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse: any bytes parse or fail without a panic; an accepted log has its marks in
// order, and reads the same once cleaned for committing (Clean drops only lines the
// parser skips anyway).
func FuzzParse(f *testing.F) {
	for _, name := range []string{"Meta-Llama-3.1-8B-Instruct-4bit_greedy_bench.log", "Qwen3-30B-A3B-4bit_greedy_plain_bench.log"} {
		data, err := os.ReadFile(fixture(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("[phase] decode_start boottime_ns=na monotonic_ns=5\n[Profile Results]\n  Generated tokens: 2\n  Decode: 1 ms (2 tok/s)\n"))
	f.Add([]byte("rocm_gpu_guard: waiting\r\nE20260716 02:19:56.319983 12608 file.cpp:111] x\n[Profile Results]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(bytes.NewReader(data), "fuzz.log")
		if err != nil {
			return
		}
		for _, m := range []Marks{got.Boottime, got.Monotonic} {
			if m.OK && !(m.WarmupStart <= m.MeasuredStart && m.MeasuredStart <= m.DecodeStart && m.DecodeStart <= m.MeasuredEnd) {
				t.Fatalf("accepted marks out of order: %+v", m)
			}
		}
		if !got.HasResults && (len(got.Warnings) > 0 || got.GeneratedTokens != 0) {
			t.Fatalf("results without a results block: %+v", got)
		}
		again, err := Parse(bytes.NewReader(Clean(data, nil)), "fuzz.log")
		if err != nil {
			t.Fatalf("the cleaned log fails: %v", err)
		}
		// Warnings name the results block's line, which Clean may move.
		got.Warnings, again.Warnings = nil, nil
		if d := cmp.Diff(*got, *again); d != "" {
			t.Fatalf("the cleaned log reads differently (-raw +cleaned):\n%s", d)
		}
	})
}
