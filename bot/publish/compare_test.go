package publish

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/results"
)

const (
	ssmOff = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-off.csv"
	ssmOn  = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv"
	// The pair's names as a compare labelled ssm-kernel writes them.
	ssmBefore = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-before.csv"
	ssmAfter  = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-after.csv"
)

var compareShaB = "b" + strings.Repeat("0", 39)

// layCompare writes a compare results folder from the maintainers' SSM kernel pair of
// 2026-10-04 (off as A, on as B; each model's repeats the runs, in ABBA order),
// decided as runner/baseline decides the pair, for A = the target's base commit. edit
// changes the manifest before it is saved.
func layCompare(t testing.TB, shaA string, edit func(*results.Compare)) string {
	t.Helper()
	dir := t.TempDir()
	raw := map[string][]byte{}
	files := map[string]*benchcsv.File{}
	for name, as := range map[string]string{ssmOff: ssmBefore, ssmOn: ssmAfter} {
		b, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name))
		if err != nil {
			t.Fatal(err)
		}
		raw[as] = b
		writeFile(t, filepath.Join(dir, as), string(b))
		if files[as], err = benchcsv.ReadFile(filepath.Join(dir, as)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := baseline.CompareAB(files[ssmBefore], files[ssmAfter], nil, abstat.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c := results.Compare{
		Kind: results.CompareBench, ShaA: shaA, ShaB: compareShaB, Label: "ssm-kernel", Backend: "rocm", Host: "strixhalo-gfx1151",
		GFX: "gfx1151", Date: "2026-10-04", Started: time.Date(2026, 10, 4, 9, 0, 0, 0, time.UTC), Finished: time.Date(2026, 10, 4, 10, 0, 0, 0, time.UTC),
		State: results.SessionComplete, Start: 3, Cap: 3, Options: abstat.DefaultOptions(),
		Metrics:   []results.CompareMetric{{Name: baseline.MetricDecode, Direction: abstat.HigherIsBetter.String()}, {Name: baseline.MetricPrefill, Direction: abstat.HigherIsBetter.String()}},
		CSVBefore: ssmBefore, CSVAfter: ssmAfter,
	}
	for _, m := range rep.Results {
		cm := results.CompareModel{Model: m.Model, Done: true}
		for _, r := range m.Metrics {
			cm.Results = append(cm.Results, results.CompareResult{Metric: r.Metric, Result: r.Result})
		}
		var rows [2][]benchcsv.Row
		for i, f := range []*benchcsv.File{files[ssmBefore], files[ssmAfter]} {
			for _, r := range f.Rows {
				if r.Model == m.Model {
					rows[i] = append(rows[i], r)
				}
			}
		}
		cm.NA, cm.NB = len(rows[0]), len(rows[1])
		// ABBA: A0 B0 B1 A1 A2 B2 ...
		for k := 0; k < max(cm.NA, cm.NB); k++ {
			order := []int{0, 1}
			if k%2 == 1 {
				order = []int{1, 0}
			}
			for _, side := range order {
				if k < len(rows[side]) {
					r := rows[side][k]
					c.Runs = append(c.Runs, results.CompareRun{Model: m.Model, Side: [2]results.CompareSide{results.SideA, results.SideB}[side], I: k, Values: []float64{r.DecodeTokS, r.PrefillTokS}})
				}
			}
		}
		c.Models = append(c.Models, cm)
	}
	c.Planned = len(c.Runs)
	if edit != nil {
		edit(&c)
	}
	if err := c.Save(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func compareOptions(tg *target, res string, sink Sink) CompareOptions {
	return CompareOptions{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: sink, BaseBranch: "main", PR: epicIssue,
		TriggerCommentID: triggerID, WorkflowRun: "https://github.com/lablup/mlxcel/actions/runs/31337"}
}

// A dry run of the real pair: the documents (golden), the CSV pair committed on A
// byte for byte under the maintainers' names, a pull request whose three-dot diff is
// the two files alone, and a rerun that changes nothing.
func TestCompareDryRun(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layCompare(t, tg.base, nil)
	out := filepath.Join(t.TempDir(), "dry")
	sum, err := PublishCompare(context.Background(), compareOptions(tg, res, ToDir(out)))
	if err != nil {
		t.Fatalf("PublishCompare: %v", err)
	}
	if !sum.DryRun || sum.Conclusion != "success" || sum.Git.Action != "created" || sum.CheckRun.Detail != "neutral" {
		t.Fatalf("summary %+v", sum)
	}
	if tg.branch(t) != "" {
		t.Error("the compare was pushed to the profile's branch")
	}
	commit := gitT(t, tg.bare, "rev-parse", "refs/heads/"+DefaultCompareBranch)
	if commit != sum.Git.Commit {
		t.Fatalf("the remote's compare branch is %s, the summary says %s", commit, sum.Git.Commit)
	}
	if parent := gitT(t, tg.bare, "rev-parse", commit+"^"); parent != tg.base {
		t.Errorf("the commit's parent is %s, want A %s", parent, tg.base)
	}
	diff := strings.Split(gitT(t, tg.bare, "diff", "--name-only", "main..."+DefaultCompareBranch), "\n")
	want := []string{"benchmarks/" + ssmAfter, "benchmarks/" + ssmBefore}
	if !slices.Equal(diff, want) {
		t.Errorf("the pull request's three-dot diff holds %q, want the CSV pair %q", diff, want)
	}
	for name, src := range map[string]string{ssmBefore: ssmOff, ssmAfter: ssmOn} {
		fix, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", src))
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.file(t, commit, "benchmarks/"+name); got != strings.TrimRight(string(fix), "\n") {
			t.Errorf("benchmarks/%s is not the bytes of %s", name, src)
		}
	}
	committed := treeFiles(t, tg.bare, commit)
	for _, name := range []string{DryCompareComment, DryComparePR, DryCheckRun, DryStatus} {
		md := readFile(t, filepath.Join(out, name))
		if err := report.Validate(md, committed, ""); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if mixed := report.MixedPrecision(md); len(mixed) > 0 {
			t.Errorf("%s: %v", name, mixed)
		}
		golden.Check(t, filepath.Join("testdata", "golden", "compare-bench-"+name), md)
	}
	wantIn(t, readFile(t, filepath.Join(out, DryCompareComment)), report.CompareMarker("bench"),
		"**2 faster, 2 too noisy to call**", "[workflow run](https://github.com/lablup/mlxcel/actions/runs/31337)", "](benchmarks/"+ssmBefore+")")

	again, err := PublishCompare(context.Background(), compareOptions(tg, res, ToDir(out)))
	if err != nil {
		t.Fatalf("second dry run: %v", err)
	}
	got := map[string]string{"git": again.Git.Action, "pr": again.PR.Action, "comment": again.Comment.Action, "status": again.Status.Action, "check": again.CheckRun.Action}
	wantAll := map[string]string{"git": "unchanged", "pr": "unchanged", "comment": "unchanged", "status": "unchanged", "check": "unchanged"}
	if d := cmp.Diff(wantAll, got); d != "" {
		t.Errorf("second dry run (-want +got):\n%s", d)
	}
}
