package job

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

func TestMain(m *testing.M) {
	// The tests that want the sandbox say so in their options: a host's setting in the
	// environment must not turn it on for the others.
	os.Unsetenv(sandbox.EnvMode)
	code := m.Run()
	hosttest.RemovePerfbot()
	os.Exit(code)
}

// fakeHost is a fake ROCm host: the repo's fakehost root (ROCm 10 version file, DRM
// VRAM, os-release) with the real /proc linked in for the guard, an empty KFD proc dir,
// and the fake tools first on the PATH.
type fakeHost struct {
	root string
	kfd  string // real path of the KFD proc dir
	h    *host.Machine
	tmp  string
}

func newFakeHost(t testing.TB, env ...string) *fakeHost {
	t.Helper()
	tmp := t.TempDir()
	root := hosttest.Root(t, tmp)
	kfd := hosttest.KFDDir(root)
	path := hosttest.Path(t, hosttest.PerfbotDir(t))
	e := []string{
		"HOME=" + tmp, "LANG=C", "TMPDIR=" + tmp,
		"FAKEHOST_ROCMINFO=" + testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"),
		"GIT_CONFIG_NOSYSTEM=1",
	}
	e = append(e, env...)
	return &fakeHost{root: root, kfd: kfd, h: host.New(root, path, e), tmp: tmp}
}

// guardOptions are fast guard settings for tests: an idle window of one clean sample,
// a private lock, and a compiler pattern that matches nothing (other builds on the
// test machine are not what is tested).
func (f *fakeHost) guardOptions() guard.Options {
	g := guard.DefaultOptions()
	g.Host = f.h
	g.Idle = 0
	g.SampleHz = 50
	g.MaxAttempts = 2
	g.MaxWait = 20 * time.Second
	g.KFDDir = guard.DefaultKFDDir
	g.LockPath = filepath.Join(f.tmp, "guard.lock")
	g.CompilerRE = regexp.MustCompile(`^perfbot-test-no-such-compiler$`)
	g.KillGrace = time.Second
	return g
}

const (
	llamaDir = "models/mlx/Meta-Llama-3.1-8B-Instruct-4bit"
	qwenDir  = "models/mlx/Qwen3-30B-A3B-4bit"
)

const testConfig = `version: 1
models:
  llama: {dir: ` + llamaDir + `, model_type: llama, weights_gib: 4.5}
  qwen3: {dir: ` + qwenDir + `, config: ` + qwenDir + `/config.json, weights_gib: 16.0}
sampling: [greedy, t0.7-p0.95]
shape: {prompt: 64, generate: 16, warmup: 4}
`

// fakeRepo is an mlxcel checkout as the fakes need it, committed with real git: the
// Cargo manifest, the config, two model dirs, the overlay's UPSTREAM, and the numeric
// test file defining the tests named in defined.
func fakeRepo(t testing.TB, defined ...string) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "mlxcel")
	var rs strings.Builder
	rs.WriteString("//! GPU-only (Metal or CUDA); these skip on a CPU-only build.\n")
	for _, n := range defined {
		fmt.Fprintf(&rs, "\n#[test]\nfn %s() {\n    if !crate::metal_is_available() && !crate::cuda_is_available() {\n        return;\n    }\n}\n", n)
	}
	upstream := upstreamFile(t)
	files := map[string]string{
		"Cargo.toml":                            "[workspace]\nmembers = [\"src/lib/mlxcel-core\"]\n",
		".gitignore":                            "target/\n",
		config.DefaultPath:                      testConfig,
		llamaDir + "/config.json":               `{"model_type": "llama", "num_hidden_layers": 32}`,
		qwenDir + "/config.json":                `{"model_type": "qwen3_moe", "num_hidden_layers": 48}`,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM": upstream,
		"src/lib/mlxcel-core/src/" + results.TestModule + ".rs": rs.String(),
	}
	for name, body := range files {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "mlxcel at a test commit")
	return repo
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=perfbot test", "-c", "user.email=test@example.invalid",
		"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func loadConfig(t testing.TB, repo string) config.Config {
	t.Helper()
	c, err := config.Load(filepath.Join(repo, config.DefaultPath))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lineHook is a progress writer that keeps every line and calls on for each; the test
// reacts to the job's progress (e.g. a foreign GPU process leaves when the guard gives
// up) without sleeping.
type lineHook struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	on      func(line string)
}

func (h *lineHook) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buf.Write(p)
	h.partial = append(h.partial, p...)
	for {
		i := bytes.IndexByte(h.partial, '\n')
		if i < 0 {
			break
		}
		line := string(h.partial[:i])
		h.partial = h.partial[i+1:]
		if h.on != nil {
			h.on(line)
		}
	}
	return len(p), nil
}

func (h *lineHook) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.String()
}

// testOutcome finds a test's result by name.
func testOutcome(t *testing.T, o patch.Outcome, name string) patch.TestResult {
	t.Helper()
	for _, r := range o.Tests {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no result for %s in %+v", name, o)
	return patch.TestResult{}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantIn fails for each of wants that text lacks; what names the text.
func wantIn(t testing.TB, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
}

// runBench runs the nightly with its progress kept, failing the test on an error.
func runBench(t testing.TB, o BenchOptions) (BenchReport, *lineHook) {
	t.Helper()
	prog := &lineHook{}
	o.Progress = prog
	rep, err := Bench(context.Background(), o)
	if err != nil {
		t.Fatalf("Bench: %v\n%s", err, prog.String())
	}
	return rep, prog
}

// upstreamFile is the real checkout's UPSTREAM file of the ROCm overlay.
func upstreamFile(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noLocalFolders reads the guard log in folder, failing when it names the test's own
// folders, and returns it.
func noLocalFolders(t *testing.T, fh *fakeHost, folder string) string {
	t.Helper()
	glog := readFile(t, filepath.Join(folder, results.GuardLogFile))
	if strings.Contains(glog, fh.tmp) {
		t.Errorf("the guard log names local folders")
	}
	return glog
}

// worktreesGone fails when a session left a worktree in wtDir ("" for none to look
// in) or registered in repo.
func worktreesGone(t *testing.T, repo, wtDir string) {
	t.Helper()
	if ents, _ := os.ReadDir(wtDir); wtDir != "" && len(ents) != 0 {
		t.Errorf("worktrees left: %v", ents)
	}
	if wt := git(t, repo, "worktree", "list"); strings.Count(wt, "\n") != 0 {
		t.Errorf("worktrees still registered:\n%s", wt)
	}
}
