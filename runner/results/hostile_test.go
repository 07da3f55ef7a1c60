package results

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckRunName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"Meta-Llama-3.1-8B-Instruct-4bit_greedy", "Qwen3-30B-A3B-4bit_t0.7-p0.95", "x", "model v2_greedy", "모델_greedy"} {
		if err := CheckRunName(ok); err != nil {
			t.Errorf("CheckRunName(%q): %v", ok, err)
		}
	}
	cases := []struct{ name, want string }{
		{"", "the run name is empty"},
		{"../../x", `run name "../../x" holds a / or \`},
		{`a\b`, `holds a / or \`},
		{".hidden_greedy", "starts with a dot"},
		{"..", "starts with a dot"},
		{"x\nrm -rf_greedy", `run name "x\nrm -rf_greedy" holds a character that is not printable`},
		{"x\x1b[31m_greedy", "not printable"},
		{"x\xff_greedy", "is not valid UTF-8"},
		{strings.Repeat("m", 250) + "_greedy", "is 257 bytes long, more than 200"},
	}
	for _, c := range cases {
		err := CheckRunName(c.name)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckRunName(%q) = %v, want %q", c.name, err, c.want)
		}
	}
}

func TestSamplingCheckAndTags(t *testing.T) {
	t.Parallel()
	for _, bad := range []Sampling{{math.NaN(), 1}, {math.Inf(1), 1}, {-0.1, 1}, {101, 1}, {0.7, math.NaN()}, {0.7, 0}, {0.7, 1.01}, {0.7, math.Inf(1)}} {
		if err := bad.Check(); err == nil {
			t.Errorf("Check(%+v) accepted", bad)
		}
	}
	if err := (Sampling{0.7, 0.95}).Check(); err != nil {
		t.Error(err)
	}
	// A tag of 400 digits parses to +Inf: refused, not turned into "t+Inf".
	if _, err := ParseSampling("t" + strings.Repeat("9", 400)); err == nil || !strings.Contains(err.Error(), "at most 100") {
		t.Errorf("huge temperature tag: %v", err)
	}
	for name, want := range map[string]string{"Llama_greedy": "greedy", "Qwen3-30B_t0.7-p0.95": "t0.7-p0.95", "m_t1": "t1"} {
		if _, tag, ok := TagOfName(name); !ok || tag != want {
			t.Errorf("TagOfName(%q) = %q, %v; want %q", name, tag, ok, want)
		}
	}
	for _, name := range []string{"x", "Llama_fast", "t0.7"} {
		if _, tag, ok := TagOfName(name); ok {
			t.Errorf("TagOfName(%q) found tag %q", name, tag)
		}
	}
}

// A directory where a result goes fails with a clear error and leaves no temp file;
// a file that was there is reported as replaced.
func TestReplaceFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "run_summary.json")
	if replaced, err := ReplaceFile(target, []byte("1")); err != nil || replaced {
		t.Fatalf("new file: replaced %v, %v", replaced, err)
	}
	if replaced, err := ReplaceFile(target, []byte("2")); err != nil || !replaced {
		t.Fatalf("existing file: replaced %v, %v", replaced, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "2" {
		t.Errorf("content %q", b)
	}
	blocked := filepath.Join(dir, "run_decode_kernels.csv")
	if err := os.Mkdir(blocked, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := ReplaceFile(blocked, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory in the way: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file %s left behind", e.Name())
		}
	}
}

func TestReadSummaryValidates(t *testing.T) {
	t.Parallel()
	orig, err := os.ReadFile(fixtureRuns(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, from, to, want string
	}{
		{"negative share", `"rms_norm": 1.15`, `"rms_norm": -1.15`, "class_share_pct.rms_norm: -1.15 is not a share in 0..100"},
		{"share above 100", `"share_pct": 94.81`, `"share_pct": 194.81`, "top_kernels.0.share_pct: 194.81 is not a share in 0..100"},
		{"negative ms/token", `"gpu_ms_per_token": 23.3429`, `"gpu_ms_per_token": -23.3429`, "gpu_ms_per_token: -23.3429 is negative"},
		{"1e308", `"decode_gpu_sum_ms": 2987.895`, `"decode_gpu_sum_ms": 1e308`, "decode_gpu_sum_ms: 1e+308 is beyond any real run"},
		{"path in the name", `"name": "Meta-Llama-3.1-8B-Instruct-4bit_greedy"`, `"name": "../../etc/x_greedy"`, `name: run name "../../etc/x_greedy" holds a /`},
		{"no name", `"name": "Meta-Llama-3.1-8B-Instruct-4bit_greedy"`, `"name": ""`, "name: the run name is empty"},
		{"negative tokens", `"generated_tokens": 128`, `"generated_tokens": -128`, "generated_tokens: -128 is negative"},
		{"hot temperature", `"temperature": 0.0`, `"temperature": 1e300`, "temperature: 1e+300 is not in 0..100"},
	}
	for _, c := range cases {
		text := strings.Replace(string(orig), c.from, c.to, 1)
		if text == string(orig) {
			t.Fatalf("%s: %q not in the fixture", c.name, c.from)
		}
		p := filepath.Join(t.TempDir(), "run_summary.json")
		os.WriteFile(p, []byte(text), 0o644)
		_, err := ReadSummary(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("%s: got %v, want %s: ...%s", c.name, err, p, c.want)
		}
	}
	// Many broken values: a few are listed, the rest counted.
	many := strings.NewReplacer(": 0.0,", ": -1.0,", ": 0.0\n", ": -1.0\n").Replace(string(orig))
	_, err = ParseSummary([]byte(many))
	if err == nil || !strings.Contains(err.Error(), "more") || strings.Count(err.Error(), "\n") > maxListed+1 {
		t.Errorf("many errors: %v", err)
	}
}
