package publish

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/internal/synthtest"
	"github.com/lablup/perfbot/runner/analyze"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/synth"
)

// fakeSHA is the i-th made-up commit of a bisection range.
func fakeSHA(i int) string { return fmt.Sprintf("%08x", 0xb15ec700+i) + strings.Repeat("0", 32) }

// bisectDoc is a complete bisection of model over commits (Good first, Bad last) as a
// bisect job writes one, ending in outcome: found and undecided name commits[2] as
// the first bad commit, not reproduced names none.
func bisectDoc(model string, commits []string, outcome string) results.Bisect {
	start := time.Date(2026, 10, 26, 3, 0, 0, 0, time.UTC)
	b := results.Bisect{Good: commits[0], Bad: commits[len(commits)-1], Model: model, Metric: baseline.MetricDecode, Commits: commits,
		Backend: "rocm", Host: "strixhalo-gfx1151", GFX: "gfx1151", Date: "2026-10-26", Started: start, Finished: start.Add(2 * time.Hour),
		State: results.SessionComplete, Params: results.BisectParams{ErrorRate: 0.01, EndRuns: 5, Start: 3, Step: 2, MaxPerCommit: 15, Budget: 60, EndAlpha: 0.01, MinSigmaPct: 0.5},
		Rejected: 1}
	first := min(2, len(commits)-1)
	o := &results.BisectOutcome{Outcome: outcome, Confidence: 0.973, EndsP: 0.0008, ChangePct: -14.8, Why: "P(first bad) settled after the midpoints' repeats"}
	for i, c := range commits {
		level := 35.0
		if i >= first && outcome != results.BisectNotReproduced {
			level = 30.0
		}
		n := 3
		if i == 0 || i == len(commits)-1 {
			n = 5
		}
		var rs []float64
		for k := range n {
			rs = append(rs, level+0.1*float64(k))
		}
		b.Steps = append(b.Steps, results.BisectMeasurement{Commit: c, Readings: rs})
		b.Runs += n
		side, pbad := "good", 0.01
		if i >= first {
			side, pbad = "bad", 0.99
		}
		o.Posterior = append(o.Posterior, results.BisectPosterior{Commit: c, Runs: n, PBad: pbad, Side: side})
	}
	switch outcome {
	case results.BisectUndecided:
		o.Confidence = 0.61
		fallthrough
	case results.BisectFound:
		o.FirstBad, o.LastGood = commits[first], commits[first-1]
	case results.BisectNotReproduced:
		o.Confidence, o.EndsP, o.ChangePct, o.Why = 0, 0.41, -0.4, "the ends did not differ"
		for i := range o.Posterior {
			o.Posterior[i].Side, o.Posterior[i].PBad = "good", 0.02
		}
	}
	b.Outcome = o
	return b
}

// layBisect writes b into dir (made) as bisect.json; with culprit, the profile A/B of
// its first bad commit against its parent in culprit/: synthetic decode profiles in
// which B's gather_qmv_wide_kernel is twice as slow as A's and B adds a kernel.
func layBisect(t *testing.T, dir string, b results.Bisect, culprit bool) {
	t.Helper()
	if culprit {
		b.Culprit = results.CulpritDir
		src := layCompare(t, b.Outcome.LastGood, func(c *results.Compare) {
			c.Kind, c.DirA, c.DirB, c.ShaB, c.Label = results.CompareProfile, results.CompareDirA, results.CompareDirB, b.Outcome.FirstBad, "culprit"
			c.CSVBefore, c.CSVAfter = "", ""
			// One run of the bisected model, as a culprit's profile A/B has.
			first := c.Models[0].Model
			c.Models = c.Models[:1]
			c.Models[0].Model = b.Model + "_greedy"
			// The maintainers' pair reversed: the culprit (B) is the slower side.
			var runs []results.CompareRun
			for _, r := range c.Runs {
				if r.Model == first {
					r.Model, r.Side = c.Models[0].Model, map[results.CompareSide]results.CompareSide{results.SideA: results.SideB, results.SideB: results.SideA}[r.Side]
					runs = append(runs, r)
				}
			}
			c.Runs, c.Planned = runs, len(runs)
			m := &c.Models[0]
			m.NA, m.NB = m.NB, m.NA
			for k := range m.Results {
				m.Results[k].Result = abResult(t, c.Values(m.Model, results.SideA, k), c.Values(m.Model, results.SideB, k))
			}
		})
		// The parent's gather_qmv_wide_kernel is twice as fast as the culprit's, and
		// the culprit adds a kernel.
		side := func(change string) *analyze.Result {
			o := synth.DefaultOptions()
			o.Model, o.Tokens, o.Warmup = "qwen3-moe", 8, 2
			ch, err := synth.ParseChange([]byte(change))
			if err != nil {
				t.Fatal(err)
			}
			o.Change = &ch
			return synthtest.Analyze(t, o)
		}
		ra, rb := side("faster gather_qmv_wide_kernel 2\n"), side("added planted_slow_kernel moe 9000\n")
		cdir := filepath.Join(dir, results.CulpritDir)
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(cdir, results.CompareFile), readFile(t, filepath.Join(src, results.CompareFile)))
		writeRun(t, filepath.Join(cdir, results.CompareDirA), ra)
		writeRun(t, filepath.Join(cdir, results.CompareDirB), rb)
	} else if b.Outcome != nil && b.Outcome.Outcome == results.BisectFound {
		b.CulpritReason = "the budget was spent"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(dir); err != nil {
		t.Fatal(err)
	}
}

// A hand bisection's outcome on the pull request that asked, against the fake GitHub:
// the first bad commit linked with the pull request GitHub associates with it, the
// confidence and the runs, then the culprit's profile A/B: the kernel that got slower
// with its port unit (the compare comment's port impact). A second publish of a newer
// bisection of the same range edits the one comment in place.
func TestBisectCommentOnTheRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tg := w.tg
	head := w.pull(t, 1901, "faster-moe")
	if _, err := w.s.AddIssue(testRepo.String(), fakegithubIssue(1950)); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(t.TempDir(), "bisect-"+qwen30)
	b := bisectDoc(qwen30, []string{fakeSHA(0), tg.base, head}, results.BisectFound)
	b.Outcome.FirstBad, b.Outcome.LastGood = head, tg.base
	layBisect(t, res, b, true)
	cr, err := w.c.CreateCheckRun(context.Background(), testRepo, gh.CheckRunSpec{Name: "perfbot", HeadSHA: head, ExternalID: "perfbot-request-9", Title: "Queued", Summary: "queued"})
	if err != nil {
		t.Fatal(err)
	}
	o := BisectOptions{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToGitHub(w.c, testRepo)}, Issue: 1950,
		Marks: Marks{CheckRunID: cr.ID}, WorkflowRun: "https://github.com/lablup/mlxcel/actions/runs/31337"}
	sum, err := PublishBisect(context.Background(), o)
	if err != nil {
		t.Fatalf("PublishBisect: %v (%+v)", err, sum)
	}
	if sum.Outcome != results.BisectFound || sum.FirstBad != head || sum.Comment.Action != "created" || sum.CheckRun.Detail != "neutral" {
		t.Errorf("summary %+v", sum)
	}
	cs := w.s.Comments(1950)
	if len(cs) != 1 {
		t.Fatalf("%d comments on #1950", len(cs))
	}
	// The check run completes neutral, titled by the outcome, its details link the
	// bisection's comment.
	for _, c := range w.s.CheckRuns() {
		if c.ID == cr.ID && (c.Conclusion != "neutral" || c.Title != "Bisection: found" || !strings.HasSuffix(c.DetailsURL, fmt.Sprintf("#issuecomment-%d", cs[0].ID))) {
			t.Errorf("check run %s %q, details %q; want neutral, found, the comment #issuecomment-%d", c.Conclusion, c.Title, c.DetailsURL, cs[0].ID)
		}
	}
	md := cs[0].Body
	if err := report.Validate(md, nil, ""); err != nil {
		t.Errorf("%v\n%s", err, md)
	}
	wantIn(t, md, report.BisectMarker(qwen30, b.Good, b.Bad),
		"**Found: the first bad commit is "+head[:8]+" (confidence 97.3 %).**",
		"| first bad commit | ["+head[:8]+"](https://github.com/lablup/mlxcel/commit/"+head+") |",
		"| pull request | [\\#1901 faster-moe (open)](http://github.invalid/lablup/mlxcel/pull/1901) |",
		"| runs used | 13 single-model runs of a budget of 60; 1 attempts refused by the guard were redone |",
		"### The culprit's profile: the first bad commit against its parent",
		"Kernels that changed most:", "| `void mlx::core::rocm::gather_qmv_wide_kernel<hip_bfloat16, hip_bfloat16, 64>` | #2065 |",
		"Kernels only in B (appeared): `planted_slow_kernel` (")
	golden.Check(t, filepath.Join("testdata", "golden", "bisect-comment.md"), md)

	// The same range bisected again: the comment is edited, not added.
	b.Outcome.Confidence = 0.991
	layBisect(t, res, b, true)
	if _, err := PublishBisect(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if cs := w.s.Comments(1950); len(cs) != 1 || !strings.Contains(cs[0].Body, "(confidence 99.1 %)") {
		t.Errorf("after the second publish: %d comments, %+v", len(cs), cs)
	}
}

// Every outcome says what it found, plainly: a first bad commit GitHub knows no pull
// request of, an undecided bisection (its best guess and its low confidence), a
// change that did not reproduce (no commit blamed), a culprit whose profile A/B did
// not run; and a dry run does not ask GitHub for pull requests.
func TestBisectOutcomes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tg := w.tg
	for i, c := range []struct {
		name    string
		outcome string
		commits []string
		dry     bool
		want    []string
		not     []string
	}{
		{"found, no pull request", results.BisectFound, []string{fakeSHA(0), fakeSHA(1), tg.base}, false,
			[]string{"**Found: the first bad commit is " + tg.base[:8], "| pull request | none: GitHub associates no pull request with the commit |",
				"No profile A/B of the culprit: the budget was spent"}, []string{"### The culprit's profile"}},
		{"undecided", results.BisectUndecided, []string{fakeSHA(0), fakeSHA(1), tg.base, fakeSHA(3)}, false,
			[]string{"**Undecided: the runs did not single out one commit; the most likely first bad commit is " + tg.base[:8] + ", at a confidence of only 61.0 %.**",
				"| outcome | undecided |", "| confidence (posterior probability of that commit) | 61.0 % |"}, nil},
		{"not reproduced", results.BisectNotReproduced, []string{fakeSHA(0), fakeSHA(1), fakeSHA(2)}, false,
			[]string{"**Not reproduced: the good and the bad end did not differ when measured again, so no commit is blamed.**",
				"| change between the ends | \\-0.40 % between the good and the bad end, p = 0.4100 |", "the ends did not differ"},
			[]string{"| first bad commit |", "| pull request |", "| confidence"}},
		{"dry run", results.BisectFound, []string{fakeSHA(0), fakeSHA(1), fakeSHA(2)}, true,
			[]string{"| pull request | unknown: a dry run does not ask GitHub |", "| first bad commit | `" + fakeSHA(2)[:8] + "` |"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := filepath.Join(t.TempDir(), "b")
			layBisect(t, res, bisectDoc(qwen30, c.commits, c.outcome), false)
			n := 1960 + i
			o := BisectOptions{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToGitHub(w.c, testRepo)}, Issue: n}
			out := t.TempDir()
			if c.dry {
				o.Sink = ToDir(out)
			} else if _, err := w.s.AddIssue(testRepo.String(), fakegithubIssue(n)); err != nil {
				t.Fatal(err)
			}
			sum, err := PublishBisect(context.Background(), o)
			if err != nil {
				t.Fatalf("PublishBisect: %v", err)
			}
			var md string
			if c.dry {
				md = readFile(t, filepath.Join(out, DryBisectComment))
				wantIn(t, readFile(t, filepath.Join(out, DryCheckRun)), "Conclusion: neutral.", "# Bisection: found")
			} else if cs := w.s.Comments(n); len(cs) == 1 {
				md = cs[0].Body
			} else {
				t.Fatalf("%d comments", len(cs))
			}
			if sum.Outcome != c.outcome {
				t.Errorf("summary outcome %q", sum.Outcome)
			}
			wantIn(t, md, c.want...)
			wantOut(t, md, c.not...)
		})
	}
}

// A bisection folder is read as hostile: a manifest that is a link, or not JSON, stops
// the publication with an error naming it; a culprit folder that is a link, or the
// profile A/B of other commits, is a note and the outcome still stands.
func TestBisectRefusesHostileFolders(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	good := bisectDoc(qwen30, []string{fakeSHA(0), fakeSHA(1), fakeSHA(2)}, results.BisectFound)
	publishDry := func(res string) (BisectSummary, string, error) {
		out := t.TempDir()
		sum, err := PublishBisect(context.Background(), BisectOptions{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}, Issue: 5})
		md, _ := os.ReadFile(filepath.Join(out, DryBisectComment))
		return sum, string(md), err
	}
	t.Run("manifest is a link", func(t *testing.T) {
		res := t.TempDir()
		elsewhere := t.TempDir()
		layBisect(t, elsewhere, good, false)
		if err := os.Symlink(filepath.Join(elsewhere, results.BisectFile), filepath.Join(res, results.BisectFile)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := publishDry(res); err == nil || !strings.Contains(err.Error(), "bisect.json is a symbolic link") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("manifest is not JSON", func(t *testing.T) {
		res := t.TempDir()
		writeFile(t, filepath.Join(res, results.BisectFile), "{\"good\": ")
		if _, _, err := publishDry(res); err == nil || !strings.Contains(err.Error(), "is not a manifest of a bisection") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("culprit folder is a link", func(t *testing.T) {
		res := t.TempDir()
		other := t.TempDir()
		layBisect(t, other, good, true)
		layBisect(t, res, good, false)
		b := good
		b.Culprit, b.CulpritReason = results.CulpritDir, ""
		if err := b.Save(res); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(other, results.CulpritDir), filepath.Join(res, results.CulpritDir)); err != nil {
			t.Fatal(err)
		}
		sum, md, err := publishDry(res)
		if err != nil {
			t.Fatal(err)
		}
		wantIn(t, md, "No profile A/B of the culprit: its folder could not be read: the culprit folder culprit is a symbolic link, not a folder")
		wantIn(t, strings.Join(sum.Notes, "\n"), "the culprit's profile A/B: its folder could not be read")
	})
	t.Run("culprit of other commits", func(t *testing.T) {
		res := t.TempDir()
		b := good
		layBisect(t, res, b, true)
		b.Outcome.FirstBad, b.Outcome.LastGood = fakeSHA(1), fakeSHA(0)
		b.Culprit = results.CulpritDir
		if err := b.Save(res); err != nil {
			t.Fatal(err)
		}
		_, md, err := publishDry(res)
		if err != nil {
			t.Fatal(err)
		}
		wantIn(t, md, "No profile A/B of the culprit: its folder could not be read: culprit: a profile compare of "+fakeSHA(1)+".."+fakeSHA(2)+", not the profile A/B of the first bad commit "+fakeSHA(1))
	})
}

// fakegithubIssue is an issue a maintainer opened on the fake GitHub.
func fakegithubIssue(n int) fakegithub.Issue {
	return fakegithub.Issue{Number: n, Title: "decode got slower", User: "maintainer"}
}

// The end of a bisection's dry run: the status comment names the command (the
// default, or the one given), the outcome and the bisection comment's step; without
// an issue the comment is skipped and says why; the step summary is the outcome, or,
// when the folder cannot be read, the error under a failed check run.
func TestBisectDryRunEnd(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := filepath.Join(t.TempDir(), "b")
	layBisect(t, res, bisectDoc(qwen30, []string{fakeSHA(0), fakeSHA(1), fakeSHA(2)}, results.BisectFound), false)
	dry := func(o BisectOptions) (BisectSummary, string, error) {
		out := t.TempDir()
		o.Target = Target{ResultsDir: o.ResultsDir, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}
		sum, err := PublishBisect(context.Background(), o)
		return sum, out, err
	}
	found := "Found: the first bad commit is " + fakeSHA(2)[:8]

	sum, out, err := dry(BisectOptions{Target: Target{ResultsDir: res}, Issue: 5})
	if err != nil || sum.Comment.Action != "created" {
		t.Fatalf("on #5: %v, comment %+v", err, sum.Comment)
	}
	wantIn(t, readFile(t, filepath.Join(out, DryStatus)), "**/bench rocm bisect**: done. "+found, "| bisection comment | written to "+DryBisectComment+" (dry run) |")
	steps := readFile(t, filepath.Join(out, DryStepSummary))
	wantIn(t, steps, found)
	wantOut(t, steps, "publishing failed")

	sum, out, err = dry(BisectOptions{Target: Target{ResultsDir: res}, Command: "/bench rocm bisect good=b15ec700 bad=b15ec702"})
	if err != nil || sum.Comment.Action != "skipped" {
		t.Fatalf("without an issue: %v, comment %+v", err, sum.Comment)
	}
	wantIn(t, readFile(t, filepath.Join(out, DryStatus)), "**/bench rocm bisect good=b15ec700 bad=b15ec702**: done.",
		"| bisection comment | skipped: no issue or pull request to comment on |")
	wantNotWritten(t, out, DryBisectComment)

	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, results.BisectFile), "{\"good\": ")
	if _, out, err = dry(BisectOptions{Target: Target{ResultsDir: bad}, Issue: 5}); err == nil {
		t.Fatal("a manifest that is not JSON was published")
	}
	wantIn(t, readFile(t, filepath.Join(out, DryStepSummary)), "## ROCm bisection: publishing failed\n\n- ", "is not a manifest of a bisection")
	wantIn(t, readFile(t, filepath.Join(out, DryCheckRun)), "# Publishing the bisection failed", "Conclusion: failure.")
	wantNotWritten(t, out, DryBisectComment)
}

// A bisection comment longer than the configured limit is cut to it, the marker kept
// (the next publish still finds the comment to edit) and the cut said.
func TestBisectCommentFitsTheLimit(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := filepath.Join(t.TempDir(), "b")
	b := bisectDoc(qwen30, []string{fakeSHA(0), fakeSHA(1), fakeSHA(2)}, results.BisectFound)
	layBisect(t, res, b, false)
	cfg := testConfig()
	out := t.TempDir()
	o := BisectOptions{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: cfg, Sink: ToDir(out)}, Issue: 1970}
	if _, err := PublishBisect(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	whole := readFile(t, filepath.Join(out, DryBisectComment))
	// A limit of 0 (none set) or above GitHub's is GitHub's.
	for _, limit := range []int{len(whole), len(whole) - 1, 1500, 0, report.MaxComment + 1} {
		o.Config.Limits.CommentMaxBytes = limit
		if limit == 0 || limit > report.MaxComment {
			limit = report.MaxComment
		}
		dir := t.TempDir()
		o.Sink = ToDir(dir)
		sum, err := PublishBisect(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		md := readFile(t, filepath.Join(dir, DryBisectComment))
		cut := strings.Contains(md, "_(truncated: ")
		noted := slices.ContainsFunc(sum.Notes, func(n string) bool { return strings.Contains(n, "it was cut") })
		if len(md) > limit || cut != (limit < len(whole)) || noted != cut || !strings.HasPrefix(md, whole[:strings.Index(whole, "\n")]) {
			t.Errorf("limit %d: %d bytes, cut %v, noted %v, starting %q; the whole comment is %d bytes", limit, len(md), cut, noted, md[:min(len(md), 60)], len(whole))
		}
	}
}

// The culprit's profile A/B says how it was measured, and when it stopped before its
// end, that its verdicts are of what was measured.
func TestBisectCulpritSaysHowItWasMeasured(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	for _, state := range []results.SessionState{results.SessionComplete, results.SessionInterrupted} {
		res := filepath.Join(t.TempDir(), "b")
		b := bisectDoc(qwen30, []string{fakeSHA(0), tg.base, fakeSHA(2)}, results.BisectFound)
		layBisect(t, res, b, true)
		cdir := filepath.Join(res, results.CulpritDir)
		c, err := results.ReadCompareFolder(cdir)
		if err != nil {
			t.Fatal(err)
		}
		c.State = state
		if err := c.Save(cdir); err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		o := BisectOptions{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}, Issue: 1971}
		if _, err := PublishBisect(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		md := readFile(t, filepath.Join(out, DryBisectComment))
		wantIn(t, md, fmt.Sprintf("%d runs measured interleaved (A and B alternating in ABBA blocks)", len(c.Runs)))
		stopped := "the session stopped before every model was done"
		if strings.Contains(md, stopped) != (state != results.SessionComplete) {
			t.Errorf("a culprit A/B %s: does the comment say %q? %v", state, stopped, !strings.Contains(md, stopped))
		}
	}
}
