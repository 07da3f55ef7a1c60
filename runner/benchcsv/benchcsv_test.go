package benchcsv

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/testfix"
)

func realCSV(t testing.TB, name string) string {
	t.Helper()
	return testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name)
}

const (
	rocm0930 = "rocm_strixhalo-gfx1151_2026-09-30.csv"
	pylm0930 = "pylm_strixhalo-gfx1151_2026-09-30.csv"
	ssmOff   = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-off.csv"
	ssmOn    = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv"
	fused    = "rocm_strixhalo-gfx1151_2026-10-07_fused-default-on.csv"
)

func TestParseName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Name
	}{
		{rocm0930, Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: "2026-09-30"}},
		{pylm0930, Name{Backend: "pylm", Host: "strixhalo-gfx1151", Date: "2026-09-30"}},
		{ssmOff, Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: "2026-10-04", Suffix: "ssm-kernel-off"}},
		{"metal_m5max_vlm_2026-09-09.csv", Name{Backend: "metal", Host: "m5max", VLM: true, Date: "2026-09-09"}},
		{"metal_m5max_2026-04-13_probe_single_Qwen3_0.6B.csv", Name{Backend: "metal", Host: "m5max", Date: "2026-04-13", Suffix: "probe", Single: "Qwen3_0.6B"}},
		{"rocm_strixhalo-gfx1151_2026-10-08_single_Meta-Llama-3.1-8B-Instruct-4bit.csv", Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: "2026-10-08", Single: "Meta-Llama-3.1-8B-Instruct-4bit"}},
		// The pre-ROCm harness's fallback tag: 20 characters of the CPU name, underscores and all.
		{"metal_amd_ryzen_ai_max+_39_2026-09-29.csv", Name{Backend: "metal", Host: "amd_ryzen_ai_max+_39", Date: "2026-09-29"}},
		{"cuda_v100_2026-08-01_a_b.csv", Name{Backend: "cuda", Host: "v100", Date: "2026-08-01", Suffix: "a_b"}},
	} {
		got, err := ParseName(tc.in)
		if err != nil {
			t.Errorf("ParseName(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseName(%q) (-want +got):\n%s", tc.in, diff)
		}
		if got.String() != tc.in {
			t.Errorf("ParseName(%q).String() = %q", tc.in, got.String())
		}
	}
	for _, bad := range []string{"rocm_strixhalo-gfx1151.csv", "vulkan_x_2026-01-01.csv", "rocm__2026-01-01.csv",
		"rocm_x_2026-13-01.csv", "rocm_x_2026-01-01_.csv", "rocm_x_2026-01-01_single_.csv", "rocm_x_2026-01-01.txt", "a/rocm_x_2026-01-01.csv"} {
		if _, err := ParseName(bad); err == nil {
			t.Errorf("ParseName(%q) took a bad name", bad)
		}
	}
	n, _ := ParseName(ssmOff)
	if n.Nightly() || n.Pair() != "rocm_strixhalo-gfx1151" || n.Stem() != strings.TrimSuffix(ssmOff, ".csv") {
		t.Errorf("%+v: nightly %v pair %q stem %q", n, n.Nightly(), n.Pair(), n.Stem())
	}
}

func TestReadRealFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		rows       int
		models     int
		baseline   bool
		firstModel string
		decode     float64
	}{
		{rocm0930, 5, 5, false, "gpt-oss-20b-MXFP4-Q4", 8.07},
		{pylm0930, 5, 5, true, "Meta-Llama-3.1-8B-Instruct-4bit", 32.81},
		{ssmOff, 6, 2, false, "granite-4.0-h-tiny-4bit", 60.57},
		{ssmOn, 6, 2, false, "granite-4.0-h-tiny-4bit", 88.36},
		{fused, 6, 2, false, "Meta-Llama-3.1-8B-Instruct-4bit", 37.86},
	} {
		f, err := ReadFile(realCSV(t, tc.name))
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Rows) != tc.rows || len(f.Models()) != tc.models || f.IsBaseline() != tc.baseline {
			t.Errorf("%s: %d rows, %d models, baseline %v", tc.name, len(f.Rows), len(f.Models()), f.IsBaseline())
		}
		r := f.Rows[0]
		if r.Model != tc.firstModel || r.DecodeTokS != tc.decode || !r.OK() || r.Line != 2 {
			t.Errorf("%s: first row %+v", tc.name, r)
		}
		if r.Prompt != "Hello, how are you today?" || r.PromptTokens != 512 || r.GeneratedTokens != 128 {
			t.Errorf("%s: the quoted prompt with its comma was split: %+v", tc.name, r)
		}
		if last := f.Rows[len(f.Rows)-1]; last.Line != tc.rows+1 {
			t.Errorf("%s: last row on line %d", tc.name, last.Line)
		}
		if !tc.baseline && (r.OverlayCommit != "75915908" || r.HIPVersion != "7.15.26333" || r.Hardware != "AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB") {
			t.Errorf("%s: provenance %+v", tc.name, r)
		}
	}
	f, _ := ReadFile(realCSV(t, ssmOn))
	if got := f.RowsOf("NVIDIA-Nemotron-3-Nano-30B-A3B-4bit"); len(got) != 3 || got[1].DecodeTokS != 72.87 {
		t.Errorf("repeats of nemotron: %+v", got)
	}
}

// hostExpect is the fake host of internal/fakehost/host and the checkout of the 2026-09-30
// baseline.
func hostExpect(date string) Expect {
	return Expect{
		Backend: "rocm", GFX: "gfx1151", ROCm: "10.0.0", HIP: "7.15.26333",
		Overlay: "75915908dfe5028335d318b10340313744fd3a8d", Commit: "2fcdbe5f0000000000000000000000000000000a", Date: date,
		DeviceMemBytes: 96 << 30, HostMemBytes: 31 << 30,
		ModelBytes: map[string]int64{
			"Mixtral-8x7B-Instruct-v0.1-4bit": 26_270_000_000, "Meta-Llama-3.1-8B-Instruct-4bit": 4_530_000_000,
			"Huge-400B-4bit": 220 << 30,
		},
	}
}

// variant writes a changed copy of a real file under another name.
func variant(t *testing.T, from, name string, edit func(string) string) *File {
	t.Helper()
	b, err := os.ReadFile(realCSV(t, from))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func kinds(ps []Problem) map[string]int {
	out := map[string]int{}
	for _, p := range ps {
		out[string(p.Severity)+":"+p.Kind]++
	}
	return out
}

func TestCheckRealBaselineIsClean(t *testing.T) {
	t.Parallel()
	for _, name := range []string{rocm0930, pylm0930} {
		f, err := ReadFile(realCSV(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if ps := Check(f, hostExpect("2026-09-30")); len(ps) != 0 {
			t.Errorf("%s: %v", name, ps)
		}
	}
}

func TestCheckFindsHarnessProblems(t *testing.T) {
	t.Parallel()
	same := func(s string) string { return s }
	mixtralSkipped := func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "Mixtral") {
				lines[i] = "Mixtral-8x7B-Instruct-v0.1-4bit,models/mlx/Mixtral-8x7B-Instruct-v0.1-4bit/,,,,,,,2026-09-30,AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB,0.7.0,release,128,\"Hello, how are you today?\",512,SKIP:oom_estimate,2fcdbe5f,81ba1c6a,75915908,7.15.26333"
			}
		}
		return strings.Join(lines, "\n")
	}
	for _, tc := range []struct {
		what  string
		from  string
		name  string
		edit  func(string) string
		want  map[string]int
		text  string
		model string
	}{
		{"a ROCm run named metal_ by the pre-ROCm harness", rocm0930, "metal_amd_ryzen_ai_max+_39_2026-09-30.csv", same,
			map[string]int{"error:mislabelled": 1}, "should be rocm_strixhalo-gfx1151_2026-09-30.csv", ""},
		{"a ROCm run named cuda_", rocm0930, "cuda_strixhalo-gfx1151_2026-09-30.csv", same,
			map[string]int{"error:mislabelled": 1}, "it was written on a ROCM host (gfx1151) but named cuda_", ""},
		{"the baseline without the GPU in its tag", pylm0930, "pylm_unknown_2026-09-30.csv", same,
			map[string]int{"error:mislabelled": 1}, "did not recognize the ROCm host", ""},
		{"empty overlay and HIP columns", rocm0930, rocm0930, func(s string) string {
			return strings.ReplaceAll(s, ",75915908,7.15.26333", ",,")
		}, map[string]int{"error:overlay": 5, "error:hip": 5}, "mlx_rocm_overlay_commit is empty", "Qwen3-0.6B-4bit"},
		{"another overlay", rocm0930, rocm0930, func(s string) string { return strings.ReplaceAll(s, ",75915908,", ",1234abcd,") },
			map[string]int{"error:overlay": 5}, "not the checkout's overlay 75915908", ""},
		{"the CPU as hardware", rocm0930, rocm0930, func(s string) string {
			return strings.ReplaceAll(s, "AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB", "AMD_RYZEN_AI_MAX+_395_w/_Radeon_8060S_31GB")
		}, map[string]int{"error:hardware": 1, "warning:hardware": 1}, "does not name the GPU target gfx1151", "gpt-oss-20b-MXFP4-Q4"},
		{"an empty hardware column", rocm0930, rocm0930, func(s string) string {
			return strings.Replace(s, "AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB", "", 1)
		}, map[string]int{"error:hardware": 1}, "the hardware column is empty", "gpt-oss-20b-MXFP4-Q4"},
		{"Mixtral skipped for memory though it fits the device", rocm0930, rocm0930, mixtralSkipped,
			map[string]int{"error:harness_memory": 1}, "although its 24.5 GiB of weights fit in the 96.0 GiB of device memory the host reports (85%: 81.6 GiB): a harness problem, not a missing result", "Mixtral-8x7B-Instruct-v0.1-4bit"},
		{"a failed model is reported per model", rocm0930, rocm0930, func(s string) string {
			return strings.Replace(s, "models/mlx/Qwen3-0.6B-4bit/,512,128,115.91,4417.27,459.63,278.48,", "models/mlx/Qwen3-0.6B-4bit/,,,,,,,", 1) + ""
		}, map[string]int{"error:row": 1}, "no decode_tok_s and no SKIP:/FAIL: token", "Qwen3-0.6B-4bit"},
		{"a header without hip_version", rocm0930, rocm0930, func(s string) string {
			s = strings.Replace(s, ",hip_version\n", "\n", 1)
			return strings.ReplaceAll(s, ",7.15.26333\n", "\n")
		}, map[string]int{"error:header": 1, "error:hip": 5}, "missing hip_version", ""},
		{"another day's file", rocm0930, "rocm_strixhalo-gfx1151_2026-10-01.csv", same,
			map[string]int{"warning:date": 1}, "is dated 2026-10-01, the run 2026-09-30", ""},
	} {
		f := variant(t, tc.from, tc.name, tc.edit)
		ps := Check(f, hostExpect("2026-09-30"))
		if diff := cmp.Diff(tc.want, kinds(ps)); diff != "" {
			t.Errorf("%s: problem kinds (-want +got):\n%s\n%v", tc.what, diff, ps)
			continue
		}
		found := false
		for _, p := range ps {
			if strings.Contains(p.Text, tc.text) && (tc.model == "" || p.Model == tc.model) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no problem says %q (model %q):\n%v", tc.what, tc.text, tc.model, ps)
		}
	}
}

func TestCheckStatusRowsPerModel(t *testing.T) {
	t.Parallel()
	body := strings.Join(ROCmHeader, ",") + "\n" +
		`Huge-400B-4bit,models/mlx/Huge-400B-4bit/,,,,,,,2026-10-08,AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB,0.7.0,release,128,"Hello, how are you today?",512,SKIP:oom_estimate,2fcdbe5f,81ba1c6a,75915908,7.15.26333` + "\n" +
		`Meta-Llama-3.1-8B-Instruct-4bit,models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/,,,,,,,2026-10-08,AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB,0.7.0,release,128,"Hello, how are you today?",512,FAIL:bench,2fcdbe5f,81ba1c6a,75915908,7.15.26333` + "\n" +
		`Qwen3-0.6B-4bit,models/mlx/Qwen3-0.6B-4bit/,512,128,115.91,4417.27,459.63,278.48,2026-10-08,AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB,0.7.0,release,128,"Hello, how are you today?",512,2fcdbe5f,81ba1c6a,75915908,7.15.26333` + "\n"
	p := filepath.Join(t.TempDir(), "rocm_strixhalo-gfx1151_2026-10-08.csv")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if f.Rows[0].Status != SkipOOMEstimate || f.Rows[0].OverlayCommit != "75915908" || f.Rows[1].Status != FailBench || f.Rows[2].Status != "" {
		t.Fatalf("status tokens after prompt_target_len were not taken out: %+v", f.Rows)
	}
	ps := Check(f, hostExpect("2026-10-08"))
	want := []string{
		"Huge-400B-4bit: SKIP:oom_estimate (skipped before launch: the weights are over the harness's memory budget); weights 220.0 GiB, device memory 96.0 GiB",
		"Meta-Llama-3.1-8B-Instruct-4bit: FAIL:bench (the bench exited with a failure)",
	}
	var got []string
	for _, p := range ps {
		if p.Severity != Note {
			t.Errorf("unexpected %v", p)
		}
		got = append(got, p.Text)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{"", "is empty"},
		{"model,foo\nx,1\n", "the header has no decode_tok_s, prefill_tok_s, date, hardware column"},
		{strings.Join(BaselineHeader, ",") + "\nx,p,1,2,3,4,5,6\n", "line 2: 8 fields, the header has 14"},
		{strings.Join(BaselineHeader, ",") + "\nx,p,1,2,3,4,5,fast,d,h,v,b,1,\"q\"\n", "decode_tok_s \"fast\" is not a number"},
		{strings.Join(BaselineHeader, ",") + "\nx,p,1,2,3,4,5,6,d,h,v,b,1,\"q\n", "line 2"},
		{"model,model,decode_tok_s,prefill_tok_s,date,hardware\n", "appears twice"},
	} {
		if _, err := Parse([]byte(tc.body), "pylm_x_2026-01-01.csv"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %v, want %q", tc.body, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{rocm0930, pylm0930, ssmOn} {
		b, err := os.ReadFile(realCSV(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b, "fuzz.csv")
		if err != nil {
			return
		}
		for _, r := range file.Rows {
			if r.Model == "" || r.Line < 2 || r.DecodeTokS < 0 {
				t.Fatalf("bad row %+v", r)
			}
		}
	})
}

// Format writes the real files back byte for byte: the writer of generated histories
// speaks the harnesses' format.
func TestFormatRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range []string{rocm0930, pylm0930, ssmOff, ssmOn, fused} {
		b, err := os.ReadFile(realCSV(t, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(b, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := Format(f.Header, f.Rows); string(got) != string(b) {
			t.Errorf("%s written back differs:\n%s\nwant\n%s", name, got, b)
		}
	}
	skip := Row{Model: "m", ModelPath: "models/m/", Date: "2026-10-08", Hardware: "H", Version: "0.7.0", BuildType: "release",
		MaxTokens: "128", Prompt: "Hello, how are you today?", PromptTargetLen: "512", Status: SkipOOM, MlxcelCommit: "c", MlxCommit: "m", OverlayCommit: "o", HIPVersion: "h"}
	got := string(Format(ROCmHeader, []Row{skip}))
	if want := `m,models/m/,,,,,,,2026-10-08,H,0.7.0,release,128,"Hello, how are you today?",512,SKIP:oom,c,m,o,h`; !strings.HasSuffix(got, want+"\n") {
		t.Errorf("skip row %q", got)
	}
}

// A FIFO named like a harness file is refused at once, not waited on.
func TestReadFileRefusesAFIFO(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "rocm_strixhalo-gfx1151_2026-10-08.csv")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("%v", err)
	}
}
