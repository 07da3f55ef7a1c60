package intake

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/job"
)

func TestMain(m *testing.M) {
	code := m.Run()
	hosttest.RemovePerfbot()
	if compareTmp != "" {
		os.RemoveAll(compareTmp)
	}
	os.Exit(code)
}

// TestProfileTakesWhatTheRunnerWrites runs a real profile session (`perfbot run
// profile`'s code) on the simulated gfx1151 host, one run of it crashing in its profiled
// bench, and copies the results folder it leaves: every file is taken, byte for byte,
// the crashed run's cut log among them.
func TestProfileTakesWhatTheRunnerWrites(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	root := hosttest.Root(t, tmp)
	h := host.New(root, hosttest.Path(t, hosttest.PerfbotDir(t)), []string{
		"HOME=" + tmp, "LANG=C", "TMPDIR=" + tmp, "GIT_CONFIG_NOSYSTEM=1",
		"FAKEHOST_ROCMINFO=" + testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"),
		"FAKE_BENCH_CRASH=Qwen3-30B-A3B-4bit_greedy:profiled",
	})
	const llamaDir, qwenDir = "models/mlx/Meta-Llama-3.1-8B-Instruct-4bit", "models/mlx/Qwen3-30B-A3B-4bit"
	upstream, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	tg := hosttest.NewTarget(t, tmp, map[string]string{
		"Cargo.toml":                            "[workspace]\nmembers = [\"src/lib/mlxcel-core\"]\n",
		".gitignore":                            "target/\n",
		llamaDir + "/config.json":               `{"model_type": "llama", "num_hidden_layers": 32}`,
		qwenDir + "/config.json":                `{"model_type": "qwen3_moe", "num_hidden_layers": 48}`,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM": string(upstream),
	})
	cfg, err := config.Parse([]byte("version: 1\nmodels:\n  llama: {dir: "+llamaDir+", model_type: llama, weights_gib: 4.5}\n"+
		"  qwen3: {dir: "+qwenDir+", config: "+qwenDir+"/config.json, weights_gib: 16.0}\n"+
		"sampling: [greedy]\nshape: {prompt: 64, generate: 16, warmup: 4}\n"), "perfbot.yml")
	if err != nil {
		t.Fatal(err)
	}
	g := guard.DefaultOptions()
	g.Host, g.Idle, g.SampleHz, g.MaxAttempts, g.MaxWait = h, 0, 50, 2, 20*time.Second
	g.KFDDir = guard.DefaultKFDDir
	g.LockPath = filepath.Join(tmp, "guard.lock")
	g.CompilerRE = regexp.MustCompile(`^perfbot-test-no-such-compiler$`)
	g.KillGrace = time.Second
	var prog bytes.Buffer
	rep, err := job.Profile(context.Background(), job.ProfileOptions{
		Host: h, RepoDir: tg.Repo, Config: cfg, OutDir: filepath.Join(tmp, "out"), TraceDir: filepath.Join(tmp, "traces"),
		Guard: g, Progress: &prog,
	})
	if err != nil {
		t.Fatalf("the profile session: %v\n%s", err, prog.String())
	}
	if f := rep.Failed(); len(f) != 1 {
		t.Fatalf("want one failed run (the crash), got %+v\n%s", f, prog.String())
	}
	// The artifact as the workflow uploads it: the results root holding the folder.
	dst := filepath.Join(t.TempDir(), "copy")
	res, err := ProfileResult(context.Background(), filepath.Dir(rep.Folder), dst, DefaultLimits())
	if err != nil {
		t.Fatalf("the runner's own folder is refused: %v", err)
	}
	src := tree(t, rep.Folder)
	var names []string
	for name, b := range src {
		names = append(names, name)
		if got, err := os.ReadFile(filepath.Join(res.Dir, name)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s is not copied byte for byte (%v)", name, err)
		}
	}
	slices.Sort(names)
	if !slices.Equal(res.Files, names) || len(res.Dropped) != 0 {
		t.Errorf("Files %v, Dropped %v; the folder holds %v", res.Files, res.Dropped, names)
	}
	for _, want := range []string{"Qwen3-30B-A3B-4bit_greedy_bench.log", "guard.log.jsonl", "session.json", "hostinfo.json", llamaRun + "_summary.json"} {
		if !slices.Contains(res.Files, want) {
			t.Errorf("the runner left no %s to copy: %v", want, res.Files)
		}
	}
	for _, n := range res.Notes {
		if !strings.Contains(n, "Qwen3-30B-A3B-4bit_greedy") {
			t.Errorf("a note about a run that did not fail: %s", n)
		}
	}
}
