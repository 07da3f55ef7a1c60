package job

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/results"
)

// benchModel is a model of the 2026-09-30 baseline: its folder, weights and both
// runtimes' numbers, as the fake harnesses read them from fake-bench.txt.
type benchModel struct {
	name                  string
	bytes                 int64
	mlxcel, mlxcelPrefill float64
	mlxlm, mlxlmPrefill   float64
}

var benchModels = []benchModel{
	{"Meta-Llama-3.1-8B-Instruct-4bit", 4_530_000_000, 35.41, 1065.78, 32.81, 966.84},
	// 26.9 GiB: over 85% of the 31 GiB the host sees, well under the 96 GiB of the GPU.
	{"Mixtral-8x7B-Instruct-v0.1-4bit", 28_880_000_000, 7.65, 25.85, 9.98, 26.43},
	{"Qwen3-0.6B-4bit", 350_000_000, 278.48, 4417.27, 220.13, 4316.74},
	{"Qwen3-30B-A3B-4bit", 17_190_000_000, 61.82, 275.65, 58.65, 280.40},
	{"gpt-oss-20b-MXFP4-Q4", 11_210_000_000, 8.07, 7.69, 8.07, 7.77},
}

const benchConfig = `version: 1
models:
  llama: {dir: models/mlx/Meta-Llama-3.1-8B-Instruct-4bit, model_type: llama, weights_gib: 4.2}
  mixtral: {dir: models/mlx/Mixtral-8x7B-Instruct-v0.1-4bit, model_type: mixtral, weights_gib: 26.9}
  qwen3: {dir: models/mlx/Qwen3-30B-A3B-4bit, model_type: qwen3_moe, weights_gib: 16.0}
`

// benchRepo is an mlxcel checkout with the fake harnesses as scripts/, five model
// folders (sparse weights of the real sizes) and, in benchmarks/, nights of history
// before date (none when nights is 0), committed with real git.
func benchRepo(t testing.TB, date string, nights int) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "mlxcel")
	upstream := upstreamFile(t)
	files := map[string]string{
		"Cargo.toml":                            "[workspace]\n",
		".gitignore":                            "target/\nmodels/\n",
		".github/perfbot.yml":                   benchConfig,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM": upstream,
	}
	for _, m := range benchModels {
		dir := "models/mlx/" + m.name + "/"
		files[dir+"config.json"] = `{"model_type": "x"}`
		files[dir+"fake-bench.txt"] = fmt.Sprintf("mlxcel %.2f %.2f\nmlx-lm %.2f %.2f\n", m.mlxcel, m.mlxcelPrefill, m.mlxlm, m.mlxlmPrefill)
	}
	for name, body := range files {
		writeTestFile(t, filepath.Join(repo, filepath.FromSlash(name)), body)
	}
	for _, m := range benchModels {
		f, err := os.Create(filepath.Join(repo, "models", "mlx", m.name, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(m.bytes); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	harness := filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "harness")
	for _, s := range []string{"bench_decode.sh", "bench_mlxlm.py"} {
		b, err := os.ReadFile(filepath.Join(harness, s))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(repo, "scripts", s)
		writeTestFile(t, p, string(b))
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeHistory(t, filepath.Join(repo, "benchmarks"), date, nights)
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "mlxcel with its harness")
	return repo
}

func writeTestFile(t testing.TB, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeHistory writes nights of nightly mlxcel CSVs before date, at the models' levels
// with 1.2% noise (fixed seed), in the format the fake harness writes.
func writeHistory(t testing.TB, dir, date string, nights int) {
	t.Helper()
	writeNights(t, dir, date, nights, benchModels, "0badc0de")
}

// writeNights writes nights of nightly mlxcel CSVs of models before date, each row
// naming commit as the night's mlxcel commit.
func writeNights(t testing.TB, dir, date string, nights int, models []benchModel, commit string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(42, 42))
	for k := nights; k >= 1; k-- {
		d := day.AddDate(0, 0, -k).Format(time.DateOnly)
		var rows []benchcsv.Row
		for _, m := range models {
			v := math.Round(m.mlxcel*(1+0.012*rng.NormFloat64())*100) / 100
			rows = append(rows, benchcsv.Row{Model: m.name, ModelPath: "models/mlx/" + m.name + "/", PromptTokens: 512, GeneratedTokens: 128,
				PrefillMs: 100, PrefillTokS: m.mlxcelPrefill, DecodeMs: 1000, DecodeTokS: v, HasPrefill: true, HasDecode: true,
				Date: d, Hardware: "AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB", Version: "0.7.0", BuildType: "release",
				MaxTokens: "128", Prompt: "Hello, how are you today?", PromptTargetLen: "512", MlxcelCommit: commit,
				MlxCommit: "81ba1c6a", OverlayCommit: "75915908", HIPVersion: "7.15.26333"})
		}
		name := benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: d}
		if err := os.WriteFile(filepath.Join(dir, name.String()), benchcsv.Format(benchcsv.ROCmHeader, rows), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// stepClock is a clock for the job that moves a minute each time it is read, from
// 02:00 of date: model times and ETAs come out the same every run.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func newStepClock(t testing.TB, date string) *stepClock {
	d, err := time.ParseInLocation(time.DateOnly+" 15:04", date+" 02:00", time.Local)
	if err != nil {
		t.Fatal(err)
	}
	return &stepClock{t: d}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Minute)
	return c.t
}

func benchOptions(t testing.TB, fh *fakeHost, repo, date string) BenchOptions {
	return BenchOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), OutDir: filepath.Join(fh.tmp, "out-"+date),
		Guard: fh.guardOptions(), Now: newStepClock(t, date).Now,
	}
}

func gitClean(t testing.TB, repo string) {
	t.Helper()
	if st := git(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("the run left the checkout changed:\n%s", st)
	}
}

// A nightly on the fake host: both sweeps under the guard, the CSVs collected out of
// the checkout and checked clean, the comparison with ten nights of history (judged by
// its segments), and a 10% Llama drop re-measured once (the history's commits are not
// in the checkout: no A/B) and confirmed; the progress gives model i of n and, the
// next night, an ETA from this night's model times.
func TestBenchNightlyConfirmsARegression(t *testing.T) {
	t.Parallel()
	const date = "2026-10-20"
	fh := newFakeHost(t, "FAKE_HARNESS_DATE="+date,
		"FAKE_HARNESS_SCALE=Meta-Llama-3.1-8B-Instruct-4bit=0.9", "FAKE_HARNESS_SINGLE_SCALE=Meta-Llama-3.1-8B-Instruct-4bit=0.9")
	repo := benchRepo(t, date, 10)
	rep, prog := runBench(t, benchOptions(t, fh, repo, date))
	m := rep.Manifest
	stem := "rocm_strixhalo-gfx1151_" + date
	if m.State != "complete" || m.Stem != stem || m.Build.Status != "ok" || m.ModelsDir != "models/mlx" {
		t.Errorf("manifest %+v", m)
	}
	wantCSVs := []string{stem + ".csv", "pylm_strixhalo-gfx1151_" + date + ".csv", stem + "_single_Meta-Llama-3.1-8B-Instruct-4bit.csv"}
	if !slices.Equal(m.CSVs, wantCSVs) {
		t.Errorf("CSVs %v, want %v", m.CSVs, wantCSVs)
	}
	for _, name := range append(wantCSVs, stem+results.GuardLogSuffix, stem+results.NightlySuffix) {
		if _, err := os.Stat(filepath.Join(rep.Folder, name)); err != nil {
			t.Error(err)
		}
	}
	gitClean(t, repo)
	if probs := rep.HarnessProblems(); len(probs) != 0 || len(m.Problems) != 0 {
		t.Errorf("problems on a clean run: %v", m.Problems)
	}
	for _, s := range m.Sweeps {
		if s.Status != "ok" || len(s.Models) != 5 || s.Phase == nil || s.Phase.Verdict != "clean" {
			t.Errorf("sweep %+v", s)
		}
	}
	c := m.Comparison
	if c == nil || c.Baseline != "rocm_strixhalo-gfx1151_2026-10-19.csv" {
		t.Fatalf("comparison %+v", c)
	}
	for _, r := range c.Models {
		want := baseline.NoChange
		if r.Model == "Meta-Llama-3.1-8B-Instruct-4bit" {
			want = baseline.Regression
		}
		if r.Verdict != want || r.History != 10 {
			t.Errorf("%s: %s (%d runs), want %s: %s", r.Model, r.Verdict, r.History, want, r.Text)
		}
	}
	if len(m.Remeasures) != 1 || m.Remeasures[0].Verdict != baseline.Regression || m.Remeasures[0].Decode != 31.87 || m.Remeasures[0].Since != date {
		t.Errorf("re-measures %+v", m.Remeasures)
	}
	glog := readFile(t, filepath.Join(rep.Folder, stem+results.GuardLogSuffix))
	wantIn(t, "guard log", glog, "== nightly mlxcel\n", "== nightly mlx-lm\n", "== remeasure Meta-Llama-3.1-8B-Instruct-4bit\n",
		"attempt 1/2: start: scripts/bench_decode.sh all --cooldown 30 --big-cooldown 30", "attempt 1/2: start: scripts/bench_decode.sh single models/mlx/Meta-Llama-3.1-8B-Instruct-4bit")
	if strings.Contains(glog, fh.tmp) {
		t.Errorf("the guard log names local folders:\n%s", glog)
	}
	wantIn(t, "progress", prog.String(),
		"[mlxcel 1/5] Meta-Llama-3.1-8B-Instruct-4bit: started, ",
		"ETA unknown: no model times from an earlier night",
		"[mlxcel 1/5] Meta-Llama-3.1-8B-Instruct-4bit: 31.87 tok/s",
		"[mlxcel 5/5] gpt-oss-20b-MXFP4-Q4: started",
		"[mlx-lm 3/5] Qwen3-0.6B-4bit: started",
		"Meta-Llama-3.1-8B-Instruct-4bit: suspected regression: by its segments: the last 1 night(s) from 2026-10-20 are -10.",
		"Meta-Llama-3.1-8B-Instruct-4bit: off its current segment since 2026-10-20 (-10.",
		"; re-measuring once: scripts/bench_decode.sh single models/mlx/Meta-Llama-3.1-8B-Instruct-4bit",
		"re-measured at 31.87 tok/s (-10.",
		"% against the current segment): regression",
	)

	// The next night, with tonight's files merged into the history: an ETA from
	// tonight's model times, and Llama still at its new level is not suspected again:
	// tonight's manifest confirmed the change, so the history is cut there and two
	// nights at the new level are no tail against it (uncut, they would be).
	const next = "2026-10-21"
	for _, name := range []string{stem + ".csv", stem + results.NightlySuffix} {
		b, err := os.ReadFile(filepath.Join(rep.Folder, name))
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(repo, "benchmarks", name), string(b))
	}
	fh2 := newFakeHost(t, "FAKE_HARNESS_DATE="+next, "FAKE_HARNESS_SCALE=Meta-Llama-3.1-8B-Instruct-4bit=0.9")
	o2 := benchOptions(t, fh2, repo, next)
	o2.SkipBuild, o2.NoBaseline = true, true
	prog2 := &lineHook{}
	o2.Progress = prog2
	rep2, err := Bench(context.Background(), o2)
	if err != nil {
		t.Fatalf("the next night: %v\n%s", err, prog2.String())
	}
	if r := modelResult(rep2.Manifest.Comparison, "Meta-Llama-3.1-8B-Instruct-4bit"); r == nil || r.Verdict != baseline.NoChange ||
		!strings.Contains(r.Text, "the current segment has 2 night(s) from "+date) || len(rep2.Manifest.Remeasures) != 0 {
		t.Errorf("the night after a confirmed step: %+v, re-measures %+v", r, rep2.Manifest.Remeasures)
	}
	if out := prog2.String(); !strings.Contains(out, "ETA from the durations of "+stem) ||
		!regexp.MustCompile(`\[mlxcel 2/5\] Mixtral-8x7B-Instruct-v0.1-4bit: started, \S+ into the sweep; ETA \d\d:\d\d:\d\d \(about \S+ left by last night's model times\)`).MatchString(out) {
		t.Errorf("no ETA from last night:\n%s", out)
	}
}

// The harness from before it knew ROCm, on the ROCm host: the metal_ file is an error
// that says so, Mixtral skipped for host memory is a harness problem, and the mlx-lm
// file without the GPU in its name is one too.
func TestBenchFlagsAPreROCmHarness(t *testing.T) {
	t.Parallel()
	const date = "2026-10-20"
	fh := newFakeHost(t, "FAKE_HARNESS_DATE="+date, "FAKE_HARNESS=pre-rocm")
	repo := benchRepo(t, date, 0)
	rep, err := Bench(context.Background(), benchOptions(t, fh, repo, date))
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Manifest
	if !slices.Equal(m.CSVs, []string{"metal_amd_ryzen_ai_max+_39_" + date + ".csv", "pylm_unknown_" + date + ".csv"}) {
		t.Fatalf("CSVs %v", m.CSVs)
	}
	kinds := map[string][]string{}
	for _, p := range rep.HarnessProblems() {
		kinds[p.Kind] = append(kinds[p.Kind], p.Text)
	}
	if len(kinds["mislabelled"]) != 2 || !strings.Contains(kinds["mislabelled"][0], "is mislabelled: it was written on a ROCM host (gfx1151) but named metal_...") ||
		!strings.Contains(kinds["mislabelled"][0], "the file should be rocm_strixhalo-gfx1151_"+date+".csv") {
		t.Errorf("mislabelled: %q", kinds["mislabelled"])
	}
	if len(kinds["harness_memory"]) != 1 || !strings.Contains(kinds["harness_memory"][0], "Mixtral-8x7B-Instruct-v0.1-4bit was skipped for memory (SKIP:oom_estimate) although its 26.9 GiB of weights fit in the 96.0 GiB of device memory") ||
		!strings.Contains(kinds["harness_memory"][0], "budgeted against host memory") {
		t.Errorf("harness memory: %q", kinds["harness_memory"])
	}
	// Its header and rows lack the ROCm columns, and it describes the CPU.
	if len(kinds["overlay"]) != 5 || len(kinds["hip"]) != 5 || len(kinds["header"]) != 1 || len(kinds["hardware"]) != 2 {
		t.Errorf("other problems: %v", kinds)
	}
	if m.Comparison != nil {
		t.Errorf("a mislabelled file was compared: %+v", m.Comparison)
	}
}

// A foreign GPU process during the mlx-lm sweep, after its first row is written: the
// attempt is rejected, its CSV removed before the rerun (bench_mlxlm.py would resume
// from it), and the rerun's file has every model once, measured in the clean attempt.
func TestBenchContendedSweepStartsOver(t *testing.T) {
	t.Parallel()
	const date = "2026-10-20"
	fh, repo, gate := gatedBench(t, date, "FAKE_MLXLM_GATE")
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	entry := filepath.Join(fh.kfd, strconv.Itoa(holder.Process.Pid))
	o := benchOptions(t, fh, repo, date)
	o.SkipBuild = true
	git(t, repo, "status") // the checkout is clean before
	if err := os.MkdirAll(filepath.Join(repo, "target", "release"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"mlxcel", "mlxcel-bench-decode"} {
		writeTestFile(t, filepath.Join(repo, "target", "release", b), "#!/bin/sh\n")
		os.Chmod(filepath.Join(repo, "target", "release", b), 0o755)
	}
	o.Progress = &lineHook{on: func(line string) {
		switch {
		case strings.Contains(line, "[mlx-lm 1/5] Meta-Llama-3.1-8B-Instruct-4bit: 32.81 tok/s") && !exists(gate):
			// The first row is written; a foreign process takes the GPU.
			os.Mkdir(entry, 0o755)
		case strings.Contains(line, "nightly mlx-lm: sample") && strings.Contains(line, "CONTENDED"):
			os.Remove(entry)
			os.WriteFile(gate, nil, 0o644)
		}
	}}
	rep, err := Bench(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sw, _ := rep.Manifest.Sweep(results.SweepMlxLM)
	if sw.Status != "ok" || sw.Phase.Attempts != 2 || sw.Phase.Verdict != "clean" {
		t.Fatalf("mlx-lm sweep %+v", sw)
	}
	f, err := benchcsv.ReadFile(filepath.Join(rep.Folder, sw.CSV()))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Rows) != 5 || len(f.Models()) != 5 {
		t.Errorf("the rerun's CSV has %d rows of %d models", len(f.Rows), len(f.Models()))
	}
	if raw := readFile(t, filepath.Join(fh.tmp, "out-"+date, "logs", "mlx-lm.log")); strings.Contains(raw, "Resume:") {
		t.Errorf("the rerun resumed from the rejected attempt's rows:\n%s", raw)
	}
	if len(rep.Manifest.Tenants) != 1 || !strings.Contains(rep.Manifest.Tenants[0], "mlx-lm sweep, attempt 1 rejected: foreign_gpu=["+strconv.Itoa(holder.Process.Pid)+":sleep]") {
		t.Errorf("tenants %v", rep.Manifest.Tenants)
	}
	gitClean(t, repo)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A CSV of today already in the checkout stops the run before anything starts.
func TestBenchRefusesTodaysCSVInTheCheckout(t *testing.T) {
	t.Parallel()
	const date = "2026-10-20"
	fh := newFakeHost(t)
	repo := benchRepo(t, date, 0)
	writeTestFile(t, filepath.Join(repo, "benchmarks", "pylm_strixhalo-gfx1151_"+date+".csv"), "model\n")
	_, err := Bench(context.Background(), benchOptions(t, fh, repo, date))
	if err == nil || !strings.Contains(err.Error(), "benchmarks/pylm_strixhalo-gfx1151_2026-10-20.csv (dated today) is already in the checkout") {
		t.Errorf("%v", err)
	}
	o := benchOptions(t, fh, repo, date)
	o.ModelsDir = "/abs/models"
	if _, err := Bench(context.Background(), o); err == nil || !strings.Contains(err.Error(), "must be relative to the checkout") {
		t.Errorf("%v", err)
	}
}

// SIGINT/SIGTERM during a sweep stops the harness at once (its whole process group),
// leaves no CSV of the stopped attempt in the checkout, and writes the manifest as
// interrupted.
func TestBenchInterruptedSweep(t *testing.T) {
	t.Parallel()
	const date = "2026-10-20"
	fh, repo, _ := gatedBench(t, date, "FAKE_HARNESS_GATE") // a gate that never opens
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	o := benchOptions(t, fh, repo, date)
	o.Progress = &lineHook{on: func(line string) {
		if strings.Contains(line, "[mlxcel 1/5] Meta-Llama-3.1-8B-Instruct-4bit: started") {
			// The harness now waits on a gate that never opens; a signal arrives.
			cancel(fmt.Errorf("caught %s", "SIGTERM"))
		}
	}}
	done := make(chan struct{})
	var rep BenchReport
	var err error
	go func() {
		rep, err = Bench(ctx, o)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Bench did not stop within a minute of the interrupt")
	}
	if err == nil || !strings.Contains(err.Error(), "interrupted during the mlxcel sweep") {
		t.Fatalf("err %v", err)
	}
	m := rep.Manifest
	if m.State != "interrupted" || len(m.Sweeps) != 1 || m.Sweeps[0].Status != results.SweepInterrupted || len(m.CSVs) != 0 {
		t.Errorf("manifest %+v", m)
	}
	if _, err := os.Stat(filepath.Join(rep.Folder, m.Stem+results.NightlySuffix)); err != nil {
		t.Error(err)
	}
	gitClean(t, repo)
}

// gatedBench is a fake host whose harness waits, at the step gateVar names, for the
// file gate to exist, and a checkout without history.
func gatedBench(t *testing.T, date, gateVar string) (fh *fakeHost, repo, gate string) {
	t.Helper()
	gate = filepath.Join(t.TempDir(), "gate")
	return newFakeHost(t, "FAKE_HARNESS_DATE="+date, gateVar+"="+gate), benchRepo(t, date, 0), gate
}
