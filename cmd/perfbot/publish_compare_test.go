package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/results"
)

// publishHome is a target repository in a fresh HOME, outside Actions (no step
// summary, repository or run of the environment).
func publishHome(t *testing.T) (tg hosttest.Target, home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_REPOSITORY", "")
	t.Setenv("GITHUB_RUN_ID", "")
	return hosttest.NewTarget(t, home, nil), home
}

// `perfbot publish --compare DIR --dry-run OUT`: the compare comment, the CSV pull
// request, the check run and the status comment become files of OUT, the CSV pair is
// committed on A's commit of the local clone's remote, and a rerun changes nothing.
func TestPublishCompareDryRun(t *testing.T) {
	tg, home := publishHome(t)

	// A compare of one model, 3 runs a side, with the maintainers' SSM kernel pair as
	// its CSVs.
	dir := t.TempDir()
	c := results.Compare{Kind: results.CompareBench, ShaA: tg.Base, ShaB: strings.Repeat("b", 40), Label: "ssm-kernel", Backend: "rocm",
		Host: "strixhalo-gfx1151", Date: "2026-10-04", Started: time.Date(2026, 10, 4, 9, 0, 0, 0, time.UTC), State: results.SessionComplete,
		Start: 3, Cap: 3, Options: abstat.DefaultOptions(), Metrics: []results.CompareMetric{{Name: "decode tok/s", Direction: abstat.HigherIsBetter.String()}},
		CSVBefore: "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-before.csv", CSVAfter: "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-after.csv"}
	a, b := []float64{60.1, 60.4, 60.9}, []float64{88.4, 88.9, 87.8}
	r, err := abstat.Compare(a, b, abstat.HigherIsBetter, abstat.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c.Models = []results.CompareModel{{Model: "granite-4.0-h-tiny-4bit", Done: true, NA: 3, NB: 3, Results: []results.CompareResult{{Metric: "decode tok/s", Result: r}}}}
	for i := range a {
		c.Runs = append(c.Runs, results.CompareRun{Model: "granite-4.0-h-tiny-4bit", Side: results.SideA, I: i, Values: []float64{a[i]}},
			results.CompareRun{Model: "granite-4.0-h-tiny-4bit", Side: results.SideB, I: i, Values: []float64{b[i]}})
	}
	for name, src := range map[string]string{c.CSVBefore: "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-off.csv", c.CSVAfter: "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv"} {
		data, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Save(dir); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "dry")
	args := []string{"publish", "--compare", dir, "--repo", tg.Repo, "--dry-run", out, "--issue", "12", "--workflow-run", "https://github.com/lablup/mlxcel/actions/runs/7"}
	stdout := publishCLI(t, 0, args...)
	textHas(t, "the summary", stdout, "published A/B bench compare ssm-kernel", "commit", "perfbot/rocm-compare-ssm-kernel: created",
		"file      benchmarks/"+c.CSVBefore, "comment   created", "check run created")
	for _, name := range []string{publish.DryCompareComment, publish.DryComparePR, publish.DryCheckRun, publish.DryStatus, publish.DrySummary} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("the dry run wrote no %s: %v", name, err)
		}
	}
	textHas(t, "the comment", readDry(t, out, publish.DryCompareComment),
		"<!-- perfbot:compare-bench -->", "| granite-4.0-h-tiny-4bit | decode tok/s |", "**faster**", "(https://github.com/lablup/mlxcel/actions/runs/7)")
	files := strings.Fields(hosttest.Git(t, home, tg.Bare, "diff", "--name-only", tg.Base+"...perfbot/rocm-compare-ssm-kernel"))
	if len(files) != 2 || files[0] != "benchmarks/"+c.CSVAfter || files[1] != "benchmarks/"+c.CSVBefore {
		t.Errorf("the compare branch adds %q, want the CSV pair", files)
	}
	again := publishCLI(t, 0, args...)
	if !strings.Contains(again, "perfbot/rocm-compare-ssm-kernel: unchanged") || !strings.Contains(again, "comment   unchanged") {
		t.Errorf("a rerun changed something:\n%s", again)
	}
	// --results and --compare together are a usage error.
	publishCLI(t, 2, "publish", "--compare", dir, "--results", dir, "--repo", tg.Repo, "--dry-run", out)
}

// textHas checks that text (what) holds every one of wants.
func textHas(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
}
