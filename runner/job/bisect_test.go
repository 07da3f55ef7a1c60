package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/changepoint"
	"github.com/lablup/perfbot/runner/results"
)

// bisectHistory is harnessRepo followed by n-1 more commits on main, each changing
// history.txt; the commit at index at (1 to n-1) also plants change, which every later
// commit keeps. It returns the repository and the n commits, oldest first.
func bisectHistory(t testing.TB, n, at int, change string) (string, []string) {
	t.Helper()
	repo, base := harnessRepo(t)
	commits := []string{base}
	for i := 1; i < n; i++ {
		writeTestFile(t, filepath.Join(repo, "history.txt"), fmt.Sprintf("commit %d\n", i))
		if i == at {
			writeTestFile(t, filepath.Join(repo, "fake-change.txt"), change)
		}
		git(t, repo, "add", "-A")
		git(t, repo, "commit", "-q", "-m", fmt.Sprintf("commit %d", i))
		commits = append(commits, git(t, repo, "rev-parse", "HEAD"))
	}
	return repo, commits
}

// bisectParams are small settings for the fake host, whose readings do not vary:
// three runs an end, one more at a time, at most three a commit.
func bisectParams() changepoint.BisectParams {
	p := changepoint.DefaultBisectParams()
	p.EndRuns, p.Start, p.Step, p.MaxPerCommit, p.Budget = 3, 1, 1, 3, 30
	return p
}

func bisectOptions(t testing.TB, fh *fakeHost, repo, good, bad string) BisectOptions {
	return BisectOptions{
		Host: fh.h, RepoDir: repo, Good: good, Bad: bad, Config: loadConfig(t, repo), Model: "llama",
		Params: bisectParams(), OutDir: filepath.Join(fh.tmp, "out"), Guard: fh.guardOptions(),
		Every: time.Nanosecond, Now: newStepClock(t, "2026-12-03").Now,
	}
}

// A history of 10 commits whose seventh plants a 7 % decode slowdown: the bisection
// names it, with both ends measured EndRuns times, the commits between once or more,
// every reading at the good or the bad level, and within the budget; bisect.json reads
// back complete, and the worktrees are gone.
func TestBisectSessionFindsThePlantedCommit(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE=2026-12-03")
	repo, commits := bisectHistory(t, 10, 6, "# a slower decode step\ndecode 0.93\n")
	prog := &lineHook{}
	o := bisectOptions(t, fh, repo, commits[0], commits[9])
	o.Progress = prog
	rep, err := BisectSession(context.Background(), o)
	if err != nil {
		t.Fatalf("BisectSession: %v\n%s", err, prog.String())
	}
	if filepath.Base(rep.Folder) != "gfx1151_"+commits[0][:8]+"_"+commits[9][:8] || filepath.Base(filepath.Dir(rep.Folder)) != BisectDir {
		t.Errorf("folder %s", rep.Folder)
	}
	b, err := results.ReadBisect(filepath.Join(rep.Folder, results.BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	if b.State != results.SessionComplete || b.Outcome == nil || b.Outcome.Outcome != results.BisectFound {
		t.Fatalf("manifest state %s, outcome %+v\n%s", b.State, b.Outcome, prog.String())
	}
	if b.Outcome.FirstBad != commits[6] || b.Outcome.LastGood != commits[5] || b.Outcome.Confidence < 0.99 {
		t.Errorf("outcome %+v, want first bad %s", b.Outcome, commits[6])
	}
	if len(b.Commits) != 10 || b.Commits[6] != commits[6] || b.Model != cmpLlama || b.Metric != "decode tok/s" {
		t.Errorf("range %v, model %s, metric %s", b.Commits, b.Model, b.Metric)
	}
	if b.Runs > o.Params.Budget || b.Runs < 7 || b.Rejected != 0 {
		t.Errorf("%d runs, %d rejected", b.Runs, b.Rejected)
	}
	measured := map[string]int{}
	for _, s := range b.Steps {
		i := slices.Index(commits, s.Commit)
		want := 35.41
		if i >= 6 {
			want = 32.93
		}
		for _, v := range s.Readings {
			if v != want {
				t.Errorf("commit %d read %v, want %v", i, v, want)
			}
		}
		measured[s.Commit] += len(s.Readings)
	}
	if measured[commits[0]] != 3 || measured[commits[9]] != 3 || b.Steps[0].Commit != commits[0] || b.Steps[1].Commit != commits[9] {
		t.Errorf("the ends first, three runs each: %v", b.Steps)
	}
	for _, p := range b.Outcome.Posterior {
		if want := slices.Index(commits, p.Commit) >= 6; (p.Side == "bad") != want || p.Runs != measured[p.Commit] {
			t.Errorf("posterior %+v", p)
		}
	}
	// The culprit's profile A/B against its parent, read back as the publisher reads it.
	cc, err := results.ReadCulprit(rep.Folder, b)
	if err != nil {
		t.Fatalf("the culprit's profile A/B: %v (%s)\n%s", err, b.CulpritReason, prog.String())
	}
	if cc.ShaA != commits[5] || cc.ShaB != commits[6] || len(cc.Diffs) != 1 || cc.Diffs[0].Model != cmpLlama+"_greedy" {
		t.Errorf("culprit compare %+v", cc)
	}
	out := prog.String()
	wantIn(t, "progress", out, "bisection of "+commits[0][:8]+".."+commits[9][:8]+" (10 commits)", "bisect: 1 of at most 30 runs done", "bisection found: "+commits[6],
		"profile A/B of the first bad commit "+commits[6][:8]+" against its parent "+commits[5][:8]+" into culprit/")
	wantIn(t, "guard log", noLocalFolders(t, fh, rep.Folder), "== bisect "+cmpLlama+" "+commits[6][:8]+" run ", "start: scripts/bench_decode.sh single models/mlx/"+cmpLlama)
	worktreesGone(t, repo, filepath.Join(o.OutDir, "bisect-worktrees"))
	gitClean(t, repo)
}

// A range with no change: the ends do not differ, no commit between is measured, and
// the bisection ends complete without a culprit.
func TestBisectSessionNoChange(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE=2026-12-03")
	repo, commits := bisectHistory(t, 8, 0, "")
	rep, err := BisectSession(context.Background(), bisectOptions(t, fh, repo, commits[0], commits[7]))
	if err != nil {
		t.Fatal(err)
	}
	b, err := results.ReadBisect(filepath.Join(rep.Folder, results.BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	if b.State != results.SessionComplete || b.Outcome == nil || b.Outcome.Outcome != results.BisectNotReproduced || b.Outcome.FirstBad != "" {
		t.Fatalf("state %s, outcome %+v", b.State, b.Outcome)
	}
	for _, s := range b.Steps {
		if s.Commit != commits[0] && s.Commit != commits[7] {
			t.Errorf("a commit between the ends was measured: %+v", s)
		}
	}
	if b.Culprit != "" || b.CulpritReason != "" {
		t.Errorf("a culprit without a first bad commit: %q %q", b.Culprit, b.CulpritReason)
	}
	if b.Runs != 6 || !strings.Contains(b.Outcome.Why, "not reproduced") {
		t.Errorf("%d runs, why %q", b.Runs, b.Outcome.Why)
	}
}

// Cancelled after the fourth reading: the session stops, says it was interrupted, and
// bisect.json is a valid manifest in state interrupted with the readings taken and the
// outcome so far; no worktree is left.
func TestBisectSessionCancelledKeepsPartial(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE=2026-12-03")
	repo, commits := bisectHistory(t, 12, 3, "decode 0.93\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prog := &lineHook{on: func(line string) {
		if strings.Contains(line, "bisect: 4 of at most") {
			cancel()
		}
	}}
	o := bisectOptions(t, fh, repo, commits[0], commits[11])
	o.Progress = prog
	rep, err := BisectSession(ctx, o)
	if !errors.Is(err, errInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v\n%s", err, prog.String())
	}
	b, err := results.ReadBisect(filepath.Join(rep.Folder, results.BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	if b.State != results.SessionInterrupted || b.Runs != 4 || b.Error == "" || b.Finished.IsZero() {
		t.Errorf("state %s, %d runs, error %q", b.State, b.Runs, b.Error)
	}
	if b.Outcome == nil || b.Outcome.Outcome != results.BisectUndecided {
		t.Errorf("outcome %+v", b.Outcome)
	}
	worktreesGone(t, repo, "")
}

// The range is checked before anything runs: full SHAs, good an ancestor of bad on its
// first-parent history, at most MaxCommits; the model is the config's.
func TestBisectRangeRefused(t *testing.T) {
	t.Parallel()
	repo, commits := bisectHistory(t, 6, 0, "")
	ctx := context.Background()
	got, err := BisectRange(ctx, repo, commits[1], commits[5], 10)
	if err != nil || strings.Join(got, " ") != strings.Join(commits[1:], " ") {
		t.Errorf("range 1..5: %v %v", got, err)
	}
	// A side branch merged in: its commit is an ancestor, but not on the main line.
	git(t, repo, "checkout", "-q", "-b", "side", commits[2])
	writeTestFile(t, filepath.Join(repo, "side.txt"), "side\n")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "side")
	side := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "checkout", "-q", "main")
	git(t, repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	merge := git(t, repo, "rev-parse", "HEAD")
	if got, err := BisectRange(ctx, repo, commits[0], merge, 10); err != nil || len(got) != 7 || got[5] != commits[5] || got[6] != merge {
		t.Errorf("range over the merge: %v %v", got, err)
	}
	for _, c := range []struct {
		name      string
		good, bad string
		max       int
		want      string
	}{
		{"reversed", commits[5], commits[1], 10, "not an ancestor"},
		{"short", commits[1][:12], commits[5], 10, "full 40-hex-digit"},
		{"unknown", strings.Repeat("0", 40), commits[5], 10, "not in the repository"},
		{"too many", commits[0], commits[5], 4, "holds 6 commits, more than 4"},
		{"side branch", side, merge, 10, "first-parent"},
	} {
		_, err := BisectRange(ctx, repo, c.good, c.bad, c.max)
		var br *badRequest
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &br) {
			t.Errorf("%s: %v, want a bad request with %q", c.name, err, c.want)
		}
	}
	fh := newFakeHost(t)
	o := bisectOptions(t, fh, repo, commits[0], commits[5])
	o.Model = "mistral"
	if _, err := BisectSession(ctx, o); err == nil || !strings.Contains(err.Error(), "not in the config") {
		t.Errorf("unknown model: %v", err)
	}
	o = bisectOptions(t, fh, repo, commits[0], commits[5])
	o.Params.Budget = -1
	if _, err := BisectSession(ctx, o); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("a negative budget: %v", err)
	}
	if _, err := os.Stat(o.OutDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused bisection wrote %s: %v", o.OutDir, err)
	}
}

// A culprit found when its profile A/B cannot run (no sampling setting to profile
// with): the bisection stands, complete, and the reason says why there is no culprit
// folder.
func TestBisectSessionCulpritNotProfiled(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE=2026-12-03")
	repo, commits := bisectHistory(t, 3, 1, "decode 0.9\n")
	o := bisectOptions(t, fh, repo, commits[0], commits[2])
	o.Config.Sampling = nil
	rep, err := BisectSession(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	b := rep.Bisect
	if b.State != results.SessionComplete || b.Outcome == nil || b.Outcome.FirstBad != commits[1] {
		t.Fatalf("state %s, outcome %+v", b.State, b.Outcome)
	}
	if b.Culprit != "" || !strings.Contains(b.CulpritReason, "no sampling setting") {
		t.Errorf("culprit %q, reason %q", b.Culprit, b.CulpritReason)
	}
	if _, err := os.Stat(filepath.Join(rep.Folder, results.CulpritDir)); !os.IsNotExist(err) {
		t.Errorf("a culprit folder: %v", err)
	}
}
