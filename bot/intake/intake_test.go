package intake

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/lablup/perfbot/runner/results"
)

func TestProfileCopiesTheRealFolderByteForByte(t *testing.T) {
	t.Parallel()
	for _, fromFolder := range []bool{false, true} {
		root := layProfile(t)
		src := root
		if fromFolder {
			src = filepath.Join(root, realFolder)
		}
		dst := filepath.Join(t.TempDir(), "new", "copy")
		res, err := ProfileResult(context.Background(), src, dst, DefaultLimits())
		if err != nil {
			t.Fatalf("from %s: %v", src, err)
		}
		want := filepath.Join(dst, realFolder)
		if res.Dir != want {
			t.Errorf("Dir = %s, want %s", res.Dir, want)
		}
		srcTree, dstTree := tree(t, filepath.Join(root, realFolder)), tree(t, want)
		if len(srcTree) != 16 || len(dstTree) != len(srcTree) {
			t.Errorf("%d files copied of %d (want 16)", len(dstTree), len(srcTree))
		}
		copiedByteForByte(t, srcTree, dstTree)
		if len(res.Files) != len(srcTree) || !slices.IsSorted(res.Files) || len(res.Dropped) != 0 {
			t.Errorf("Files %v, Dropped %v", res.Files, res.Dropped)
		}
		for _, p := range []string{dst, want} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("%s: %v, %v; want a folder of mode 0755", p, fi.Mode(), err)
			}
		}
		for name := range dstTree {
			if fi, err := os.Stat(filepath.Join(want, name)); err != nil || fi.Mode() != 0o644 {
				t.Errorf("%s: mode %v, %v; want 0644 whatever the source's (0600)", name, fi.Mode(), err)
			}
		}
	}
}

func TestProfileReturnsTheFolder(t *testing.T) {
	t.Parallel()
	dst := filepath.Join(t.TempDir(), "copy")
	got, err := Profile(context.Background(), layProfile(t), dst, DefaultLimits())
	if err != nil || got != filepath.Join(dst, realFolder) {
		t.Fatalf("Profile = %q, %v", got, err)
	}
}

func TestProfileDropsTracesAsPublishDoes(t *testing.T) {
	t.Parallel()
	root := layProfile(t)
	dir := filepath.Join(root, realFolder)
	writeFile(t, filepath.Join(dir, llamaRun+"_kernel_trace.csv"), []byte("\"Kind\"\n"))
	writeFile(t, filepath.Join(dir, "3184_results.db"), []byte("SQLite format 3\x00"))
	dst := filepath.Join(t.TempDir(), "copy")
	res, err := ProfileResult(context.Background(), root, dst, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"3184_results.db", llamaRun + "_kernel_trace.csv"}; !slices.Equal(res.Dropped, want) {
		t.Errorf("Dropped = %v, want %v", res.Dropped, want)
	}
	for _, name := range res.Dropped {
		gone(t, filepath.Join(res.Dir, name))
	}
	if len(res.Files) != 16 {
		t.Errorf("%d files copied, want 16", len(res.Files))
	}
}

// hostile is one way an artifact can be wrong.
type hostile struct {
	name string
	// edit changes the laid-out folder dir (under root) before the copy.
	edit func(t *testing.T, root, dir string)
	lim  func(*Limits)
	rule error
	// file is the entry the error must name ("" for the source root itself).
	file string
	// says is text the message must hold.
	says string
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func replace(t *testing.T, p string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(edit(string(b))), 0o600); err != nil {
		t.Fatal(err)
	}
}

func size(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

var hostileProfiles = []hostile{
	{name: "symlink to /etc/passwd", rule: ErrLink, file: realFolder + "/" + llamaRun + "_bench.log",
		edit: func(t *testing.T, _, dir string) {
			os.Remove(filepath.Join(dir, llamaRun+"_bench.log"))
			symlink(t, "/etc/passwd", filepath.Join(dir, llamaRun+"_bench.log"))
		}},
	{name: "symlink to a file of the folder", rule: ErrLink, file: realFolder + "/" + results.GuardLogFile,
		edit: func(t *testing.T, _, dir string) {
			os.Rename(filepath.Join(dir, results.GuardLogFile), filepath.Join(dir, "Real_greedy_bench.log"))
			symlink(t, "Real_greedy_bench.log", filepath.Join(dir, results.GuardLogFile))
		}},
	{name: "dangling symlink", rule: ErrLink, file: realFolder + "/" + results.HostInfoFile,
		edit: func(t *testing.T, _, dir string) {
			os.Remove(filepath.Join(dir, results.HostInfoFile))
			symlink(t, "nowhere.json", filepath.Join(dir, results.HostInfoFile))
		}},
	{name: "symlinked results folder", rule: ErrLink, file: realFolder,
		edit: func(t *testing.T, root, dir string) {
			other := filepath.Join(t.TempDir(), realFolder)
			if err := os.Rename(dir, other); err != nil {
				t.Fatal(err)
			}
			symlink(t, other, dir)
		}},
	{name: "symlinked folder inside", rule: ErrLink, file: realFolder + "/etc",
		edit: func(t *testing.T, _, dir string) { symlink(t, "/etc", filepath.Join(dir, "etc")) }},
	{name: "FIFO", rule: ErrNotRegular, file: realFolder + "/" + results.SessionFile, says: "FIFO",
		edit: func(t *testing.T, _, dir string) {
			os.Remove(filepath.Join(dir, results.SessionFile))
			if err := syscall.Mkfifo(filepath.Join(dir, results.SessionFile), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	{name: "unknown file", rule: ErrUnknown, file: realFolder + "/notes.txt", says: "guard.log",
		edit: func(t *testing.T, _, dir string) { writeFile(t, filepath.Join(dir, "notes.txt"), []byte("hi\n")) }},
	{name: "agent info is not a results file", rule: ErrUnknown, file: realFolder + "/" + llamaRun + "_agent_info.csv",
		edit: func(t *testing.T, _, dir string) {
			writeFile(t, filepath.Join(dir, llamaRun+"_agent_info.csv"), []byte("\"Node_Id\"\n"))
		}},
	{name: "bare suffix", rule: ErrUnknown, file: realFolder + "/_summary.json",
		edit: func(t *testing.T, _, dir string) {
			copyFixture(t, filepath.Join(dir, llamaRun+"_summary.json"), filepath.Join(dir, "_summary.json"))
		}},
	{name: "leading dot", rule: ErrName, file: realFolder + "/.summary.json.tmp123", says: "starts with a dot",
		edit: func(t *testing.T, _, dir string) {
			writeFile(t, filepath.Join(dir, ".summary.json.tmp123"), []byte("{"))
		}},
	{name: "dot dot in a name", rule: ErrName, file: realFolder + "/a..b_bench.log", says: "..",
		edit: func(t *testing.T, _, dir string) {
			copyFixture(t, filepath.Join(dir, llamaRun+"_bench.log"), filepath.Join(dir, "a..b_bench.log"))
		}},
	{name: "control character in a name", rule: ErrName, file: realFolder + "/x\x1b[31m_bench.log", says: "U+001B",
		edit: func(t *testing.T, _, dir string) {
			copyFixture(t, filepath.Join(dir, llamaRun+"_bench.log"), filepath.Join(dir, "x\x1b[31m_bench.log"))
		}},
	{name: "invalid UTF-8 name", rule: ErrName, file: realFolder + "/\xff_bench.log", says: "UTF-8",
		edit: func(t *testing.T, _, dir string) {
			copyFixture(t, filepath.Join(dir, llamaRun+"_bench.log"), filepath.Join(dir, "\xff_bench.log"))
		}},
	{name: "backslash in a name", rule: ErrName, file: realFolder + `/..\..\x_bench.log`,
		edit: func(t *testing.T, _, dir string) { writeFile(t, filepath.Join(dir, `..\..\x_bench.log`), nil) }},
	{name: "nested folder", rule: ErrDepth, file: realFolder + "/sub",
		edit: func(t *testing.T, _, dir string) { writeFile(t, filepath.Join(dir, "sub", "guard.log"), nil) }},
	{name: "nested folder within the depth", rule: ErrNested, file: realFolder + "/sub",
		lim:  func(l *Limits) { l.MaxDepth = 2 },
		edit: func(t *testing.T, _, dir string) { writeFile(t, filepath.Join(dir, "sub", "guard.log"), nil) }},
	{name: "root too deep", rule: ErrDepth, file: realFolder,
		lim: func(l *Limits) { l.MaxDepth = 0 }},
	{name: "second results folder", rule: ErrLayout, file: "", says: "holds 2 results folders (gfx1151_929c80ab, gfx1151_deadbeef)",
		edit: func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, "gfx1151_deadbeef", results.GuardLogFile), nil)
		}},
	{name: "a file beside the results folder", rule: ErrUnknown, file: "README.md",
		edit: func(t *testing.T, root, _ string) { writeFile(t, filepath.Join(root, "README.md"), nil) }},
	{name: "the folder's files without the folder", rule: ErrUnknown, file: llamaRun + "_bench.log", says: "upload its parent",
		edit: func(t *testing.T, root, dir string) {
			for name := range tree(t, dir) {
				if err := os.Rename(filepath.Join(dir, name), filepath.Join(root, name)); err != nil {
					t.Fatal(err)
				}
			}
			os.Remove(dir)
		}},
	{name: "another folder beside the results folder", rule: ErrUnknown, file: "traces",
		edit: func(t *testing.T, root, _ string) { writeFile(t, filepath.Join(root, "traces", "x"), nil) }},
	{name: "no results folder", rule: ErrLayout, file: "",
		edit: func(t *testing.T, root, dir string) { os.RemoveAll(dir) }},
	{name: "too many files", rule: ErrTooMany, file: realFolder,
		lim: func(l *Limits) { l.MaxFiles = 16 }},
	{name: "a file one byte over the cap", rule: ErrTooLarge, file: realFolder + "/" + llamaRun + "_kernel_stats.csv", says: "more than",
		edit: func(t *testing.T, _, dir string) {
			p := filepath.Join(dir, llamaRun+"_kernel_stats.csv")
			replace(t, p, func(s string) string { return s + strings.Repeat(" ", int(128<<10-size(t, p)+1)) })
		},
		lim: func(l *Limits) { l.MaxFileBytes = 128 << 10 }},
	{name: "total over the cap", rule: ErrTotal, says: "more than 65536",
		edit: func(t *testing.T, _, dir string) {},
		lim:  func(l *Limits) { l.MaxTotalBytes = 64 << 10 }},
	{name: "summary that is not JSON", rule: ErrFormat, file: realFolder + "/" + qwenRun + "_summary.json", says: "run summary",
		edit: func(t *testing.T, _, dir string) {
			writeFile(t, filepath.Join(dir, qwenRun+"_summary.json"), []byte("not json\n"))
		}},
	{name: "summary the reader refuses", rule: ErrFormat, file: realFolder + "/" + qwenRun + "_summary.json",
		edit: func(t *testing.T, _, dir string) {
			replace(t, filepath.Join(dir, qwenRun+"_summary.json"), func(s string) string {
				return strings.Replace(s, `"generated_tokens": 128`, `"generated_tokens": -1`, 1)
			})
		}},
	{name: "summary of another run", rule: ErrFormat, file: realFolder + "/Other_greedy_summary.json", says: "same name",
		edit: func(t *testing.T, _, dir string) {
			os.Rename(filepath.Join(dir, qwenRun+"_summary.json"), filepath.Join(dir, "Other_greedy_summary.json"))
		}},
	{name: "kernel stats the reader refuses", rule: ErrFormat, file: realFolder + "/" + llamaRun + "_kernel_stats.csv", says: "kernel_stats",
		edit: func(t *testing.T, _, dir string) {
			writeFile(t, filepath.Join(dir, llamaRun+"_kernel_stats.csv"), []byte("\"Name\",\"Calls\"\n\"k\",1\n"))
		}},
	{name: "decode kernels the reader refuses", rule: ErrFormat, file: realFolder + "/" + llamaRun + "_decode_kernels.csv",
		edit: func(t *testing.T, _, dir string) {
			writeFile(t, filepath.Join(dir, llamaRun+"_decode_kernels.csv"), []byte("kernel,calls\nk,x\n"))
		}},
	{name: "bench log the reader refuses", rule: ErrFormat, file: realFolder + "/" + llamaRun + "_plain_bench.log",
		edit: func(t *testing.T, _, dir string) {
			replace(t, filepath.Join(dir, llamaRun+"_plain_bench.log"), func(s string) string { return s + "[Profile Results]\n" })
		}},
	{name: "guard log with a line cut in its timestamp", rule: ErrFormat, file: realFolder + "/guard.log", says: "line 397",
		edit: func(t *testing.T, _, dir string) {
			replace(t, filepath.Join(dir, results.GuardLogFile), func(s string) string { return s + "2026-09-30T19:4\n" })
		}},
	{name: "guard log cut in a message", rule: ErrFormat, file: realFolder + "/guard.log", says: "cut short",
		edit: func(t *testing.T, _, dir string) {
			replace(t, filepath.Join(dir, results.GuardLogFile), func(s string) string { return s[:len(s)-5] })
		}},
	{name: "guard records cut short", rule: ErrFormat, file: realFolder + "/guard.log.jsonl",
		edit: func(t *testing.T, _, dir string) {
			replace(t, filepath.Join(dir, results.GuardLogFile+".jsonl"), func(s string) string { return s[:len(s)-20] + "\n" })
		}},
	{name: "host facts that are not an object", rule: ErrFormat, file: realFolder + "/hostinfo.json", says: "JSON object",
		edit: func(t *testing.T, _, dir string) {
			writeFile(t, filepath.Join(dir, results.HostInfoFile), []byte("[1,2]\n"))
		}},
	{name: "session with an unknown run status", rule: ErrFormat, file: realFolder + "/session.json", says: "pwned",
		edit: func(t *testing.T, _, dir string) {
			replace(t, filepath.Join(dir, results.SessionFile), func(s string) string {
				i := strings.LastIndex(s, `"status": "ok"`)
				return s[:i] + `"status": "pwned"` + s[i+len(`"status": "ok"`):]
			})
		}},
	{name: "test outcome with an unknown key", rule: ErrFormat, file: realFolder + "/gemm_tests.json",
		edit: func(t *testing.T, _, dir string) {
			replace(t, filepath.Join(dir, results.GemmTestsFile), func(s string) string {
				return strings.Replace(s, `"overlay_commit"`, `"passed": true, "overlay_commit"`, 1)
			})
		}},
	{name: "two objects in the gemm patch", rule: ErrFormat, file: realFolder + "/gemm_patch.json", says: "trailing data after the object",
		edit: func(t *testing.T, _, dir string) { writeFile(t, filepath.Join(dir, GemmPatchFile), []byte("{}\n{}\n")) }},
}

func TestProfileRefusesHostileFolders(t *testing.T) {
	t.Parallel()
	for _, h := range hostileProfiles {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			root := layProfile(t)
			if h.edit != nil {
				h.edit(t, root, filepath.Join(root, realFolder))
			}
			lim := DefaultLimits()
			if h.lim != nil {
				h.lim(&lim)
			}
			dst := filepath.Join(t.TempDir(), "copy")
			got, err := Profile(context.Background(), root, dst, lim)
			checkRefusal(t, err, h, root)
			if got != "" {
				t.Errorf("Profile returned %q with its error", got)
			}
			gone(t, dst)
		})
	}
}

func checkRefusal(t *testing.T, err error, h hostile, root string) {
	t.Helper()
	if err == nil {
		t.Fatal("accepted")
	}
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, h.rule) {
		t.Fatalf("error %v (%T), want the rule %q", err, err, h.rule)
	}
	want := h.file
	if want == "" {
		want = root
	}
	if h.rule != ErrTotal && e.File != want {
		t.Errorf("the error names %q, want %q: %v", e.File, want, err)
	}
	if h.says != "" && !strings.Contains(err.Error(), h.says) {
		t.Errorf("the error does not say %q: %v", h.says, err)
	}
	if strings.ContainsAny(err.Error(), "\x1b\xff") {
		t.Errorf("the error carries raw control or invalid bytes: %q", err)
	}
}

func TestProfileRefusesAnExistingDestination(t *testing.T) {
	t.Parallel()
	root := layProfile(t)
	dst := t.TempDir()
	keep := filepath.Join(dst, "keep.txt")
	writeFile(t, keep, []byte("mine"))
	_, err := Profile(context.Background(), root, dst, DefaultLimits())
	if !errors.Is(err, ErrExists) {
		t.Fatalf("error %v, want ErrExists", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Errorf("the existing destination was touched: %q, %v", b, err)
	}
	// A link at the destination is not followed either.
	link := filepath.Join(t.TempDir(), "link")
	symlink(t, t.TempDir(), link)
	if _, err := Profile(context.Background(), root, link, DefaultLimits()); !errors.Is(err, ErrExists) {
		t.Errorf("a link as destination: %v, want ErrExists", err)
	}
}

func TestProfileRefusesASymlinkedSource(t *testing.T) {
	t.Parallel()
	root := layProfile(t)
	link := filepath.Join(t.TempDir(), "results")
	symlink(t, root, link)
	dst := filepath.Join(t.TempDir(), "copy")
	_, err := Profile(context.Background(), link, dst, DefaultLimits())
	if !errors.Is(err, ErrLink) {
		t.Fatalf("error %v, want ErrLink", err)
	}
	gone(t, dst)
}

func TestProfileStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	root := layProfile(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dst := filepath.Join(t.TempDir(), "copy")
	if _, err := Profile(ctx, root, dst, DefaultLimits()); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	gone(t, dst)
}

// TestProfileStopsBetweenFiles cancels the copy while it reads the folder's files: it
// stops with the context's error before the next file and leaves nothing.
func TestProfileStopsBetweenFiles(t *testing.T) {
	t.Parallel()
	root := layProfile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dst := filepath.Join(t.TempDir(), "copy")
	// The third file's check cancels; the copy must not go on to the fourth.
	n := 0
	c, err := start(ctx, root, dst, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	defer c.closeAll()
	dir, name, err := c.profileFolder()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := c.plan(dir, name, 1, func(name string) (*kind, bool, error) {
		k, drop, err := profileKind(name)
		if k == nil {
			return k, drop, err
		}
		return &kind{what: k.what, check: func(a string, b []byte, p string) error {
			n++
			if n == 3 {
				cancel()
			}
			return k.check(a, b, p)
		}}, drop, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.run(name, dir, plan); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n != 3 {
		t.Errorf("%d files checked, want 3: the copy went on after the cancel", n)
	}
	gone(t, dst)
}

func TestLimitsMustBeSet(t *testing.T) {
	t.Parallel()
	root := layProfile(t)
	for _, lim := range []Limits{{}, {MaxFiles: 1, MaxFileBytes: 1, MaxTotalBytes: 1, MaxDepth: -1}} {
		dst := filepath.Join(t.TempDir(), "copy")
		if _, err := Profile(context.Background(), root, dst, lim); err == nil || !strings.Contains(err.Error(), "DefaultLimits") {
			t.Errorf("limits %+v: %v", lim, err)
		}
		gone(t, dst)
	}
}

// TestLimitsAreInclusive copies a folder whose largest file, total and entry count are
// exactly at the caps: a cap is the most allowed, one over it is refused (above).
func TestLimitsAreInclusive(t *testing.T) {
	t.Parallel()
	root := layProfile(t)
	files := tree(t, filepath.Join(root, realFolder))
	var largest, total int64
	for _, b := range files {
		largest = max(largest, int64(len(b)))
		total += int64(len(b))
	}
	lim := Limits{MaxFiles: len(files) + 1, MaxFileBytes: largest, MaxTotalBytes: total, MaxDepth: 1}
	if _, err := Profile(context.Background(), root, filepath.Join(t.TempDir(), "copy"), lim); err != nil {
		t.Fatalf("at the caps: %v", err)
	}
	for _, tight := range []func(*Limits){
		func(l *Limits) { l.MaxFiles-- },
		func(l *Limits) { l.MaxFileBytes-- },
		func(l *Limits) { l.MaxTotalBytes-- },
		func(l *Limits) { l.MaxDepth-- },
	} {
		l := lim
		tight(&l)
		dst := filepath.Join(t.TempDir(), "copy")
		if _, err := Profile(context.Background(), root, dst, l); err == nil {
			t.Errorf("%+v: accepted one over a cap", l)
		}
		gone(t, dst)
	}
	// The folder itself as the source needs no folder level.
	lim.MaxDepth, lim.MaxFiles = 0, len(files)
	if _, err := Profile(context.Background(), filepath.Join(root, realFolder), filepath.Join(t.TempDir(), "copy"), lim); err != nil {
		t.Errorf("the folder itself at depth 0: %v", err)
	}
}

// TestProfileKeepsTheLogOfAFailedRun: the runner keeps a crashed bench's log, which may
// be cut inside its results block; that run left no summary, so the log is copied with
// a note instead of refusing the session's other results. The same log beside a
// summary is refused (hostileProfiles).
func TestProfileKeepsTheLogOfAFailedRun(t *testing.T) {
	t.Parallel()
	root := layProfile(t)
	dir := filepath.Join(root, realFolder)
	crash := "[mlx-rocm] bound HIP device 0: gfx1151 (AMD Radeon 8060S Graphics) cus=20 warp=32 lds=64KB\n" +
		"[Profile Results]\n  Prompt tokens:    512\nthread 'main' panicked at src/bin/bench.rs:88:5:\nHIP error: out of memory\n"
	const run = "Granite-4.0-H-Tiny-4bit_greedy"
	writeFile(t, filepath.Join(dir, run+"_plain_bench.log"), []byte(crash))
	dst := filepath.Join(t.TempDir(), "copy")
	res, err := ProfileResult(context.Background(), root, dst, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], run+"_plain_bench.log") || !strings.Contains(res.Notes[0], "no summary") {
		t.Errorf("Notes = %q", res.Notes)
	}
	if b, err := os.ReadFile(filepath.Join(res.Dir, run+"_plain_bench.log")); err != nil || string(b) != crash {
		t.Errorf("the crash log is not copied: %q, %v", b, err)
	}
	// With a summary of that run beside it the log must parse.
	writeFile(t, filepath.Join(dir, llamaRun+"_plain_bench.log"), []byte(crash))
	_, err = Profile(context.Background(), root, filepath.Join(t.TempDir(), "copy"), DefaultLimits())
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), llamaRun+"_plain_bench.log") {
		t.Errorf("the crash log of a run with a summary: %v", err)
	}
}

// Every name of runner/results' profile layout has a reader here: a file the runner
// writes is never refused as unknown.
func TestEveryLayoutNameHasAKind(t *testing.T) {
	t.Parallel()
	names := append([]string(nil), results.ProfileSessionFiles...)
	for _, s := range results.RunFileSuffixes {
		names = append(names, "llama_greedy"+s)
	}
	names = append(names, results.RunFiles("llama_greedy")...)
	for _, name := range names {
		if k, drop, err := profileKind(name); k == nil || drop || err != nil {
			t.Errorf("%s: kind %v, dropped %v, %v", name, k, drop, err)
		}
	}
}
