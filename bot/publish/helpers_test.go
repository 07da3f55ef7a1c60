package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/gittest"
	"github.com/lablup/perfbot/internal/sampletree"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/patch/patchrun"
	"github.com/lablup/perfbot/runner/results"
)

// TestMain gives every git process a home without user or system config, as on a
// fresh runner, so nothing depends on the machine's git setup.
// With PUBLISH_TEST_HELPER=git the test binary is a helper instead: it runs git()
// once and prints whether it failed, how many seconds it took and the error.
func TestMain(m *testing.M) {
	if os.Getenv("PUBLISH_TEST_HELPER") == "git" {
		start := time.Now()
		_, err := git(context.Background(), ".", "status")
		fmt.Printf("%v %.0f\n%v", err != nil, time.Since(start).Seconds(), err)
		os.Exit(0)
	}
	gittest.Main(m, "GITHUB_TOKEN")
}

const (
	botBranch = "perfbot/rocm-profile"
	botLogin  = "perfbot[bot]"
	epicIssue = 1814
)

var testRepo = gh.Repo{Owner: "lablup", Name: "mlxcel"}

// gitT runs git for test setup with a fixed human identity and fails the test on error.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Maintainer", "GIT_AUTHOR_EMAIL=maintainer@example.com",
		"GIT_COMMITTER_NAME=Maintainer", "GIT_COMMITTER_EMAIL=maintainer@example.com",
		"GIT_AUTHOR_DATE=2026-09-30T10:00:00+0900", "GIT_COMMITTER_DATE=2026-09-30T10:00:00+0900")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimRight(out.String(), "\n")
}

// target is the target repository: a bare remote standing in for GitHub and a clone of
// it to publish from, at a base commit holding the two files the patch edits.
type target struct {
	bare     string
	checkout string
	base     string
}

func newTarget(t testing.TB) *target {
	t.Helper()
	root := t.TempDir()
	seed := filepath.Join(root, "seed")
	gitT(t, root, "init", "--quiet", "--initial-branch=main", seed)
	// The sample mlxcel checkout's sources: the two files the patcher edits and the
	// dispatch sources the checker scans.
	if err := sampletree.WriteSources(seed); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(seed, "README.md"), "# mlxcel\n")
	gitT(t, seed, "add", "-A")
	gitT(t, seed, "commit", "--quiet", "-m", "base")
	bare := filepath.Join(root, "remote.git")
	gitT(t, root, "clone", "--quiet", "--bare", seed, bare)
	checkout := filepath.Join(root, "checkout")
	gitT(t, root, "clone", "--quiet", bare, checkout)
	tg := &target{bare: bare, checkout: checkout, base: gitT(t, seed, "rev-parse", "HEAD")}
	before := snapshot(t, checkout)
	t.Cleanup(func() {
		if got := gitT(t, bare, "rev-parse", "refs/heads/main"); got != tg.base {
			t.Errorf("the remote's default branch moved: %s -> %s", tg.base, got)
		}
		if after := snapshot(t, checkout); after != before {
			t.Errorf("the checkout was modified:\nbefore %s\nafter  %s", before, after)
		}
	})
	return tg
}

// at is the target with commit as its base commit, for results of another commit.
func (tg *target) at(commit string) *target {
	c := *tg
	c.base = commit
	return &c
}

// dryProfile lays the results pr describes for a new target (with the patch prepared,
// as the GPU job leaves them, when prepared) and publishes them as a dry run into out,
// a folder the dry run makes; with, when not nil, changes the options first (and may
// change the results folder they name). A failed Publish fails the test.
func dryProfile(t *testing.T, pr profile, prepared bool, with func(*Options)) (tg *target, sum Summary, out string) {
	t.Helper()
	tg = newTarget(t)
	res := layResults(t, tg.base, pr)
	if prepared {
		prepare(t, tg, res, nil, "")
	}
	out = filepath.Join(t.TempDir(), "dry")
	o := Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}}
	if with != nil {
		with(&o)
	}
	sum, err := Publish(context.Background(), o)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	return tg, sum, out
}

// snapshot is the checkout's working tree state: git status plus the HEAD commit.
func snapshot(t testing.TB, dir string) string {
	return gitT(t, dir, "rev-parse", "HEAD") + " " + gitT(t, dir, "status", "--porcelain", "--untracked-files=all")
}

// branch returns what the bare remote holds at the bot branch, or "".
func (tg *target) branch(t testing.TB) string {
	t.Helper()
	cmd := exec.Command("git", "-C", tg.bare, "rev-parse", "--verify", "--quiet", "refs/heads/"+botBranch)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func (tg *target) file(t testing.TB, commit, p string) string {
	t.Helper()
	return gitT(t, tg.bare, "show", commit+":"+p)
}

func writeFile(t testing.TB, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t testing.TB, p string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, string(b)+"\n")
}

// profile describes a results folder to lay out.
type profile struct {
	date  string   // YYYY-MM-DD
	runs  []string // fixture runs to include; nil means both
	tests []patch.TestOutcome
	trace bool // add a kernel trace, which must never be committed
	// failed are runs of the session that left no results.
	failed []results.RunRecord
	// sampling is the session's sampling list; nil means greedy, empty means none
	// written (an older session file).
	sampling []string
}

var fixtureRuns = []string{"Meta-Llama-3.1-8B-Instruct-4bit_greedy", "Qwen3-30B-A3B-4bit_greedy"}

// layResults writes a results folder as `perfbot run profile` does, from the real
// 2026-09-30 profile of the fixtures, for the commit base, and returns its root.
func layResults(t testing.TB, base string, pr profile) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "gfx1151_"+base[:8])
	fix := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
	runs := pr.runs
	if runs == nil {
		runs = fixtureRuns
	}
	for _, run := range runs {
		for _, suffix := range []string{"_summary.json", "_decode_kernels.csv", "_kernel_stats.csv", "_bench.log", "_plain_bench.log"} {
			b, err := os.ReadFile(filepath.Join(fix, run+suffix))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, run+suffix), string(b))
		}
	}
	b, err := os.ReadFile(filepath.Join(fix, "guard.log"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "guard.log"), string(b))
	writeJSON(t, filepath.Join(dir, results.SessionFile), sessionOf(t, base, pr, runs))
	writeJSON(t, filepath.Join(dir, "hostinfo.json"), hostinfo.Info{
		ROCm: hostinfo.Fact{Value: "10.0.0"}, HIP: hostinfo.Fact{Value: "7.15.26333-e1a6bc5663"},
		GPU: hostinfo.Fact{Value: "Radeon 8060S Graphics"}, GFX: hostinfo.Fact{Value: "gfx1151"},
		VRAM: hostinfo.Fact{Value: "96.0 GiB"}, VRAMBytes: 103079215104,
		OverlayCommit: hostinfo.Fact{Value: "75915908"}, Kernel: hostinfo.Fact{Reason: "/proc/sys/kernel/osrelease is unreadable"},
	})
	if pr.tests != nil {
		var tests []map[string]string
		for i, name := range patch.TestNames {
			tests = append(tests, map[string]string{"name": name, "outcome": string(pr.tests[i]), "detail": "ok"})
		}
		writeJSON(t, filepath.Join(dir, "gemm_tests.json"), map[string]any{"overlay_commit": "75915908", "tests": tests})
	}
	if pr.trace {
		writeFile(t, filepath.Join(dir, runs[0]+"_kernel_trace.csv"), "\"Kind\"\n")
	}
	return root
}

// sessionOf is the manifest `perfbot run profile` writes for the runs of pr: each ok,
// plus pr.failed with their status and reason.
func sessionOf(t testing.TB, base string, pr profile, runs []string) results.Session {
	t.Helper()
	day, err := time.Parse(time.DateOnly, pr.date)
	if err != nil {
		t.Fatal(err)
	}
	started := day.Add(17*time.Hour + 41*time.Minute)
	sampling := pr.sampling
	if sampling == nil {
		sampling = []string{"greedy"}
	}
	s := results.Session{
		Commit: base, GFX: "gfx1151", Folder: "gfx1151_" + base[:8], OverlayCommit: "75915908",
		Date: pr.date, Started: started, Finished: started.Add(2 * time.Hour), State: "complete",
		Models: []string{"llama", "qwen3"}, Sampling: sampling,
		Shape:    results.Shape{Prompt: 512, Generate: 128, Warmup: 20},
		Profiler: []string{"--kernel-trace", "--hip-graph-trace", "--stats", "--output-format", "csv"},
		Build:    results.Build{Command: results.BuildCommand, Status: "ok", Seconds: 312.4, Log: "build.log"},
		GuardLog: results.GuardLogFile, HostInfo: results.HostInfoFile,
	}
	dirs := map[string]string{"Meta-Llama-3.1-8B-Instruct-4bit": "llama", "Qwen3-30B-A3B-4bit": "qwen3"}
	for _, run := range runs {
		model, _, _ := strings.Cut(run, "_")
		s.Runs = append(s.Runs, results.RunRecord{
			Name: run, Model: dirs[model], ModelDir: "models/mlx/" + model, Sampling: "greedy", Status: results.StatusOK,
			Files: []string{run + "_bench.log", run + "_decode_kernels.csv", run + "_kernel_stats.csv", run + "_plain_bench.log", run + "_summary.json"},
		})
	}
	s.Runs = append(s.Runs, pr.failed...)
	return s
}

var allPassed = []patch.TestOutcome{patch.Passed, patch.Passed, patch.Passed}

// sleeps records the waits the GitHub client asks for and returns at once.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

var testNow = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

// client is a token client of the stub with recorded sleeps and a fixed clock.
func client(t *testing.T, s *fakegithub.Stub, sl *sleeps) *gh.Client {
	t.Helper()
	c, err := gh.NewTokenClient("ghs_testtoken0123456789", gh.Options{
		BaseURL: s.URL(), Login: botLogin, Sleep: sl.sleep,
		Now: func() time.Time { return testNow }, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testConfig() config.Config {
	c := config.Default()
	c.Epic = epicIssue
	return c
}

func example(t testing.TB, name string) string {
	return testfix.Path(t, "github", "rest-openapi-examples", name+".json")
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// prepare does what the patch job does on the GPU runner for the results at res: it
// applies the grouped_gemm gate patch to a scratch worktree of the target's base
// commit, runs verify there (ShippedVerify when nil) and writes gemm_patch.json into
// the results folder. Publish then runs none of it.
func prepare(t testing.TB, tg *target, res string, verify [][]string, python string) patch.Prepared {
	t.Helper()
	dir, err := findFolder(res)
	if err != nil {
		t.Fatal(err)
	}
	o, err := patch.ParseOutcome([]byte(readFile(t, filepath.Join(dir, gemmTests))))
	if err != nil {
		t.Fatal(err)
	}
	if verify == nil {
		verify = patchrun.ShippedVerify
	}
	p, err := patchrun.Prepare(context.Background(), patchrun.PrepareOptions{RepoDir: tg.checkout, Commit: tg.base, Outcome: o, Verify: verify, Python: python, VerifyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(filepath.Join(dir, patch.PreparedFile)); err != nil {
		t.Fatal(err)
	}
	return p
}

// layPrepared lays a results folder with the numeric tests and prepares the patch for
// it with the shipped verification, as the GPU job leaves it for the publish job.
func layPrepared(t testing.TB, tg *target, pr profile) string {
	t.Helper()
	res := layResults(t, tg.base, pr)
	prepare(t, tg, res, nil, "")
	return res
}

// wantIn checks that doc holds each of wants.
func wantIn(t *testing.T, doc string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(doc, want) {
			t.Errorf("no %q in:\n%s", want, doc)
		}
	}
}

// wantOut checks that doc holds none of lacks.
func wantOut(t *testing.T, doc string, lacks ...string) {
	t.Helper()
	for _, lack := range lacks {
		if strings.Contains(doc, lack) {
			t.Errorf("%q in:\n%s", lack, doc)
		}
	}
}

// wantNotWritten checks that a dry run left no file name in out.
func wantNotWritten(t *testing.T, out, name string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(out, name)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %v, want none written", name, err)
	}
}

// wantActions checks what each write of a publish did; publish names which one.
func wantActions(t *testing.T, publish string, sum Summary, want map[string]string) {
	t.Helper()
	if diff := cmp.Diff(want, actions(sum)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", strings.TrimSpace(publish+" actions"), diff)
	}
}
