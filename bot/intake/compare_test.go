package intake

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/results"
)

var (
	compareOnce   sync.Once
	compareFolder string
	compareErr    error
	// compareTmp holds the shared compare folder; TestMain removes it.
	compareTmp string
)

// runnerCompare runs one profile compare (runner/job.Compare) on the simulated gfx1151
// host, with a kernel made twice as fast, one removed and one added in B, and returns
// the compare folder it wrote. The tests copy it and never change it.
func runnerCompare(t *testing.T) string {
	t.Helper()
	compareOnce.Do(func() { compareFolder, compareErr = makeCompare(t) })
	if compareErr != nil {
		t.Fatal(compareErr)
	}
	return compareFolder
}

func makeCompare(t *testing.T) (string, error) {
	tmp, err := os.MkdirTemp("", "perfbot-intake-compare-")
	if err != nil {
		return "", err
	}
	compareTmp = tmp // shared by the tests: TestMain removes it
	root := hosttest.Root(t, tmp)
	h := host.New(root, hosttest.Path(t, hosttest.PerfbotDir(t)), []string{
		"HOME=" + tmp, "LANG=C", "TMPDIR=" + tmp, "GIT_CONFIG_NOSYSTEM=1",
		"FAKEHOST_ROCMINFO=" + testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"),
	})
	const llamaDir = "models/mlx/Meta-Llama-3.1-8B-Instruct-4bit"
	upstream, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		return "", err
	}
	tg := hosttest.NewTarget(t, tmp, map[string]string{
		"Cargo.toml":                            "[workspace]\nmembers = [\"src/lib/mlxcel-core\"]\n",
		".gitignore":                            "target/\n",
		llamaDir + "/config.json":               `{"model_type": "llama", "num_hidden_layers": 32}`,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM": string(upstream),
	})
	shaA := tg.Base
	if err := os.WriteFile(filepath.Join(tg.Repo, "fake-change.txt"),
		[]byte("faster kernel_sdpav_1pass 2\nremoved rope_single_freqs_1d\nadded mlx_fused_rope_append_kernel rope 1200\n"), 0o644); err != nil {
		return "", err
	}
	hosttest.Git(t, tmp, tg.Repo, "add", "-A")
	hosttest.Git(t, tmp, tg.Repo, "commit", "-q", "-m", "B: the change")
	shaB := hosttest.Git(t, tmp, tg.Repo, "rev-parse", "HEAD")
	cfg, err := config.Parse([]byte("version: 1\nmodels:\n  llama: {dir: "+llamaDir+", model_type: llama, weights_gib: 4.5}\n"+
		"sampling: [greedy]\nshape: {prompt: 64, generate: 16, warmup: 4}\n"), "perfbot.yml")
	if err != nil {
		return "", err
	}
	g := guard.DefaultOptions()
	g.Host, g.Idle, g.SampleHz, g.MaxAttempts, g.MaxWait = h, 0, 50, 2, 20*time.Second
	g.KFDDir = guard.DefaultKFDDir
	g.LockPath = filepath.Join(tmp, "guard.lock")
	g.CompilerRE = regexp.MustCompile(`^perfbot-test-no-such-compiler$`)
	g.KillGrace = time.Second
	var prog bytes.Buffer
	rep, err := job.Compare(context.Background(), job.CompareOptions{
		Kind: results.CompareProfile, Host: h, RepoDir: tg.Repo, ShaA: shaA, ShaB: strings.TrimSpace(shaB), Config: cfg,
		OutDir: filepath.Join(tmp, "out"), Guard: g, Progress: &prog,
	})
	if err != nil {
		return "", errors.New("the compare session: " + err.Error() + "\n" + prog.String())
	}
	return rep.Folder, nil
}

// layCompare copies the runner's compare folder under a new root, as the workflow's
// artifact holds it, and returns the root and the copied folder.
func layCompare(t *testing.T) (root, dir string) {
	t.Helper()
	src := runnerCompare(t)
	root = t.TempDir()
	dir = filepath.Join(root, filepath.Base(src))
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return root, dir
}

// A profile compare as runner/job writes it is copied whole, byte for byte: the
// manifest, the differences, the guard's evidence, and each side's profile folder.
func TestCompareTakesWhatTheRunnerWrites(t *testing.T) {
	t.Parallel()
	root, dir := layCompare(t)
	if !IsCompare(root) || !IsCompare(dir) || IsCompare(filepath.Join(dir, "a")) {
		t.Errorf("IsCompare: root %v, folder %v, a/ %v", IsCompare(root), IsCompare(dir), IsCompare(filepath.Join(dir, "a")))
	}
	for _, src := range []string{root, dir} {
		dst := filepath.Join(t.TempDir(), "copy")
		res, err := CompareResult(context.Background(), src, dst, DefaultLimits())
		if err != nil {
			t.Fatalf("the runner's own compare folder is refused: %v", err)
		}
		if res.Dir != filepath.Join(dst, filepath.Base(dir)) {
			t.Errorf("Dir %s", res.Dir)
		}
		want := tree(t, dir)
		var names []string
		for name, b := range want {
			if b == nil {
				continue
			}
			names = append(names, name)
			if got, err := os.ReadFile(filepath.Join(res.Dir, filepath.FromSlash(name))); err != nil || !bytes.Equal(got, b) {
				t.Errorf("%s is not copied byte for byte (%v)", name, err)
			}
		}
		slices.Sort(names)
		if !slices.Equal(res.Files, names) || len(res.Dropped) != 0 {
			t.Errorf("Files %v, Dropped %v; the folder holds %v", res.Files, res.Dropped, names)
		}
		for _, w := range []string{results.CompareFile, "a/" + results.SessionFile, "b/" + results.SessionFile, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_diff.json",
			"b/Meta-Llama-3.1-8B-Instruct-4bit_greedy_summary.json"} {
			if !slices.Contains(res.Files, w) {
				t.Errorf("no %s copied: %v", w, res.Files)
			}
		}
		if _, err := results.ReadCompareFolder(res.Dir); err != nil {
			t.Error(err)
		}
	}
}

// Every way a compare artifact can break the layout is refused with its rule and the
// file named, and nothing is left at the destination.
func TestCompareRefusesHostileFolders(t *testing.T) {
	t.Parallel()
	const diff = "Meta-Llama-3.1-8B-Instruct-4bit_greedy_diff.json"
	const sum = "Meta-Llama-3.1-8B-Instruct-4bit_greedy_summary.json"
	cases := []struct {
		name   string
		break_ func(t *testing.T, root, dir string) string // returns the source to copy
		rule   error
		file   string // a part of the refused entry's path
	}{
		{"a stray file in a side folder", func(t *testing.T, root, dir string) string {
			writeFile(t, filepath.Join(dir, "b", "notes.txt"), []byte("x"))
			return root
		}, ErrUnknown, "b/notes.txt"},
		{"a link in a side folder", func(t *testing.T, root, dir string) string {
			p := filepath.Join(dir, "a", sum)
			os.Remove(p)
			if err := os.Symlink("/etc/passwd", p); err != nil {
				t.Fatal(err)
			}
			return root
		}, ErrLink, "a/" + sum},
		{"a side folder that is a link", func(t *testing.T, root, dir string) string {
			os.RemoveAll(filepath.Join(dir, "b"))
			if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
				t.Fatal(err)
			}
			return root
		}, ErrLink, "/b"},
		{"a third folder", func(t *testing.T, root, dir string) string {
			writeFile(t, filepath.Join(dir, "c", sum), []byte("{}"))
			return root
		}, ErrUnknown, "/c"},
		{"a folder inside a side", func(t *testing.T, root, dir string) string {
			writeFile(t, filepath.Join(dir, "a", "deeper", "x"), []byte("x"))
			return root
		}, ErrNested, "a/deeper"},
		{"a summary its reader refuses", func(t *testing.T, root, dir string) string {
			writeFile(t, filepath.Join(dir, "b", sum), []byte(`{"name": 1}`))
			return root
		}, ErrFormat, "b/" + sum},
		{"a difference the manifest does not name", func(t *testing.T, root, dir string) string {
			writeFile(t, filepath.Join(dir, "Other_greedy_diff.json"), []byte("{}"))
			return root
		}, ErrUnknown, "Other_greedy_diff.json"},
		{"a CSV pair the manifest does not name", func(t *testing.T, root, dir string) string {
			writeFile(t, filepath.Join(dir, "rocm_strixhalo-gfx1151_2026-12-03_x-before.csv"), []byte("x"))
			return root
		}, ErrUnknown, "x-before.csv"},
		{"a difference that is not JSON", func(t *testing.T, root, dir string) string {
			writeFile(t, filepath.Join(dir, diff), []byte("not json"))
			return root
		}, ErrFormat, diff},
		{"no manifest", func(t *testing.T, root, dir string) string {
			os.Remove(filepath.Join(dir, results.CompareFile))
			return root
		}, ErrLayout, ""},
		{"a manifest of other commits", func(t *testing.T, root, dir string) string {
			other := filepath.Join(root, "gfx1151_00000000_11111111")
			if err := os.Rename(dir, other); err != nil {
				t.Fatal(err)
			}
			return root
		}, ErrLayout, results.CompareFile},
		{"a side folder the manifest names missing", func(t *testing.T, root, dir string) string {
			os.RemoveAll(filepath.Join(dir, "b"))
			return root
		}, ErrLayout, ""},
		{"a difference the manifest names missing", func(t *testing.T, root, dir string) string {
			os.Remove(filepath.Join(dir, diff))
			return root
		}, ErrLayout, ""},
		{"two compare folders", func(t *testing.T, root, dir string) string {
			if err := os.CopyFS(filepath.Join(root, "gfx1151_00000000_11111111"), os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			return root
		}, ErrLayout, ""},
		{"a profile folder beside it", func(t *testing.T, root, dir string) string {
			writeFile(t, filepath.Join(root, realFolder, results.SessionFile), []byte("{}"))
			return root
		}, ErrUnknown, realFolder},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, dir := layCompare(t)
			src := tc.break_(t, root, dir)
			dst := filepath.Join(t.TempDir(), "copy")
			_, err := Compare(context.Background(), src, dst, DefaultLimits())
			var ie *Error
			if !errors.As(err, &ie) || !errors.Is(err, tc.rule) || !strings.Contains(ie.File, tc.file) {
				t.Fatalf("got %v, want %v naming %q", err, tc.rule, tc.file)
			}
			gone(t, dst)
		})
	}
}
