package results

import (
	"strings"
	"testing"
)

func TestProfileName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, run, suffix string
		trace             bool
		err               string
	}{
		{name: "session.json"},
		{name: "guard.log.jsonl"},
		{name: "gemm_patch.json"},
		{name: "llama_greedy_summary.json", run: "llama_greedy", suffix: SummarySuffix},
		{name: "llama_t0.7-p0.95_decode_kernels.csv", run: "llama_t0.7-p0.95", suffix: DecodeKernelsSuffix},
		// The plain run's log is a bench log of the run "<run>_plain".
		{name: "llama_greedy_plain_bench.log", run: "llama_greedy_plain", suffix: BenchLogSuffix},
		{name: "llama_greedy_kernel_trace.csv", trace: true},
		{name: "llama_greedy_results.db", trace: true},
		{name: "_summary.json", err: ProfileLayout},
		{name: "_trace.csv", err: ProfileLayout},
		{name: "notes.txt", err: ProfileLayout},
		{name: ".hidden_summary.json", err: `run name ".hidden" starts with a dot`},
	} {
		run, suffix, trace, err := ProfileName(tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || run != tc.run || suffix != tc.suffix || trace != tc.trace {
			t.Errorf("%s: (%q, %q, %v, %v), want (%q, %q, %v)", tc.name, run, suffix, trace, err, tc.run, tc.suffix, tc.trace)
		}
	}
}

// A rerun removes every file a run leaves, the plain log included, and each of them is
// a name of the folder's layout.
func TestRunFiles(t *testing.T) {
	t.Parallel()
	files := RunFiles("llama_greedy")
	if len(files) != 5 || files[4] != "llama_greedy_plain_bench.log" {
		t.Fatalf("RunFiles = %v", files)
	}
	for _, f := range files {
		if run, _, _, err := ProfileName(f); err != nil || !strings.HasPrefix(run, "llama_greedy") {
			t.Errorf("%s: run %q, %v", f, run, err)
		}
	}
}

func TestIsNightlyManifest(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"rocm_strixhalo-gfx1151_2026-10-08.nightly.json": true,
		".nightly.json":               false,
		"a b.nightly.json":            false,
		"x.nightly.json.bak":          false,
		"../x.nightly.json":           false,
		"rocm_x_2026-10-08.guard.log": false,
	} {
		if got := IsNightlyManifest(name); got != want {
			t.Errorf("IsNightlyManifest(%q) = %v, want %v", name, got, want)
		}
	}
}
