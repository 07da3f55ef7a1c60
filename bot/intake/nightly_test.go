package intake

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/results"
)

const (
	nightStem = "rocm_strixhalo-gfx1151_2026-09-30"
	rocmCSV   = nightStem + ".csv"
	pylmCSV   = "pylm_strixhalo-gfx1151_2026-09-30.csv"
)

// layNight writes the folder `perfbot run bench` leaves under results.benchmarks, with
// the real 2026-09-30 CSVs of both runtimes, and returns it.
func layNight(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "benchmarks")
	for _, name := range []string{rocmCSV, pylmCSV} {
		copyFixture(t, testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name), filepath.Join(dir, name))
	}
	start := time.Date(2026, 9, 30, 2, 0, 0, 0, time.FixedZone("", 9*3600))
	ts := start.Format("2006-01-02T15:04:05-0700")
	writeFile(t, filepath.Join(dir, nightStem+results.GuardLogSuffix), []byte("== nightly mlxcel\n"+
		ts+" waiting for 90s of idle GPU and no compiler\n"+
		ts+" attempt 1/5: start: scripts/bench_decode.sh all --cooldown 30 --big-cooldown 30\n"+
		ts+" attempt 1: CLEAN, exit 0\n"))
	writeFile(t, filepath.Join(dir, nightStem+results.GuardLogSuffix+".jsonl"), []byte(`{"label":"mlxcel sweep","attempt":1,"max_attempts":5,"verdict":"clean"}`+"\n"))
	writeJSON(t, filepath.Join(dir, nightStem+results.NightlySuffix), results.Nightly{
		Date: "2026-09-30", Started: start, Finished: start.Add(50 * time.Minute), State: "complete",
		Commit: realCommit, GFX: "gfx1151", Host: "strixhalo-gfx1151", Stem: nightStem, ModelsDir: "models/mlx",
		HostInfo: hostinfo.Info{ROCm: hostinfo.Fact{Value: "10.0.0"}, GFX: hostinfo.Fact{Value: "gfx1151"}},
		Build:    results.Build{Command: results.BenchBuildCommand, Status: "ok", Seconds: 301},
		Sweeps: []results.Sweep{
			{Name: results.SweepMlxcel, Command: results.HarnessCommand, Status: "ok", CSVs: []string{rocmCSV}},
			{Name: results.SweepMlxLM, Command: results.BaselineCommand, Status: "ok", CSVs: []string{pylmCSV}},
		},
		CSVs: []string{rocmCSV, pylmCSV}, GuardLog: nightStem + results.GuardLogSuffix,
	})
	return dir
}

func TestNightlyCopiesTheFolderByteForByte(t *testing.T) {
	t.Parallel()
	src := layNight(t)
	dst := filepath.Join(t.TempDir(), "nightly")
	got, err := Nightly(context.Background(), src, dst, DefaultLimits())
	if err != nil || got != dst {
		t.Fatalf("Nightly = %q, %v; want %s", got, err, dst)
	}
	srcTree, dstTree := tree(t, src), tree(t, dst)
	if len(srcTree) != 5 || len(dstTree) != 5 {
		t.Fatalf("%d files copied of %d (want 5)", len(dstTree), len(srcTree))
	}
	copiedByteForByte(t, srcTree, dstTree)
	for name := range srcTree {
		if fi, err := os.Stat(filepath.Join(dst, name)); err != nil || fi.Mode() != 0o644 {
			t.Errorf("%s: mode %v, %v; want 0644", name, fi.Mode(), err)
		}
	}
	res, err := NightlyResult(context.Background(), src, filepath.Join(t.TempDir(), "again"), DefaultLimits())
	if err != nil || !slices.Equal(res.Files, []string{pylmCSV, rocmCSV, nightStem + ".guard.log", nightStem + ".guard.log.jsonl", nightStem + ".nightly.json"}) {
		t.Errorf("NightlyResult: %v, %v", res.Files, err)
	}
}

var hostileNights = []hostile{
	{name: "no manifest", rule: ErrLayout, says: "holds 0 nightly manifests",
		edit: func(t *testing.T, _, dir string) { os.Remove(filepath.Join(dir, nightStem+results.NightlySuffix)) }},
	{name: "two manifests", rule: ErrLayout, says: "holds 2 nightly manifests",
		edit: func(t *testing.T, _, dir string) {
			copyFixture(t, filepath.Join(dir, nightStem+results.NightlySuffix), filepath.Join(dir, "rocm_strixhalo-gfx1151_2026-10-01.nightly.json"))
		}},
	{name: "manifest of another stem", rule: ErrFormat, file: "rocm_strixhalo-gfx1151_2026-10-01.nightly.json", says: "its own file name",
		edit: func(t *testing.T, _, dir string) {
			os.Rename(filepath.Join(dir, nightStem+results.NightlySuffix), filepath.Join(dir, "rocm_strixhalo-gfx1151_2026-10-01.nightly.json"))
		}},
	{name: "manifest that is not one", rule: ErrFormat, file: nightStem + results.NightlySuffix, says: "not a manifest",
		edit: func(t *testing.T, _, dir string) {
			writeFile(t, filepath.Join(dir, nightStem+results.NightlySuffix), []byte(`{"stem": "../../etc"}`))
		}},
	{name: "CSV the manifest does not name", rule: ErrUnknown, file: "rocm_strixhalo-gfx1151_2026-09-29.csv", says: "does not name it",
		edit: func(t *testing.T, _, dir string) {
			copyFixture(t, filepath.Join(dir, rocmCSV), filepath.Join(dir, "rocm_strixhalo-gfx1151_2026-09-29.csv"))
		}},
	{name: "CSV that is not a harness name", rule: ErrUnknown, file: "results.csv", says: "harness CSV name",
		edit: func(t *testing.T, _, dir string) { writeFile(t, filepath.Join(dir, "results.csv"), []byte("a\n")) }},
	{name: "CSV the reader refuses", rule: ErrFormat, file: pylmCSV, says: "empty",
		edit: func(t *testing.T, _, dir string) { writeFile(t, filepath.Join(dir, pylmCSV), nil) }},
	{name: "guard log of another stem", rule: ErrUnknown, file: "rocm_strixhalo-gfx1151_2026-09-29.guard.log", says: "stem",
		edit: func(t *testing.T, _, dir string) {
			copyFixture(t, filepath.Join(dir, nightStem+results.GuardLogSuffix), filepath.Join(dir, "rocm_strixhalo-gfx1151_2026-09-29.guard.log"))
		}},
	{name: "truncated guard log", rule: ErrFormat, file: nightStem + results.GuardLogSuffix, says: "cut short",
		edit: func(t *testing.T, _, dir string) {
			replace(t, filepath.Join(dir, nightStem+results.GuardLogSuffix), func(s string) string { return strings.TrimSuffix(s, "\n") })
		}},
	{name: "the harness logs", rule: ErrNested, file: "logs",
		edit: func(t *testing.T, _, dir string) { writeFile(t, filepath.Join(dir, "logs", "build.log"), nil) }},
	{name: "symlinked CSV", rule: ErrLink, file: rocmCSV,
		edit: func(t *testing.T, _, dir string) {
			os.Remove(filepath.Join(dir, rocmCSV))
			symlink(t, "/etc/passwd", filepath.Join(dir, rocmCSV))
		}},
	{name: "unknown file", rule: ErrUnknown, file: "notes.md", says: "nightly results folder holds",
		edit: func(t *testing.T, _, dir string) { writeFile(t, filepath.Join(dir, "notes.md"), nil) }},
	{name: "a CSV one byte over the cap", rule: ErrTooLarge, file: rocmCSV,
		lim: func(l *Limits) { l.MaxFileBytes = 4096 },
		edit: func(t *testing.T, _, dir string) {
			p := filepath.Join(dir, rocmCSV)
			replace(t, p, func(s string) string { return s + strings.Repeat("\n", int(4096-size(t, p)+1)) })
		}},
}

func TestNightlyRefusesHostileFolders(t *testing.T) {
	t.Parallel()
	refusesAll(t, hostileNights, func(t *testing.T) string { return layNight(t) }, Nightly)
}

// refusesAll copies, for each way h an artifact can be wrong, the folder lay makes
// (its parent is the root h.edit gets) once h.edit broke it: the copy must be refused
// with h's rule and entry, return no folder, and leave nothing at the destination.
func refusesAll(t *testing.T, hs []hostile, lay func(*testing.T) string, copyOf func(ctx context.Context, src, dst string, lim Limits) (string, error)) {
	for _, h := range hs {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			dir := lay(t)
			h.edit(t, filepath.Dir(dir), dir)
			lim := DefaultLimits()
			if h.lim != nil {
				h.lim(&lim)
			}
			dst := filepath.Join(t.TempDir(), "copy")
			got, err := copyOf(context.Background(), dir, dst, lim)
			checkRefusal(t, err, h, dir)
			if got != "" {
				t.Errorf("the copy returned %q with its error", got)
			}
			gone(t, dst)
		})
	}
}
