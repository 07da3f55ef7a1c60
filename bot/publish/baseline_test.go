package publish

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/results"
)

const (
	llama        = "Meta-Llama-3.1-8B-Instruct-4bit"
	nightlyStem  = "rocm_strixhalo-gfx1151_"
	trackingPath = epicPath
	issuesPath   = "/repos/lablup/mlxcel/issues"
)

// night describes a nightly results folder to lay out.
type night struct {
	date    string
	llama   string // Llama's decode tok/s tonight, as the CSV prints it
	tenants bool   // the guard rejected an attempt for a foreign GPU process
	noMLXLM bool   // the mlx-lm sweep failed: no baseline CSV
	// headerOnly names the CSVs ("rocm", "pylm") of a sweep that stopped before its
	// first model: the header and no rows.
	headerOnly string
	// noReading is why the suspect's re-measurement gave no reading ("" when it did).
	noReading string
	// mixtral are further decode readings of Mixtral, repeats of its real row.
	mixtral []string
	// noComparison leaves the comparison with the history out of the manifest.
	noComparison bool
}

// historyFiles makes twelve nights before date at the levels of the 2026-09-30
// baseline, Llama at 39.40 (so its real 35.41 is a 10% drop), with 1% noise.
func historyFiles(t testing.TB, date string) *baseline.History {
	t.Helper()
	real, err := benchcsv.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", "rocm_strixhalo-gfx1151_2026-09-30.csv"))
	if err != nil {
		t.Fatal(err)
	}
	day, _ := time.Parse(time.DateOnly, date)
	rng := rand.New(rand.NewPCG(9, 9))
	var files []*benchcsv.File
	for k := 12; k >= 1; k-- {
		d := day.AddDate(0, 0, -k).Format(time.DateOnly)
		var rows []benchcsv.Row
		for _, r := range real.Rows {
			level := r.DecodeTokS
			if r.Model == llama {
				level = 39.40
			}
			r.DecodeTokS = math.Round(level*(1+0.01*rng.NormFloat64())*100) / 100
			r.Date = d
			rows = append(rows, r)
		}
		n := benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: d}
		f, err := benchcsv.Parse(benchcsv.Format(benchcsv.ROCmHeader, rows), n.String())
		if err != nil {
			t.Fatal(err)
		}
		f.Name = n
		files = append(files, f)
	}
	return baseline.New(files...)
}

// layNight writes the folder `perfbot run bench` leaves, from the real 2026-09-30 CSVs
// of both runtimes dated n.date, with the comparison with a generated history (Llama
// re-measured at its own reading) in the manifest, and returns the folder.
func layNight(t testing.TB, base string, n night) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "benchmarks")
	stem := nightlyStem + n.date
	var csvs []string
	srcs := []string{"rocm_strixhalo-gfx1151_2026-09-30.csv", "pylm_strixhalo-gfx1151_2026-09-30.csv"}
	if n.noMLXLM {
		srcs = srcs[:1]
	}
	for _, src := range srcs {
		b, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", src))
		if err != nil {
			t.Fatal(err)
		}
		body := strings.ReplaceAll(string(b), "2026-09-30", n.date)
		if strings.HasPrefix(src, "rocm") {
			body = strings.Replace(body, ",35.41,", ","+n.llama+",", 1)
		}
		if strings.HasPrefix(src, "rocm") {
			for _, v := range n.mixtral {
				for _, l := range strings.Split(body, "\n") {
					if strings.HasPrefix(l, "Mixtral-8x7B-Instruct-v0.1-4bit,") {
						body += strings.Replace(l, ",7.65,", ","+v+",", 1) + "\n"
						break
					}
				}
			}
		}
		if n.headerOnly != "" && strings.HasPrefix(src, n.headerOnly) {
			body = body[:strings.IndexByte(body, '\n')+1]
		}
		name := strings.ReplaceAll(src, "2026-09-30", n.date)
		writeFile(t, filepath.Join(dir, name), body)
		csvs = append(csvs, name)
	}
	f, err := benchcsv.ReadFile(filepath.Join(dir, csvs[0]))
	if err != nil {
		t.Fatal(err)
	}
	rep := baseline.CompareNightly(historyFiles(t, n.date), f, baseline.DefaultRules())
	var rms []results.Remeasure
	for _, s := range rep.Suspects() {
		p, _ := baseline.PointOf(f, s)
		single := stem + "_single_" + s + ".csv"
		writeFile(t, filepath.Join(dir, single), string(benchcsv.Format(benchcsv.ROCmHeader, f.RowsOf(s))))
		csvs = append(csvs, single)
		if err := rep.Remeasured(s, p); err != nil {
			t.Fatal(err)
		}
		rm := results.Remeasure{Model: s, CSV: single, Decode: p.Value(), Verdict: rep.Models[0].Verdict}
		if n.noReading != "" {
			rm.CSV, rm.Decode, rm.Reason = "", 0, n.noReading
		}
		rms = append(rms, rm)
	}
	day, _ := time.Parse(time.DateOnly, n.date)
	start := day.Add(2 * time.Hour)
	glog := fmt.Sprintf("== nightly mlxcel\n%[1]s waiting for 90s of idle GPU and no compiler\n%[1]s idle for 90s: kfd proc empty and no compiler in every 10 Hz sample\n%[1]s attempt 1/5: start: scripts/bench_decode.sh all --cooldown 30 --big-cooldown 30\n",
		start.Format("2006-01-02T15:04:05-0700"))
	man := results.Nightly{
		Date: n.date, Started: start, Finished: start.Add(50 * time.Minute), State: "complete", Commit: base,
		GFX: "gfx1151", Host: "strixhalo-gfx1151", Stem: stem, ModelsDir: "models/mlx",
		HostInfo: hostinfo.Info{ROCm: hostinfo.Fact{Value: "10.0.0"}, HIP: hostinfo.Fact{Value: "7.15.26333-e1a6bc5663"},
			GPU: hostinfo.Fact{Value: "Radeon 8060S Graphics"}, GFX: hostinfo.Fact{Value: "gfx1151"},
			VRAM: hostinfo.Fact{Value: "96 GiB"}, VRAMBytes: 96 << 30, HostMemory: hostinfo.Fact{Value: "31 GiB"},
			OverlayCommit: hostinfo.Fact{Value: "75915908dfe5028335d318b10340313744fd3a8d"}},
		Build: results.Build{Command: results.BenchBuildCommand, Status: "ok", Seconds: 301},
		Sweeps: []results.Sweep{
			{Name: results.SweepMlxcel, Command: results.HarnessCommand, Status: "ok", CSVs: csvs[:1]},
			{Name: results.SweepMlxLM, Command: results.BaselineCommand, Status: "ok", CSVs: csvs[1:min(2, len(csvs))]},
		},
		CSVs: csvs, GuardLog: stem + results.GuardLogSuffix, Comparison: &rep, Remeasures: rms,
	}
	if n.noMLXLM {
		man.Sweeps[1].Status, man.Sweeps[1].Reason, man.Sweeps[1].CSVs = "failed", "scripts/bench_mlxlm.py exited 1", nil
		man.CSVs = slices.DeleteFunc(slices.Clone(man.CSVs), func(c string) bool { return strings.HasPrefix(c, "pylm_") })
	}
	if n.noComparison {
		man.Comparison, man.Remeasures = nil, nil
		man.CSVs = csvs[:min(2, len(csvs))]
	}
	if n.tenants {
		glog += start.Add(time.Minute).Format("2006-01-02T15:04:05-0700") + " sample 5: CONTENDED foreign_gpu=[2682448:python3] compilers=[]\n" +
			start.Add(time.Minute).Format("2006-01-02T15:04:05-0700") + " monitor: 6 samples\n" +
			start.Add(time.Minute).Format("2006-01-02T15:04:05-0700") + " attempt 1: REJECTED (contended), exit 0; rerunning\n" +
			start.Add(2*time.Minute).Format("2006-01-02T15:04:05-0700") + " attempt 2/5: start: scripts/bench_decode.sh all --cooldown 30 --big-cooldown 30\n"
		man.Tenants = []string{"mlxcel sweep, attempt 1 rejected: foreign_gpu=[2682448:python3] compilers=[]"}
	}
	glog += start.Add(30*time.Minute).Format("2006-01-02T15:04:05-0700") + " monitor: 1800 samples\n" +
		start.Add(30*time.Minute).Format("2006-01-02T15:04:05-0700") + " attempt 2: CLEAN, exit 0\n"
	writeFile(t, filepath.Join(dir, stem+results.GuardLogSuffix), glog)
	writeJSON(t, filepath.Join(dir, stem+results.NightlySuffix), man)
	return dir
}

// dryNights returns a function that publishes a night as a dry run into out, against
// tg's repository, and fails the test on an error.
func dryNights(t *testing.T, tg *target, out string) func(night) BaselineSummary {
	return func(n night) BaselineSummary {
		t.Helper()
		sum, err := PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: layNight(t, tg.base, n), RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}})
		if err != nil {
			t.Fatalf("%s: %v", n.date, err)
		}
		return sum
	}
}

// dryNightPage publishes the night n on a new target as a dry run and returns the
// baseline page it committed.
func dryNightPage(t *testing.T, n night) string {
	t.Helper()
	tg := newTarget(t)
	sum := dryNights(t, tg, t.TempDir())(n)
	return tg.file(t, sum.Git.Commit, sum.Page)
}

// Three nights in a dry run: a confirmed Llama regression opens its issue file, the
// next night updates the same one (no second), the third night, back in its band,
// says so once; the tracking comment is one file keeping the nights; the page parses
// back and holds the real ratios and the guard's evidence.
func TestPublishBaselineDryRunThreeNights(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	out := t.TempDir()
	publishNight := dryNights(t, tg, out)
	sum := publishNight(night{date: "2026-10-20", llama: "35.41", tenants: true})
	if sum.Page != "docs/benchmark_results/rocm-baseline-gfx1151-2026-10-20.md" || sum.Git.Action != "created" || sum.Conclusion != "success" || !sum.DryRun {
		t.Fatalf("summary %+v", sum)
	}
	// The first night's page and documents, whole (machine-specific names replaced).
	names := strings.NewReplacer(sum.Git.Commit, "<commit>", tg.base, "<base>", tg.base[:8], "<base8>", sum.Git.Commit[:8], "<commit8>",
		tg.checkout, "<checkout>", out, "<out>")
	golden.Check(t, "testdata/golden/baseline/page.md", names.Replace(tg.file(t, sum.Git.Commit, sum.Page)))
	docs, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if !d.IsDir() && d.Name() != DrySummary {
			golden.Check(t, "testdata/golden/baseline/"+d.Name(), names.Replace(readFile(t, filepath.Join(out, d.Name()))))
		}
	}
	files := treeFiles(t, tg.bare, sum.Git.Commit)
	for _, want := range []string{"benchmarks/rocm_strixhalo-gfx1151_2026-10-20.csv", "benchmarks/pylm_strixhalo-gfx1151_2026-10-20.csv",
		"benchmarks/rocm_strixhalo-gfx1151_2026-10-20_single_" + llama + ".csv", "benchmarks/rocm_strixhalo-gfx1151_2026-10-20.guard.log",
		"benchmarks/rocm_strixhalo-gfx1151_2026-10-20.nightly.json", sum.Page} {
		if _, ok := files[want]; !ok {
			t.Errorf("the commit lacks %s", want)
		}
	}
	page := tg.file(t, sum.Git.Commit, sum.Page)
	committed := map[string]bool{}
	for p := range files {
		committed[p] = true
	}
	if err := report.Validate(page, committed, sum.Page); err != nil {
		t.Errorf("the page does not parse back: %v", err)
	}
	wantIn(t, page,
		"# ROCm decode baseline: Radeon 8060S Graphics (gfx1151), 2026-10-20",
		"| [Qwen3-0.6B-4bit](../../benchmarks/rocm_strixhalo-gfx1151_2026-10-20.csv#L5) | 4417.27 | 4316.74 | 278.48 | 220.13 | 1.27x |",
		"Median decode ratio: 1\\.054x over 5 model(s).",
		"Last accepted baseline: `rocm_strixhalo-gfx1151_2026-10-19.csv`.",
		"| Meta-Llama-3.1-8B-Instruct-4bit | 35.41 | -",
		"| regression |",
		"Other GPU tenants were seen:",
		"mlxcel sweep, attempt 1 rejected: foreign\\_gpu=\\[2682448:python3\\] compilers=\\[\\]",
		"| `nightly mlxcel` |",
		"```text\ncargo build --release --features rocm --bin mlxcel --bin mlxcel-bench-decode\nMODELS_DIR=models/mlx scripts/bench_decode.sh all --cooldown 30 --big-cooldown 30\n",
	)
	issue := filepath.Join(out, "regression-"+llama+".md")
	first := readFile(t, issue)
	if len(sum.Regressions) != 1 || sum.Regressions[0].Action != "created" || !strings.Contains(first, report.RegressionMarker("rocm_strixhalo-gfx1151", llama)) ||
		!strings.Contains(first, "First seen 2026-10-20; still there on 2026-10-20.") {
		t.Errorf("regression %+v:\n%s", sum.Regressions, first)
	}
	if pr := readFile(t, filepath.Join(out, DryBaselinePR)); !strings.Contains(pr, "1 regression, 4 no significant change") {
		t.Errorf("PR body:\n%s", pr)
	}

	sum2 := publishNight(night{date: "2026-10-21", llama: "35.60"})
	if len(sum2.Regressions) != 1 || sum2.Regressions[0].Action != "updated" {
		t.Errorf("second night regressions %+v", sum2.Regressions)
	}
	second := readFile(t, issue)
	nights, err := report.ParseRegressionNights(second)
	if err != nil || len(nights) != 2 || nights[0].Date != "2026-10-21" || nights[1].Date != "2026-10-20" || !strings.Contains(second, "First seen 2026-10-20; still there on 2026-10-21.") {
		t.Errorf("the regression issue after two nights (%v):\n%s", err, second)
	}
	if files, _ := filepath.Glob(filepath.Join(out, "regression-*.md")); len(files) != 1 {
		t.Errorf("regression files %v: a persisting regression must not open a second", files)
	}

	sum3 := publishNight(night{date: "2026-10-22", llama: "39.31"})
	third := readFile(t, issue)
	if len(sum3.Regressions) != 1 || !strings.Contains(third, "On 2026-10-22 Meta-Llama-3.1-8B-Instruct-4bit was back inside its noise band") {
		t.Errorf("recovery %+v:\n%s", sum3.Regressions, third)
	}
	sum4 := publishNight(night{date: "2026-10-23", llama: "39.50"})
	if len(sum4.Regressions) != 0 || readFile(t, issue) != third {
		t.Errorf("the recovery was said again: %+v", sum4.Regressions)
	}
	tracking := readFile(t, filepath.Join(out, DryTracking))
	kept, err := report.ParseNights(tracking)
	if err != nil || len(kept) != 4 || kept[0].Date != "2026-10-23" || len(kept[1].Regressions) != 0 || kept[2].Regressions[0] != llama || kept[3].Regressions[0] != llama {
		t.Errorf("tracking history %+v (%v)", kept, err)
	}
	if !strings.Contains(tracking, "## ROCm nightly baseline: 2026-10-23") || strings.Count(tracking, report.TrackingMarker) != 1 {
		t.Errorf("tracking comment:\n%s", tracking)
	}
}

// On GitHub (the API stub): the first night opens the PR, the tracking comment on the
// epic and the regression issue; the second edits all three and opens nothing.
func TestPublishBaselineOnGitHub(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	h := &changeHub{hub: newHub(t), comments: map[string][]string{}}
	o := BaselineOptions{Target: Target{RepoDir: tg.checkout, Config: testConfig(), Sink: ToGitHub(client(t, h.s, &sleeps{}), testRepo), Repo: testRepo, BaseBranch: "main", Remote: "origin"}}
	listIssues := issuesPath + "?state=open&creator=perfbot[bot]"

	// Listed to find the open regressions, and again by the upsert before it opens one.
	h.s.Expect("GET", listIssues, h.list()).Times(2)
	h.s.Expect("POST", issuesPath, h.create()).JSONBody(map[string]any{"title": "Nightly: decode regression of " + llama + " on strixhalo-gfx1151"})
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("POST", pullsPath, h.createPR()).JSONBody(map[string]any{"head": "perfbot/rocm-baseline", "base": "main", "title": "rocm: nightly baseline of gfx1151 at " + tg.base[:8] + " (2026-10-20)"})
	h.s.Expect("GET", trackingPath, h.listEpic()).Times(2)
	h.s.Expect("POST", trackingPath, h.createEpic())
	o.ResultsDir = layNight(t, tg.base, night{date: "2026-10-20", llama: "35.41"})
	sum, err := PublishBaseline(context.Background(), o)
	if err != nil {
		t.Fatalf("first night: %v", err)
	}
	if sum.DryRun || sum.PR.Action != "created" || sum.Tracking.Action != "created" || len(sum.Regressions) != 1 || sum.Regressions[0].Action != "created" || sum.Regressions[0].Number != 100 {
		t.Fatalf("first night %+v", sum)
	}
	if !strings.Contains(h.pr["body"].(string), "regression ([\\#100](https://github.com/lablup/mlxcel/issues/100))") {
		t.Errorf("the PR body does not link the regression issue:\n%s", h.pr["body"])
	}
	// GitHub shows a committed SVG as an image by its raw URL, not its blob page.
	if img := regexp.MustCompile(`!\[[^\]]*\]\(https://github\.com/lablup/mlxcel/raw/` + sum.Git.Commit + `/docs/benchmark_results/[^)]*\.svg\)`); !img.MatchString(h.pr["body"].(string)) {
		t.Errorf("the PR body does not show the chart by its raw URL:\n%s", h.pr["body"])
	}
	if got := gitT(t, tg.bare, "rev-parse", "refs/heads/perfbot/rocm-baseline"); got != sum.Git.Commit {
		t.Errorf("the baseline branch is at %s, not at the commit %s", got, sum.Git.Commit)
	}

	h.s.Expect("GET", listIssues, h.list())
	h.s.Expect("PATCH", issuesPath+"/100", h.edit())
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("PATCH", pullsPath+"/57", h.editPR())
	h.s.Expect("GET", trackingPath, h.listEpic()).Times(2)
	h.s.Expect("PATCH", commentsPath+"9001", h.editComment())
	o.ResultsDir = layNight(t, tg.base, night{date: "2026-10-21", llama: "35.60"})
	sum2, err := PublishBaseline(context.Background(), o)
	if err != nil {
		t.Fatalf("second night: %v", err)
	}
	if sum2.PR.Action != "updated" || sum2.Tracking.Action != "updated" || len(sum2.Regressions) != 1 || sum2.Regressions[0].Action != "updated" {
		t.Errorf("second night %+v", sum2)
	}
	if len(h.issues) != 1 || !strings.Contains(h.issues[0]["body"].(string), "still there on 2026-10-21") {
		t.Errorf("issues after two nights: %d", len(h.issues))
	}
	if kept, _ := report.ParseNights(h.epic[0]["body"].(string)); len(kept) != 2 {
		t.Errorf("tracking comment keeps %d nights", len(kept))
	}
}

// Mixtral read 7.65, 8.22 and 11.16 tok/s by mlxcel on one night gets no ratio: the
// row says "not stable", the repeats are listed with their spread against the
// threshold the page states, and the median leaves Mixtral out. A manifest without a
// comparison says so and names the mlxcel CSV that is there, instead of claiming the
// sweep left none.
func TestPublishBaselineUnstableRatioNoComparison(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	sum, err := PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: layNight(t, tg.base, night{date: "2026-10-20", llama: "35.41", mixtral: []string{"8.22", "11.16"}, noComparison: true}),
		RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(t.TempDir())}})
	if err != nil {
		t.Fatal(err)
	}
	page := tg.file(t, sum.Git.Commit, sum.Page)
	wantIn(t, page,
		"| 25.85 | 26.43 | 8.22 | 9.98 | not stable |",
		"- Mixtral-8x7B-Instruct-v0.1-4bit, mlxcel: decode 7.65 / 8.22 / 11.16 tok/s, a spread of 42.7% of the median (over 10%): no ratio",
		"spread at most 10% of their median",
		"Median decode ratio: 1\\.067x over 4 model(s).",
		"No comparison with the nightly history was made tonight: the nightly manifest holds none, although the mlxcel sweep left rocm\\_strixhalo-gfx1151\\_2026-10-20.csv.",
	)
	if strings.Contains(page, "left no ROCm CSV") {
		t.Errorf("the page says the CSV is missing:\n%s", page)
	}
	// A wider threshold gives the ratio back.
	sum, err = PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: layNight(t, tg.base, night{date: "2026-10-21", llama: "35.41", mixtral: []string{"8.22", "11.16"}, noComparison: true}),
		RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(t.TempDir())}, MaxSpreadPct: 50})
	if err != nil {
		t.Fatal(err)
	}
	if page := tg.file(t, sum.Git.Commit, sum.Page); !strings.Contains(page, "| 25.85 | 26.43 | 8.22 | 9.98 | 0.82x |") || !strings.Contains(page, "at most 50% of their median") {
		t.Errorf("with a 50%% threshold:\n%s", page)
	}
}

// editManifest rewrites the nightly manifest of the folder dir (night date) with edit.
func editManifest(t *testing.T, dir, date string, edit func(*results.Nightly)) {
	t.Helper()
	p := filepath.Join(dir, nightlyStem+date+results.NightlySuffix)
	man, err := results.ReadNightly(p)
	if err != nil {
		t.Fatal(err)
	}
	edit(&man)
	writeJSON(t, p, man)
}

// With the pinned commit given (the Action's publish job passes it), the nightly of
// that commit publishes; one whose manifest names no commit, or another one, is
// refused.
func TestPublishBaselinePinsTheBaseCommit(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	publish := func(dir string) (BaselineSummary, error) {
		return PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: dir, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(t.TempDir())},
			Base: tg.base})
	}
	sum, err := publish(layNight(t, tg.base, night{date: "2026-10-20", llama: "35.41"}))
	if err != nil || sum.Commit != tg.base {
		t.Fatalf("the pinned commit's nightly: commit %q, %v", sum.Commit, err)
	}
	for _, commit := range []string{"", strings.Repeat("ab", 20)} {
		dir := layNight(t, tg.base, night{date: "2026-10-21", llama: "35.41"})
		editManifest(t, dir, "2026-10-21", func(m *results.Nightly) { m.Commit = commit })
		if _, err := publish(dir); err == nil || !strings.Contains(err.Error(), "pinning the base commit: the nightly results are of commit") {
			t.Errorf("a nightly of commit %q: %v, want it refused", commit, err)
		}
	}
}

// The history, the chart and the regression issues all go by the host: a folder whose
// manifest names another host than its sweeps' CSVs is refused, not charted against
// the wrong machine.
func TestPublishBaselineRefusesTwoHosts(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	dir := layNight(t, tg.base, night{date: "2026-10-20", llama: "35.41"})
	editManifest(t, dir, "2026-10-20", func(m *results.Nightly) { m.Host = "radeon-gfx1201" })
	_, err := PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: dir, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(t.TempDir())}})
	if err == nil || !strings.Contains(err.Error(), `sweep's CSV rocm_strixhalo-gfx1151_2026-10-20.csv is of the host "strixhalo-gfx1151", but the manifest is of "radeon-gfx1201"`) {
		t.Fatalf("%v, want the two hosts named", err)
	}
}
