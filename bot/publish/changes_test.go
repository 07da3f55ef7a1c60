package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/mdtest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/changepoint"
	"github.com/lablup/perfbot/runner/results"
)

const qwen30 = "Qwen3-30B-A3B-4bit"

// cpNights makes a nightly history from the real 2026-09-30 mlxcel CSV: night k is
// dated 2026-10-01 + k, each model at its measured level times level(model, k) with
// 1.5 % noise a reading (as the nightly's sims), and the night's own mlxcel commit.
type cpNights struct {
	t     *testing.T
	real  *benchcsv.File
	rng   *rand.Rand
	level func(model string, k int) float64
	hist  string // the history folder: the nights published so far
	files []*benchcsv.File
	// night, when set, adds to night k's folder dir what the GPU job left beside the
	// CSVs (a confirming A/B, a bisection) and edits its manifest.
	night func(k int, dir string, man *results.Nightly)
}

func newCPNights(t *testing.T, seed uint64, level func(string, int) float64) *cpNights {
	real, err := benchcsv.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", "rocm_strixhalo-gfx1151_2026-09-30.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return &cpNights{t: t, real: real, rng: rand.New(rand.NewPCG(seed, seed)), level: level, hist: t.TempDir()}
}

func cpDate(k int) string {
	return time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, k).Format(time.DateOnly)
}

func cpCommit(k int) string { return fmt.Sprintf("c%07d%032x", k, 0xbeef) }

// csv is night k's mlxcel CSV named name (a nightly file or a re-measure of model).
func (c *cpNights) csv(k int, name benchcsv.Name, only string) *benchcsv.File {
	c.t.Helper()
	var rows []benchcsv.Row
	for _, r := range c.real.Rows {
		if only != "" && r.Model != only {
			continue
		}
		if r.OK() {
			r.DecodeTokS = math.Round(r.DecodeTokS*c.level(r.Model, k)*(1+0.015*c.rng.NormFloat64())*100) / 100
		}
		r.Date, r.MlxcelCommit = cpDate(k), cpCommit(k)
		rows = append(rows, r)
	}
	f, err := benchcsv.Parse(benchcsv.Format(benchcsv.ROCmHeader, rows), name.String())
	if err != nil {
		c.t.Fatal(err)
	}
	f.Name = name
	return f
}

// lay writes night k's results folder as `perfbot run bench` leaves it: the CSV, the
// comparison with the history so far, a re-measure (a fresh reading) of each suspect.
func (c *cpNights) lay(k int, base string) string {
	t := c.t
	t.Helper()
	date := cpDate(k)
	dir := filepath.Join(t.TempDir(), "benchmarks")
	stem := nightlyStem + date
	name := benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: date}
	f := c.csv(k, name, "")
	writeFile(t, filepath.Join(dir, name.String()), string(benchcsv.Format(benchcsv.ROCmHeader, f.Rows)))
	csvs := []string{name.String()}
	rep := baseline.CompareNightly(baseline.New(c.files...), f, baseline.DefaultRules())
	var rms []results.Remeasure
	for _, s := range rep.Suspects() {
		single := stem + "_single_" + s + ".csv"
		sf := c.csv(k, name, s)
		writeFile(t, filepath.Join(dir, single), string(benchcsv.Format(benchcsv.ROCmHeader, sf.Rows)))
		p, _ := baseline.PointOf(sf, s)
		if err := rep.Remeasured(s, p); err != nil {
			t.Fatal(err)
		}
		csvs = append(csvs, single)
		rms = append(rms, results.Remeasure{Model: s, CSV: single, Decode: p.Value()})
	}
	start := time.Date(2026, 10, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, k)
	man := results.Nightly{Date: date, Started: start, Finished: start.Add(time.Hour), State: "complete", Commit: base,
		GFX: "gfx1151", Host: "strixhalo-gfx1151", Stem: stem, ModelsDir: "models/mlx",
		Sweeps: []results.Sweep{{Name: results.SweepMlxcel, Command: results.HarnessCommand, Status: "ok", CSVs: csvs[:1]},
			{Name: results.SweepMlxLM, Command: results.BaselineCommand, Status: "failed", Reason: "not run in this test"}},
		CSVs: csvs, Comparison: &rep, Remeasures: rms}
	ts := func(d time.Duration) string { return start.Add(d).Format("2006-01-02T15:04:05-0700") }
	writeFile(t, filepath.Join(dir, stem+results.GuardLogSuffix), "== nightly mlxcel\n"+ts(0)+" attempt 1/5: start: scripts/bench_decode.sh all --cooldown 30 --big-cooldown 30\n"+
		ts(30*time.Minute)+" monitor: 1800 samples\n"+ts(30*time.Minute)+" attempt 1: CLEAN, exit 0\n")
	man.GuardLog = stem + results.GuardLogSuffix
	if c.night != nil {
		c.night(k, dir, &man)
	}
	writeJSON(t, filepath.Join(dir, stem+results.NightlySuffix), man)
	// Tonight joins the history of the next nights.
	c.files = append(c.files, f)
	writeFile(t, filepath.Join(c.hist, name.String()), string(benchcsv.Format(benchcsv.ROCmHeader, f.Rows)))
	return dir
}

// publish publishes nights from..to (inclusive) as dry runs into out.
func (c *cpNights) publish(tg *target, out string, from, to int) map[int]BaselineSummary {
	c.t.Helper()
	sums := map[int]BaselineSummary{}
	for k := from; k <= to; k++ {
		sum, err := PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: c.lay(k, tg.base), RepoDir: tg.checkout, Config: testConfig(),
			Sink: ToDir(out)}, HistoryDir: c.hist})
		if err != nil {
			c.t.Fatalf("night %d: %v", k, err)
		}
		sums[k] = sum
	}
	return sums
}

// issueFiles are the change issues of the dry run, by model and first night.
func issueFiles(t *testing.T, out string) (open, closed []string) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(out, dryRegression+"*.md"))
	for _, n := range names {
		b := filepath.Base(n)
		if strings.HasSuffix(b, dryClosed) {
			closed = append(closed, strings.TrimSuffix(strings.TrimPrefix(b, dryRegression), dryClosed))
			continue
		}
		open = append(open, strings.TrimSuffix(strings.TrimPrefix(b, dryRegression), ".md"))
	}
	return open, closed
}

// The issue's example on the real CSVs with 1.5 % noise: Llama +12 % from night 16 is a
// gain recorded once and not absorbed, so its -20 % step at night 27 is caught and
// opens one issue; Qwen3-30B -15 % from night 25 opens one issue that stays open over
// its six bad nights and closes once the model is back at its level; nothing else
// opens an issue.
func TestChangePointsOnRealNights(t *testing.T) {
	t.Parallel()
	level := func(model string, k int) float64 {
		switch {
		case model == llama && k >= 27:
			return 1.12 * 0.80
		case model == llama && k >= 16:
			return 1.12
		case model == qwen30 && k >= 25 && k <= 30:
			return 0.85
		}
		return 1
	}
	c := newCPNights(t, 7, level)
	tg := newTarget(t)
	out := t.TempDir()
	for k := 0; k < 12; k++ {
		c.lay(k, tg.base) // the history before the bot publishes
	}
	sums := c.publish(tg, out, 12, 30)
	open, closed := issueFiles(t, out)
	llamaIssue := regressionFileName(llama) + "_"
	qwenIssue := regressionFileName(qwen30) + "_"
	var llamas, qwens []string
	for _, o := range open {
		switch {
		case strings.HasPrefix(o, llamaIssue):
			llamas = append(llamas, o)
		case strings.HasPrefix(o, qwenIssue):
			qwens = append(qwens, o)
		default:
			t.Errorf("an issue for %s: a false alarm", o)
		}
	}
	if len(llamas) != 1 || len(qwens) != 1 || len(closed) != 0 {
		t.Fatalf("after night 30: open %v, closed %v", open, closed)
	}
	// Llama's second step, judged against the +12 % segment alone.
	if d := strings.TrimPrefix(llamas[0], llamaIssue); d < cpDate(26) || d > cpDate(28) {
		t.Errorf("Llama's regression starts on %s, not near night 27 (%s)", d, cpDate(27))
	}
	li := readFile(t, filepath.Join(out, dryRegression+llamas[0]+".md"))
	wantIn(t, li, "| last good commit |", "| first bad commit |", "| confirmation | ", "| bisection | none ran |", "| state | open |", "<!-- perfbot:regression-checks {\"confirmation\":")
	// The latest night links tonight's row of the CSV it was read from.
	if !regexp.MustCompile(`\nLatest night, ` + cpDate(30) + ` \(\[[^]]+\]\([^)]+\), \[[^]]+\.csv\]\([^)]+\.csv#L[0-9]+\)\): `).MatchString(li) {
		t.Errorf("Llama's issue does not link tonight's CSV row:\n%s", li)
	}
	if strings.Contains(li, "| confirmation | not known |") {
		t.Errorf("Llama's issue does not say how the change was confirmed:\n%s", li)
	}
	if !strings.Contains(li, cpCommit(26)[:8]) && !strings.Contains(li, cpCommit(25)[:8]) {
		t.Errorf("Llama's issue does not name the commit before the step:\n%s", li)
	}
	// The +12 % gain: no issue, on the page, and ten nights later Llama is judged
	// against the new level (no regression, no suspicion).
	page26 := tg.file(t, sums[26].Git.Commit, sums[26].Page)
	wantIn(t, page26, "## Change points", "| "+llama+" | "+cpDate(16)+" | \\+1")
	// Slow creep: Qwen3-30B's current segment against its best of the period.
	wantIn(t, page26, "Slow creep: the current segment against the best segment of the last 90 days (reported at a gap of 5 % or more).",
		"- "+qwen30+": the current segment (from "+cpDate(25)+",")
	for _, m := range sums[26].Regressions {
		if m.Detail == llama {
			t.Errorf("night 26 wrote a regression issue of Llama: %+v", m)
		}
	}
	// Qwen3-30B: opened on or after its first bad night, open over the six bad nights.
	if d := strings.TrimPrefix(qwens[0], qwenIssue); d != cpDate(25) {
		t.Errorf("Qwen3-30B's regression starts on %s, not %s", d, cpDate(25))
	}
	qi := readFile(t, filepath.Join(out, dryRegression+qwens[0]+".md"))
	wantIn(t, qi, "| state | open |", "from the night of "+cpDate(25))
	// Night 26 is Qwen3-30B's second at its new level: the verdict table's change is
	// tonight's reading against the current segment's level (about 0), not against
	// the band of the nights before the drop (about -15 %).
	wantSegmentChange(t, page26, qwen30)

	// Back at its level from night 31: the issue says so and closes; Llama's stays open.
	later := c.publish(tg, out, 31, 38)
	var closings []int
	for k, sum := range later {
		for _, o := range sum.Regressions {
			if o.Detail == qwen30 && o.Action == "closed" {
				closings = append(closings, k)
			}
		}
	}
	if len(closings) != 1 {
		t.Errorf("the dry run closed Qwen3-30B's issue on nights %v, want one", closings)
	}
	open, closed = issueFiles(t, out)
	if !slices.Contains(closed, qwens[0]) || slices.Contains(closed, llamas[0]) || len(open) != 2 || len(closed) != 1 {
		t.Fatalf("after night 38: open %v, closed %v", open, closed)
	}
	wantIn(t, readFile(t, filepath.Join(out, dryRegression+qwens[0]+".md")), "| state | closed |")
	wantIn(t, readFile(t, filepath.Join(out, dryRegression+qwens[0]+dryClosed)), "is back at the level before this regression")
}

// wantSegmentChange checks model's row of the page's verdict table: its change is its
// decode reading against the level of the current segment its verdict names (both
// as the page rounds them).
func wantSegmentChange(t *testing.T, page, model string) {
	t.Helper()
	row := mdtest.Under(t, page, "## Against the nightly history").Row(model)
	if row == nil {
		t.Fatalf("no verdict row of %s", model)
	}
	decode, err1 := strconv.ParseFloat(row[1], 64)
	change, err2 := strconv.ParseFloat(strings.TrimSuffix(row[2], "%"), 64)
	g := regexp.MustCompile(`\n- ` + regexp.QuoteMeta(model) + `: .*the current segment has \d+ night\(s\) from \S+ at ([0-9.]+) tok/s`).FindStringSubmatch(page)
	if err1 != nil || err2 != nil || g == nil {
		t.Fatalf("%s: row %q, no reading, change or segment level (%v, %v)", model, row, err1, err2)
	}
	level, _ := strconv.ParseFloat(g[1], 64)
	// The page rounds the reading and the level to 0.01 tok/s, the change to 0.1 %.
	if want := (decode/level - 1) * 100; math.Abs(change-want) > 0.06 {
		t.Errorf("%s: change %v %%, want %.2f %% (%.2f tok/s against the segment's %.2f)", model, change, want, decode, level)
	}
}

// changeHub is the stub's state of the bot's issues with their state, labels and
// comments: listed by state, opened, edited, closed, commented, labelled.
type changeHub struct {
	*hub
	mu       sync.Mutex
	issues   []map[string]any
	comments map[string][]string // by issue number
}

func (h *changeHub) list() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		state := strings.Join(req.Query["state"], "")
		list := []any{h.object("issue", map[string]any{"number": 1814, "title": "epic", "body": "ports", "user.login": "maintainer", "labels": []any{}})}
		for _, is := range h.issues {
			if state == "all" || is["state"] == state {
				list = append(list, is)
			}
		}
		return answer(200, list)
	})
}

func (h *changeHub) create() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		b := body(req)
		n := 100 + len(h.issues)
		is := h.object("issue", map[string]any{"number": n, "title": b["title"], "body": b["body"], "user.login": botLogin, "state": "open", "labels": []any{},
			"html_url": "https://github.com/lablup/mlxcel/issues/" + strconv.Itoa(n)})
		delete(is, "pull_request")
		h.issues = append(h.issues, is)
		return answer(201, is)
	})
}

func (h *changeHub) find(p string) map[string]any {
	for _, is := range h.issues {
		if fmt.Sprint(is["number"]) == p {
			return is
		}
	}
	return nil
}

func (h *changeHub) edit() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		is := h.find(path.Base(req.Path))
		if is == nil {
			return answer(404, map[string]string{"message": "Not Found"})
		}
		for k, v := range body(req) {
			if k == "title" || k == "body" || k == "state" {
				is[k] = v
			}
		}
		return answer(200, is)
	})
}

func (h *changeHub) comment() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		n := path.Base(path.Dir(req.Path))
		text := body(req)["body"].(string)
		h.comments[n] = append(h.comments[n], text)
		id := int64(7000 + len(h.comments[n]))
		return answer(201, h.hub.comment(id, 0, text))
	})
}

func (h *changeHub) label() fakegithub.Responder {
	return locked(&h.mu, func(req fakegithub.Request) fakegithub.Response {
		is := h.find(path.Base(path.Dir(req.Path)))
		var labels []any
		for _, l := range asStrings(body(req)["labels"]) {
			labels = append(labels, map[string]any{"id": len(labels) + 1, "node_id": "L", "url": "", "name": l, "color": "ededed", "default": false, "description": nil})
		}
		if labels == nil {
			var list []any
			_ = json.Unmarshal(req.Body, &list)
			for _, l := range list {
				labels = append(labels, map[string]any{"id": len(labels) + 1, "node_id": "L", "url": "", "name": l, "color": "ededed", "default": false, "description": nil})
			}
		}
		is["labels"] = labels
		return answer(200, labels)
	})
}

func asStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// On GitHub: Qwen3-30B's -15 % from night 25 opens one issue; a maintainer accepts it
// (the label `/perfbot accept` adds, through the same client); the next night closes
// it with a comment that says so, and the later nights at the new level open nothing
// and leave it closed: accepted stays accepted.
func TestChangePointsAcceptedOnGitHub(t *testing.T) {
	t.Parallel()
	level := func(model string, k int) float64 {
		if model == qwen30 && k >= 25 {
			return 0.85
		}
		return 1
	}
	c := newCPNights(t, 11, level)
	tg := newTarget(t)
	h := &changeHub{hub: newHub(t), comments: map[string][]string{}}
	api := client(t, h.s, &sleeps{})
	h.s.Expect("GET", issuesPath+"?state=all", h.list()).AnyTimes()
	h.s.Expect("GET", issuesPath+"?state=open", h.list()).AnyTimes()
	h.s.Expect("POST", issuesPath, h.create()).AnyTimes()
	for n := 100; n < 104; n++ {
		h.s.Expect("PATCH", issuesPath+"/"+strconv.Itoa(n), h.edit()).AnyTimes()
		h.s.Expect("POST", issuesPath+"/"+strconv.Itoa(n)+"/comments", h.comment()).AnyTimes()
		h.s.Expect("POST", issuesPath+"/"+strconv.Itoa(n)+"/labels", h.label()).AnyTimes()
	}
	h.s.Expect("GET", pullsPath, h.listPRs()).AnyTimes()
	h.s.Expect("POST", pullsPath, h.createPR()).AnyTimes()
	h.s.Expect("PATCH", pullsPath+"/57", h.editPR()).AnyTimes()
	h.s.Expect("GET", trackingPath, h.listEpic()).AnyTimes()
	h.s.Expect("POST", trackingPath, h.createEpic()).AnyTimes()
	h.s.Expect("PATCH", commentsPath+"9001", h.editComment()).AnyTimes()
	o := BaselineOptions{Target: Target{RepoDir: tg.checkout, Config: testConfig(), Sink: ToGitHub(api, testRepo), Repo: testRepo, BaseBranch: "main", Remote: "origin"}, HistoryDir: c.hist}
	for k := 0; k < 14; k++ {
		c.lay(k, tg.base)
	}
	night := func(k int) BaselineSummary {
		t.Helper()
		o.ResultsDir = c.lay(k, tg.base)
		sum, err := PublishBaseline(context.Background(), o)
		if err != nil {
			t.Fatalf("night %d: %v", k, err)
		}
		return sum
	}
	for k := 14; k <= 30; k++ {
		night(k)
	}
	if len(h.issues) != 1 || h.issues[0]["state"] != "open" || !strings.Contains(h.issues[0]["title"].(string), qwen30+" on strixhalo-gfx1151 from "+cpDate(25)) {
		t.Fatalf("after night 30: %d issues, the first %v", len(h.issues), h.issues)
	}
	// Tonight's verdict of Qwen3-30B on the tracking comment links its open issue.
	h.mu.Lock()
	tracking := h.epic[len(h.epic)-1]["body"].(string)
	h.mu.Unlock()
	var row string
	for _, l := range strings.Split(tracking, "\n") {
		if strings.HasPrefix(l, "| "+qwen30+" |") {
			row = l
		}
	}
	if !strings.HasSuffix(row, `regression ([\#100](https://github.com/lablup/mlxcel/issues/100)) |`) {
		t.Errorf("the verdict row of %s links no issue #100: %q", qwen30, row)
	}
	// The maintainer accepts: the server adds the label.
	if err := api.AddIssueLabels(context.Background(), testRepo, 100, report.AcceptedLabel); err != nil {
		t.Fatal(err)
	}
	night(31)
	is := h.issues[0]
	if is["state"] != "closed" || len(h.comments["100"]) != 1 || !strings.Contains(h.comments["100"][0], "a maintainer accepted") ||
		!strings.Contains(is["body"].(string), "| state | accepted |") {
		t.Fatalf("after the acceptance: state %v, comments %q, body:\n%s", is["state"], h.comments["100"], is["body"])
	}
	for k := 32; k <= 36; k++ {
		sum := night(k)
		for _, r := range sum.Regressions {
			t.Errorf("night %d wrote a regression issue: %+v", k, r)
		}
	}
	if len(h.issues) != 1 || h.issues[0]["state"] != "closed" || len(h.comments["100"]) != 1 {
		t.Errorf("after the later nights: %d issues, state %v, %d comments", len(h.issues), h.issues[0]["state"], len(h.comments["100"]))
	}
}

// abResult is abstat's comparison of b's readings with a's.
func abResult(t *testing.T, a, b []float64) abstat.Result {
	t.Helper()
	r, err := abstat.Compare(a, b, abstat.HigherIsBetter, abstat.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// layConfirm writes the interleaved A/B that re-measured model below the nightly
// folder dir (confirm-<model>, a bench compare session): A = shaA, B = shaB, eight
// runs a side, B's decode readings ratio times A's.
func layConfirm(t *testing.T, dir, model, shaA, shaB string, ratio float64) string {
	t.Helper()
	name := results.ConfirmDirPrefix + model
	var a, b []float64
	c := results.Compare{Kind: results.CompareBench, ShaA: shaA, ShaB: shaB, Label: "confirm", Backend: "rocm", Host: "strixhalo-gfx1151", GFX: "gfx1151",
		Date: "2026-10-26", Started: time.Date(2026, 10, 26, 4, 0, 0, 0, time.UTC), Finished: time.Date(2026, 10, 26, 5, 0, 0, 0, time.UTC),
		State: results.SessionComplete, Start: 4, Cap: 8, Options: abstat.DefaultOptions(),
		Metrics: []results.CompareMetric{{Name: baseline.MetricDecode, Direction: abstat.HigherIsBetter.String()}}}
	for i := range 8 {
		va := 50 * (1 + 0.004*float64(i%4))
		vb := va * ratio * (1 + 0.001*float64(i%3))
		a, b = append(a, va), append(b, vb)
		c.Runs = append(c.Runs, results.CompareRun{Model: model, Side: results.SideA, I: i, Values: []float64{va}},
			results.CompareRun{Model: model, Side: results.SideB, I: i, Values: []float64{vb}})
	}
	c.Planned = len(c.Runs)
	c.Models = []results.CompareModel{{Model: model, Done: true, NA: 8, NB: 8, Results: []results.CompareResult{{Metric: baseline.MetricDecode, Result: abResult(t, a, b)}}}}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return name
}

// qwenStep publishes nights 14 to 26 of a history in which Qwen3-30B drops by 15 %
// from night 25 (the night dated cpDate(25)), as dry runs; on night 25, night adds what
// the GPU job left for the suspect (nil: the single re-run alone). It returns the dry
// run's folder and each night's summary.
func qwenStep(t *testing.T, night func(dir string, man *results.Nightly)) (out string, tg *target, sums map[int]BaselineSummary) {
	t.Helper()
	return qwenNights(t, map[int]func(string, *results.Nightly){25: night})
}

// qwenNights is qwenStep with what the GPU job left on any of the nights 25 and 26
// (by night).
func qwenNights(t *testing.T, nights map[int]func(dir string, man *results.Nightly)) (out string, tg *target, sums map[int]BaselineSummary) {
	t.Helper()
	c := newCPNights(t, 11, func(model string, k int) float64 {
		if model == qwen30 && k >= 25 {
			return 0.85
		}
		return 1
	})
	c.night = func(k int, dir string, man *results.Nightly) {
		if k == 25 && !slices.ContainsFunc(man.Remeasures, func(r results.Remeasure) bool { return r.Model == qwen30 }) {
			t.Fatalf("night 25 did not re-measure %s: %+v", qwen30, man.Remeasures)
		}
		if night := nights[k]; night != nil {
			night(dir, man)
		}
	}
	tg = newTarget(t)
	out = t.TempDir()
	for k := 0; k < 14; k++ {
		c.lay(k, tg.base)
	}
	return out, tg, c.publish(tg, out, 14, 26)
}

// setConfirm names the A/B folder in the suspect's re-measure.
func setConfirm(man *results.Nightly, model, folder string) {
	for i := range man.Remeasures {
		if man.Remeasures[i].Model == model {
			man.Remeasures[i].Confirm = folder
		}
	}
}

// The A/B of the last good commit against the first bad one says slower: the
// suspicion of night 25 is confirmed that night and its issue says how ("A/B of ...
// (8 runs) against ... (8 runs): -14.9 %, p = ..."), as the baseline page does; the
// nightly's bisection of the change is its comment on the issue (the first bad commit,
// the culprit's port impact), and the issue's table names it. The next night, which
// holds neither, still says both, and leaves the comment as it was.
func TestRegressionConfirmedByAB(t *testing.T) {
	t.Parallel()
	var commits []string
	out, tg, sums := qwenStep(t, func(dir string, man *results.Nightly) {
		// The GPU job's A/B and bisection run from the last good commit to tonight's.
		commits = []string{cpCommit(24), fakeSHA(1), fakeSHA(2), man.Commit}
		setConfirm(man, qwen30, layConfirm(t, dir, qwen30, cpCommit(24), man.Commit, 0.85))
		bdir := results.BisectDirPrefix + qwen30
		layBisect(t, filepath.Join(dir, bdir), bisectDoc(qwen30, commits, results.BisectFound), true)
		man.Bisects = []results.NightBisect{{Model: qwen30, Good: commits[0], Bad: commits[3], Dir: bdir}}
	})
	key := regressionFileName(qwen30) + "_" + cpDate(25)
	// The issue as night 26 left it: night 26 holds no A/B and no bisection, and the
	// issue keeps what night 25 found.
	issue := readFile(t, filepath.Join(out, dryRegression+key+".md"))
	confirm := "A/B of " + cpCommit(24)[:8] + " (8 runs) against " + tg.base[:8] + " (8 runs): -14.9 %, p = 0.0002 (Mann-Whitney U), slower"
	wantIn(t, issue, "| confirmation | "+confirm+" |",
		"| bisection | Found: the first bad commit is "+fakeSHA(2)[:8]+" (confidence 97.3 %) (2026-10-26, 4 commits, 16 single-model runs of a budget of 60; 1 attempts refused by the guard were redone); the bisection comment on this issue has the details |")
	comment := readFile(t, filepath.Join(out, dryRegression+key+dryBisect))
	wantIn(t, comment, report.BisectMarker(qwen30, commits[0], commits[3]), "| first bad commit | `"+fakeSHA(2)[:8]+"` |",
		"| pull request | unknown: a dry run does not ask GitHub |", "### Port impact:", "Kernels only in B (appeared): `planted_slow_kernel`")
	page := tg.file(t, sums[25].Git.Commit, sums[25].Page)
	wantIn(t, page, "- "+qwen30+": confirmation: "+confirm)
	var wrote []string
	for _, o := range sums[25].Regressions {
		wrote = append(wrote, o.Detail+" "+o.Action)
	}
	if !slices.Contains(wrote, qwen30+" created") || !slices.Contains(wrote, "bisection comment of "+qwen30+" created") {
		t.Errorf("night 25 wrote %v", wrote)
	}
	for _, o := range sums[26].Regressions {
		if strings.HasPrefix(o.Detail, "bisection comment") {
			t.Errorf("night 26 wrote the bisection comment again: %+v", o)
		}
	}
	wantIn(t, issue, "| how it was found | confirmed on an earlier night (this issue) |")
}

// The A/B says no significant change: night 25's suspicion is not confirmed, no issue
// is opened that night, and the page says why.
func TestRegressionNotConfirmedByAB(t *testing.T) {
	t.Parallel()
	_, tg, sums := qwenStep(t, func(dir string, man *results.Nightly) {
		setConfirm(man, qwen30, layConfirm(t, dir, qwen30, cpCommit(24), man.Commit, 1.0))
	})
	for _, o := range sums[25].Regressions {
		if o.Detail == qwen30 {
			t.Errorf("night 25 wrote an issue of %s: %+v", qwen30, o)
		}
	}
	page := tg.file(t, sums[25].Git.Commit, sums[25].Page)
	wantIn(t, page, "confirmation: A/B of "+cpCommit(24)[:8]+" (8 runs) against "+tg.base[:8]+" (8 runs): ", ": not a significant change in the suspected direction")
}

// Without an A/B (the last good commit was not known) the single re-run confirms as
// before, and the issue says it was a single re-run; a bisection the nightly skipped
// says why.
func TestRegressionConfirmedBySingleRerun(t *testing.T) {
	t.Parallel()
	out, _, _ := qwenStep(t, func(_ string, man *results.Nightly) {
		man.Bisects = []results.NightBisect{{Model: qwen30, Good: cpCommit(24), Bad: man.Commit, Reason: "nightly.bisect_runs is 0"}}
	})
	key := regressionFileName(qwen30) + "_" + cpDate(25)
	issue := readFile(t, filepath.Join(out, dryRegression+key+".md"))
	wantIn(t, issue, "| confirmation | a single re-run of "+qwen30+" at tonight's commit on "+cpDate(25)+", not an A/B (the last good commit was not known): ",
		"| bisection | not run on "+cpDate(25)+": nightly.bisect\\_runs is 0 |")
	if _, err := os.Stat(filepath.Join(out, dryRegression+key+dryBisect)); err == nil {
		t.Error("a bisection that did not run has a comment")
	}
}

// A bisection on a later night than the confirmation (here one the nightly could not
// run on night 26) adds its line to the issue, which keeps how night 25 confirmed the
// change.
func TestALaterBisectionKeepsTheConfirmation(t *testing.T) {
	t.Parallel()
	out, _, _ := qwenNights(t, map[int]func(string, *results.Nightly){26: func(_ string, man *results.Nightly) {
		man.Bisects = []results.NightBisect{{Model: qwen30, Good: cpCommit(24), Bad: cpCommit(25), Reason: "the night's bisection budget was spent"}}
	}})
	issue := readFile(t, filepath.Join(out, dryRegression+regressionFileName(qwen30)+"_"+cpDate(25)+".md"))
	wantIn(t, issue, "| confirmation | a single re-run of "+qwen30+" at tonight's commit on "+cpDate(25)+", not an A/B",
		"| bisection | not run on "+cpDate(26)+": the night's bisection budget was spent |")
}

// A configuration without the nightly section (creep_pct 0, as a Config built in Go
// without it) takes the change-point rules' own creep gap: the change points still
// judge every model, none falls back to the noise band.
func TestChangePointsWithoutACreepSetting(t *testing.T) {
	t.Parallel()
	c := newCPNights(t, 5, func(string, int) float64 { return 1 })
	tg := newTarget(t)
	for k := 0; k < 14; k++ {
		c.lay(k, tg.base)
	}
	cfg := testConfig()
	cfg.Nightly.CreepPct = 0
	sum, err := PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: c.lay(14, tg.base), RepoDir: tg.checkout, Config: cfg,
		Sink: ToDir(t.TempDir())}, HistoryDir: c.hist})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sum.Notes {
		if strings.Contains(n, "the noise band decides") {
			t.Errorf("a model fell back to the band: %s", n)
		}
	}
	page := tg.file(t, sum.Git.Commit, sum.Page)
	rows := mdtest.Under(t, page, "## Against the nightly history").Rows
	if len(rows) == 0 {
		t.Fatal("no verdict rows")
	}
	for _, r := range rows {
		wantSegmentChange(t, page, r[0])
	}
}

// A change is reported from MinChangePct on; a regression that takes the level back
// to within SamePct of where the gain just before it started (here 8 tok/s, a gain
// to 10) only ends that gain and is not reported, to the last bit of the margin.
func TestReportableAtItsEdges(t *testing.T) {
	p := changepoint.DefaultParams()
	p.MinChangePct, p.SamePct = 2, 12.5
	for _, tc := range []struct {
		pct  float64
		want bool
	}{{-2, true}, {2, true}, {-1.99, false}, {1.99, false}} {
		c := changepoint.Change{Index: 5, Kind: changepoint.Regression, ChangePct: tc.pct, From: 10, To: 10 * (1 + tc.pct/100)}
		if tc.pct > 0 {
			c.Kind = changepoint.Improvement
		}
		if got := reportable(changepoint.Result{Changes: []changepoint.Change{c}}, c, p); got != tc.want {
			t.Errorf("a change of %+v %%: reportable %v, want %v", tc.pct, got, tc.want)
		}
	}
	gain := changepoint.Change{Index: 3, Kind: changepoint.Improvement, From: 8, To: 10, ChangePct: 25}
	for _, tc := range []struct {
		to   float64
		want bool
	}{{9, false}, {7, false}, {8, false}, {6.5, true}, {9.5, true}} {
		drop := changepoint.Change{Index: 7, Kind: changepoint.Regression, From: 10, To: tc.to, ChangePct: (tc.to/10 - 1) * 100}
		r := changepoint.Result{Changes: []changepoint.Change{gain, drop}}
		if got := reportable(r, drop, p); got != tc.want {
			t.Errorf("a drop from 10 to %v after a gain from 8: reportable %v, want %v", tc.to, got, tc.want)
		}
	}
}

// The segment a change or a closing names is the one that starts on its night: the
// issue's "N night(s) at the new level" and the level a closing reports. A night no
// segment starts on gives the current one.
func TestSegmentAtTheNightItStarts(t *testing.T) {
	r := changepoint.Result{Segments: []changepoint.Segment{
		{Start: 0, End: 16, Level: 100}, {Start: 16, End: 27, Level: 112}, {Start: 27, End: 30, Level: 90},
	}}
	for _, c := range []struct {
		night int
		level float64
	}{{0, 100}, {16, 112}, {27, 90}, {20, 90}, {30, 90}} {
		if s := segmentAt(r, c.night); s.Level != c.level {
			t.Errorf("night %d: the segment at %.0f tok/s, want the one at %.0f", c.night, s.Level, c.level)
		}
	}
}

// tonightVerdict's text on the page: a suspicion (down or up, with why it was not
// confirmed when it was not), the open regression the current segment started with, a
// gain on the night it is confirmed, and no change otherwise.
func TestTonightVerdictOfEachCase(t *testing.T) {
	nights := []changepoint.Point{{Date: "2026-10-01", Value: 100}, {Date: "2026-10-02", Value: 101}, {Date: "2026-10-03", Value: 80}, {Date: "2026-10-04", Value: 81}}
	params := changepoint.Params{MinChangePct: 5}
	segs := []changepoint.Segment{{Start: 0, End: 2, First: "2026-10-01", Level: 100.5}, {Start: 2, End: 4, First: "2026-10-03", Level: 80.5}}
	tonight := "tonight 81.00 tok/s; the current segment has 2 night(s) from 2026-10-03 at 80.50 tok/s (noise 1.50 % a night)"
	regression := changepoint.Change{Index: 2, Date: "2026-10-03", From: 100.5, To: 80.5, ChangePct: -19.9, Kind: changepoint.Regression, State: changepoint.Open}
	gain := changepoint.Change{Index: 2, Date: "2026-10-04", From: 80.5, To: 100.5, ChangePct: 24.8, Kind: changepoint.Improvement}
	for _, c := range []struct {
		name        string
		newest      changepoint.Judgement
		changes     []changepoint.Change
		unconfirmed string
		verdict     baseline.Verdict
		text        string
	}{
		{"suspected drop", changepoint.Judgement{Status: changepoint.SuspectedRegression, Why: "2 night(s) below"}, nil, "",
			baseline.Suspected, "2 night(s) below; " + tonight},
		{"suspected gain", changepoint.Judgement{Status: changepoint.SuspectedImprove, Why: "2 night(s) above"}, nil, "",
			baseline.SuspectedUp, "2 night(s) above; " + tonight},
		{"suspicion not confirmed", changepoint.Judgement{Status: changepoint.SuspectedRegression, Why: "2 night(s) below"}, nil, "the A/B found no difference",
			baseline.Suspected, "2 night(s) below; not confirmed: the A/B found no difference; " + tonight},
		{"open regression", changepoint.Judgement{Status: changepoint.NoChange}, []changepoint.Change{regression}, "",
			baseline.Regression, "the open regression from 2026-10-03 (-19.9 %, 100.50 to 80.50 tok/s) goes on: " + tonight},
		{"a regression of an earlier segment", changepoint.Judgement{Status: changepoint.NoChange}, []changepoint.Change{func() changepoint.Change { r := regression; r.Index = 1; return r }()}, "",
			baseline.NoChange, "within the noise of the current segment: " + tonight},
		{"a gain confirmed tonight", changepoint.Judgement{Status: changepoint.NoChange}, []changepoint.Change{gain}, "",
			baseline.Improvement, "a gain from 2026-10-04 (+24.8 %, 80.50 to 100.50 tok/s), confirmed by the re-measure"},
		{"a gain of an earlier night", changepoint.Judgement{Status: changepoint.NoChange}, []changepoint.Change{func() changepoint.Change { g := gain; g.Date = "2026-10-03"; return g }()}, "",
			baseline.NoChange, "within the noise of the current segment: " + tonight},
	} {
		mc := &modelChanges{Model: llama, Nights: nights, Params: params, Unconfirmed: c.unconfirmed,
			Found: map[string]string{"2026-10-04": "the re-measure"},
			Res:   changepoint.Result{Segments: segs, Changes: c.changes, SigmaPct: 1.5, Newest: c.newest}}
		v, text := tonightVerdict(mc)
		if v != c.verdict || text != c.text {
			t.Errorf("%s: %s, %q\nwant %s, %q", c.name, v, text, c.verdict, c.text)
		}
	}
}

// The page's change rows: each reportable change with the nights it may have started
// on, its commit range, its state, how it closed, how it was confirmed and bisected,
// and its issue when GitHub has one; tonight's suspicion; a slow creep.
func TestChangeRowsOfTheBaselinePage(t *testing.T) {
	nights := make([]changepoint.Point, 8)
	for i := range nights {
		nights[i] = changepoint.Point{Date: fmt.Sprintf("2026-10-%02d", i+1), Value: 100}
	}
	closed := changepoint.Change{Index: 2, Date: "2026-10-03", RangeFrom: 1, RangeTo: 2, LastGood: "1111111111aa", FirstBad: "2222222222bb",
		From: 100, To: 80, ChangePct: -20, Kind: changepoint.Regression, State: changepoint.Closed, ClosedAt: 5}
	open := changepoint.Change{Index: 6, Date: "2026-10-07", RangeFrom: 6, RangeTo: 6, LastGood: "3333333333cc",
		From: 100, To: 90, ChangePct: -10, Kind: changepoint.Regression, State: changepoint.Open, ClosedAt: -1}
	gain := changepoint.Change{Index: 5, Date: "2026-10-06", RangeFrom: 5, RangeTo: 5, From: 80, To: 100, ChangePct: 25, Kind: changepoint.Improvement, ClosedAt: -1}
	small := changepoint.Change{Index: 4, Date: "2026-10-05", RangeFrom: 4, RangeTo: 4, From: 100, To: 98, ChangePct: -2, Kind: changepoint.Regression, State: changepoint.Open, ClosedAt: -1}
	mc := &modelChanges{Model: llama, Nights: nights, Params: changepoint.Params{MinChangePct: 5},
		Res: changepoint.Result{Changes: []changepoint.Change{closed, small, gain, open},
			Newest: changepoint.Judgement{Status: changepoint.SuspectedRegression, Index: 7, RangeFrom: 6, RangeTo: 7, FirstBad: "4444444444dd", ChangePct: -6, Why: "1 night below"},
			Creep: changepoint.Creep{Creeping: true, GapPct: 7.5, Current: changepoint.Segment{First: "2026-10-07", Level: 90},
				Best: changepoint.Segment{First: "2026-10-01", Last: "2026-10-02", Level: 97.3}}},
		Issues:      map[string]gh.Issue{"2026-10-03": {Number: 7, URL: "https://github.com/o/r/issues/7"}, "2026-10-07": {Number: 8, URL: ""}},
		Checks:      map[string]report.RegressionChecks{"2026-10-03": {Confirmation: "an A/B", Bisection: "found 22222222"}, "2026-10-07": {Confirmation: "a re-run"}},
		Unconfirmed: "no re-measure"}
	rows, creep := (&changeAnalysis{Models: []*modelChanges{mc}}).changeRows()
	want := []report.ChangeRow{
		{Model: llama, Date: "2026-10-03", Change: "-20.0% (100.00 to 80.00 tok/s)", Nights: "2026-10-02 to 2026-10-03", Commits: "11111111..22222222", State: "closed",
			Text:  "the regression from 2026-10-03 closed: the level was back from 2026-10-06; confirmation: an A/B; bisection: found 22222222",
			Issue: &report.Link{Text: "#7", URL: "https://github.com/o/r/issues/7"}},
		{Model: llama, Date: "2026-10-06", Change: "+25.0% (80.00 to 100.00 tok/s)", Nights: "2026-10-06", Commits: "unknown", State: "gain"},
		{Model: llama, Date: "2026-10-07", Change: "-10.0% (100.00 to 90.00 tok/s)", Nights: "2026-10-07", Commits: "33333333..unknown", State: "open",
			Text: "confirmation: a re-run"},
		{Model: llama, Date: "2026-10-08", Change: "-6.0%", Nights: "2026-10-07 to 2026-10-08", Commits: "unknown..44444444", State: "suspected regression",
			Text: "1 night below; confirmation: no re-measure"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i := range want {
		got, w := rows[i], want[i]
		if fmt.Sprint(got.Issue) != fmt.Sprint(w.Issue) {
			t.Errorf("row %d: issue %+v, want %+v", i, got.Issue, w.Issue)
		}
		got.Issue, w.Issue = nil, nil
		if got != w {
			t.Errorf("row %d:\n%+v\nwant\n%+v", i, got, w)
		}
	}
	wantCreep := "Llama: the current segment (from 2026-10-07, 90.00 tok/s) is 7.5 % below the best segment of the period (2026-10-01 to 2026-10-02, 97.30 tok/s)"
	if len(creep) != 1 || creep[0] != strings.Replace(wantCreep, "Llama", llama, 1) {
		t.Errorf("creep %q, want %q", creep, wantCreep)
	}
	// No analysis (a history too short for segments): no rows.
	if rows, creep := (*changeAnalysis)(nil).changeRows(); rows != nil || creep != nil {
		t.Errorf("no analysis gave rows %v, creep %v", rows, creep)
	}
}

// Without an A/B, a suspicion is confirmed when the single re-run's verdict (the
// nightly comparison's) goes the suspected way: a drop by a regression, a gain by an
// improvement, and by nothing else.
func TestSingleRerunConfirmsOnlyTheSuspectedWay(t *testing.T) {
	man := results.Nightly{Date: "2026-10-04", Remeasures: []results.Remeasure{{Model: llama, Decode: 81}}}
	p := &BaselinePlan{n: &nightly{man: man}}
	for _, c := range []struct {
		status  changepoint.Status
		verdict baseline.Verdict
		ok      bool
	}{
		{changepoint.SuspectedRegression, baseline.Regression, true},
		{changepoint.SuspectedRegression, baseline.Improvement, false},
		{changepoint.SuspectedRegression, baseline.NoChange, false},
		{changepoint.SuspectedImprove, baseline.Improvement, true},
		{changepoint.SuspectedImprove, baseline.Regression, false},
		{changepoint.SuspectedImprove, baseline.NoChange, false},
	} {
		p.n.man.Remeasures[0].Verdict = c.verdict
		ok, how := p.confirmation(baseline.ModelResult{Model: llama, Verdict: c.verdict}, changepoint.Judgement{Status: c.status})
		if ok != c.ok || !strings.Contains(how, "a single re-run of "+llama+" at tonight's commit on 2026-10-04, not an A/B") {
			t.Errorf("%s re-run %s: confirmed %v (%q), want %v", c.status, c.verdict, ok, how, c.ok)
		}
	}
}

// Two commit ids agree when one is the other abbreviated, in either order; an unknown
// one agrees with any.
func TestSameCommit(t *testing.T) {
	for _, c := range []struct {
		x, y string
		same bool
	}{
		{"", "81d6fe57", true}, {"81d6fe57", "", true}, {"", "", true},
		{"81d6fe57", "81d6fe57f989c677", true}, {"81d6fe57f989c677", "81d6fe57", true}, {"81d6fe57", "81d6fe57", true},
		{"81d6fe58", "81d6fe57f989c677", false}, {"81d6fe57f989c677", "81d6fe58", false}, {"81d6fe57", "203ca8c1", false},
	} {
		if got := sameCommit(c.x, c.y); got != c.same {
			t.Errorf("sameCommit(%q, %q) = %v, want %v", c.x, c.y, got, c.same)
		}
	}
}
