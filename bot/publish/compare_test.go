package publish

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/internal/synthtest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/analyze"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/synth"
)

const (
	ssmOff = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-off.csv"
	ssmOn  = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv"
	// The pair's names as a compare labelled ssm-kernel writes them.
	ssmBefore = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-before.csv"
	ssmAfter  = "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-after.csv"
)

var compareShaB = "b" + strings.Repeat("0", 39)

// ssmBranch is the bot branch of the compare labelled ssm-kernel.
const ssmBranch = CompareBranchPrefix + "ssm-kernel"

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
	return CompareOptions{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: sink, BaseBranch: "main"}, PR: epicIssue,
		Marks: Marks{TriggerCommentID: triggerID}, WorkflowRun: "https://github.com/lablup/mlxcel/actions/runs/31337"}
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
	commit := gitT(t, tg.bare, "rev-parse", "refs/heads/"+ssmBranch)
	if commit != sum.Git.Commit {
		t.Fatalf("the remote's compare branch is %s, the summary says %s", commit, sum.Git.Commit)
	}
	if parent := gitT(t, tg.bare, "rev-parse", commit+"^"); parent != tg.base {
		t.Errorf("the commit's parent is %s, want A %s", parent, tg.base)
	}
	diff := strings.Split(gitT(t, tg.bare, "diff", "--name-only", "main..."+ssmBranch), "\n")
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

// On GitHub: the first compare opens the CSV pull request and comments once on the
// pull request that asked; a newer compare of the same pull request edits that
// comment in place (no second comment) and the pull request, and the check run stays
// neutral without a threshold.
func TestCompareCommentUpdatedInPlace(t *testing.T) {
	t.Parallel()
	tg, h, c := onGitHub(t)
	o := compareOptions(tg, layCompare(t, tg.base, nil), ToGitHub(c, testRepo))
	o.Repo, o.CheckRunID = testRepo, checkRunID
	// publish publishes o, whose check run is neutral and whose trigger gets a rocket.
	publish := func(name string) CompareSummary {
		t.Helper()
		// The check run's details link the compare comment (9001, the one comment).
		h.s.Expect("PATCH", checkPath+"777", h.checkRun()).JSONBody(map[string]any{"conclusion": "neutral", "status": "completed",
			"details_url": fmt.Sprintf("https://github.com/lablup/mlxcel/issues/%d#issuecomment-9001", epicIssue)})
		h.s.Expect("POST", commentsPath+"4242/reactions", h.reaction()).JSONBody(map[string]any{"content": "rocket"})
		sum, err := PublishCompare(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return sum
	}

	h.s.Expect("GET", pullsPath+"?state=open&head=lablup:"+ssmBranch, h.listPRs())
	h.s.Expect("POST", pullsPath, h.createPR()).JSONBody(map[string]any{"head": ssmBranch, "base": "main"})
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
	h.s.Expect("POST", epicPath, h.createEpic())
	sum := publish("first compare")
	if sum.PR.Action != "created" || sum.Comment.Action != "created" || sum.CheckRun.Detail != "neutral" {
		t.Fatalf("first compare: %+v", sum)
	}
	if len(h.epic) != 1 {
		t.Fatalf("%d compare comments, want 1", len(h.epic))
	}
	first := h.epic[0]["body"].(string)
	blob := "https://github.com/lablup/mlxcel/blob/" + sum.Git.Commit + "/"
	committed := treeFiles(t, tg.bare, sum.Git.Commit)
	if err := report.Validate(first, committed, blob); err != nil {
		t.Errorf("the compare comment: %v\n%s", err, first)
	}
	wantIn(t, first, report.CompareMarker("bench"), blob+"benchmarks/"+ssmBefore, "[\\#57](https://github.com/lablup/mlxcel/pull/57)", "| granite-4.0-h-tiny-4bit | decode tok/s | 60.39 | 88.43 |")

	// A newer compare of the same pull request: Nemotron only, measured later; the
	// CSV pair is the same, so the commit is unchanged.
	newer := layCompare(t, tg.base, func(c *results.Compare) {
		c.Finished = c.Finished.Add(24 * time.Hour)
		c.Models = c.Models[1:]
		var runs []results.CompareRun
		for _, r := range c.Runs {
			if r.Model == c.Models[0].Model {
				runs = append(runs, r)
			}
		}
		c.Runs, c.Planned = runs, len(runs)
	})
	o.ResultsDir = newer
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("PATCH", pullsPath+"/57", h.editPR())
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
	h.s.Expect("PATCH", commentsPath+"9001", h.editComment())
	sum2 := publish("newer compare")
	if sum2.Git.Action != "unchanged" || sum2.PR.Action != "updated" || sum2.Comment.Action != "updated" {
		t.Errorf("newer compare: git %s, pr %s, comment %s", sum2.Git.Action, sum2.PR.Action, sum2.Comment.Action)
	}
	if len(h.epic) != 1 {
		t.Fatalf("%d compare comments after the rerun, want the one edited", len(h.epic))
	}
	second := h.epic[0]["body"].(string)
	if strings.Contains(second, "granite") || !strings.Contains(second, "NVIDIA-Nemotron-3-Nano-30B-A3B-4bit") {
		t.Errorf("the edited comment is not the newer compare's:\n%s", second)
	}
}

// compare.fail_slower_pct fails the check run only on a comparison called slower by
// at least that much; a faster one, or a threshold of 0, leaves it neutral.
func TestCompareCheckRunThreshold(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	for _, tc := range []struct {
		name       string
		res        string
		pct        float64
		conclusion string
		failing    int
	}{
		{"faster, threshold 5", layCompare(t, tg.base, nil), 5, "neutral", 0},
		{"slower, no threshold", slowerCompare(t, tg.base), 0, "neutral", 0},
		{"slower by 31 %, threshold 5", slowerCompare(t, tg.base), 5, "failure", 2},
		{"slower by 31 %, threshold 40", slowerCompare(t, tg.base), 40, "neutral", 0},
	} {
		out := t.TempDir()
		o := compareOptions(tg, tc.res, ToDir(out))
		o.Config.Compare.FailSlowerPct = tc.pct
		sum, err := PublishCompare(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if sum.CheckRun.Detail != tc.conclusion || len(sum.Failing) != tc.failing || sum.Conclusion != "success" {
			t.Errorf("%s: check run %q, failing %q, publishing %s; want %s with %d failing", tc.name, sum.CheckRun.Detail, sum.Failing, sum.Conclusion, tc.conclusion, tc.failing)
		}
		check := readFile(t, filepath.Join(out, DryCheckRun))
		if tc.failing > 0 {
			wantIn(t, check, "Conclusion: failure.", "Failing: compare.fail\\_slower\\_pct is 5", "granite-4.0-h-tiny-4bit, decode tok/s: slower by 31.")
		}
	}
	// At the threshold exactly a slower comparison fails; just past it, it does not.
	res := slowerCompare(t, tg.base)
	c, err := results.ReadCompare(filepath.Join(res, results.CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	least, n := math.Inf(1), 0
	for _, m := range c.Models {
		for _, r := range m.Results {
			if r.Verdict == abstat.Slower {
				least, n = min(least, math.Abs(r.ChangePct)), n+1
			}
		}
	}
	for pct, want := range map[float64]int{least: n, math.Nextafter(least, math.Inf(1)): n - 1} {
		o := compareOptions(tg, res, ToDir(t.TempDir()))
		o.Config.Compare.FailSlowerPct = pct
		sum, err := PublishCompare(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Failing) != want {
			t.Errorf("threshold %v (the least slower change %v): failing %q, want %d", pct, least, sum.Failing, want)
		}
	}
}

// slowerCompare is the SSM pair the other way round (on as A, off as B): decode slower.
func slowerCompare(t *testing.T, shaA string) string {
	t.Helper()
	dir := layCompare(t, shaA, nil)
	on, err := os.ReadFile(filepath.Join(dir, ssmAfter))
	if err != nil {
		t.Fatal(err)
	}
	off, err := os.ReadFile(filepath.Join(dir, ssmBefore))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ssmBefore), string(on))
	writeFile(t, filepath.Join(dir, ssmAfter), string(off))
	c, err := results.ReadCompare(filepath.Join(dir, results.CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Models {
		for k := range c.Models[i].Results {
			r := &c.Models[i].Results[k].Result
			a, b := readings(c, c.Models[i].Model, k)
			res, err := abstat.Compare(b, a, abstat.HigherIsBetter, abstat.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			*r = res
		}
	}
	held, err := abstat.CorrectHolm(flatResults(c), directions(c), abstat.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range c.Models {
		for k := range c.Models[i].Results {
			c.Models[i].Results[k].Result = held[n]
			n++
		}
	}
	for i := range c.Runs {
		if c.Runs[i].Side == results.SideA {
			c.Runs[i].Side = results.SideB
		} else {
			c.Runs[i].Side = results.SideA
		}
	}
	if err := c.Save(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readings(c results.Compare, model string, k int) (a, b []float64) {
	return c.Values(model, results.SideA, k), c.Values(model, results.SideB, k)
}

func flatResults(c results.Compare) []abstat.Result {
	var out []abstat.Result
	for _, m := range c.Models {
		for _, r := range m.Results {
			out = append(out, r.Result)
		}
	}
	return out
}

func directions(c results.Compare) []abstat.Direction {
	var out []abstat.Direction
	for _, m := range c.Models {
		for range m.Results {
			out = append(out, abstat.HigherIsBetter)
		}
	}
	return out
}

// A profile compare shows the port impact of each run, diffed with A's rules: B is A's
// synthetic Qwen3-MoE profile with a known change planted as the fake host plants one
// (synth.Change: the MoE's gather kernel twice as fast, a gather kernel removed, a
// fused kernel added), and the comment names exactly those kernels and the unit that
// gained.
func TestCompareProfilePortImpact(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	// A profile compare has no CSV pair: nothing is committed.
	res := layCompare(t, tg.base, func(c *results.Compare) {
		c.Kind, c.DirA, c.DirB = results.CompareProfile, results.CompareDirA, results.CompareDirB
		c.CSVBefore, c.CSVAfter = "", ""
	})
	o := synth.DefaultOptions()
	o.Model, o.Tokens, o.Warmup = "qwen3-moe", 8, 2
	ra := synthtest.Analyze(t, o)
	change, err := synth.ParseChange([]byte("faster gather_qmv_wide_kernel 2\nremoved gather_rows_kernel\nadded planted_fused_moe_kernel moe 9000\n"))
	if err != nil {
		t.Fatal(err)
	}
	o.Change = &change
	rb := synthtest.Analyze(t, o)
	writeRun(t, filepath.Join(res, "a"), ra)
	writeRun(t, filepath.Join(res, "b"), rb)

	out := t.TempDir()
	sum, err := PublishCompare(context.Background(), compareOptions(tg, res, ToDir(out)))
	if err != nil {
		t.Fatalf("PublishCompare: %v", err)
	}
	if sum.Git.Commit != "" || sum.PR.Action != "" || gitT(t, tg.bare, "for-each-ref", "refs/heads/"+ssmBranch) != "" {
		t.Errorf("a profile compare without a CSV pair pushed or opened something: %+v", sum)
	}
	// Nothing to push is not a failure: the check run and the step summary carry the
	// compare, as after a push.
	wantIn(t, readFile(t, filepath.Join(out, DryCheckRun)), "Conclusion: neutral.", "# A/B compare published")
	wantOut(t, readFile(t, filepath.Join(out, DryCheckRun)), "Publishing failed")
	wantOut(t, sum.StepSummary, "publishing failed")
	md := readFile(t, filepath.Join(out, DryCompareComment))
	if err := report.Validate(md, nil, ""); err != nil {
		t.Errorf("%v\n%s", err, md)
	}
	if mixed := report.MixedPrecision(md); len(mixed) > 0 {
		t.Errorf("mixed precision: %v", mixed)
	}
	port := md[strings.Index(md, "### Port impact"):]
	wantIn(t, port, "### Port impact: "+report.Text(ra.Summary.Name),
		"Kernels that changed most:\n\n| kernel | units | ms/token | calls/token |\n| --- | --- | ---: | ---: |\n"+
			"| `void mlx::core::rocm::gather_qmv_wide_kernel<hip_bfloat16, hip_bfloat16, 64>` | #2065 | 4.9755 → 2.4810 (-2.4945) |",
		"Kernels only in B (appeared): `planted_fused_moe_kernel` (",
		"Kernels only in A (vanished): `void mlx::core::rocm::gather_rows_kernel<hip_bfloat16, int>` (0.0027 ms/token), `void mlx::core::rocm::gather_rows_kernel<unsigned int, int>` (0.0013 ms/token).")
	if strings.Count(port, "appeared)") != 1 || strings.Count(port, "Kernels only in B (appeared): `planted_fused_moe_kernel` (0.0079 ms/token).") != 1 {
		t.Errorf("a kernel other than the planted one appeared:\n%s", port)
	}
	// The unit of the faster kernel recovered its ~2.49 ms/token; the others moved by
	// the synthetic noise alone.
	for _, l := range strings.Split(md, "\n") {
		cells := strings.Split(l, " | ")
		if !strings.HasPrefix(l, "| #20") || len(cells) != 7 {
			continue
		}
		recovered, err := strconv.ParseFloat(strings.TrimSuffix(cells[6], " |"), 64)
		if err != nil {
			t.Fatalf("unit row %q: %v", l, err)
		}
		if gained := strings.HasPrefix(l, "| #2065 |"); gained && recovered < 2.4 || !gained && math.Abs(recovered) > 0.05 {
			t.Errorf("unit row %q: recovered %v", l, recovered)
		}
	}
	golden.Check(t, filepath.Join("testdata", "golden", "compare-profile-comment.md"), md)
}

// writeRun writes an analyzed run's summary and decode kernels into dir.
func writeRun(t *testing.T, dir string, r *analyze.Result) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.WriteOutputs(dir); err != nil {
		t.Fatal(err)
	}
}

// A compare of many models outgrows a comment: it is cut, with a note, to fit
// limits.comment_max_bytes, and still starts with its marker.
func TestCompareCommentFitsTheLimit(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layCompare(t, tg.base, func(c *results.Compare) {
		one := c.Models[0]
		for i := range 200 {
			m := one
			m.Model = fmt.Sprintf("model-%03d-%s", i, strings.Repeat("x", 50))
			m.NA, m.NB, m.Done = 0, 0, true
			c.Models = append(c.Models, m)
		}
	})
	out := t.TempDir()
	o := compareOptions(tg, res, ToDir(out))
	o.Config.Limits.CommentMaxBytes = 20000
	sum, err := PublishCompare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(out, DryCompareComment))
	if len(md) > 20000 || !strings.HasPrefix(md, report.CompareMarker("bench")) || !strings.Contains(md, "truncated") {
		t.Errorf("the comment is %d bytes, want it cut to 20000 with its marker first and a note", len(md))
	}
	if !slices.ContainsFunc(sum.Notes, func(n string) bool { return strings.Contains(n, "it was cut") }) {
		t.Errorf("no note says the comment was cut: %q", sum.Notes)
	}
	// A comment of exactly the limit is whole, and no note says otherwise; a byte over,
	// it is cut.
	res = layCompare(t, tg.base, nil)
	o = compareOptions(tg, res, ToDir(t.TempDir()))
	whole := readFile(t, filepath.Join(mustPublishCompare(t, o), DryCompareComment))
	for limit, cut := range map[int]bool{len(whole): false, len(whole) - 1: true} {
		out := t.TempDir()
		o := compareOptions(tg, res, ToDir(out))
		o.Config.Limits.CommentMaxBytes = limit
		sum, err := PublishCompare(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		md := readFile(t, filepath.Join(out, DryCompareComment))
		noted := slices.ContainsFunc(sum.Notes, func(n string) bool { return strings.Contains(n, "it was cut") })
		if (md != whole) != cut || noted != cut {
			t.Errorf("limit %d of a %d-byte comment: cut %v, noted %v; want %v", limit, len(whole), md != whole, noted, cut)
		}
	}
}

// mustPublishCompare publishes o into its dry-run folder, which it returns.
func mustPublishCompare(t *testing.T, o CompareOptions) string {
	t.Helper()
	if _, err := PublishCompare(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o.Sink.(dirSink).dir
}

// The CSV pair goes into the configured benchmarks folder, the default one when none
// is set; without a pull request to comment on the comment is skipped, not written to
// issue 0.
func TestCompareFolderAndNoPullRequest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bench, want string
		pr          int
	}{
		{"", "benchmarks", 0},
		{"perf/rocm", "perf/rocm", epicIssue},
	} {
		tg := newTarget(t)
		out := filepath.Join(t.TempDir(), "dry")
		o := compareOptions(tg, layCompare(t, tg.base, nil), ToDir(out))
		o.Config.Results.Benchmarks, o.PR = c.bench, c.pr
		sum, err := PublishCompare(context.Background(), o)
		if err != nil {
			t.Fatalf("%q: %v", c.bench, err)
		}
		diff := strings.Split(gitT(t, tg.bare, "diff", "--name-only", "main..."+ssmBranch), "\n")
		if want := []string{c.want + "/" + ssmAfter, c.want + "/" + ssmBefore}; !slices.Equal(diff, want) {
			t.Errorf("benchmarks %q: the pull request holds %q, want %q", c.bench, diff, want)
		}
		_, err = os.Stat(filepath.Join(out, DryCompareComment))
		if commented := err == nil; commented != (c.pr > 0) || (c.pr == 0 && sum.Comment.Action != "skipped") {
			t.Errorf("pull request %d: comment written %v, %+v", c.pr, commented, sum.Comment)
		}
	}
}

// A compare's notes say what it lacks: a session stopped before its end, a profile
// compare without a side's profiles; a complete bench compare has neither.
func TestCompareNotesSayWhatIsMissing(t *testing.T) {
	t.Parallel()
	stopped := "the compare session is interrupted, not complete: what it measured is published"
	noProfiles := "the profile compare names no profile folder of a side: no port impact"
	for _, c := range []struct {
		name string
		edit func(*results.Compare)
		want string
	}{
		{"complete", nil, ""},
		{"interrupted", func(c *results.Compare) { c.State = results.SessionInterrupted }, stopped},
		{"a profile compare without its sides' profiles", func(c *results.Compare) {
			c.Kind, c.DirA, c.DirB, c.CSVBefore, c.CSVAfter = results.CompareProfile, "", "", "", ""
		}, noProfiles},
	} {
		tg := newTarget(t)
		sum, err := PublishCompare(context.Background(), compareOptions(tg, layCompare(t, tg.base, c.edit), ToDir(t.TempDir())))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, note := range []string{stopped, noProfiles} {
			if slices.Contains(sum.Notes, note) != (note == c.want) {
				t.Errorf("%s: notes %q; want %q among them: %v", c.name, sum.Notes, note, note == c.want)
			}
		}
	}
}
