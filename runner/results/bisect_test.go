package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sampleBisect is a complete bisection of a range of 8 commits that found the fifth.
func sampleBisect() Bisect {
	commits := make([]string, 8)
	for i := range commits {
		commits[i] = fmt.Sprintf("%040x", i+1)
	}
	return Bisect{
		Good: commits[0], Bad: commits[7], Model: "Qwen3-0.6B-4bit", Metric: "decode tok/s", Commits: commits,
		Backend: "rocm", Host: "strixhalo-gfx1151", GFX: "gfx1151", Date: "2026-12-03",
		Started: time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC), Finished: time.Date(2026, 12, 3, 19, 0, 0, 0, time.UTC),
		State:  SessionComplete,
		Params: BisectParams{ErrorRate: 0.01, EndRuns: 3, Start: 2, Step: 1, MaxPerCommit: 4, Budget: 20, EndAlpha: 0.05, MinSigmaPct: 0.5},
		Steps: []BisectMeasurement{
			{Commit: commits[0], Readings: []float64{100, 100, 100}}, {Commit: commits[7], Readings: []float64{93, 93, 93}},
			{Commit: commits[4], Readings: []float64{93, 93}}, {Commit: commits[3], Readings: []float64{100, 100}},
		},
		Runs: 10, Rejected: 1,
		Outcome: &BisectOutcome{Outcome: BisectFound, FirstBad: commits[4], LastGood: commits[3], Confidence: 0.995, EndsP: 0, ChangePct: -7,
			Why: "the posterior passed 0.99",
			Posterior: []BisectPosterior{
				{Commit: commits[0], Runs: 3, PBad: 0, Side: "good"}, {Commit: commits[3], Runs: 2, PBad: 0.004, Side: "good"},
				{Commit: commits[4], Runs: 2, PBad: 1, Side: "bad"}, {Commit: commits[7], Runs: 3, PBad: 1, Side: "bad"},
			}},
		GuardLog: GuardLogFile, HostInfo: HostInfoFile,
	}
}

func TestBisectSaveRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := sampleBisect()
	if err := b.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBisect(filepath.Join(dir, BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(b, got); d != "" {
		t.Errorf("read back (-saved +read):\n%s", d)
	}
	// An interrupted bisection before any outcome is still a manifest.
	b.State, b.Error, b.Outcome, b.Steps, b.Runs = SessionInterrupted, "interrupted during bisect run 1: signal: terminated", nil, b.Steps[:1], 3
	if err := b.Save(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBisect(filepath.Join(dir, BisectFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBisect(filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestBisectValidateRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		edit func(b *Bisect)
		want string
	}{
		{"short good", func(b *Bisect) { b.Good = "abc" }, "good commit"},
		{"range not from good", func(b *Bisect) { b.Commits[0] = b.Commits[1] }, "commits in range"},
		{"duplicate commit", func(b *Bisect) { b.Commits[2] = b.Commits[1] }, "twice"},
		{"one commit", func(b *Bisect) { b.Commits = b.Commits[:1] }, "commits in range"},
		{"model path", func(b *Bisect) { b.Model = "../x" }, "model name"},
		{"step outside", func(b *Bisect) { b.Steps[1].Commit = strings.Repeat("f", 40) }, "not in the range"},
		{"negative reading", func(b *Bisect) { b.Steps[0].Readings[1] = -1 }, "finite positive"},
		{"empty step", func(b *Bisect) { b.Steps[0].Readings = nil }, "no readings"},
		{"runs", func(b *Bisect) { b.Runs = 11 }, "readings"},
		{"state", func(b *Bisect) { b.State = "done" }, "state"},
		{"complete without outcome", func(b *Bisect) { b.Outcome = nil }, "no outcome"},
		{"outcome kind", func(b *Bisect) { b.Outcome.Outcome = "maybe" }, "outcome"},
		{"not neighbours", func(b *Bisect) { b.Outcome.LastGood = b.Commits[2] }, "neighbours"},
		{"not reproduced names one", func(b *Bisect) { b.Outcome.Outcome = BisectNotReproduced }, "not reproduced"},
		{"confidence", func(b *Bisect) { b.Outcome.Confidence = 1.5 }, "confidence"},
		{"posterior order", func(b *Bisect) {
			b.Outcome.Posterior[0], b.Outcome.Posterior[1] = b.Outcome.Posterior[1], b.Outcome.Posterior[0]
		}, "range order"},
		{"posterior side", func(b *Bisect) { b.Outcome.Posterior[0].Side = "?" }, "side"},
		{"control text", func(b *Bisect) { b.Error = "a\x1b[2Jb" }, "printable"},
		{"file", func(b *Bisect) { b.GuardLog = "../guard.log" }, "names the file"},
	} {
		b := sampleBisect()
		c.edit(&b)
		err := b.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
		if err := b.Save(t.TempDir()); err == nil {
			t.Errorf("%s: saved", c.name)
		}
	}
}

func TestReadBisectHostile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"array.json":   "[]",
		"garbage.json": "{not json",
		"types.json":   `{"good": 7}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadBisect(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Bounded: a file over the limit is refused without reading it all.
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"why": "`+strings.Repeat("x", maxBisectBytes)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBisect(big); err == nil {
		t.Error("an oversized manifest was read")
	}
}
