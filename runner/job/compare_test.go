package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/portdiff"
	"github.com/lablup/perfbot/runner/results"
)

const (
	cmpLlama = "Meta-Llama-3.1-8B-Instruct-4bit"
	cmpQwen  = "Qwen3-0.6B-4bit"
)

const compareConfig = `version: 1
models:
  llama: {dir: models/mlx/` + cmpLlama + `, model_type: llama, weights_gib: 4.2}
  qwen3: {dir: models/mlx/` + cmpQwen + `, model_type: qwen3, weights_gib: 0.3}
sampling: [greedy]
shape: {prompt: 64, generate: 16, warmup: 4}
`

// compareRepo is an mlxcel repository with the fake harness and two small model
// folders, committed as A (harnessRepo); B is A plus the planted change
// (fake-change.txt).
func compareRepo(t testing.TB, change string) (repo, shaA, shaB string) {
	t.Helper()
	repo, shaA = harnessRepo(t)
	writeTestFile(t, filepath.Join(repo, "fake-change.txt"), change)
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "B: the change")
	shaB = git(t, repo, "rev-parse", "HEAD")
	return repo, shaA, shaB
}

// harnessRepo is an mlxcel repository with the fake harness and two small model
// folders (the Qwen one not committed), in one commit.
func harnessRepo(t testing.TB) (repo, sha string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "mlxcel")
	files := map[string]string{
		"Cargo.toml": "[workspace]\n",
		// The Qwen folder is not committed: the worktrees lack it, the checkout has it.
		".gitignore":                                 "target/\nbenchmarks/\nmodels/mlx/" + cmpQwen + "/\n",
		".github/perfbot.yml":                        compareConfig,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM":      upstreamFile(t),
		"models/mlx/" + cmpLlama + "/config.json":    `{"model_type": "llama", "num_hidden_layers": 32}`,
		"models/mlx/" + cmpLlama + "/fake-bench.txt": "mlxcel 35.41 1065.78\n",
		"models/mlx/" + cmpQwen + "/config.json":     `{"model_type": "qwen3"}`,
		"models/mlx/" + cmpQwen + "/fake-bench.txt":  "mlxcel 278.48 4417.27\n",
	}
	for name, body := range files {
		writeTestFile(t, filepath.Join(repo, filepath.FromSlash(name)), body)
	}
	b, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "internal", "fakehost", "host", "harness", "bench_decode.sh"))
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(repo, "scripts", "bench_decode.sh"), string(b))
	if err := os.Chmod(filepath.Join(repo, "scripts", "bench_decode.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "A: the base")
	return repo, git(t, repo, "rev-parse", "HEAD")
}

func compareOptions(t testing.TB, fh *fakeHost, repo, shaA, shaB string, kind results.CompareKind) CompareOptions {
	return CompareOptions{
		Kind: kind, Host: fh.h, RepoDir: repo, ShaA: shaA, ShaB: shaB, Config: loadConfig(t, repo),
		OutDir: filepath.Join(fh.tmp, "out"), Guard: fh.guardOptions(), Start: 3, Cap: 5, Every: time.Nanosecond,
		Now: newStepClock(t, "2026-12-03").Now,
	}
}

// runCompare runs the compare, failing the test on an error, and reads its folder
// back as a reader of the results would.
func runCompare(t *testing.T, o CompareOptions, prog *lineHook) (CompareReport, results.Compare) {
	t.Helper()
	rep, err := Compare(context.Background(), o)
	if err != nil {
		t.Fatalf("Compare: %v\n%s", err, prog.String())
	}
	c, err := results.ReadCompareFolder(rep.Folder)
	if err != nil {
		t.Fatal(err)
	}
	return rep, c
}

// readDiff reads a profile compare's difference of one run.
func readDiff(t *testing.T, p string) portdiff.Diff {
	t.Helper()
	var d portdiff.Diff
	if err := json.Unmarshal([]byte(readFile(t, p)), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// sides is the order the runs of model ran in, as A and B.
func sides(c results.Compare, model string) string {
	var b strings.Builder
	for _, r := range c.Runs {
		if r.Model == model {
			b.WriteString(string(r.Side))
		}
	}
	return b.String()
}

// A bench compare on the fake host with a 10 % decode gain planted in B: both sides
// built before the first run, every model measured in ABBA blocks, compare.json says
// faster for decode (the change of the medians is the planted one) and no change for
// prefill, and the CSV pair holds each side's rows in the harness's columns.
func TestCompareBenchFindsThePlantedGain(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE=2026-12-03")
	repo, shaA, shaB := compareRepo(t, "# a faster decode step\ndecode 1.1\n")
	prog := &lineHook{}
	steps := &stepHook{lineHook: prog}
	o := compareOptions(t, fh, repo, shaA, shaB, results.CompareBench)
	o.Label, o.Progress = "pr-1900", steps
	rep, c := runCompare(t, o, prog)
	if c.State != results.SessionComplete || c.Kind != results.CompareBench || c.ShaA != shaA || c.ShaB != shaB || c.Label != "pr-1900" {
		t.Errorf("manifest %+v", c)
	}
	if filepath.Base(rep.Folder) != "gfx1151_"+shaA[:8]+"_"+shaB[:8] {
		t.Errorf("folder %s", rep.Folder)
	}
	for _, model := range []string{cmpLlama, cmpQwen} {
		// 3 a side decide both metrics at the first look: A B B A A B.
		if got := sides(c, model); got != "ABBAAB" {
			t.Errorf("%s ran %s, want ABBAAB", model, got)
		}
		m, ok := c.Model(model)
		if !ok || !m.Done || len(m.Results) != 2 {
			t.Fatalf("%s: %+v", model, m)
		}
		dec, pre := m.Results[0], m.Results[1]
		if dec.Metric != "decode tok/s" || dec.Verdict != abstat.Faster || math.Abs(dec.ChangePct-10) > 0.1 || dec.NA != 3 || dec.NB != 3 {
			t.Errorf("%s decode: %+v", model, dec)
		}
		if pre.Metric != "prefill tok/s" || pre.Verdict != abstat.NoChange || pre.ChangePct != 0 {
			t.Errorf("%s prefill: %+v", model, pre)
		}
	}
	if c.CSVBefore != "rocm_strixhalo-gfx1151_2026-12-03_pr-1900-before.csv" || c.CSVAfter != "rocm_strixhalo-gfx1151_2026-12-03_pr-1900-after.csv" {
		t.Errorf("CSV pair %s %s", c.CSVBefore, c.CSVAfter)
	}
	for _, f := range []struct {
		name  string
		want  float64
		short string
	}{{c.CSVBefore, 35.41, shaA[:8]}, {c.CSVAfter, 38.95, shaB[:8]}} {
		csv, err := benchcsv.ReadFile(filepath.Join(rep.Folder, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(csv.Header, benchcsv.ROCmHeader) || len(csv.Rows) != 6 {
			t.Errorf("%s: header %v, %d rows", f.name, csv.Header, len(csv.Rows))
		}
		rows := csv.RowsOf(cmpLlama)
		if len(rows) != 3 || rows[0].DecodeTokS != f.want || rows[0].MlxcelCommit != f.short || rows[0].ModelPath != "models/mlx/"+cmpLlama+"/" {
			t.Errorf("%s: llama rows %+v", f.name, rows)
		}
		// Measured from the checkout's folder, named as the config names it.
		if rows := csv.RowsOf(cmpQwen); len(rows) != 3 || rows[0].ModelPath != "models/mlx/"+cmpQwen+"/" {
			t.Errorf("%s: qwen rows %+v", f.name, rows)
		}
	}
	// Both builds ran before the first measured run.
	out := prog.String()
	built, first := strings.LastIndex(out, "built in"), strings.Index(out, "compare "+cmpLlama+" A run 1")
	if built < 0 || first < 0 || built > first {
		t.Errorf("the builds did not all finish before the first run:\n%s", out)
	}
	wantIn(t, "progress", out, "compare: 1 of 12 runs done, measuring "+cmpLlama, "compare: 12 of 12 runs done")
	// A progress file is told the runs done of those planned and the verdicts so far,
	// and last what the session ended with.
	if len(steps.steps) < 12 {
		t.Fatalf("%d steps, want one per run at least: %+v", len(steps.steps), steps.steps)
	}
	i := slices.IndexFunc(steps.steps, func(st Step) bool { return st.Phase == results.PhaseBench })
	if i < 0 {
		t.Fatalf("no bench step: %+v", steps.steps)
	}
	if st := steps.steps[i]; st.Done != 1 || st.Planned != 12 || st.Model != cmpLlama || len(st.Verdicts) != 0 {
		t.Errorf("first run's step %+v", st)
	}
	final := cmpLlama + ": decode tok/s faster, prefill tok/s no significant change"
	if st := steps.steps[len(steps.steps)-1]; st.Done != 12 || st.Planned != 12 || !slices.Equal(st.Verdicts, []string{final, cmpQwen + ": decode tok/s faster, prefill tok/s no significant change"}) {
		t.Errorf("last step %+v", st)
	}
	wantIn(t, "guard log", noLocalFolders(t, fh, rep.Folder), "== compare "+cmpQwen+" B run 3\n", "start: scripts/bench_decode.sh single models/mlx/"+cmpLlama)
	// The worktrees are gone, the checkout untouched.
	worktreesGone(t, repo, filepath.Join(o.OutDir, "compare-worktrees"))
	gitClean(t, repo)
}

// A foreign GPU process during B's first run: the guard rejects the attempt and the
// same run is redone before anything else, so the ABBA order holds and the manifest
// counts the rejection on that run.
func TestCompareRejectedRunRedoneInPlace(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	fh := newFakeHost(t, "FAKE_HARNESS_DATE=2026-12-03", "FAKE_HARNESS_GATE="+gate)
	repo, shaA, shaB := compareRepo(t, "decode 1.1\n")
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	entry := filepath.Join(fh.kfd, strconv.Itoa(holder.Process.Pid))
	o := compareOptions(t, fh, repo, shaA, shaB, results.CompareBench)
	o.Models, o.Start, o.Cap = []string{"llama"}, 3, 3
	stop := make(chan struct{})
	defer close(stop)
	// A's first run passes the gate at once; then it closes, and B's first run waits
	// on it while a tenant takes the GPU; the tenant leaves when the guard saw it.
	os.WriteFile(gate, nil, 0o644)
	o.Progress = &lineHook{on: func(line string) {
		switch {
		case strings.Contains(line, "compare: 1 of"):
			os.Remove(gate)
			os.Remove(gate + ".waiting")
			go func() {
				for !exists(gate + ".waiting") {
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
				}
				os.Mkdir(entry, 0o755)
			}()
		case strings.Contains(line, "CONTENDED") && !exists(gate):
			os.Remove(entry)
			os.WriteFile(gate, nil, 0o644)
		}
	}}
	rep, err := Compare(context.Background(), o)
	if err != nil {
		t.Fatalf("Compare: %v\n%s", err, o.Progress.(*lineHook).String())
	}
	c := rep.Compare
	if got := sides(c, cmpLlama); got != "ABBAAB" {
		t.Errorf("runs %s, want ABBAAB", got)
	}
	if c.Rejected != 1 || len(c.Runs) != 6 || c.Runs[1].Side != results.SideB || c.Runs[1].I != 0 || c.Runs[1].Rejected != 1 {
		t.Errorf("rejections: %d, runs %+v", c.Rejected, c.Runs)
	}
	for i, r := range c.Runs {
		if i != 1 && r.Rejected != 0 {
			t.Errorf("run %d counts %d rejections", i, r.Rejected)
		}
	}
	glog := readFile(t, filepath.Join(rep.Folder, results.GuardLogFile))
	wantIn(t, "guard log", glog, "== compare "+cmpLlama+" B run 1\n", "foreign_gpu=["+strconv.Itoa(holder.Process.Pid)+":sleep]")
	if n := strings.Count(glog, "== compare "+cmpLlama+" B run 1\n"); n != 2 {
		t.Errorf("B's first run has %d sections in the guard log, want 2 (the rejected attempt and the redo)", n)
	}
}

// A compare whose worst case is over the budget is refused before anything is
// built or measured, with the estimate.
func TestCompareBudgetRefusal(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t)
	repo, shaA, shaB := compareRepo(t, "decode 1.1\n")
	o := compareOptions(t, fh, repo, shaA, shaB, results.CompareBench)
	o.Cap, o.PerRun, o.Budget = 10, 2*time.Minute, 30*time.Minute
	_, err := Compare(context.Background(), o)
	if err == nil || !errors.Is(err, ErrBadRequest) ||
		!strings.Contains(err.Error(), "it could take 1h20m0s (2 models x 2 sides x up to 10 repeats = 40 runs of 2m0s), over the budget of 30m0s") {
		t.Fatalf("%v", err)
	}
	if _, err := os.Stat(o.OutDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused compare left %s: %v", o.OutDir, err)
	}
	// Bad requests are refused up front as well.
	o = compareOptions(t, fh, repo, shaA[:12], shaB, results.CompareBench)
	if _, err := Compare(context.Background(), o); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "full 40-hex-digit SHA") {
		t.Errorf("short SHA: %v", err)
	}
	o = compareOptions(t, fh, repo, shaA, shaB, results.CompareBench)
	o.Label = "../x"
	if _, err := Compare(context.Background(), o); !errors.Is(err, ErrBadRequest) {
		t.Errorf("bad label: %v", err)
	}
}

// SIGINT/SIGTERM after a few runs: the session stops between runs and compare.json
// is a valid partial compare, marked interrupted, with every run measured so far.
func TestCompareCancelledKeepsAPartialCompare(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE=2026-12-03")
	repo, shaA, shaB := compareRepo(t, "decode 1.1\n")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	o := compareOptions(t, fh, repo, shaA, shaB, results.CompareBench)
	o.Progress = &lineHook{on: func(line string) {
		if strings.Contains(line, "compare: 3 of") {
			cancel(fmt.Errorf("caught SIGTERM"))
		}
	}}
	rep, err := Compare(ctx, o)
	if err == nil || !errors.Is(err, errInterrupted) {
		t.Fatalf("err %v", err)
	}
	c, rerr := results.ReadCompareFolder(rep.Folder)
	if rerr != nil {
		t.Fatalf("the partial compare does not read back: %v", rerr)
	}
	if c.State != results.SessionInterrupted || c.Error == "" || len(c.Runs) != 3 || sides(c, cmpLlama) != "ABB" {
		t.Errorf("partial compare: state %s, error %q, runs %+v", c.State, c.Error, c.Runs)
	}
	if m, _ := c.Model(cmpLlama); m.Done || m.NA != 1 || m.NB != 2 {
		t.Errorf("llama %+v", m)
	}
	// The CSV pair holds what was measured.
	before, err := benchcsv.ReadFile(filepath.Join(rep.Folder, c.CSVBefore))
	if err != nil || len(before.Rows) != 1 {
		t.Errorf("before: %v %+v", err, before)
	}
	worktreesGone(t, repo, "")
}

// A profile compare with B's planted kernel change: each side's profile in a/ and b/,
// and the difference of the two decode profiles finds exactly the planted kernels:
// the attention kernel at about half its time, the removed rope kernel vanished, the
// new fused kernel appeared; the tok/s change is in compare.json.
func TestCompareProfileFindsThePlantedKernels(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t)
	repo, shaA, shaB := compareRepo(t, "faster kernel_sdpav_1pass 2\nremoved rope_single_freqs_1d\nadded mlx_fused_rope_append_kernel rope 1200\n")
	o := compareOptions(t, fh, repo, shaA, shaB, results.CompareProfile)
	o.Models = []string{"llama"}
	prog := &lineHook{}
	o.Progress = prog
	rep, c := runCompare(t, o, prog)
	run := cmpLlama + "_greedy"
	if c.State != results.SessionComplete || c.DirA != "a" || c.DirB != "b" || len(c.Diffs) != 1 || c.Diffs[0].Model != run {
		t.Fatalf("manifest %+v", c)
	}
	for _, side := range []struct{ dir, sha string }{{"a", shaA}, {"b", shaB}} {
		s, err := results.ReadSession(filepath.Join(rep.Folder, side.dir, results.SessionFile))
		if err != nil || s.Commit != side.sha || s.State != results.SessionComplete {
			t.Errorf("%s/: %v %+v", side.dir, err, s)
		}
	}
	m, _ := c.Model(run)
	if !m.Done || len(m.Results) != 1 || m.Results[0].ChangePct <= 0 || m.Results[0].Verdict != abstat.TooFew {
		t.Errorf("%s: %+v", run, m)
	}
	if sides(c, run) != "AB" {
		t.Errorf("runs %+v", c.Runs)
	}
	d := readDiff(t, filepath.Join(rep.Folder, c.Diffs[0].JSON))
	names := func(ks []portdiff.KernelDiff) (out []string) {
		for _, k := range ks {
			out = append(out, k.Kernel)
		}
		return
	}
	if a := names(d.Appeared); len(a) != 1 || a[0] != "mlx_fused_rope_append_kernel" {
		t.Errorf("appeared %v, want the fused kernel alone", a)
	}
	if v := names(d.Vanished); len(v) == 0 || slices.ContainsFunc(v, func(n string) bool { return !strings.Contains(n, "rope_single_freqs_1d") }) {
		t.Errorf("vanished %v, want the rope kernels alone", v)
	}
	for _, k := range d.Kernels {
		r := k.MsPerToken.B / k.MsPerToken.A
		if strings.Contains(k.Kernel, "kernel_sdpav_1pass") {
			if r < 0.4 || r > 0.6 {
				t.Errorf("%s: %.3f of its time, want about half", k.Kernel, r)
			}
		} else if r < 0.8 || r > 1.25 {
			t.Errorf("%s changed to %.3f of its time; only the planted kernels should", portdiff.Short(k.Kernel), r)
		}
	}
	if d.DecodeTokS.B <= d.DecodeTokS.A {
		t.Errorf("profiled decode tok/s %v -> %v: B is faster", d.DecodeTokS.A, d.DecodeTokS.B)
	}
	md := readFile(t, filepath.Join(rep.Folder, c.Diffs[0].Markdown))
	wantIn(t, "diff page", md, "mlx_fused_rope_append_kernel")
}
