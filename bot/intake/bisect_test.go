package intake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/results"
)

const bisectModel = "Meta-Llama-3.1-8B-Instruct-4bit"

// layBisect writes a bisection folder as a bisect job leaves it into dir: bisect.json
// (a complete bisection whose first bad commit is the runner's compare's B), the
// guard's log and its records, the host facts, and the culprit's profile A/B (a copy
// of the compare runner/job wrote) in culprit/.
func layBisect(t *testing.T, dir string) {
	t.Helper()
	src := runnerCompare(t)
	c, err := results.ReadCompare(filepath.Join(src, results.CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, results.CulpritDir), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	commits := []string{strings.Repeat("0", 39) + "1", c.ShaA, c.ShaB}
	start := time.Date(2026, 10, 26, 3, 0, 0, 0, time.UTC)
	b := results.Bisect{Good: commits[0], Bad: commits[2], Model: bisectModel, Metric: "decode tok/s", Commits: commits, Backend: "rocm",
		Host: "strixhalo-gfx1151", GFX: "gfx1151", Date: "2026-10-26", Started: start, Finished: start.Add(time.Hour), State: results.SessionComplete,
		GuardLog: results.GuardLogFile, HostInfo: results.HostInfoFile, Culprit: results.CulpritDir,
		Outcome: &results.BisectOutcome{Outcome: results.BisectFound, FirstBad: c.ShaB, LastGood: c.ShaA, Confidence: 0.97, EndsP: 0.001, ChangePct: -12, Why: "settled"}}
	for _, sha := range commits {
		b.Steps = append(b.Steps, results.BisectMeasurement{Commit: sha, Readings: []float64{35, 35.1, 34.9}})
		b.Runs += 3
	}
	if err := b.Save(dir); err != nil {
		t.Fatal(err)
	}
	ts := start.Format("2006-01-02T15:04:05-0700")
	writeFile(t, filepath.Join(dir, results.GuardLogFile), []byte("== bisect "+bisectModel+"\n"+ts+" attempt 1/5: start: scripts/bench_decode.sh "+bisectModel+"\n"+ts+" attempt 1: CLEAN, exit 0\n"))
	writeFile(t, filepath.Join(dir, results.GuardLogFile+results.GuardEventsSuffix), []byte(`{"label":"bisect","attempt":1,"max_attempts":5,"verdict":"clean"}`+"\n"))
	writeFile(t, filepath.Join(dir, results.HostInfoFile), []byte(`{"rocm": {"value": "10.0.0"}}`))
}

// A bisection folder is copied whole, byte for byte, the culprit's profile A/B with
// its side folders included, whether the artifact is the folder or holds it.
func TestBisectCopiesTheFolder(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	layBisect(t, src)
	dst := filepath.Join(t.TempDir(), "copy")
	res, err := BisectResult(context.Background(), src, dst, DefaultLimits())
	if err != nil || res.Dir != dst {
		t.Fatalf("BisectResult = %q, %v", res.Dir, err)
	}
	srcTree, dstTree := tree(t, src), tree(t, dst)
	if len(dstTree) != len(srcTree) || len(dstTree) < 10 {
		t.Fatalf("%d files copied of %d", len(dstTree), len(srcTree))
	}
	copiedByteForByte(t, srcTree, dstTree)
	for _, want := range []string{results.BisectFile, results.GuardLogFile, results.HostInfoFile, "culprit/" + results.CompareFile, "culprit/a/" + results.SessionFile} {
		if !slices.Contains(res.Files, want) {
			t.Errorf("%s not among the files copied: %v", want, res.Files)
		}
	}
	if _, err := results.ReadBisect(filepath.Join(dst, results.BisectFile)); err != nil {
		t.Error(err)
	}
	// An artifact that holds the bisect-<model> folder.
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "bisect-"+bisectModel), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if !IsBisect(root) || !IsBisect(src) || IsBisect(t.TempDir()) {
		t.Error("IsBisect does not tell a bisection's artifact")
	}
	got, err := Bisect(context.Background(), root, filepath.Join(t.TempDir(), "c"), DefaultLimits())
	if err != nil || filepath.Base(got) != "bisect-"+bisectModel {
		t.Errorf("Bisect of the root = %q, %v", got, err)
	}
}

var hostileBisects = []hostile{
	{name: "manifest is a link", rule: ErrLink, file: results.BisectFile, edit: func(t *testing.T, root, dir string) {
		os.Rename(filepath.Join(dir, results.BisectFile), filepath.Join(root, "elsewhere.json"))
		symlink(t, filepath.Join(root, "elsewhere.json"), filepath.Join(dir, results.BisectFile))
	}},
	{name: "manifest is not JSON", rule: ErrFormat, file: results.BisectFile, says: "not a manifest of a bisection", edit: func(t *testing.T, _, dir string) {
		writeFile(t, filepath.Join(dir, results.BisectFile), []byte(`{"good": `))
	}},
	{name: "manifest too large", rule: ErrTooLarge, file: results.BisectFile, lim: func(l *Limits) { l.MaxFileBytes = 512 },
		edit: func(t *testing.T, _, dir string) {}},
	{name: "culprit folder is a link", rule: ErrLink, file: results.CulpritDir, edit: func(t *testing.T, root, dir string) {
		os.Rename(filepath.Join(dir, results.CulpritDir), filepath.Join(root, "c"))
		symlink(t, filepath.Join(root, "c"), filepath.Join(dir, results.CulpritDir))
	}},
	{name: "a link in the culprit's side folder", rule: ErrLink, file: "culprit/a/" + results.SessionFile, edit: func(t *testing.T, _, dir string) {
		p := filepath.Join(dir, results.CulpritDir, "a", results.SessionFile)
		os.Remove(p)
		symlink(t, "/etc/passwd", p)
	}},
	{name: "a stray file", rule: ErrUnknown, file: "notes.txt", edit: func(t *testing.T, _, dir string) {
		writeFile(t, filepath.Join(dir, "notes.txt"), []byte("x"))
	}},
	{name: "a stray folder", rule: ErrNested, file: "other", edit: func(t *testing.T, _, dir string) {
		writeFile(t, filepath.Join(dir, "other", "x"), []byte("x"))
	}},
	{name: "a culprit folder the manifest does not name", rule: ErrUnknown, file: results.CulpritDir, edit: func(t *testing.T, _, dir string) {
		replace(t, filepath.Join(dir, results.BisectFile), func(s string) string {
			return strings.Replace(s, `"culprit": "culprit"`, `"culprit_reason": "the budget was spent"`, 1)
		})
	}},
	{name: "a culprit A/B without its manifest", rule: ErrLayout, file: results.CulpritDir, edit: func(t *testing.T, _, dir string) {
		os.Remove(filepath.Join(dir, results.CulpritDir, results.CompareFile))
	}},
}

// A hostile bisection artifact is refused with the rule it broke and the entry that
// broke it, and nothing is left at the destination.
func TestBisectRefusesHostileFolders(t *testing.T) {
	t.Parallel()
	refusesAll(t, hostileBisects, func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "artifact")
		layBisect(t, dir)
		return dir
	}, Bisect)
}

// A nightly folder carries the folders its manifest names: a suspect's confirming A/B
// and a bisection, each copied and checked as its own artifact is; a folder it does not
// name, or a link in one, is refused.
func TestNightlyCarriesItsConfirmAndBisection(t *testing.T) {
	t.Parallel()
	lay := func(t *testing.T) string {
		dir := layNight(t)
		confirm, bisect := results.ConfirmDirPrefix+bisectModel, results.BisectDirPrefix+bisectModel
		if err := os.CopyFS(filepath.Join(dir, confirm), os.DirFS(runnerCompare(t))); err != nil {
			t.Fatal(err)
		}
		layBisect(t, filepath.Join(dir, bisect))
		b, err := results.ReadBisect(filepath.Join(dir, bisect, results.BisectFile))
		if err != nil {
			t.Fatal(err)
		}
		replace(t, filepath.Join(dir, nightStem+results.NightlySuffix), func(s string) string {
			return strings.TrimSuffix(strings.TrimSpace(s), "}") + fmt.Sprintf(`,"remeasures":[{"model":%q,"verdict":"regression","confirm":%q}],"bisects":[{"model":%q,"good":%q,"bad":%q,"dir":%q}]}`,
				bisectModel, confirm, bisectModel, b.Good, b.Bad, bisect)
		})
		return dir
	}
	t.Run("copied", func(t *testing.T) {
		t.Parallel()
		src := lay(t)
		// The profiler's own database, dropped in every run folder the nightly carries,
		// is listed once for each, the list in name order.
		dropped := []string{"bisect-" + bisectModel + "/culprit/b/3184_results.db", "confirm-" + bisectModel + "/a/3184_results.db", "confirm-" + bisectModel + "/b/3184_results.db"}
		for _, name := range dropped {
			writeFile(t, filepath.Join(src, name), []byte("SQLite format 3\x00"))
		}
		dst := filepath.Join(t.TempDir(), "copy")
		res, err := NightlyResult(context.Background(), src, dst, DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Dropped, dropped) || !slices.IsSorted(res.Files) {
			t.Errorf("Dropped %v, want %v; Files sorted: %v", res.Dropped, dropped, slices.IsSorted(res.Files))
		}
		for _, want := range []string{rocmCSV, "confirm-" + bisectModel + "/" + results.CompareFile, "confirm-" + bisectModel + "/b/" + results.SessionFile,
			"bisect-" + bisectModel + "/" + results.BisectFile, "bisect-" + bisectModel + "/culprit/a/" + results.SessionFile} {
			if !slices.Contains(res.Files, want) {
				t.Errorf("%s not among the files copied: %v", want, res.Files)
			}
		}
		srcTree, dstTree := tree(t, src), tree(t, dst)
		if len(srcTree) != len(dstTree)+len(dropped) {
			t.Errorf("%d files copied of %d, %d of them dropped", len(dstTree), len(srcTree), len(dropped))
		}
	})
	refusesAll(t, []hostile{
		{name: "a folder the manifest does not name", rule: ErrUnknown, file: "confirm-other", edit: func(t *testing.T, _, dir string) {
			if err := os.CopyFS(filepath.Join(dir, "confirm-other"), os.DirFS(runnerCompare(t))); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a bisection folder that is a link", rule: ErrLink, file: "bisect-" + bisectModel, edit: func(t *testing.T, root, dir string) {
			p := filepath.Join(dir, "bisect-"+bisectModel)
			os.Rename(p, filepath.Join(root, "moved"))
			symlink(t, filepath.Join(root, "moved"), p)
		}},
		{name: "a bad manifest in the bisection", rule: ErrFormat, file: "bisect-" + bisectModel + "/" + results.BisectFile, edit: func(t *testing.T, _, dir string) {
			writeFile(t, filepath.Join(dir, "bisect-"+bisectModel, results.BisectFile), []byte("[]"))
		}},
	}, lay, Nightly)
}
