package intake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

const (
	realFolder = "gfx1151_929c80ab"
	llamaRun   = "Meta-Llama-3.1-8B-Instruct-4bit_greedy"
	qwenRun    = "Qwen3-30B-A3B-4bit_greedy"
	realCommit = "929c80ab5e1c0c3a0b7d3f6e2a1b9c8d7e6f5a4b"
)

var runSuffixes = []string{"_summary.json", "_decode_kernels.csv", "_kernel_stats.csv", "_bench.log", "_plain_bench.log"}

// layProfile writes the results folder `perfbot run profile` and `perfbot run
// gemm-tests` leave, from the real 2026-09-30 profile (both runs, the session's real
// guard log) with the session's own files, under a new root, and returns the root.
// The files are made mode 0600 and the folder 0700, to show the copy's modes do not
// follow the source's.
func layProfile(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, realFolder)
	fix := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", realFolder)
	for _, run := range []string{llamaRun, qwenRun} {
		for _, s := range runSuffixes {
			copyFixture(t, filepath.Join(fix, run+s), filepath.Join(dir, run+s))
		}
	}
	copyFixture(t, filepath.Join(fix, results.GuardLogFile), filepath.Join(dir, results.GuardLogFile))
	started := time.Date(2026, 9, 30, 17, 41, 0, 0, time.FixedZone("", 9*3600))
	s := results.Session{
		Commit: realCommit, GFX: "gfx1151", Folder: realFolder, OverlayCommit: "75915908",
		Date: "2026-09-30", Started: started, Finished: started.Add(2 * time.Hour), State: "complete",
		Models: []string{"llama", "qwen3"}, Sampling: []string{"greedy"},
		Shape:    results.Shape{Prompt: 512, Generate: 128, Warmup: 20},
		Profiler: []string{"--kernel-trace", "--hip-graph-trace", "--stats", "--output-format", "csv"},
		Build:    results.Build{Command: results.BuildCommand, Status: "ok", Seconds: 312.4, Log: "build.log"},
		GuardLog: results.GuardLogFile, HostInfo: results.HostInfoFile,
	}
	for _, run := range []string{llamaRun, qwenRun} {
		model, _, _ := strings.Cut(run, "_")
		var files []string
		for _, suf := range runSuffixes {
			files = append(files, run+suf)
		}
		s.Runs = append(s.Runs, results.RunRecord{Name: run, Model: model, ModelDir: "models/mlx/" + model, Sampling: "greedy", Status: results.StatusOK, Files: files})
	}
	writeJSON(t, filepath.Join(dir, results.SessionFile), s)
	writeJSON(t, filepath.Join(dir, results.HostInfoFile), hostinfo.Info{
		ROCm: hostinfo.Fact{Value: "10.0.0"}, HIP: hostinfo.Fact{Value: "7.15.26333-e1a6bc5663"},
		GPU: hostinfo.Fact{Value: "Radeon 8060S Graphics"}, GFX: hostinfo.Fact{Value: "gfx1151"},
		VRAM: hostinfo.Fact{Value: "96.0 GiB"}, VRAMBytes: 103079215104,
		OverlayCommit: hostinfo.Fact{Value: "75915908"}, Kernel: hostinfo.Fact{Reason: "/proc/sys/kernel/osrelease is unreadable"},
	})
	var tests []patch.TestResult
	for _, name := range patch.TestNames {
		tests = append(tests, patch.TestResult{Name: name, Outcome: patch.Passed, Detail: "ok (0.91s)"})
	}
	writeJSON(t, filepath.Join(dir, results.GemmTestsFile), patch.Outcome{OverlayCommit: "75915908", Tests: tests})
	writeJSON(t, filepath.Join(dir, GemmPatchFile), patch.Prepared{Commit: "929c80ab" + strings.Repeat("0", 32), Decision: patch.Switch,
		Error: "refusing to patch the grouped_gemm gates (nothing was written)", Verify: []patch.VerifyResult{}})
	var jsonl []byte
	for k := 1; k <= 2; k++ {
		b, err := json.Marshal(guard.Attempt{Label: llamaRun + " profiled", Attempt: k, MaxAttempts: 5, Start: started, End: started.Add(time.Minute),
			Command: []string{"rocprofv3", "--kernel-trace"}, Verdict: guard.Clean, SampleHz: 10, Samples: 600})
		if err != nil {
			t.Fatal(err)
		}
		jsonl = append(append(jsonl, b...), '\n')
	}
	writeFile(t, filepath.Join(dir, results.GuardLogFile+".jsonl"), jsonl)
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return root
}

func copyFixture(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, b)
}

func writeFile(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t testing.TB, p string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, append(b, '\n'))
}

// copiedByteForByte checks that every file and folder of the tree src is in the tree
// dst with the same bytes.
func copiedByteForByte(t testing.TB, src, dst map[string][]byte) {
	t.Helper()
	for name, b := range src {
		if got, ok := dst[name]; !ok || !bytes.Equal(got, b) {
			t.Errorf("%s is not copied byte for byte", name)
		}
	}
}

// tree maps every path under dir (slash-separated, relative) to its bytes; folders map
// to nil. It fails the test on anything but files and folders.
func tree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			out[rel] = nil
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = b
		default:
			return errors.New(rel + " is neither a file nor a folder")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gone fails the test when p exists.
func gone(t testing.TB, p string) {
	t.Helper()
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is left after the refusal (%v)", p, err)
	}
}
