package results

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/runner/abstat"
)

var (
	testShaA = strings.Repeat("a", 40)
	testShaB = "b" + strings.Repeat("0", 39)
)

// sampleCompare is a complete bench compare of one model, two runs a side in ABBA
// order, with its CSV pair.
func sampleCompare(t *testing.T) Compare {
	t.Helper()
	before, err := CompareCSVName("rocm", "strixhalo-gfx1151", "2026-12-03", "pr-1900", true)
	if err != nil {
		t.Fatal(err)
	}
	after, err := CompareCSVName("rocm", "strixhalo-gfx1151", "2026-12-03", "pr-1900", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := abstat.Compare([]float64{60, 61, 60.5}, []float64{88, 88.5, 89}, abstat.HigherIsBetter, abstat.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	return Compare{
		Kind: CompareBench, ShaA: testShaA, ShaB: testShaB, Label: "pr-1900",
		Backend: "rocm", Host: "strixhalo-gfx1151", GFX: "gfx1151", Date: "2026-12-03",
		Started: started, Finished: started.Add(time.Hour), State: SessionComplete,
		Start: 3, Cap: 10, MaxRedo: 3, Options: abstat.DefaultOptions(),
		Metrics: []CompareMetric{{Name: "decode tok/s", Direction: abstat.HigherIsBetter.String()}},
		Models: []CompareModel{{Model: "granite", Done: true, NA: 3, NB: 3,
			Results: []CompareResult{{Metric: "decode tok/s", Look: 1, Result: res}}}},
		Runs: []CompareRun{
			{Model: "granite", Side: SideA, I: 0, Values: []float64{60}},
			{Model: "granite", Side: SideB, I: 0, Values: []float64{88}, Rejected: 1},
			{Model: "granite", Side: SideB, I: 1, Values: []float64{88.5}},
			{Model: "granite", Side: SideA, I: 1, Values: []float64{61}},
			{Model: "granite", Side: SideA, I: 2, Values: []float64{60.5}},
			{Model: "granite", Side: SideB, I: 2, Values: []float64{89}},
		},
		Rejected: 1, Planned: 6,
		CSVBefore: before, CSVAfter: after, GuardLog: GuardLogFile, HostInfo: HostInfoFile,
	}
}

// What Compare.Save writes, ReadCompare gives back unchanged, and the CSV pair is
// named as the maintainers name theirs.
func TestCompareRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := sampleCompare(t)
	if want.CSVBefore != "rocm_strixhalo-gfx1151_2026-12-03_pr-1900-before.csv" || want.CSVAfter != "rocm_strixhalo-gfx1151_2026-12-03_pr-1900-after.csv" {
		t.Errorf("CSV pair %s, %s", want.CSVBefore, want.CSVAfter)
	}
	if err := want.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCompare(filepath.Join(dir, CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("read back (-saved +read):\n%s", diff)
	}
	if v := got.Values("granite", SideB, 0); !cmp.Equal(v, []float64{88, 88.5, 89}) {
		t.Errorf("B's readings %v", v)
	}
	if m, ok := got.Model("granite"); !ok || m.Results[0].Verdict != abstat.Faster || m.Results[0].Test != abstat.TestWelch {
		t.Errorf("granite: %+v", m)
	}
	b, err := os.ReadFile(filepath.Join(dir, CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"kind": "bench"`, `"sha_a": "aaaa`, `"median_a": 60.5`, `"verdict": "faster"`, `"test": "welch"`, `"side": "B"`, `"metric": "decode tok/s"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("compare.json lacks %s", key)
		}
	}
	wantFiles := []string{CompareFile, want.CSVBefore, want.CSVAfter, GuardLogFile, GuardLogFile + GuardEventsSuffix, HostInfoFile}
	if !cmp.Equal(got.Files(), wantFiles) {
		t.Errorf("Files() = %v, want %v", got.Files(), wantFiles)
	}
}

// A partial compare (cancelled mid-model) is still a valid manifest.
func TestComparePartialIsValid(t *testing.T) {
	t.Parallel()
	c := sampleCompare(t)
	c.State, c.Error = SessionInterrupted, "stopped after 3 runs: context canceled"
	c.Runs = c.Runs[:3]
	c.Models[0] = CompareModel{Model: "granite", NA: 1, NB: 2}
	c.Models = append(c.Models, CompareModel{Model: "nemotron"})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestCompareValidateRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(c *Compare)
		want string
	}{
		{"kind", func(c *Compare) { c.Kind = "gemm" }, "kind"},
		{"short sha", func(c *Compare) { c.ShaA = "aaaaaaa" }, "commit A"},
		{"upper sha", func(c *Compare) { c.ShaB = strings.Repeat("A", 40) }, "commit B"},
		{"label with slash", func(c *Compare) { c.Label = "../x" }, "compare label"},
		{"label with underscore", func(c *Compare) { c.Label = "a_single_b" }, "compare label"},
		{"host", func(c *Compare) { c.Host = "../etc" }, "hardware tag"},
		{"backend", func(c *Compare) { c.Backend = "vulkan" }, "backend"},
		{"date", func(c *Compare) { c.Date = "03/12/2026" }, "YYYY-MM-DD"},
		{"state", func(c *Compare) { c.State = "cancelled" }, "state"},
		{"no metrics", func(c *Compare) { c.Metrics = nil }, "0 metrics"},
		{"direction", func(c *Compare) { c.Metrics[0].Direction = "up" }, "direction"},
		{"model path", func(c *Compare) { c.Models[0].Model = "../granite" }, "model 1"},
		{"model dotdot", func(c *Compare) { c.Models[0].Model = ".." }, "model 1"},
		{"model twice", func(c *Compare) { c.Models = append(c.Models, c.Models[0]) }, "listed twice"},
		{"verdict", func(c *Compare) { c.Models[0].Results[0].Verdict = "much faster" }, "verdict"},
		{"test", func(c *Compare) { c.Models[0].Results[0].Test = "eyeball" }, "test"},
		{"p", func(c *Compare) { c.Models[0].Results[0].P = 2 }, "not in 0..1"},
		{"metric order", func(c *Compare) { c.Models[0].Results[0].Metric = "prefill tok/s" }, "not of metric"},
		{"done without results", func(c *Compare) { c.Models[0].Results = nil }, "no results"},
		{"unknown run model", func(c *Compare) { c.Runs[0].Model = "llama" }, "does not list"},
		{"side", func(c *Compare) { c.Runs[0].Side = "C" }, "side"},
		{"order", func(c *Compare) { c.Runs[1], c.Runs[2] = c.Runs[2], c.Runs[1] }, "not in the order"},
		{"reading", func(c *Compare) { c.Runs[0].Values[0] = -1 }, "finite positive"},
		{"readings", func(c *Compare) { c.Runs[0].Values = nil }, "0 readings"},
		{"counts", func(c *Compare) { c.Models[0].NA = 4 }, "counts"},
		{"csv", func(c *Compare) { c.CSVBefore = "../rocm_x_2026-12-03_pr-1900-before.csv" }, "CSV"},
		{"half pair", func(c *Compare) { c.CSVAfter = "" }, "half named"},
		{"guard log", func(c *Compare) { c.GuardLog = "/etc/passwd" }, "guard log"},
		{"side dir in bench", func(c *Compare) { c.DirA = CompareDirA }, "profile folders"},
		{"side dir", func(c *Compare) { c.Kind, c.DirA = CompareProfile, "../a" }, "side folders"},
		{"diff name", func(c *Compare) {
			c.Kind, c.Diffs = CompareProfile, []CompareDiff{{Model: "granite", JSON: "../granite_diff.json"}}
		}, "its file"},
		{"profile run name in bench", func(c *Compare) { c.Runs[0].Run = "granite_greedy" }, "profile run"},
	} {
		c := sampleCompare(t)
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
		if err := c.Save(t.TempDir()); err == nil {
			t.Errorf("%s: saved a manifest Validate refuses", tc.name)
		}
	}
}

func TestReadCompareRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := ReadCompare(filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"not json", `{"kind": `, "unexpected end"},
		{"array", `[]`, "want a JSON object"},
		{"empty", `{}`, "kind"},
		{"nan", `{"kind": "bench", "runs": [{"values": [NaN]}]}`, "invalid character"},
	} {
		p := filepath.Join(dir, tc.name+".json")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadCompare(p); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "not a manifest of a compare") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A FIFO is refused without blocking, and a huge file without reading it whole.
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		if _, err := ReadCompare(fifo); err == nil {
			t.Error("read a FIFO")
		}
	}
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxCompareBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadCompare(big); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("huge file: %v", err)
	}
}

// ReadCompareFolder checks the folder against its manifest: files named are regular
// files of the folder, never links out of it; side folders are folders.
func TestReadCompareFolder(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, c Compare) string {
		dir := t.TempDir()
		if err := c.Save(dir); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{c.CSVBefore, c.CSVAfter} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("model\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	c := sampleCompare(t)
	dir := write(t, c)
	if _, err := ReadCompareFolder(dir); err != nil {
		t.Fatalf("a good folder (guard log and host facts absent): %v", err)
	}
	// A CSV that is a link to a file outside is refused.
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("x"), 0o644)
	os.Remove(filepath.Join(dir, c.CSVAfter))
	if err := os.Symlink(outside, filepath.Join(dir, c.CSVAfter)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCompareFolder(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("linked CSV: %v", err)
	}
	// A missing CSV is refused.
	os.Remove(filepath.Join(dir, c.CSVAfter))
	if _, err := ReadCompareFolder(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing CSV: %v", err)
	}
	// A profile compare's side folder that is a link is refused.
	p := sampleCompare(t)
	p.Kind, p.DirA, p.DirB = CompareProfile, CompareDirA, CompareDirB
	pdir := write(t, p)
	os.Mkdir(filepath.Join(pdir, CompareDirA), 0o755)
	if err := os.Symlink(t.TempDir(), filepath.Join(pdir, CompareDirB)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCompareFolder(pdir); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("linked side folder: %v", err)
	}
}

func TestCompareName(t *testing.T) {
	t.Parallel()
	for name, dir := range map[string]bool{
		"a": true, "b": true, "compare.json": false, "guard.log": false, "guard.log.jsonl": false, "hostinfo.json": false,
		"rocm_strixhalo-gfx1151_2026-12-03_pr-1900-before.csv": false, "rocm_strixhalo-gfx1151_2026-12-03_pr-1900-after.csv": false,
		"granite-4.0-h-tiny-4bit_diff.json": false, "granite-4.0-h-tiny-4bit_diff.md": false,
	} {
		got, err := CompareName(name)
		if err != nil || got != dir {
			t.Errorf("CompareName(%q) = %v, %v; want %v", name, got, err, dir)
		}
	}
	for _, name := range []string{"c", "session.json", "x.csv", "rocm_strixhalo-gfx1151_2026-12-03.csv", "_diff.json", ".hidden_diff.md", "notes.txt"} {
		if _, err := CompareName(name); err == nil || !strings.Contains(err.Error(), "compare results folder") {
			t.Errorf("CompareName(%q): %v", name, err)
		}
	}
	if _, err := CompareCSVName("rocm", "strixhalo-gfx1151", "2026-12-03", "a_single_b", true); err == nil {
		t.Error("a label with _single_ made a CSV name")
	}
	if n, err := CompareCSVName("rocm", "strixhalo-gfx1151", "2026-12-03", "929c80a-e4f5a6b", false); err != nil || n != "rocm_strixhalo-gfx1151_2026-12-03_929c80a-e4f5a6b-after.csv" {
		t.Errorf("short SHAs label: %q, %v", n, err)
	}
}
