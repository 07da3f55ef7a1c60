package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
)

var (
	glogLineRE = regexp.MustCompile(`(?m)^[IWEF]\d{8} \d{2}:\d{2}:\d{2}\.\d+ `)
	allRuns    = []string{
		"Meta-Llama-3.1-8B-Instruct-4bit_greedy", "Meta-Llama-3.1-8B-Instruct-4bit_t0.7-p0.95",
		"Qwen3-30B-A3B-4bit_greedy", "Qwen3-30B-A3B-4bit_t0.7-p0.95",
	}
)

func sampling(t *testing.T, tags ...string) []results.Sampling {
	t.Helper()
	var out []results.Sampling
	for _, tag := range tags {
		s, err := results.ParseSampling(tag)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// The whole session on the fake host: 2 models x 2 sampling settings, built, run plain
// and profiled under the guard, analyzed; the results folder is exactly docs/formats.md §3
// plus perfbot's session files, and the ranking reads it.
func TestProfileEndToEnd(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t)
	repo := fakeRepo(t)
	commit := git(t, repo, "rev-parse", "HEAD")
	out, traces := filepath.Join(fh.tmp, "out"), filepath.Join(fh.tmp, "traces")
	var prog lineHook
	rep, err := Profile(context.Background(), ProfileOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), OutDir: out, TraceDir: traces,
		Guard: fh.guardOptions(), Progress: &prog,
	})
	if err != nil {
		t.Fatalf("Profile: %v\nprogress:\n%s", err, prog.String())
	}
	if f := rep.Failed(); len(f) > 0 {
		t.Fatalf("failed runs: %+v\nprogress:\n%s", f, prog.String())
	}
	folder := filepath.Join(out, "benchmarks", "rocm_profiles", "gfx1151_"+commit[:8])
	if rep.Folder != folder {
		t.Fatalf("folder %s, want %s", rep.Folder, folder)
	}

	// The layout, exactly.
	var want []string
	for _, run := range allRuns {
		for _, suffix := range []string{"_bench.log", "_decode_kernels.csv", "_kernel_stats.csv", "_plain_bench.log", "_summary.json"} {
			want = append(want, run+suffix)
		}
	}
	want = append(want, "guard.log", "guard.log.jsonl", "hostinfo.json", "session.json")
	sort.Strings(want)
	var got []string
	ents, err := os.ReadDir(folder)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("results folder holds\n  %v\nwant\n  %v", got, want)
	}

	// Summaries parse and rank; the stats are rocprofv3's, byte for byte; the traces
	// stay in the traces folder.
	var sums []*results.Summary
	for _, run := range allRuns {
		s, err := results.ReadSummary(filepath.Join(folder, run+"_summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != run || s.DecodeDispatches == 0 || s.GeneratedTokens != 16 || s.PlainDecodeTokS == nil {
			t.Errorf("%s summary: name %q, %d decode dispatches, %d tokens, plain tok/s %v",
				run, s.Name, s.DecodeDispatches, s.GeneratedTokens, s.PlainDecodeTokS)
		}
		sums = append(sums, s)
		stats := readFile(t, filepath.Join(traces, run, run+"_kernel_stats.csv"))
		if copied := readFile(t, filepath.Join(folder, run+"_kernel_stats.csv")); copied != stats {
			t.Errorf("%s_kernel_stats.csv is not the profiler's file", run)
		}
		if _, err := os.Stat(filepath.Join(traces, run, run+"_kernel_trace.csv")); err != nil {
			t.Errorf("trace of %s not in the traces folder: %v", run, err)
		}
	}
	rk, err := rank.Rank(sums, attrib.Default())
	if err != nil {
		t.Fatalf("ranking the runs: %v", err)
	}
	if len(rk.Units) == 0 || !strings.Contains(rk.Markdown(), "Qwen3-30B-A3B-4bit") {
		t.Errorf("ranking has %d units:\n%s", len(rk.Units), rk.Markdown())
	}

	// Logs: the profiled one has the phase marks, the plain one none; neither has guard
	// lines, profiler glog lines or the runner's folders.
	for _, run := range allRuns {
		for _, name := range []string{run + "_bench.log", run + "_plain_bench.log"} {
			lg := readFile(t, filepath.Join(folder, name))
			if strings.Contains(lg, guard.EchoPrefix) || glogLineRE.MatchString(lg) || strings.Contains(lg, fh.tmp) ||
				strings.Contains(lg, "/tmp/") {
				t.Errorf("%s is not clean:\n%s", name, lg)
			}
			if !strings.Contains(lg, "[Load] model dir: <...>/"+qwenDir) && !strings.Contains(lg, "[Load] model dir: <...>/"+llamaDir) {
				t.Errorf("%s lost the bench's own lines:\n%s", name, lg)
			}
			hasMarks := strings.Contains(lg, "[phase] decode_start")
			if profiled := !strings.Contains(name, "_plain_"); hasMarks != profiled {
				t.Errorf("%s: phase marks %v, want %v", name, hasMarks, profiled)
			}
		}
		raw := readFile(t, filepath.Join(traces, run, run+"_bench.raw.log"))
		if !strings.Contains(raw, guard.EchoPrefix) || !strings.Contains(raw, "Opened result file:") {
			t.Errorf("%s raw log lacks the guard's or the profiler's lines:\n%s", run, raw)
		}
	}

	// The guard log: one section per phase, parsed by the guard's own reader, commands
	// with the profiler flags the fake's help lists, no local folders.
	gl := readFile(t, filepath.Join(folder, "guard.log"))
	evs, err := guard.ParseLog(strings.NewReader(gl))
	if err != nil {
		t.Fatalf("guard.log: %v\n%s", err, gl)
	}
	var sections, starts []string
	for _, e := range evs {
		switch e.Kind {
		case guard.EvSection:
			sections = append(sections, e.Run+" "+e.Phase)
		case guard.EvAttemptStart:
			starts = append(starts, e.Command)
		}
	}
	var wantSections []string
	for _, run := range allRuns {
		wantSections = append(wantSections, run+" plain", run+" profiled")
	}
	if !slices.Equal(sections, wantSections) {
		t.Errorf("guard.log sections %v, want %v", sections, wantSections)
	}
	if len(starts) != 8 || !strings.HasPrefix(starts[1], "rocprofv3 --kernel-trace --hip-graph-trace --stats --output-format csv -d <trace-dir>/"+allRuns[0]+" -o "+allRuns[0]+" -- target/release/mlxcel-bench-decode -m "+llamaDir+" -p profile -n 16 --warmup-tokens 4 --ignore-eos --prompt-tokens 64 --temperature 0 --top-p 1.0") {
		t.Errorf("attempt commands:\n%s", strings.Join(starts, "\n"))
	}
	jl := readFile(t, filepath.Join(folder, "guard.log.jsonl"))
	for _, text := range []string{gl, jl} {
		if strings.Contains(text, fh.tmp) {
			t.Errorf("guard evidence names a local folder:\n%s", text)
		}
	}
	if n := strings.Count(jl, "\n"); n != 8 {
		t.Errorf("guard.log.jsonl has %d attempt records, want 8", n)
	}

	// The manifest and the host facts.
	var sess results.Session
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(folder, "session.json"))), &sess); err != nil {
		t.Fatal(err)
	}
	if sess.Commit != commit || sess.State != "complete" || sess.Build.Status != "ok" || len(sess.Runs) != 4 ||
		!slices.Equal(sess.Models, []string{"llama", "qwen3"}) || !slices.Equal(sess.Sampling, []string{"greedy", "t0.7-p0.95"}) ||
		sess.OverlayCommit != "75915908dfe5028335d318b10340313744fd3a8d" || sess.Finished.IsZero() {
		t.Errorf("session: %+v", sess)
	}
	for i, r := range sess.Runs {
		if r.Name != allRuns[i] || r.Status != results.StatusOK || r.Plain == nil || r.Profiled == nil || len(r.Files) != 5 ||
			r.Traces != r.Name || !slices.Contains(r.ProfilerFiles, r.Name+"_kernel_trace.csv") {
			t.Errorf("run %d: %+v", i, r)
		}
	}
	var info hostinfo.Info
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(folder, "hostinfo.json"))), &info); err != nil {
		t.Fatal(err)
	}
	if info.GFX.Value != "gfx1151" || info.ROCm.Value != "10.0.0" || info.MlxcelCommit.Value != commit {
		t.Errorf("hostinfo: %+v", info)
	}

	// Progress says which run, which attempt, and the waits.
	wantIn(t, "progress", prog.String(),
		"[1/4] Meta-Llama-3.1-8B-Instruct-4bit_greedy plain: waiting for 0s of idle GPU",
		"[4/4] Qwen3-30B-A3B-4bit_t0.7-p0.95 profiled: attempt 1/2 started",
		"building the bench: cargo build --release --features rocm --bin mlxcel-bench-decode",
	)
}

// A release before -f and --hip-graph-trace: the profile asks only for what its help
// lists (the fake refuses the rest, as argparse does) and still gets csv files.
func TestProfileOldRocprofv3(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKEHOST_ROCPROFV3_HELP=old")
	repo := fakeRepo(t)
	out := filepath.Join(fh.tmp, "out")
	rep, err := Profile(context.Background(), ProfileOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), Models: []string{"llama"},
		Sampling: sampling(t, "greedy"), OutDir: out, TraceDir: filepath.Join(fh.tmp, "traces"), Guard: fh.guardOptions(),
	})
	if err != nil || len(rep.Failed()) > 0 {
		t.Fatalf("Profile: %v, failed %+v", err, rep.Failed())
	}
	if want := []string{"--kernel-trace", "--stats", "--output-format", "csv"}; !slices.Equal(rep.Session.Profiler, want) {
		t.Errorf("profiler flags %v, want %v", rep.Session.Profiler, want)
	}
	if _, err := os.Stat(filepath.Join(rep.Folder, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_summary.json")); err != nil {
		t.Error(err)
	}
}

// A foreign GPU process that never leaves makes the guard give up on one run; the
// other runs still go; a bench that dies of SIGSEGV keeps its log and the reason; the
// session still writes everything and says which runs failed.
func TestProfileGiveUpAndCrash(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_BENCH_CRASH=Qwen3-30B-A3B-4bit_t0.7-p0.95:profiled")
	repo := fakeRepo(t)
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	holderEntry := filepath.Join(fh.kfd, strconv.Itoa(holder.Process.Pid))
	if err := os.Mkdir(holderEntry, 0o755); err != nil {
		t.Fatal(err)
	}
	g := fh.guardOptions()
	g.MaxWait = 400 * time.Millisecond
	prog := &lineHook{on: func(line string) {
		// The foreign process leaves once the guard gave up on the first run.
		if strings.Contains(line, "[1/4]") && strings.Contains(line, "gave up") {
			os.Remove(holderEntry)
		}
	}}
	out, traces := filepath.Join(fh.tmp, "out"), filepath.Join(fh.tmp, "traces")
	rep, err := Profile(context.Background(), ProfileOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), OutDir: out, TraceDir: traces, Guard: g, Progress: prog,
	})
	if err != nil {
		t.Fatalf("Profile: %v\n%s", err, prog.String())
	}
	status := map[string]results.RunRecord{}
	for _, r := range rep.Session.Runs {
		status[r.Name] = r
	}
	gaveUp, crashed := status[allRuns[0]], status[allRuns[3]]
	if gaveUp.Status != results.StatusGuardGaveUp || !strings.Contains(gaveUp.Reason, "gave up") ||
		!strings.Contains(gaveUp.Reason, strconv.Itoa(holder.Process.Pid)+":sleep") || gaveUp.Profiled != nil {
		t.Errorf("the run the guard gave up on: %+v", gaveUp)
	}
	if crashed.Status != results.StatusBenchCrashed || !strings.Contains(crashed.Reason, "status 139 (SIGSEGV)") ||
		!strings.Contains(crashed.Reason, "HIP kernel launch failed") || !strings.Contains(crashed.Reason, "profiled run") {
		t.Errorf("the crashed run: %+v", crashed)
	}
	for _, run := range allRuns[1:3] {
		if status[run].Status != results.StatusOK {
			t.Errorf("%s: %+v", run, status[run])
		}
	}
	if got := len(rep.Failed()); got != 2 || rep.OnlyGuardGaveUp() {
		t.Errorf("%d failed runs (only give-ups: %v), want 2 of two kinds", got, rep.OnlyGuardGaveUp())
	}
	// The crashed run keeps both logs (the profiled one cut short), no summary.
	crashLog := readFile(t, filepath.Join(rep.Folder, allRuns[3]+"_bench.log"))
	if !strings.Contains(crashLog, "[phase] warmup_start") || strings.Contains(crashLog, "[Profile Results]") {
		t.Errorf("crashed run's log:\n%s", crashLog)
	}
	for _, name := range []string{allRuns[3] + "_plain_bench.log"} {
		if _, err := os.Stat(filepath.Join(rep.Folder, name)); err != nil {
			t.Error(err)
		}
	}
	for _, name := range []string{allRuns[3] + "_summary.json", allRuns[0] + "_summary.json", allRuns[0] + "_plain_bench.log"} {
		if _, err := os.Stat(filepath.Join(rep.Folder, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want no file", name, err)
		}
	}
	// The manifest on disk says the same, for the publisher.
	var sess results.Session
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(rep.Folder, results.SessionFile))), &sess); err != nil {
		t.Fatal(err)
	}
	if sess.State != "complete" || sess.Runs[0].Status != results.StatusGuardGaveUp || sess.Runs[3].Status != results.StatusBenchCrashed {
		t.Errorf("session on disk: %+v", sess)
	}
	evs, err := guard.ParseLog(strings.NewReader(readFile(t, filepath.Join(rep.Folder, results.GuardLogFile))))
	if err != nil {
		t.Fatal(err)
	}
	gaveUpEvents := 0
	for _, e := range evs {
		if e.Kind == guard.EvGaveUp {
			gaveUpEvents++
		}
	}
	if gaveUpEvents != 1 {
		t.Errorf("guard.log has %d give-ups, want 1", gaveUpEvents)
	}
}

// A build that fails stops the session with the compiler's first error; the manifest
// records it for every run.
func TestProfileBuildFails(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_CARGO_BUILD=fail")
	repo := fakeRepo(t)
	rep, err := Profile(context.Background(), ProfileOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), OutDir: filepath.Join(fh.tmp, "out"),
		TraceDir: filepath.Join(fh.tmp, "traces"), Guard: fh.guardOptions(),
	})
	if err == nil || !strings.Contains(err.Error(), "error[E0425]") {
		t.Fatalf("Profile error %v, want the compile error", err)
	}
	if rep.Session.State != "failed" || rep.Session.Build.Status != "failed" || len(rep.Failed()) != 4 {
		t.Errorf("session: %+v", rep.Session)
	}
	for _, r := range rep.Session.Runs {
		if r.Status != results.StatusNotRun || !strings.Contains(r.Reason, "did not build") || strings.Contains(r.Reason, fh.tmp) {
			t.Errorf("run %+v", r)
		}
	}
	if _, err := os.Stat(filepath.Join(rep.Folder, results.SessionFile)); err != nil {
		t.Error(err)
	}
}

// Cancelling the context (as SIGTERM does) stops the session at once; what was done
// is in the manifest and the runs that never started say so.
func TestProfileInterrupted(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t)
	repo := fakeRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A foreign holder keeps the second run waiting; the test cancels once it waits.
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	prog := &lineHook{on: func(line string) {
		if strings.Contains(line, "[1/4] Meta-Llama-3.1-8B-Instruct-4bit_greedy: ") && strings.Contains(line, "decode dispatches") {
			os.Mkdir(filepath.Join(fh.kfd, strconv.Itoa(holder.Process.Pid)), 0o755)
		}
		if strings.Contains(line, "[2/4]") && strings.Contains(line, "idle streak reset") {
			cancel()
		}
	}}
	g := fh.guardOptions()
	g.MaxWait = 30 * time.Second // bounds the test should the cancellation not stop the wait
	rep, err := Profile(ctx, ProfileOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), OutDir: filepath.Join(fh.tmp, "out"),
		TraceDir: filepath.Join(fh.tmp, "traces"), Guard: g, Progress: prog,
	})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Profile error %v, want a cancellation", err)
	}
	got := []results.RunStatus{}
	for _, r := range rep.Session.Runs {
		got = append(got, r.Status)
	}
	if want := []results.RunStatus{results.StatusOK, results.StatusInterrupted, results.StatusNotRun, results.StatusNotRun}; !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v\n%s", got, want, prog.String())
	}
	if rep.Session.State != "interrupted" || !strings.Contains(rep.Session.Runs[2].Reason, "stopped before this run") {
		t.Errorf("session: %+v", rep.Session)
	}
}

// Bad requests fail before anything runs, with what to fix.
func TestProfileOptionErrors(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t)
	repo := fakeRepo(t)
	cfg := loadConfig(t, repo)
	base := ProfileOptions{Host: fh.h, RepoDir: repo, Config: cfg, OutDir: filepath.Join(fh.tmp, "out"), TraceDir: filepath.Join(fh.tmp, "tr")}
	for _, tc := range []struct {
		name string
		edit func(o *ProfileOptions)
		want string
	}{
		{"unknown model", func(o *ProfileOptions) { o.Models = []string{"mistral"} }, `model "mistral" is not in the config; known: llama, qwen3`},
		{"no checkout", func(o *ProfileOptions) { o.RepoDir = filepath.Join(fh.tmp, "nope") }, "is not a folder"},
		{"no out", func(o *ProfileOptions) { o.OutDir = "" }, "no folder given for the results root"},
		{"too many models", func(o *ProfileOptions) { o.Config.Limits.MaxModels = 1 }, "more than limits.max_models (1)"},
		// A config built in code skips config.Load's checks: the run names are checked
		// again before they become folders.
		{"model dir that makes no run name", func(o *ProfileOptions) {
			o.Config.Models = slices.Clone(o.Config.Models)
			o.Config.Models[0].Dir = "models/.x\n"
		}, `models.llama.dir "models/.x\n": run name ".x\n_greedy" starts with a dot`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			_, err := Profile(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestProfilerFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		help string
		want string
	}{
		{"usage: rocprofv3 [-f {csv,json}] [--output-format {csv}] [--hip-graph-trace [BOOL]]", "--kernel-trace --hip-graph-trace --stats --output-format csv"},
		{"usage: rocprofv3 [--output-format {csv,json}]", "--kernel-trace --stats --output-format csv"},
		{"usage: rocprofv3 [-f {csv,json}] [--hip-graph-trace [BOOL]]", "--kernel-trace --hip-graph-trace --stats -f csv"},
	} {
		if got := strings.Join(profilerFlags(hostinfo.ParseRocprofHelp(tc.help)), " "); got != tc.want {
			t.Errorf("help %q: flags %q, want %q", tc.help, got, tc.want)
		}
	}
	if got := strings.Join(profilerFlags(hostinfo.RocprofFlags{}), " "); got != "--kernel-trace --stats --output-format csv" {
		t.Errorf("unknown help: %q", got)
	}
}

// The phase log keeps only the last attempt's output for the analysis, all of it in
// the raw log, and turns guard lines into progress.
func TestPhaseLogKeepsTheLastAttempt(t *testing.T) {
	t.Parallel()
	var raw, prog bytes.Buffer
	pl := newPhaseLog(&raw, &progress{w: &prog, now: func() time.Time { return time.Date(2026, 9, 30, 17, 41, 1, 0, time.UTC) }}, "[1/1] run plain")
	input := guard.EchoPrefix + "waiting for 90s of idle GPU and no compiler\n" +
		guard.EchoPrefix + "idle streak reset after 11s: gpu=[42:mlxcel-bench-de] compilers=[]\n" +
		guard.EchoPrefix + "attempt 1/5: start: target/release/bench\n" +
		"[phase] warmup_start boottime_ns=1\n" +
		guard.EchoPrefix + "sample 3: CONTENDED foreign_gpu=[7:x] compilers=[]\n" +
		guard.EchoPrefix + "sample 4: CONTENDED foreign_gpu=[7:x] compilers=[]\n" +
		guard.EchoPrefix + "attempt 1: REJECTED (contended), exit 0; rerunning\n" +
		guard.EchoPrefix + "attempt 2/5: start: target/release/bench\n" +
		"second attempt line\nno line end"
	// Split writes at awkward places, as pipes do.
	for i := 0; i < len(input); i += 7 {
		pl.Write([]byte(input[i:min(i+7, len(input))]))
	}
	pl.close()
	if raw.String() != input {
		t.Errorf("raw log differs:\n%q", raw.String())
	}
	if got := string(pl.lastAttempt()); got != "second attempt line\nno line end" {
		t.Errorf("last attempt %q", got)
	}
	if pl.attempts != 2 || pl.lastReset != "gpu=[42:mlxcel-bench-de] compilers=[]" {
		t.Errorf("attempts %d, last reset %q", pl.attempts, pl.lastReset)
	}
	p := prog.String()
	wantIn(t, "progress", p,
		"17:41:01 [1/1] run plain: waiting for 90s of idle GPU and no compiler\n",
		"still waiting (since 17:41:01): idle streak reset after 11s",
		"[1/1] run plain: attempt 2/5 started\n",
	)
	if strings.Count(p, "CONTENDED") != 1 {
		t.Errorf("progress repeats contended samples:\n%s", p)
	}
}

func TestScrubber(t *testing.T) {
	t.Parallel()
	s := newScrubber(pathSub{"/home/ci/work/mlxcel", "<checkout>"}, pathSub{"/home/ci/work/mlxcel/traces", "<trace-dir>"}, pathSub{"", "x"})
	for in, want := range map[string]string{
		"env -C /home/ci/work/mlxcel target/release/b":       "env -C <checkout> target/release/b",
		"-d /home/ci/work/mlxcel/traces/run -o run":          "-d <trace-dir>/run -o run",
		"/home/ci/work/mlxcel2/x and x/home/ci/work/mlxcel/": "/home/ci/work/mlxcel2/x and x/home/ci/work/mlxcel/",
		`"command":["env","-C","/home/ci/work/mlxcel"]`:      `"command":["env","-C","<checkout>"]`,
	} {
		if got := s.text(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExitTextAndDur(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]string{139: "status 139 (SIGSEGV)", 134: "status 134 (SIGABRT)", 1: "status 1", 101: "status 101", 128 + 40: "status 168 (signal 40)"} {
		if got := exitText(code); got != want {
			t.Errorf("exitText(%d) = %q, want %q", code, got, want)
		}
	}
	for d, want := range map[time.Duration]string{90 * time.Second: "1m30s", 4 * time.Hour: "4h", 10 * time.Second: "10s", 300 * time.Millisecond: "300ms", time.Minute: "1m"} {
		if got := dur(d); got != want {
			t.Errorf("dur(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestOnlyGuardGaveUp(t *testing.T) {
	t.Parallel()
	rep := func(st ...results.RunStatus) ProfileReport {
		var r ProfileReport
		for _, s := range st {
			r.Session.Runs = append(r.Session.Runs, results.RunRecord{Status: s})
		}
		return r
	}
	for _, tc := range []struct {
		r    ProfileReport
		want bool
	}{
		{rep(results.StatusOK, results.StatusGuardGaveUp), true},
		{rep(results.StatusGuardGaveUp, results.StatusBenchCrashed), false},
		{rep(results.StatusOK, results.StatusOK), false},
		{rep(), false},
	} {
		if got := tc.r.OnlyGuardGaveUp(); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.r.Session.Runs, got, tc.want)
		}
	}
}

// BenchmarkProfileSession times a whole session on the fake host (2 models x 2
// sampling settings, 16 decode tokens each): what perfbot itself adds around the bench
// (probes, guard, logs, trace reading and analysis).
func BenchmarkProfileSession(b *testing.B) {
	fh := newFakeHost(b)
	repo := fakeRepo(b)
	cfg := loadConfig(b, repo)
	g := fh.guardOptions()
	for i := 0; b.Loop(); i++ {
		dir := filepath.Join(fh.tmp, strconv.Itoa(i))
		rep, err := Profile(context.Background(), ProfileOptions{
			Host: fh.h, RepoDir: repo, Config: cfg, OutDir: filepath.Join(dir, "out"), TraceDir: filepath.Join(dir, "traces"),
			Guard: g, SkipBuild: i > 0,
		})
		if err != nil || len(rep.Failed()) > 0 {
			b.Fatalf("Profile: %v, failed %+v", err, rep.Failed())
		}
		os.RemoveAll(dir)
	}
}
