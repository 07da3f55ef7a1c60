package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
)

// The real 2026-09-30 results folder, which has no session, host facts or numeric
// tests, renders without a repository: the page names the folder's commit, says the
// numeric tests were not run (instead of leaving the section out or claiming they ran
// under the guard), and links every results file relative to the page.
func TestReportRealFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := filepath.Join(dir, "results", "gfx1151_929c80ab")
	copyDir(t, testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab"), res)
	out := filepath.Join(dir, "pages", "profile.md")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "report", res, "--out", out)
	if code != 0 || strings.TrimSpace(stdout) != out {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "note: the commit is the folder name's 929c80ab") {
		t.Errorf("stderr %q", stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		"# ROCm decode profile, gfx1151, date unknown",
		"Decode profile of mlxcel at `929c80ab`",
		"| numeric tests | `not run: the results folder holds no gemm_tests.json` |",
		"## gather_mm numeric tests\n\nThe numeric tests were not run for this profile: the results folder holds no gemm\\_tests.json, so the gates were left as they are.",
		"Every plain and profiled run ran under the idle-GPU guard",
		"(../results/gfx1151_929c80ab/Qwen3-30B-A3B-4bit_greedy_summary.json)",
		"perfbot rank ../results/gfx1151_929c80ab\n",
		// The decode window checks: the decode kernels show 127 steps for 128 tokens, and
		// the two copy kernels that grow the KV cache once.
		"| `Meta-Llama-3.1-8B-Instruct-4bit_greedy` | 491.6 | 127 | 495.5 | unknown | — | the steps are counted from the decode kernels: 10 kernels run 127 times; 2 kernel(s) do not run a whole number of times per step",
		"dispatches/token divides by the 128 generated tokens, the window holds 127 steps",
		"| `Meta-Llama-3.1-8B-Instruct-4bit_greedy` | 37.08 | 39.78 | -6.8 | negative: run-to-run noise between one plain and one profiled run, not a speed-up |",
		// The roofline: the peak of gfx1151 with its source; the summaries predate the
		// weight count, which is said.
		"Peak of gfx1151: 256 GB/s, Strix Halo (Ryzen AI Max 300 series): LPDDR5X-8000 on a 256-bit bus",
		"| `Qwen3-30B-A3B-4bit_greedy` | unknown | 61.99 (plain) | — | 256 | — |",
		"not known: the summary does not carry weight\\_bytes\\_per\\_token",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the page:\n%s", want, page)
		}
	}
	// Without --out the page goes to stdout, linked from the current folder: the same
	// page but for the links.
	code, stdout, _ = runCLI(t, "report", res)
	if code != 0 || !strings.HasPrefix(stdout, "# ROCm decode profile, gfx1151, date unknown\n") {
		t.Errorf("to stdout: exit %d:\n%s", code, stdout)
	}
}

// A pair of harness CSVs and a guard log make the baseline page without a nightly
// manifest; Mixtral's unstable repeats (7.65, 8.22, 11.16 tok/s: the real row and two
// repeats added to a copy) get no ratio, and the page says no comparison with the
// history was made, naming mlxcel's CSV. Flags may follow the files.
func TestReportBaselineFromCSVs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bench := filepath.Join(dir, "benchmarks")
	if err := os.MkdirAll(bench, 0o755); err != nil {
		t.Fatal(err)
	}
	var csvs []string
	for _, name := range []string{"rocm_strixhalo-gfx1151_2026-09-30.csv", "pylm_strixhalo-gfx1151_2026-09-30.csv"} {
		b, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "rocm") {
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "Mixtral-8x7B-Instruct-v0.1-4bit,") {
					for _, v := range []string{"8.22", "11.16"} {
						b = append(b, strings.Replace(l, ",7.65,", ","+v+",", 1)+"\n"...)
					}
				}
			}
		}
		p := filepath.Join(bench, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		csvs = append(csvs, p)
	}
	glog := filepath.Join(bench, "rocm_strixhalo-gfx1151_2026-09-30.guard.log")
	if err := os.WriteFile(glog, []byte("== nightly mlxcel\n2026-09-30T02:00:00+0000 attempt 1/5: start: scripts/bench_decode.sh all\n2026-09-30T02:30:00+0000 monitor: 1800 samples\n2026-09-30T02:30:00+0000 attempt 1: CLEAN, exit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "baseline.md")
	// The baseline's CSV first: the runtimes are told apart by their names.
	code, _, stderr := runCLI(t, "report", "--baseline", csvs[1], csvs[0], "--guard-log", glog, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		"# ROCm decode baseline: GPU unknown (gfx1151), 2026-09-30",
		"Nightly throughput baseline of mlxcel at `2fcdbe5f`",
		"| [Mixtral-8x7B-Instruct-v0.1-4bit](benchmarks/rocm_strixhalo-gfx1151_2026-09-30.csv#L4) | 25.85 | 26.43 | 8.22 | 9.98 | not stable |",
		"| 1065.78 | 966.84 | 35.41 | 32.81 | 1.08x |",
		"- Mixtral-8x7B-Instruct-v0.1-4bit, mlxcel: decode 7.65 / 8.22 / 11.16 tok/s, a spread of 42.7% of the median (over 10%): no ratio",
		"No comparison with the nightly history was made: this page was made from the CSVs alone (mlxcel's rocm\\_strixhalo-gfx1151\\_2026-09-30.csv), without a nightly manifest.",
		"Evidence: [rocm\\_strixhalo-gfx1151\\_2026-09-30.guard.log](benchmarks/rocm_strixhalo-gfx1151_2026-09-30.guard.log).",
		"| `nightly mlxcel` |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the page:\n%s", want, page)
		}
	}
	// mlxcel's CSV alone: no mlx-lm side, and no guard evidence claimed.
	code, stdout, stderr := runCLI(t, "report", "--baseline", "--max-spread", "50", csvs[0])
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"There is no mlx-lm side: no mlx-lm CSV was given or written, only mlxcel's rocm\\_strixhalo-gfx1151\\_2026-09-30.csv, so there is no ratio.",
		"spread at most 50% of their median",
		"No guard evidence log was given: this page cannot tell whether the sweeps ran on an idle GPU.",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in the page:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "No other GPU tenant") || strings.Contains(stdout, "Each sweep ran under the idle-GPU guard") {
		t.Errorf("the page claims guard evidence it was not given:\n%s", stdout)
	}
}

// Bad command lines are one-line usage errors (exit 2); a bad file is a one-line
// error (exit 1).
func TestReportRefuses(t *testing.T) {
	t.Parallel()
	rocm := testfix.Path(t, "mlxcel-gfx1151", "benchmarks", "rocm_strixhalo-gfx1151_2026-09-30.csv")
	onOff := testfix.Path(t, "mlxcel-gfx1151", "benchmarks", "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report"}, 2, "give one results folder"},
		{[]string{"report", "a", "b"}, 2, "give one results folder"},
		{[]string{"report", "a", "--guard-log", "g"}, 2, "--guard-log goes with --baseline"},
		{[]string{"report", "--baseline"}, 2, "give mlxcel's CSV"},
		{[]string{"report", "--baseline", rocm, "--rules", "r.yml"}, 2, "--rules goes with a results folder"},
		{[]string{"report", "--baseline", rocm, "--max-spread", "0"}, 2, "--max-spread must be a positive percentage"},
		{[]string{"report", "--baseline", rocm, onOff}, 1, "both rocm files"},
		{[]string{"report", t.TempDir()}, 1, "no run summaries in"},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 && tc.code == 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, stdout, stderr, tc.code, tc.want)
		}
	}
}
