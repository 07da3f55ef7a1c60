package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/results"
)

// benchJobRepo is runJobRepo's checkout with the fake harnesses as scripts/ and two
// model folders under models/mlx.
func benchJobRepo(t *testing.T) string {
	t.Helper()
	repo := runJobRepo(t)
	harness := filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "harness")
	files := map[string]string{
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/fake-bench.txt": "mlxcel 35.41 1065.78\nmlx-lm 32.81 966.84\n",
		"models/mlx/Qwen3-0.6B-4bit/config.json":                    "{}",
		"models/mlx/Qwen3-0.6B-4bit/fake-bench.txt":                 "mlxcel 278.48 4417.27\nmlx-lm 220.13 4316.74\n",
	}
	for _, s := range []string{"bench_decode.sh", "bench_mlxlm.py"} {
		b, err := os.ReadFile(filepath.Join(harness, s))
		if err != nil {
			t.Fatal(err)
		}
		files["scripts/"+s] = string(b)
	}
	for name, body := range files {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"Meta-Llama-3.1-8B-Instruct-4bit", "Qwen3-0.6B-4bit"} {
		if err := os.WriteFile(filepath.Join(repo, "models", "mlx", m, "model.safetensors"), []byte("weights"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// `perfbot run bench` on the fake host: exit 0 with the CSVs and the manifest, then
// exit 1 naming the harness problem when the harness mislabels a ROCm run.
func TestRunCLIBench(t *testing.T) {
	dir := runJobEnv(t)
	date := time.Now().Format(time.DateOnly)
	t.Setenv("FAKE_HARNESS_DATE", date)
	t.Setenv("FAKE_HARNESS", "")
	repo := benchJobRepo(t)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runJobCLI("bench", "--repo", repo, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	stem := "rocm_strixhalo-gfx1151_" + date
	for _, want := range []string{"manifest: " + stem + results.NightlySuffix, "ok             mlxcel sweep: " + stem + ".csv",
		"ok             mlx-lm sweep: pylm_strixhalo-gfx1151_" + date + ".csv",
		"not enough history     Meta-Llama-3.1-8B-Instruct-4bit: decode 35.41 tok/s; not enough history: 0 of the 8"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "[mlxcel 2/2] Qwen3-0.6B-4bit: started") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}

	// The folder publishes as it is: a dry run commits it with the page.
	dry := filepath.Join(dir, "dry")
	var pubOut, pubErr bytes.Buffer
	if code := run(context.Background(), []string{"baseline", "publish", "--results", filepath.Join(out, "benchmarks"), "--repo", repo, "--dry-run", dry},
		&pubOut, &pubErr); code != 0 || !strings.Contains(pubOut.String(), "page       docs/benchmark_results/rocm-baseline-gfx1151-"+date+".md") ||
		!strings.Contains(pubOut.String(), "trend      docs/benchmark_results/trend/README.md in the baseline commit") {
		t.Errorf("baseline publish: exit %d\n%s%s", code, pubOut.String(), pubErr.String())
	}
	if _, err := os.Stat(filepath.Join(dry, "baseline-pr.md")); err != nil {
		t.Error(err)
	}

	t.Setenv("FAKE_HARNESS", "pre-rocm")
	code, stdout, stderr = runJobCLI("bench", "--repo", repo, "--out", filepath.Join(dir, "out2"), "--no-build")
	if code != 1 || !strings.Contains(stderr, "harness problem(s) in the CSVs, first: ") || !strings.Contains(stdout, "is mislabelled") {
		t.Errorf("pre-ROCm harness: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runJobCLI("bench", "--repo", repo, "--out", out, "--window", "3", "--min-history", "5"); code != 2 || !strings.Contains(stderr, "the minimum history is 5") {
		t.Errorf("bad rules: exit %d, %s", code, stderr)
	}
}
