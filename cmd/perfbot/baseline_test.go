package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/baseline"
)

func baselineCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"baseline"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func realBench(t *testing.T, name string) string {
	return testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name)
}

func TestBaselineCompareUsage(t *testing.T) {
	t.Parallel()
	a := realBench(t, "rocm_strixhalo-gfx1151_2026-09-30.csv")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage: perfbot baseline compare"},
		{[]string{"diff"}, `unknown subcommand "diff"`},
		{[]string{"compare"}, "give --history DIR and --new FILE"},
		{[]string{"compare", a}, "give two files to compare (A.csv B.csv), got 1"},
		{[]string{"compare", a, a, a}, "got 3"},
		{[]string{"compare", "--new", a}, "give --history DIR and --new FILE"},
		{[]string{"compare", "--new", a, a, a}, "not both"},
		{[]string{"compare", "--history", ".", "--new", a, "--window", "1"}, "the window (N) is 1"},
		{[]string{"compare", "--history", ".", "--new", a, "--min-history", "30"}, "the minimum history is 30"},
	} {
		code, _, stderr := baselineCLI(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("perfbot baseline %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if code, _, stderr := baselineCLI("compare", a, filepath.Join(t.TempDir(), "rocm_x_2026-01-01.csv")); code != 1 || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing B: exit %d, %s", code, stderr)
	}
}

// The SSM kernel A/B from the command line, flags after the files, as text and JSON:
// each metric on its line under its model, with the test that decided.
func TestBaselineCompareAB(t *testing.T) {
	t.Parallel()
	off, on := realBench(t, "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-off.csv"), realBench(t, "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv")
	code, stdout, stderr := baselineCLI("compare", off, on)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"A: rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-off.csv\nB: rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv",
		"Holm's correction over the 4 tested comparisons",
		"faster                 granite-4.0-h-tiny-4bit\n  decode tok/s:  B 88.43 vs A 60.39 (medians of 3 and 3, higher is better): +46.43 % (95 % interval +45.32 % to +48.03 %, Welch's t, p = 2.1e-06, 8.4e-06 after Holm): faster",
		"\n  prefill tok/s: B 589.3 vs A 504.5 (medians of 3 and 3, higher is better): +16.81 % (95 % interval -40.04 % to +78.53 %, Welch's t, p = 0.8677, 1.0000 after Holm): too noisy to call",
		"faster                 NVIDIA-Nemotron-3-Nano-30B-A3B-4bit\n  decode tok/s:  B 74.37 vs A 51.35 (medians of 3 and 3, higher is better): +44.83 %",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = baselineCLI("compare", off, on, "--json")
	var rep baseline.ABReport
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil || len(rep.Results) != 2 || rep.Results[0].Verdict != baseline.Faster || rep.Tested != 4 || rep.Results[0].Metrics[0].Test != "welch" {
		t.Errorf("--json: exit %d, %v: %s", code, err, stdout)
	}
}

// A new run against a history folder: the last accepted baseline, too little history
// said as such, and files that are not harness CSVs listed, not guessed at.
func TestBaselineCompareNightly(t *testing.T) {
	t.Parallel()
	hist := t.TempDir()
	for _, name := range []string{"rocm_strixhalo-gfx1151_2026-09-30.csv", "pylm_strixhalo-gfx1151_2026-09-30.csv", "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv"} {
		b, err := os.ReadFile(realBench(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(hist, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(hist, "notes.csv"), []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := baselineCLI("compare", "--history", hist, "--new", realBench(t, "rocm_strixhalo-gfx1151_2026-10-07_fused-default-on.csv"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"last accepted baseline: rocm_strixhalo-gfx1151_2026-09-30.csv",
		"not enough history     Meta-Llama-3.1-8B-Instruct-4bit: decode 38.09 tok/s (median of 3 repeats); not enough history: 1 of the 8 comparable nightly runs a noise band needs; +7.6% against the last baseline 35.41 of 2026-09-30",
		"not enough history     Qwen2.5-7B-Instruct-4bit: decode 47.90 tok/s (median of 3 repeats); not enough history: 0 of the 8",
		"1 file(s) of the folder were not read:\n  \"notes.csv\" is not a harness CSV name",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// `perfbot trend` writes the page of a history folder with relative links to its rows.
func TestTrendCLI(t *testing.T) {
	t.Parallel()
	hist := t.TempDir()
	for _, name := range []string{"rocm_strixhalo-gfx1151_2026-09-30.csv", "pylm_strixhalo-gfx1151_2026-09-30.csv"} {
		b, err := os.ReadFile(realBench(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(hist, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	site := filepath.Join(t.TempDir(), "site")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"trend", "--history", hist, "--out", site}, &out, &errb); code != 0 || !strings.Contains(out.String(), "2 CSV file(s) read") {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	page, err := os.ReadFile(filepath.Join(site, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(site, hist)
	if n := strings.Count(string(page), `<svg class="chart"`); n != 5 || !strings.Contains(string(page), `href="`+filepath.ToSlash(rel)+`/rocm_strixhalo-gfx1151_2026-09-30.csv#L3"`) {
		t.Errorf("%d charts; links:\n%s", n, page)
	}
	if code := run(context.Background(), []string{"trend", "--history", hist}, &out, &errb); code != 2 {
		t.Errorf("no --out: exit %d", code)
	}
}

// The summary's trend line says where the page went in each mode.
func TestBaselinePublishTrendLine(t *testing.T) {
	for _, c := range []struct {
		t    publish.TrendOutcome
		want string
	}{
		{publish.TrendOutcome{}, ""},
		{publish.TrendOutcome{Publish: "off", Skipped: "trend.publish is off"}, "none: trend.publish is off"},
		{publish.TrendOutcome{Publish: "commit", Page: "t/README.md"}, "t/README.md in the baseline commit"},
		{publish.TrendOutcome{Publish: "pages", Page: "t/index.html", Branch: "gh-pages", Action: "updated", Commit: "abc", URL: "https://o.github.io/r/t/"},
			"t/index.html on gh-pages: updated abc, served at https://o.github.io/r/t/"},
		{publish.TrendOutcome{Publish: "pages", Page: "t/index.html", Branch: "gh-pages", Action: "failed", Error: "push refused"}, "t/index.html on gh-pages: failed: push refused"},
	} {
		if got := trendLine(c.t); got != c.want {
			t.Errorf("trendLine(%+v) = %q, want %q", c.t, got, c.want)
		}
	}
}
