package publish

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/mdtest"
	"github.com/lablup/perfbot/runner/results"
)

// A dry run makes the commit on the local bot branch, pushes only to the remote on
// this machine, writes the GitHub documents as files, and a second dry run of the same
// results changes nothing.
func TestDryRun(t *testing.T) {
	t.Parallel()
	var o Options
	tg, sum, out := dryProfile(t, profile{date: "2026-09-30", tests: allPassed, trace: true}, true, func(po *Options) {
		po.TriggerCommentID = triggerID
		o = *po
	})
	if !sum.DryRun || !sum.OK() || sum.Git.Action != "created" || tg.branch(t) != sum.Git.Commit {
		t.Fatalf("summary %+v; remote branch %s", sum, tg.branch(t))
	}
	if got := gitT(t, tg.checkout, "rev-parse", "refs/heads/"+botBranch); got != sum.Git.Commit {
		t.Errorf("the local bot branch is %s, want the commit %s", got, sum.Git.Commit)
	}
	want := map[string]string{"git": "created", "pr": "created", "epic": "created", "status": "created", "check": "created", "reaction": "skipped"}
	wantActions(t, "", sum, want)
	if !strings.Contains(sum.Reaction.Detail, "rocket") {
		t.Errorf("reaction = %+v, want it to say it would react rocket", sum.Reaction)
	}
	var written Summary
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, DrySummary))), &written); err != nil {
		t.Fatal(err)
	}
	if written.Git.Commit != sum.Git.Commit || written.Report != sum.Report {
		t.Errorf("summary.json %+v differs from the returned summary", written)
	}
	committed := map[string]bool{}
	for p := range treeFiles(t, tg.bare, sum.Git.Commit) {
		committed[p] = true
	}
	for _, name := range []string{DryPR, DryEpic, DryStatus, DryCheckRun, DryStepSummary} {
		md := readFile(t, filepath.Join(out, name))
		if err := report.Validate(md, committed, ""); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	page := tg.file(t, sum.Git.Commit, sum.Report)
	checkPageNumbers(t, page, o.ResultsDir)

	again, err := Publish(context.Background(), o)
	if err != nil {
		t.Fatalf("second dry run: %v", err)
	}
	want = map[string]string{"git": "unchanged", "pr": "unchanged", "epic": "unchanged", "status": "unchanged", "check": "unchanged", "reaction": "skipped"}
	if diff := cmp.Diff(want, actions(again)); diff != "" {
		t.Errorf("second dry run actions (-want +got):\n%s", diff)
	}
}

// checkPageNumbers compares the page's tables with the summaries, figure by figure:
// each number is the summary's own, printed as the summary prints it.
func checkPageNumbers(t *testing.T, page, resultsRoot string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(resultsRoot, "*", "*_summary.json"))
	if len(paths) == 0 {
		t.Fatal("no summaries")
	}
	resultRows := mdtest.Under(t, page, "## Results")
	costRows := mdtest.Under(t, page, "## Profiler cost")
	shareRows := mdtest.Under(t, page, "## Share per port unit")
	for _, p := range paths {
		s, err := results.ReadSummary(p)
		if err != nil {
			t.Fatal(err)
		}
		name := "`" + s.Name + "`"
		// Each column prints the summary's figure rounded to the column's one precision.
		opt := func(d int, n *results.Num) string {
			if n == nil {
				return "—"
			}
			return strconv.FormatFloat(float64(*n), 'f', d, 64)
		}
		f := func(d int, n results.Num) string { return strconv.FormatFloat(float64(n), 'f', d, 64) }
		wantRow := []string{name, report.Text(s.ModelType), "greedy", f(2, s.ProfiledDecodeTokS), opt(2, s.PlainDecodeTokS),
			f(3, s.GPUMsPerToken), f(3, s.HostGapMsPerToken), f(1, s.HostGapPctOfWall), opt(3, s.PlainHostGapMsPerTokenEst),
			f(1, s.DispatchesPerToken), "0", f(1, s.Checks.IdleGapBeforeFirstDecodeDispatchUs)}
		if diff := cmp.Diff(wantRow, resultRows.Row(name)); diff != "" {
			t.Errorf("results row of %s (-summary +page):\n%s", s.Name, diff)
		}
		if got := costRows.Row(name); len(got) < 4 || got[3] != opt(1, s.ProfilerDecodeSlowdownPct) {
			t.Errorf("profiler cost row of %s = %q, want slowdown %s", s.Name, got, opt(1, s.ProfilerDecodeSlowdownPct))
		}
		top := mdtest.Under(t, page, "### "+report.Text(s.Name))
		for i, k := range s.TopKernels {
			row := top.Row(strconv.Itoa(i + 1))
			want := []string{strconv.Itoa(i + 1), report.CellCode(k.Kernel), report.Text(k.Class), f(2, k.CallsPerToken), f(2, k.SharePct)}
			if diff := cmp.Diff(want, row); diff != "" {
				t.Errorf("top kernel %d of %s (-summary +page):\n%s", i+1, s.Name, diff)
			}
		}
		shares := shareRows.Row(name)
		for i, kv := range s.PortUnits {
			want := f(2, kv.Unit.ReachedDefaultSharePct) + " (" + f(2, kv.Unit.FallbackSharePct) + ")"
			if i+1 >= len(shares) || shares[i+1] != want {
				t.Errorf("share of #%s in %s = %q, want %q", kv.ID, s.Name, shares, want)
			}
		}
	}
}

// A repository whose remote is not on this machine gets a dry-run remote in the
// dry-run folder; nothing goes over the network.
func TestDryRunWithNetworkRemotePushesToLocalBare(t *testing.T) {
	t.Parallel()
	_, sum, out := dryProfile(t, profile{date: "2026-09-30"}, false, func(o *Options) {
		bare := gitT(t, o.RepoDir, "remote", "get-url", "origin")
		gitT(t, o.RepoDir, "remote", "set-url", "origin", "https://github.invalid/lablup/mlxcel.git")
		t.Cleanup(func() { gitT(t, o.RepoDir, "remote", "set-url", "origin", bare) })
	})
	bare := filepath.Join(out, "remote.git")
	if sum.Git.Remote != bare {
		t.Errorf("pushed to %q, want %q", sum.Git.Remote, bare)
	}
	if got := gitT(t, bare, "rev-parse", "refs/heads/"+botBranch); got != sum.Git.Commit {
		t.Errorf("the dry-run remote holds %s, want %s", got, sum.Git.Commit)
	}
	if _, err := os.Stat(filepath.Join(out, DryPR)); err != nil {
		t.Error(err)
	}
}
