package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rank reads summaries written by others: each is validated, and the error names the
// file. Two summaries of one run are refused, not silently merged.
func TestRankValidatesSummariesOnRead(t *testing.T) {
	t.Parallel()
	src := rankFixtureDir(t)
	const run = "Meta-Llama-3.1-8B-Instruct-4bit_greedy"
	orig, err := os.ReadFile(filepath.Join(src, run+"_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, from, to, want string
	}{
		{"negative share", `"rope": 0.43`, `"rope": -0.43`, "class_share_pct.rope: -0.43 is not a share in 0..100"},
		{"negative ms/token", `"host_gap_ms_per_token": 1.7969`, `"host_gap_ms_per_token": -1.7969`, "host_gap_ms_per_token: -1.7969 is negative"},
		{"1e308", `"decode_gpu_sum_ms": 2987.895`, `"decode_gpu_sum_ms": 1e308`, "decode_gpu_sum_ms: 1e+308 is beyond any real run"},
		{"share of 1e308", `"sdpa": 2.14`, `"sdpa": 1e308`, "class_share_pct.sdpa: 1e+308 is not a share in 0..100"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		bad := filepath.Join(dir, run+"_summary.json")
		text := strings.Replace(string(orig), c.from, c.to, 1)
		if text == string(orig) {
			t.Fatalf("%s: %q not in the fixture", c.name, c.from)
		}
		os.WriteFile(bad, []byte(text), 0o644)
		code, stdout, stderr := runPerfbot("rank", dir, "--format", "json")
		if code != 1 || !strings.Contains(stderr, bad+": not a summary perfbot can use: "+c.want) || stdout != "" {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %s: ...%s", c.name, code, stderr, bad, c.want)
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"a_summary.json", "b_summary.json"} {
		os.WriteFile(filepath.Join(dir, f), orig, 0o644)
	}
	code, _, stderr := runPerfbot("rank", dir)
	want := filepath.Join(dir, "a_summary.json") + " and " + filepath.Join(dir, "b_summary.json") + ` both hold run "` + run + `"`
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("two summaries of one run: exit %d, stderr %q; want %q", code, stderr, want)
	}
}
