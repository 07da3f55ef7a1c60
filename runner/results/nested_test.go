package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nestedNightly is a nightly folder with a confirming A/B of granite (the sample bench
// compare), a bisection of it (the sample bisection, for granite) and the bisection's
// culprit profile A/B; it returns the folder, the re-measure and the bisection entry.
func nestedNightly(t *testing.T) (string, Remeasure, NightBisect, Bisect) {
	t.Helper()
	folder := t.TempDir()
	c := sampleCompare(t)
	rm := Remeasure{Model: "granite", Verdict: "regression", Decode: 88, Confirm: ConfirmDirPrefix + "granite"}
	dir := filepath.Join(folder, rm.Confirm)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{c.CSVBefore, c.CSVAfter} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("model\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := sampleBisect()
	b.Model = "granite"
	b.Culprit = CulpritDir
	nb := NightBisect{Model: "granite", Good: b.Good, Bad: b.Bad, Dir: BisectDirPrefix + "granite"}
	bdir := filepath.Join(folder, nb.Dir)
	cdir := filepath.Join(bdir, CulpritDir)
	for _, d := range []string{cdir, filepath.Join(cdir, CompareDirA), filepath.Join(cdir, CompareDirB)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Save(bdir); err != nil {
		t.Fatal(err)
	}
	p := sampleCompare(t)
	p.Kind, p.ShaA, p.ShaB, p.CSVBefore, p.CSVAfter, p.DirA, p.DirB = CompareProfile, b.Outcome.LastGood, b.Outcome.FirstBad, "", "", CompareDirA, CompareDirB
	p.Models[0].Model = "granite_greedy"
	for i := range p.Runs {
		p.Runs[i].Model = "granite_greedy"
	}
	p.Diffs = []CompareDiff{{Model: "granite_greedy", JSON: "granite_greedy" + DiffJSONSuffix}}
	if err := p.Save(cdir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cdir, p.Diffs[0].JSON), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return folder, rm, nb, b
}

// The readers give back the nested manifests of a well-formed nightly folder.
func TestReadNestedFolders(t *testing.T) {
	t.Parallel()
	folder, rm, nb, b := nestedNightly(t)
	c, err := ReadNightlyConfirm(folder, rm)
	if err != nil || c.Kind != CompareBench || c.Models[0].Model != "granite" {
		t.Fatalf("ReadNightlyConfirm: %v %+v", err, c)
	}
	got, err := ReadNightBisect(folder, nb)
	if err != nil || got.Culprit != CulpritDir || got.Outcome.FirstBad != b.Outcome.FirstBad {
		t.Fatalf("ReadNightBisect: %v %+v", err, got)
	}
	cc, err := ReadCulprit(filepath.Join(folder, nb.Dir), got)
	if err != nil || cc.Kind != CompareProfile || cc.ShaB != b.Outcome.FirstBad {
		t.Fatalf("ReadCulprit: %v %+v", err, cc)
	}
	// A bisection the nightly skipped has nothing to read.
	if _, err := ReadNightBisect(folder, NightBisect{Model: "granite", Good: nb.Good, Bad: nb.Bad, Reason: "nightly.bisect_runs is 0"}); !errors.Is(err, ErrNoBisect) ||
		!strings.Contains(err.Error(), "nightly.bisect_runs is 0") {
		t.Errorf("a skipped bisection: %v", err)
	}
}

// Hostile names and folders: a folder name that is not exactly the expected one, a
// link in place of the folder (even to a good folder), a file, a manifest of another
// model, range or kind, all refused with what is wrong.
func TestReadNestedFoldersHostile(t *testing.T) {
	t.Parallel()
	folder, rm, nb, b := nestedNightly(t)
	outside := t.TempDir()
	// A good A/B folder outside the nightly folder, linked in under another model's name.
	if err := os.Rename(filepath.Join(folder, rm.Confirm), filepath.Join(outside, "real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "real"), filepath.Join(folder, rm.Confirm)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, ConfirmDirPrefix+"file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		rm   Remeasure
		want string
	}{
		{"link", rm, "is a symbolic link, not a folder"},
		{"escape", Remeasure{Model: "granite", Confirm: "../" + rm.Confirm}, "it must be"},
		{"other model's folder", Remeasure{Model: "granite", Confirm: ConfirmDirPrefix + "other"}, "it must be"},
		{"dot model", Remeasure{Model: "..", Confirm: ConfirmDirPrefix + ".."}, "not a folder name"},
		{"slash model", Remeasure{Model: "a/b", Confirm: ConfirmDirPrefix + "a/b"}, "model name"},
		{"a file", Remeasure{Model: "file", Confirm: ConfirmDirPrefix + "file"}, "not a folder"},
		{"missing", Remeasure{Model: "gone", Confirm: ConfirmDirPrefix + "gone"}, "no such file"},
		{"none", Remeasure{Model: "granite"}, "no A/B folder"},
	} {
		if _, err := ReadNightlyConfirm(folder, c.rm); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	other := nb
	other.Good = b.Commits[1]
	wrongDir := nb
	wrongDir.Dir = BisectDirPrefix + "granite/" + CulpritDir
	for _, c := range []struct {
		name string
		nb   NightBisect
		want string
	}{
		{"another range", other, "not the nightly's"},
		{"nested path", wrongDir, "it must be"},
		{"other model", NightBisect{Model: "x", Good: nb.Good, Bad: nb.Bad, Dir: nb.Dir}, "it must be"},
	} {
		if _, err := ReadNightBisect(folder, c.nb); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	bdir := filepath.Join(folder, nb.Dir)
	for _, c := range []struct {
		name string
		edit func(*Bisect)
		want string
	}{
		{"named otherwise", func(b *Bisect) { b.Culprit = "../culprit" }, "it must be"},
		{"no outcome", func(b *Bisect) { b.Outcome = nil }, "no first bad commit"},
		{"another culprit", func(b *Bisect) { b.Outcome.FirstBad, b.Outcome.LastGood = b.Commits[6], b.Commits[5] }, "not the profile A/B"},
		{"another model", func(b *Bisect) { b.Model = "other" }, "not of the bisected model"},
	} {
		bb := b
		o := *b.Outcome
		bb.Outcome = &o
		c.edit(&bb)
		if _, err := ReadCulprit(bdir, bb); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// The culprit folder replaced by a link to a good copy of it.
	cdir := filepath.Join(bdir, CulpritDir)
	if err := os.Rename(cdir, filepath.Join(outside, "culprit")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "culprit"), cdir); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCulprit(bdir, b); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a linked culprit folder: %v", err)
	}
}

// A nightly manifest naming nested folders other than its own is refused on save and
// on read; a bisection names its culprit folder culprit or nothing.
func TestNightlyNestedNamesValidated(t *testing.T) {
	t.Parallel()
	good, bad := testShaA, testShaB
	base := Nightly{Stem: "rocm_strixhalo-gfx1151_2026-12-03", Date: "2026-12-03"}
	for _, c := range []struct {
		name string
		edit func(*Nightly)
		want string
	}{
		{"confirm of another model", func(n *Nightly) {
			n.Remeasures = []Remeasure{{Model: "a", Confirm: ConfirmDirPrefix + "b"}}
		}, "it must be confirm-a"},
		{"confirm escaping", func(n *Nightly) { n.Remeasures = []Remeasure{{Model: "..", Confirm: "confirm-.."}} }, "not a folder name"},
		{"first night not a date", func(n *Nightly) { n.Remeasures = []Remeasure{{Model: "a", Since: "2026-12-3"}} }, "the first night \"2026-12-3\" is not YYYY-MM-DD"},
		{"bisect folder", func(n *Nightly) { n.Bisects = []NightBisect{{Model: "a", Good: good, Bad: bad, Dir: "/tmp/x"}} }, "it must be bisect-a"},
		{"short sha", func(n *Nightly) { n.Bisects = []NightBisect{{Model: "a", Good: good[:7], Bad: bad, Dir: "bisect-a"}} }, "not two full SHAs"},
		{"twice", func(n *Nightly) {
			n.Bisects = []NightBisect{{Model: "a", Good: good, Bad: bad, Reason: "x"}, {Model: "a", Good: good, Bad: bad, Reason: "y"}}
		}, "bisected twice"},
		{"silent skip", func(n *Nightly) { n.Bisects = []NightBisect{{Model: "a", Good: good, Bad: bad}} }, "neither a folder nor a reason"},
		{"escape in reason", func(n *Nightly) { n.Bisects = []NightBisect{{Model: "a", Good: good, Bad: bad, Reason: "x\x1b[31m"}} }, "not printable"},
	} {
		n := base
		c.edit(&n)
		dir := t.TempDir()
		if err := n.Save(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Save: %v, want %q", c.name, err, c.want)
		}
		if err := writeManifest(filepath.Join(dir, n.Stem+NightlySuffix), "x", &n); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadNightly(filepath.Join(dir, n.Stem+NightlySuffix)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ReadNightly: %v, want %q", c.name, err, c.want)
		}
	}
	b := sampleBisect()
	for _, c := range []struct {
		name string
		edit func(*Bisect)
	}{
		{"culprit elsewhere", func(b *Bisect) { b.Culprit = "../x" }},
		{"culprit without a first bad commit", func(b *Bisect) {
			b.Culprit, b.Outcome.Outcome, b.Outcome.FirstBad, b.Outcome.LastGood = CulpritDir, BisectNotReproduced, "", ""
		}},
		{"reason with a newline", func(b *Bisect) { b.CulpritReason = "a\nb" }},
	} {
		bb := b
		o := *b.Outcome
		bb.Outcome = &o
		c.edit(&bb)
		if err := bb.Validate(); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// The names of a nightly folder and of a bisection folder: the nested folders by their
// exact names, the files as they are named, anything else refused with the layout.
func TestNightlyAndBisectNames(t *testing.T) {
	t.Parallel()
	for name, dir := range map[string]bool{
		"confirm-Qwen3-0.6B-4bit": true, "bisect-Meta-Llama-3.1-8B-Instruct-4bit": true,
		"rocm_strixhalo-gfx1151_2026-12-03.nightly.json": false, "rocm_strixhalo-gfx1151_2026-12-03.guard.log": false,
		"rocm_strixhalo-gfx1151_2026-12-03.guard.log.jsonl": false, "pylm_strixhalo-gfx1151_2026-12-03.csv": false,
	} {
		if got, err := NightlyName(name); err != nil || got != dir {
			t.Errorf("NightlyName(%q) = %v, %v", name, got, err)
		}
	}
	for _, bad := range []string{"confirm-", "confirm-..", "bisect-.hidden", "bisect-a\nb", "culprit", "notes.txt", "bisect", "confirm-x\x1b[31m"} {
		if _, err := NightlyName(bad); err == nil {
			t.Errorf("NightlyName(%q) accepted", bad)
		}
	}
	for name, dir := range map[string]bool{"culprit": true, "bisect.json": false, "guard.log": false, "guard.log.jsonl": false, "hostinfo.json": false} {
		if got, err := BisectName(name); err != nil || got != dir {
			t.Errorf("BisectName(%q) = %v, %v", name, got, err)
		}
	}
	for _, bad := range []string{"culprit2", "a", "b", "Culprit", "../culprit", "compare.json"} {
		if _, err := BisectName(bad); err == nil || !strings.Contains(err.Error(), "a bisection folder holds") {
			t.Errorf("BisectName(%q): %v", bad, err)
		}
	}
}
