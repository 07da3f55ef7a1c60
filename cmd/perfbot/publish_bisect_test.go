package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/runner/results"
)

// `perfbot publish --results DIR` of a bisection folder (it holds bisect.json):
// the outcome becomes the bisection comment, with the check run and the status
// comment, as files of the dry run; nothing is committed.
func TestPublishBisectDryRun(t *testing.T) {
	tg, _ := publishHome(t)
	dir := t.TempDir()
	commits := []string{strings.Repeat("1", 40), strings.Repeat("2", 40), tg.Base}
	start := time.Date(2026, 10, 26, 3, 0, 0, 0, time.UTC)
	b := results.Bisect{Good: commits[0], Bad: commits[2], Model: "Qwen3-30B-A3B-4bit", Metric: "decode tok/s", Commits: commits, Backend: "rocm",
		Host: "strixhalo-gfx1151", Date: "2026-10-26", Started: start, Finished: start.Add(time.Hour), State: results.SessionComplete,
		CulpritReason: "the budget was spent",
		Outcome:       &results.BisectOutcome{Outcome: results.BisectFound, FirstBad: commits[2], LastGood: commits[1], Confidence: 0.96, EndsP: 0.001, ChangePct: -12, Why: "settled"}}
	for _, c := range commits {
		b.Steps = append(b.Steps, results.BisectMeasurement{Commit: c, Readings: []float64{35, 34.8, 35.2}})
		b.Runs += 3
	}
	if err := b.Save(dir); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dry")
	stdout := publishCLI(t, 0, "publish", "--results", dir, "--repo", tg.Repo, "--dry-run", out, "--issue", "12")
	textHas(t, "the summary", stdout, "bisection of Qwen3-30B-A3B-4bit", ": found from "+commits[0], "first bad "+tg.Base, "comment   created")
	textHas(t, "the comment", readDry(t, out, publish.DryBisectComment),
		"<!-- perfbot:bisect Qwen3-30B-A3B-4bit 11111111..", "**Found: the first bad commit is "+tg.Base[:8], "No profile A/B of the culprit: the budget was spent")
	if _, err := os.Stat(filepath.Join(out, publish.DryCheckRun)); err != nil {
		t.Error(err)
	}
}

// The publish of a compare and of a bisection refuse, as usage errors, a missing clone
// (each naming what its clone must hold) and a negative id.
func TestPublishCompareAndBisectUsageErrors(t *testing.T) {
	compare, bisect := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bisect, results.BisectFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--compare", compare}, "--compare needs --repo, a clone holding A's commit (usage: perfbot publish "},
		{[]string{"--results", bisect}, "a bisection needs --repo, a clone holding the culprit's parent (usage: perfbot publish "},
		{[]string{"--compare", compare, "--repo", t.TempDir(), "--issue", "-1"}, "ids and issue numbers must be positive"},
		{[]string{"--results", bisect, "--repo", t.TempDir(), "--check-run-id", "-2"}, "ids and issue numbers must be positive"},
	} {
		args := append([]string{"publish"}, c.args...)
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("perfbot %s: exit %d, stderr %q; want 2 and %q", strings.Join(args, " "), code, errb.String(), c.want)
		}
	}
}
