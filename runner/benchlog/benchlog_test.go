package benchlog

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/testfix"
)

const profileDir = "rocm_profiles/gfx1151_929c80ab"

func fixture(t testing.TB, file string) string {
	t.Helper()
	return testfix.Path(t, "mlxcel-gfx1151", profileDir, file)
}

func TestParseFixtureLogs(t *testing.T) {
	t.Parallel()
	const device = "gfx1151 (AMD Radeon 8060S Graphics)"
	cases := []struct {
		file string
		want Log
	}{
		{"Meta-Llama-3.1-8B-Instruct-4bit_greedy_bench.log", Log{
			Boottime:     Marks{169763750669691, 169765813493645, 169766321703560, 169769539602216, true},
			Monotonic:    Marks{169763750669641, 169765813493615, 169766321703540, 169769539602196, true},
			PromptTokens: 512, GeneratedTokens: 128,
			PrefillMs: 478.76, PrefillTokS: 1069.42, DecodeMs: 3217.90, DecodeTokS: 39.78, PeakMemoryGB: 20.60,
			Device: device, GfxTarget: "gfx1151", HasResults: true,
		}},
		{"Meta-Llama-3.1-8B-Instruct-4bit_greedy_plain_bench.log", Log{
			PromptTokens: 512, GeneratedTokens: 128,
			PrefillMs: 475.90, PrefillTokS: 1075.86, DecodeMs: 3452.34, DecodeTokS: 37.08, PeakMemoryGB: 20.60,
			Device: device, GfxTarget: "gfx1151", HasResults: true,
		}},
		{"Qwen3-30B-A3B-4bit_greedy_bench.log", Log{
			Boottime:     Marks{170052628986286, 170061773621441, 170063436650826, 170065611275161, true},
			Monotonic:    Marks{170052628986246, 170061773621421, 170063436650806, 170065611275141, true},
			PromptTokens: 512, GeneratedTokens: 128,
			PrefillMs: 1616.36, PrefillTokS: 316.76, DecodeMs: 2174.62, DecodeTokS: 58.86, PeakMemoryGB: 23.56,
			Device: device, GfxTarget: "gfx1151", HasResults: true,
		}},
		{"Qwen3-30B-A3B-4bit_greedy_plain_bench.log", Log{
			PromptTokens: 512, GeneratedTokens: 128,
			PrefillMs: 2373.42, PrefillTokS: 215.72, DecodeMs: 2064.86, DecodeTokS: 61.99, PeakMemoryGB: 23.56,
			Device: device, GfxTarget: "gfx1151", HasResults: true,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFile(fixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, *got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			// docs/formats.md §2: decode_start is measured_end minus the bench's own decode time.
			for _, m := range []Marks{got.Boottime, got.Monotonic} {
				if !m.OK {
					continue
				}
				ms := float64(m.MeasuredEnd-m.DecodeStart) / 1e6
				if math.Abs(ms-got.DecodeMs) > 0.005 {
					t.Errorf("measured_end - decode_start = %.3f ms, results block says %.2f ms", ms, got.DecodeMs)
				}
			}
		})
	}
}

// variant writes the Llama profiled log, changed by edit, to a temp file.
func variant(t *testing.T, edit func(string) string) string {
	t.Helper()
	data, err := os.ReadFile(fixture(t, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_bench.log"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run_bench.log")
	if err := os.WriteFile(path, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func lines(s string) []string { return strings.SplitAfter(s, "\n") }

// insertAfter puts text after line n (1-based) of s.
func insertAfter(s string, n int, text string) string {
	ls := lines(s)
	return strings.Join(ls[:n], "") + text + strings.Join(ls[n:], "")
}

func TestParseVariations(t *testing.T) {
	t.Parallel()
	orig, err := ParseFile(fixture(t, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_bench.log"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(string) string
		want func(l Log) Log // the original changed as expected
	}{
		{"noise lines, CRLF and varied indentation change nothing", func(s string) string {
			s = insertAfter(s, 3, "E20260930 17:41:02.123456 3292996 output_stream.cpp:111] Opened result file: /tmp/x/run_kernel_stats.csv\n"+
				"W0930 17:41:02.2 3292996 tool.cpp:5] warning\n"+
				"I20260930 17:41:02.300000   42 main.cpp:7] info\n"+
				"rocm_gpu_guard: 2026-09-30T17:41:01+0900 sample 1: clean gpu=[2679179:mlxcel-bench-de]\n"+
				"thread 'main' some unrelated output: with a colon\n"+
				"Decode: 1.0 ms (1.0 tok/s)\n") // before the results block: not a result
			s = strings.ReplaceAll(s, "  Prompt tokens:    512", "\tPrompt tokens:512")
			s = strings.ReplaceAll(s, "  Decode:  ", "      Decode:")
			s = strings.ReplaceAll(s, "[phase] measured_end", "   [phase]   measured_end  ")
			return strings.ReplaceAll(s, "\n", "\r\n")
		}, func(l Log) Log { return l }},
		{"na on one clock", func(s string) string {
			return strings.Replace(s, "monotonic_ns=169766321703540", "monotonic_ns=na", 1)
		}, func(l Log) Log { l.Monotonic = Marks{}; return l }},
		{"na on both clocks", func(s string) string {
			s = strings.Replace(s, "monotonic_ns=169763750669641", "monotonic_ns=na", 1)
			return strings.Replace(s, "boottime_ns=169769539602216", "boottime_ns=na", 1)
		}, func(l Log) Log { l.Monotonic, l.Boottime = Marks{}, Marks{}; return l }},
		{"a missing mark", func(s string) string {
			return strings.Replace(s, "[phase] decode_start monotonic_ns=169766321703540 boottime_ns=169766321703560\n", "", 1)
		}, func(l Log) Log { l.Monotonic, l.Boottime = Marks{}, Marks{}; return l }},
		{"a mark without one clock", func(s string) string {
			return strings.Replace(s, " boottime_ns=169765813493645", "", 1)
		}, func(l Log) Log { l.Boottime = Marks{}; return l }},
		{"clocks in the other order, other marks ignored", func(s string) string {
			s = strings.Replace(s, "[phase] warmup_start monotonic_ns=169763750669641 boottime_ns=169763750669691",
				"[phase] warmup_start boottime_ns=169763750669691 monotonic_ns=169763750669641 realtime_ns=5", 1)
			return insertAfter(s, 1, "[phase] load_start monotonic_ns=1 boottime_ns=2\n[phase] load_start monotonic_ns=1 boottime_ns=2\n")
		}, func(l Log) Log { return l }},
		{"no results block", func(s string) string {
			return s[:strings.Index(s, "[Profile Results]")]
		}, func(l Log) Log {
			l.HasResults = false
			l.PromptTokens, l.GeneratedTokens = 0, 0
			l.PrefillMs, l.PrefillTokS, l.DecodeMs, l.DecodeTokS, l.PeakMemoryGB = 0, 0, 0, 0, 0
			return l
		}},
		{"no device line", func(s string) string { return strings.SplitN(s, "\n", 2)[1] },
			func(l Log) Log { l.Device, l.GfxTarget = "", ""; return l }},
		{"unknown lines in the results block", func(s string) string {
			return strings.Replace(s, "  Generated tokens: 128\n", "  Generated tokens: 128\n  Decode steps: 127\n  ---\n", 1)
		}, func(l Log) Log { return l }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFile(variant(t, tc.edit))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want(*orig), *got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(string) string
		want string // after `<path>:`
	}{
		{"a mark twice", func(s string) string {
			return insertAfter(s, 10, "[phase] decode_start monotonic_ns=1 boottime_ns=2\n")
		}, "11: phase mark decode_start appears twice (first at line 9); give one bench run per log"},
		{"a malformed mark", func(s string) string {
			return strings.Replace(s, "boottime_ns=169766321703560", "boottime_ns=1697663217O3560", 1)
		}, `9: phase mark decode_start: boottime_ns="1697663217O3560" is not a nanosecond count or na`},
		{"a negative mark", func(s string) string {
			return strings.Replace(s, "monotonic_ns=169763750669641", "monotonic_ns=-5", 1)
		}, `4: phase mark warmup_start: monotonic_ns="-5" is not a nanosecond count or na`},
		{"marks out of order", func(s string) string {
			return strings.Replace(s, "boottime_ns=169766321703560", "boottime_ns=169765813493000", 1)
		}, "9: phase mark decode_start (boottime_ns=169765813493000) comes before measured_start (169765813493645); the marks are out of order"},
		{"a malformed token count", func(s string) string {
			return strings.Replace(s, "Generated tokens: 128", "Generated tokens: 12.8", 1)
		}, `13: Generated tokens: "12.8" is not a token count`},
		{"a malformed decode time", func(s string) string {
			return strings.Replace(s, "3217.90 ms", "3217.9O ms", 1)
		}, `15: Decode: "3217.9O ms (39.78 tok/s)" holds a malformed number`},
		{"an infinite rate", func(s string) string {
			return strings.Replace(s, "(1069.42 tok/s)", "(inf tok/s)", 1)
		}, `14: Prefill: "478.76 ms (inf tok/s)" holds a malformed number`},
		{"a decode line of another shape", func(s string) string {
			return strings.Replace(s, "3217.90 ms (39.78 tok/s)", "3217.90 ms", 1)
		}, "15: Decode: \"3217.90 ms\" is not `<ms> ms (<tok/s> tok/s)`"},
		{"memory in another unit", func(s string) string {
			return strings.Replace(s, "20.60 GB", "20600 MB", 1)
		}, "16: MLX peak memory: \"20600 MB\" is not `<GB> GB`"},
		{"a cut-short results block", func(s string) string {
			return s[:strings.Index(s, "  Decode:")]
		}, `11: the results block lacks "Decode:"; was the bench cut short?`},
		{"no generated tokens", func(s string) string {
			return strings.Replace(s, "  Generated tokens: 128\n", "", 1)
		}, `11: the results block lacks "Generated tokens:"; was the bench cut short?`},
		{"a decode line with terminal escapes", func(s string) string {
			return strings.Replace(s, "3217.90 ms (39.78 tok/s)", "\x1b]0;owned\x07"+strings.Repeat("9", 1000), 1)
		}, "15: Decode: \"\\x1b]0;owned\\a" + strings.Repeat("9", 190) + "\"... (810 more bytes) is not `<ms> ms (<tok/s> tok/s)`"},
		{"a result line twice", func(s string) string {
			return s + "  Decode:           1.00 ms (1.00 tok/s)\n"
		}, `17: "Decode:" appears twice in the results block (first at line 15)`},
		{"two results blocks", func(s string) string { return s + s[strings.Index(s, "[Profile Results]"):] },
			"17: a second results block (the first is at line 11); give one bench run per log"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := variant(t, tc.edit)
			_, err := ParseFile(path)
			if err == nil || err.Error() != path+":"+tc.want {
				t.Errorf("error = %v\nwant %s:%s", err, path, tc.want)
			}
		})
	}
}

func TestParseFileMissing(t *testing.T) {
	t.Parallel()
	_, err := ParseFile(filepath.Join(t.TempDir(), "none.log"))
	if !os.IsNotExist(unwrapAll(err)) || !strings.HasPrefix(err.Error(), "reading bench log: ") {
		t.Errorf("error = %v, want a not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

func TestParseLongLines(t *testing.T) {
	t.Parallel()
	log := "[mlx-rocm] " + strings.Repeat("x", 1<<20) + "\n[Profile Results]\n Prompt tokens: 1\n Generated tokens: 2\n" +
		" Prefill: 1 ms (1 tok/s)\n Decode: 2 ms (3 tok/s)\n MLX peak memory: 0.5 GB" // no final newline
	got, err := Parse(strings.NewReader(log), "long.log")
	if err != nil {
		t.Fatal(err)
	}
	if !got.HasResults || got.GeneratedTokens != 2 || got.DecodeTokS != 3 || got.PeakMemoryGB != 0.5 {
		t.Errorf("got %+v", got)
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		in    string
		paths []string
		want  string
	}{
		{"drops guard and glog lines", "" +
			"rocm_gpu_guard: waiting for 90s of idle GPU and no compiler\n" +
			"[mlx-rocm] bound HIP device 0: gfx1151 (AMD Radeon 8060S Graphics) cus=20 warp=32 lds=64KB\n" +
			"E20260716 02:19:56.319983 126083072517504 output_stream.cpp:111] Opened result file: /x/a.csv\n" +
			"  W0716 02:19:56.3 1 x.cpp:1] indented warning\n" +
			"I20260716 02:19:56.322797 126083072517504 tool.cpp:9] info\n" +
			"F20260716 02:19:56.322797 1 tool.cpp:9] fatal\n" +
			"[Load] wall: 0.165 s  MLX peak: 0.00 GB\n" +
			"Error 2026: not a glog line\n" +
			"I am not glog either\n",
			nil,
			"[mlx-rocm] bound HIP device 0: gfx1151 (AMD Radeon 8060S Graphics) cus=20 warp=32 lds=64KB\n" +
				"[Load] wall: 0.165 s  MLX peak: 0.00 GB\n" +
				"Error 2026: not a glog line\n" +
				"I am not glog either\n"},
		{"replaces path prefixes, longest first, on whole components", "" +
			"[Load] model /home/ci/_work/mlxcel/mlxcel/models/mlx/Llama at /home/ci/cache\n" +
			"cwd=/home/ci, other=/home/circle/x, quoted='/home/ci/_work/mlxcel/mlxcel'\n" +
			"/x/home/ci/y stays\n",
			[]string{"/home/ci/", "/home/ci/_work/mlxcel/mlxcel", "", "/", "  "},
			"[Load] model <...>/models/mlx/Llama at <...>/cache\n" +
				"cwd=<...>, other=/home/circle/x, quoted='<...>'\n" +
				"/x/home/ci/y stays\n"},
		{"keeps CRLF and a missing final newline", "a /w/x\r\nrocm_gpu_guard: x\r\nb /w", []string{"/w"}, "a <...>/x\r\nb <...>"},
		{"empty", "", []string{"/w"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Clean([]byte(tc.in), tc.paths)
			if d := cmp.Diff(tc.want, string(got)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if again := Clean(got, tc.paths); !bytes.Equal(again, got) {
				t.Errorf("Clean is not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestCleanFixtures(t *testing.T) {
	t.Parallel()
	// The committed fixture logs are already clean: Clean keeps them byte for byte.
	for _, f := range []string{"Meta-Llama-3.1-8B-Instruct-4bit_greedy_bench.log", "Qwen3-30B-A3B-4bit_greedy_plain_bench.log"} {
		data, err := os.ReadFile(fixture(t, f))
		if err != nil {
			t.Fatal(err)
		}
		if got := Clean(data, []string{"/home/ci"}); !bytes.Equal(got, data) {
			t.Errorf("Clean changed %s:\n%s", f, got)
		}
	}
	// The profiler's real stderr is all glog lines.
	data, err := os.ReadFile(testfix.Path(t, "rocprofv3", "gfx1201-sllm-qwen3.5-9b-rocm7.2.1", "rocprof.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Clean(data, nil); len(got) != 0 {
		t.Errorf("Clean(rocprof.stderr) = %q, want nothing", got)
	}
	// A raw log (guard lines, profiler lines, local paths) parses the same before and
	// after cleaning.
	raw := variant(t, func(s string) string {
		s = insertAfter(s, 3, "E20260930 17:41:02.1 1 output_stream.cpp:111] Opened result file: /srv/runner/_work/traces/x.csv\n")
		return "rocm_gpu_guard: attempt 1/5: start: /srv/runner/_work/mlxcel/target/release/mlxcel-bench-decode\n" + s
	})
	rawData, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	cleaned := Clean(rawData, []string{"/srv/runner/_work"})
	if bytes.Contains(cleaned, []byte("/srv/runner")) {
		t.Errorf("cleaned log still holds a local path:\n%s", cleaned)
	}
	before, err := Parse(bytes.NewReader(rawData), "raw")
	if err != nil {
		t.Fatal(err)
	}
	after, err := Parse(bytes.NewReader(cleaned), "cleaned")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("cleaning changed the parse (-raw +cleaned):\n%s", d)
	}
}

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(fixture(b, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_bench.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data), "bench.log"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClean(b *testing.B) {
	var buf bytes.Buffer
	for i := range 10000 {
		if i%10 == 0 {
			buf.WriteString("rocm_gpu_guard: sample 1: clean gpu=[1:mlxcel-bench-de]\n")
		}
		buf.WriteString("[mlx-rocm] loading /srv/runner/_work/mlxcel/mlxcel/models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/model.safetensors\n")
	}
	data := buf.Bytes()
	paths := []string{"/srv/runner/_work/mlxcel/mlxcel", "/srv/runner"}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Clean(data, paths)
	}
}

// minimalLog is a complete bench log with the given phase marks (boottime values; the
// monotonic clock is na) and results block lines.
func minimalLog(marks [4]string, results string) string {
	var b strings.Builder
	b.WriteString("[mlx-rocm] bound HIP device 0: gfx1151 (AMD Radeon 8060S Graphics) cus=20 warp=32 lds=64KB\n")
	for i, name := range phaseNames {
		b.WriteString("[phase] " + name + " boottime_ns=" + marks[i] + " monotonic_ns=na\n")
	}
	b.WriteString("[Profile Results]\n" + results)
	return b.String()
}

const fullResults = "  Prompt tokens:    512\n  Generated tokens: 128\n  Prefill:  1200.5 ms (426.5 tok/s)\n" +
	"  Decode:   3400.25 ms (37.6 tok/s)\n  MLX peak memory: 5.25 GB\n"

// Values exactly on the edge of what is valid parse, the whole Log compared; one step
// past the edge is an error naming the line.
func TestParseEdges(t *testing.T) {
	t.Parallel()
	want := func(marks Marks, prompt, generated int) *Log {
		return &Log{Boottime: marks, PromptTokens: prompt, GeneratedTokens: generated,
			PrefillMs: 1200.5, PrefillTokS: 426.5, DecodeMs: 3400.25, DecodeTokS: 37.6, PeakMemoryGB: 5.25,
			Device: "gfx1151 (AMD Radeon 8060S Graphics)", GfxTarget: "gfx1151", HasResults: true}
	}
	cases := []struct {
		name string
		log  string
		want *Log
		err  string
	}{
		{"marks from zero", minimalLog([4]string{"0", "0", "5", "9"}, fullResults), want(Marks{0, 0, 5, 9, true}, 512, 128), ""},
		{"all marks equal", minimalLog([4]string{"7", "7", "7", "7"}, fullResults), want(Marks{7, 7, 7, 7, true}, 512, 128), ""},
		{"a negative mark", minimalLog([4]string{"-1", "0", "5", "9"}, fullResults), nil,
			`x.log:2: phase mark warmup_start: boottime_ns="-1" is not a nanosecond count or na`},
		{"one mark a nanosecond early", minimalLog([4]string{"1", "2", "2", "1"}, fullResults), nil,
			"x.log:5: phase mark measured_end (boottime_ns=1) comes before decode_start (2); the marks are out of order"},
		{"zero tokens", minimalLog([4]string{"1", "2", "3", "4"}, strings.Replace(strings.Replace(fullResults, "512", "0", 1), "128", "0", 1)),
			want(Marks{1, 2, 3, 4, true}, 0, 0), ""},
		{"negative tokens", minimalLog([4]string{"1", "2", "3", "4"}, strings.Replace(fullResults, "128", "-1", 1)), nil,
			`x.log:8: Generated tokens: "-1" is not a token count`},
		{"unknown result lines, repeated", minimalLog([4]string{"1", "2", "3", "4"}, "  Note: a\n"+fullResults+"  Note: b\n  Note: a\n"),
			want(Marks{1, 2, 3, 4, true}, 512, 128), ""},
	}
	for _, c := range cases {
		got, err := Parse(strings.NewReader(c.log), "x.log")
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: log (-want +got):\n%s", c.name, diff)
		}
	}
}

// A prefix is replaced only as a whole path component: any letter, digit or path
// punctuation right before or after it makes it part of another name.
func TestCleanComponentEdges(t *testing.T) {
	t.Parallel()
	var in, want strings.Builder
	for _, c := range "azAZ09/._-~" {
		in.WriteString("x /w" + string(c) + " " + string(c) + "/w\n")
		if c == '/' {
			want.WriteString("x <...>/ //w\n")
			continue
		}
		want.WriteString("x /w" + string(c) + " " + string(c) + "/w\n")
	}
	for _, c := range "`{@[:=' \"," {
		in.WriteString("x /w" + string(c) + string(c) + "/w\n")
		want.WriteString("x <...>" + string(c) + string(c) + "<...>\n")
	}
	if diff := cmp.Diff(want.String(), string(Clean([]byte(in.String()), []string{"/w"}))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A line of exactly maxLineBytes, its newline included, is read; one byte more is refused.
func TestParseLineLengthEdge(t *testing.T) {
	t.Parallel()
	log := minimalLog([4]string{"1", "2", "3", "4"}, fullResults)
	at := strings.Repeat("x", maxLineBytes-1) + "\n"
	if _, err := Parse(strings.NewReader(at+log), "bench.log"); err != nil {
		t.Errorf("a line of %d bytes: %v", maxLineBytes, err)
	}
	over := strings.Repeat("x", maxLineBytes) + "\n"
	want := "bench.log:1: a line longer than 16 MiB: is this the bench's log (and not a binary or a corrupted file)?"
	if _, err := Parse(strings.NewReader(over+log), "bench.log"); err == nil || err.Error() != want {
		t.Errorf("a line of %d bytes: %v, want %q", maxLineBytes+1, err, want)
	}
}
