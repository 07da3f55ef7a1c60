package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/results"
)

// diffFixture writes the real Qwen3 profile to a/ and, to b/, the same profile without
// its arange kernel (moe_gather_indices, unit #2065); a/ also holds the Llama run.
func diffFixture(t *testing.T) (dirA, dirB string) {
	t.Helper()
	src := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
	root := t.TempDir()
	dirA, dirB = filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{dirA, dirB} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range []string{"Qwen3-30B-A3B-4bit_greedy", "Meta-Llama-3.1-8B-Instruct-4bit_greedy"} {
		for _, suffix := range []string{"_summary.json", "_decode_kernels.csv"} {
			data, err := os.ReadFile(filepath.Join(src, run+suffix))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dirA, run+suffix), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if run == "Qwen3-30B-A3B-4bit_greedy" && suffix == "_summary.json" {
				if err := os.WriteFile(filepath.Join(dirB, run+suffix), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	ks, err := results.ReadKernelsFile(filepath.Join(src, "Qwen3-30B-A3B-4bit_greedy_decode_kernels.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []results.KernelRow
	for _, k := range ks {
		if !strings.Contains(k.Kernel, "arange_kernel") {
			keep = append(keep, k)
		}
	}
	if len(keep) != len(ks)-1 {
		t.Fatalf("the fixture has %d arange kernels", len(ks)-len(keep))
	}
	if err := results.WriteKernelsFile(filepath.Join(dirB, "Qwen3-30B-A3B-4bit_greedy_decode_kernels.csv"), keep); err != nil {
		t.Fatal(err)
	}
	return dirA, dirB
}

func TestDiffCommand(t *testing.T) {
	t.Parallel()
	dirA, dirB := diffFixture(t)
	sumA := filepath.Join(dirA, "Qwen3-30B-A3B-4bit_greedy_summary.json")
	sumB := filepath.Join(dirB, "Qwen3-30B-A3B-4bit_greedy_summary.json")

	code, out, errOut := runCLI(t, "diff", sumA, sumB)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"**Decode profile diff of `Qwen3-30B-A3B-4bit_greedy`**", "**Kernels only in A (vanished)** (1)",
		"`void mlx::core::rocm::arange_kernel<unsigned int>` | copy | #2065 | 0.1221 → 0.0000 (-0.1221)", "| #2065 | fused MoE decode"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Folders, flags anywhere: the runs are paired by name; Llama is only in A.
	code, out, errOut = runCLI(t, "diff", "--format", "json", dirA, dirB)
	if code != 0 {
		t.Fatalf("folders: exit %d: %s", code, errOut)
	}
	var got struct {
		Runs []struct {
			A        string `json:"a"`
			Vanished []struct {
				Kernel string `json:"kernel"`
			} `json:"vanished"`
		} `json:"runs"`
		OnlyA []string `json:"only_in_a"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 1 || got.Runs[0].A != "Qwen3-30B-A3B-4bit_greedy" || len(got.Runs[0].Vanished) != 1 ||
		len(got.OnlyA) != 1 || got.OnlyA[0] != "Meta-Llama-3.1-8B-Instruct-4bit_greedy" {
		t.Errorf("folders: %+v", got)
	}
	code, out, _ = runCLI(t, "diff", dirA, dirB)
	if code != 0 || !strings.Contains(out, "> Only in A, not compared: `Meta-Llama-3.1-8B-Instruct-4bit_greedy`") {
		t.Errorf("folders, Markdown: exit %d\n%s", code, out)
	}

	code, out, _ = runCLI(t, "help", "diff")
	if code != 0 || !strings.Contains(out, "examples:\n  perfbot diff before/") {
		t.Errorf("help diff: exit %d\n%s", code, out)
	}

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"diff", sumA}, 2, "give A and B"},
		{[]string{"diff", sumA, sumB, sumA}, 2, "give A and B"},
		{[]string{"diff", sumA, dirB}, 2, "both be summaries or both be results folders"},
		{[]string{"diff", sumA, sumB, "--format", "html"}, 2, "want md or json"},
		{[]string{"diff", sumA, filepath.Join(dirB, "missing_summary.json")}, 1, "missing_summary.json"},
		{[]string{"diff", sumA, sumB, "--rules", filepath.Join(dirB, "none.yml")}, 1, "none.yml"},
	} {
		code, out, errOut := runCLI(t, c.args...)
		if code != c.code || out != "" || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args[1:], code, out, errOut, c.code, c.msg)
		}
	}
}
