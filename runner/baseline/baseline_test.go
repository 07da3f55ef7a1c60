package baseline

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/benchcsv"
)

func realFile(t testing.TB, name string) *benchcsv.File {
	t.Helper()
	f, err := benchcsv.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func result(t *testing.T, rs []ABResult, model string) ABResult {
	t.Helper()
	for _, r := range rs {
		if r.Model == model {
			return r
		}
	}
	t.Fatalf("no result for %s", model)
	return ABResult{}
}

// Rows of different environments are never compared: a HIP upgrade or another overlay
// in an A/B, and in the nightly history, where the runs of the old environment do not
// count towards the band.
func TestMismatchedEnvironmentsAreNeverCompared(t *testing.T) {
	t.Parallel()
	models := realModels(t)
	rng := rand.New(rand.NewPCG(7, 7))
	a := nightFile(t, rng, "2026-11-01", models, nil, RealSpreadPct, realEnv, "a")
	for _, env := range []simEnv{{hip: "7.2.53211", overlay: realEnv.overlay}, {hip: realEnv.hip, overlay: "deadbeef"}} {
		b := nightFile(t, rng, "2026-11-01", models, nil, RealSpreadPct, env, "b")
		rep, err := CompareAB(a, b, nil, abstat.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			if r.Verdict != NotCompared {
				t.Errorf("%+v: %s compared across environments: %s", env, r.Model, r.Text)
			}
		}
	}

	// Thirty nights on HIP 7.15, then a drop of 10% on the night HIP changed: nothing
	// to compare with, so no regression, and the text says why.
	var files []*benchcsv.File
	for night := range 30 {
		files = append(files, nightFile(t, rng, dateOf(night), models, nil, RealSpreadPct, realEnv, ""))
	}
	drop := map[string]float64{}
	for _, m := range models {
		drop[m.name] = 0.9
	}
	upgraded := nightFile(t, rng, dateOf(30), models, drop, RealSpreadPct, simEnv{hip: "7.2.53211", overlay: realEnv.overlay}, "")
	rep := CompareNightly(New(files...), upgraded, DefaultRules())
	for _, m := range rep.Models {
		if m.Verdict != NotEnough || m.History != 0 || m.Other != 30 || !strings.Contains(m.Text, "30 more in another environment, not compared: hip_version 7.2.53211 vs 7.15.26333") {
			t.Errorf("%s after the HIP upgrade: %+v", m.Model, m)
		}
	}
	// The same drop in the old environment is a suspect.
	same := nightFile(t, rng, dateOf(30), models, drop, RealSpreadPct, realEnv, "")
	if rep := CompareNightly(New(files...), same, DefaultRules()); len(rep.Suspects()) != len(models) {
		t.Errorf("suspects %v", rep.Suspects())
	}
}

// Experiments (`_suffix`) and single-model runs stay out of the nightly history, the
// baseline is the last nightly run before the new one (not the newest file), and a
// history too short for a band says so.
func TestNightlyHistoryAndBaseline(t *testing.T) {
	t.Parallel()
	models := realModels(t)[:2]
	rng := rand.New(rand.NewPCG(3, 3))
	var files []*benchcsv.File
	for night := range 10 {
		files = append(files, nightFile(t, rng, dateOf(night), models, nil, RealSpreadPct, realEnv, ""))
	}
	slow := map[string]float64{models[0].name: 0.5, models[1].name: 0.5}
	// A slow experiment and a slow single run dated after the last nightly run: neither
	// is history, but both supersede the baseline.
	files = append(files,
		nightFile(t, rng, dateOf(10), models, slow, RealSpreadPct, realEnv, "ssm-kernel-off"),
		parsed(t, benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: dateOf(11), Single: models[0].name}, benchcsv.ROCmHeader,
			[]benchcsv.Row{simRow(rng, dateOf(11), models[0], 0.5, RealSpreadPct, realEnv)}))
	newRun := nightFile(t, rng, dateOf(12), models, nil, RealSpreadPct, realEnv, "")
	rep := CompareNightly(New(append(files, newRun)...), newRun, DefaultRules())
	if rep.Baseline != "rocm_strixhalo-gfx1151_"+dateOf(9)+".csv" {
		t.Errorf("baseline %s", rep.Baseline)
	}
	for _, m := range rep.Models {
		if m.History != 10 || m.Band == nil || m.Band.Runs != 10 || m.Baseline.Date != dateOf(9) || m.Verdict != NoChange {
			t.Errorf("%s: %+v", m.Model, m)
		}
		if !strings.Contains(m.Text, "of its last 10 comparable runs") || !strings.Contains(m.Text, "inside the band, no significant change") {
			t.Errorf("%s: %s", m.Model, m.Text)
		}
	}
	if len(rep.Superseded) != 2 || rep.Superseded[0].Newer != files[11].Name.String() && rep.Superseded[1].Newer != files[11].Name.String() {
		t.Errorf("superseded: %+v", rep.Superseded)
	}

	short := CompareNightly(New(files[:3]...), newRun, DefaultRules())
	for _, m := range short.Models {
		if m.Verdict != NotEnough || m.Band != nil || !strings.Contains(m.Text, "not enough history: 3 of the 8 comparable nightly runs a noise band needs") ||
			!strings.Contains(m.Text, "the last baseline") {
			t.Errorf("%s with 3 nights: %s", m.Model, m.Text)
		}
	}
}

// Mixtral's decode reads anywhere from about 8 to 11 tok/s run to run on this host, in
// both runtimes (7.65, 8.22 and 11.16 for mlxcel on 2026-09-30; too few readings to call
// it bimodal). Its own band is that wide: that noise never confirms an alarm.
func TestMixtralInstabilityStaysInItsBand(t *testing.T) {
	t.Parallel()
	mixtral := simModel{name: "Mixtral-8x7B-Instruct-v0.1-4bit", decode: 9.4, prefill: 26}
	reading := func(rng *rand.Rand) float64 { return (7.6 + 3.6*rng.Float64()) / mixtral.decode }
	rng := rand.New(rand.NewPCG(11, 11))
	var files []*benchcsv.File
	alarms, suspects := 0, 0
	for night := range 30 {
		f := nightFile(t, rng, dateOf(night), []simModel{mixtral}, map[string]float64{mixtral.name: reading(rng)}, 0, realEnv, "")
		rep := CompareNightly(New(files...), f, DefaultRules())
		for _, s := range rep.Suspects() {
			suspects++
			again := nightFile(t, rng, dateOf(night), []simModel{mixtral}, map[string]float64{mixtral.name: reading(rng)}, 0, realEnv, "again")
			p, _ := PointOf(again, s)
			if err := rep.Remeasured(s, p); err != nil {
				t.Fatal(err)
			}
		}
		alarms += rep.Count(Regression) + rep.Count(Improvement)
		files = append(files, f)
	}
	if alarms != 0 {
		t.Errorf("%d alarms (%d suspects) from Mixtral's known instability", alarms, suspects)
	}
	band := BandOf(pointsOf(files, mixtral.name), DefaultRules())
	if band.Lo > 7.6 || band.Hi < 11.2 {
		t.Errorf("Mixtral's band %.2f..%.2f does not hold its known spread", band.Lo, band.Hi)
	}
}

func pointsOf(files []*benchcsv.File, model string) []Point {
	var out []Point
	for _, f := range files {
		if p, ok := PointOf(f, model); ok {
			out = append(out, p)
		}
	}
	return out
}

// The superseded warning works for every (backend, host) pair in the file names, not a
// list of known hosts, and only for readings between the baseline and the judged run.
func TestSupersededForEveryPair(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, rows ...string) {
		header := strings.Join(benchcsv.ROCmHeader, ",")
		if err := os.WriteFile(filepath.Join(dir, name), []byte(header+"\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	row := func(model, date, decode string) string {
		return model + ",models/" + model + "/,512,128,100.00,5.00,1000.00," + decode + "," + date + ",HW,0.7.0,release,128,\"Hello, how are you today?\",512,aaaaaaaa,bbbbbbbb,cccccccc,7.15.26333"
	}
	pairs := []string{"rocm_strixhalo-gfx1151", "rocm_amd-gfx1201", "cuda_v100", "metal_m5max", "metal_m5max_vlm", "cuda_gb10"}
	for _, p := range pairs {
		write(p+"_2026-01-01.csv", row("m1", "2026-01-01", "10.00"), row("m2", "2026-01-01", "20.00"))
		write(p+"_2026-01-05_probe.csv", row("m1", "2026-01-05", "12.00"))
		write(p+"_2026-01-07_single_m2.csv", row("m2", "2026-01-07", "21.00"))
	}
	h, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Pairs(); len(got) != len(pairs) {
		t.Fatalf("pairs %v", got)
	}
	warned := map[string]int{}
	for _, s := range h.SupersededIn() {
		warned[s.Pair]++
		if s.Baseline != s.Pair+"_2026-01-01.csv" || (s.Model == "m1" && (s.Now != 12 || s.NewerDate != "2026-01-05")) || (s.Model == "m2" && s.Now != 21) {
			t.Errorf("%+v", s)
		}
	}
	for _, p := range pairs {
		if warned[p] != 2 {
			t.Errorf("%s: %d warnings, want 2 (m1 and m2)", p, warned[p])
		}
	}
	// An A/B of the first file against a run of 2026-01-06: only the probe is between.
	a := h.Latest("cuda_v100")
	write("cuda_v100_2026-01-06_b.csv", row("m1", "2026-01-06", "10.10"), row("m2", "2026-01-06", "20.10"))
	b, err := benchcsv.ReadFile(filepath.Join(dir, "cuda_v100_2026-01-06_b.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CompareAB(a, b, h, abstat.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Superseded) != 1 || rep.Superseded[0].Model != "m1" || rep.Superseded[0].Newer != "cuda_v100_2026-01-05_probe.csv" {
		t.Errorf("A/B superseded: %+v", rep.Superseded)
	}
	if !strings.Contains(rep.Superseded[0].String(), "the baseline cuda_v100_2026-01-01.csv (2026-01-01, 10.00 tok/s) is superseded by cuda_v100_2026-01-05_probe.csv (2026-01-05, 12.00 tok/s)") {
		t.Errorf("%s", rep.Superseded[0])
	}
}

// The verdict's text follows from the numbers it was decided on, for every outcome:
// checked over random histories and new values on both sides of the band.
func TestVerdictTextFollowsTheNumbers(t *testing.T) {
	t.Parallel()
	models := realModels(t)[:1]
	rng := rand.New(rand.NewPCG(5, 5))
	var files []*benchcsv.File
	for night := range 12 {
		files = append(files, nightFile(t, rng, dateOf(night), models, nil, 2, realEnv, ""))
	}
	h := New(files...)
	seen := map[Verdict]bool{}
	for i := range 400 {
		factor := 0.8 + 0.4*rng.Float64()
		f := nightFile(t, rng, dateOf(20+i), models, map[string]float64{models[0].name: factor}, 0, realEnv, "")
		rep := CompareNightly(h, f, DefaultRules())
		if len(rep.Suspects()) == 1 {
			again := nightFile(t, rng, dateOf(20+i), models, map[string]float64{models[0].name: 0.8 + 0.4*rng.Float64()}, 0, realEnv, "x")
			p, _ := PointOf(again, models[0].name)
			if err := rep.Remeasured(models[0].name, p); err != nil {
				t.Fatal(err)
			}
		}
		m := rep.Models[0]
		seen[m.Verdict] = true
		v, b := m.New.Value(), m.Band
		var want Verdict
		switch {
		case v < b.Lo && m.Remeasure.Value() < b.Lo:
			want = Regression
		case v > b.Hi && m.Remeasure.Value() > b.Hi:
			want = Improvement
		case v < b.Lo || v > b.Hi:
			want = NotConfirmed
		default:
			want = NoChange
		}
		if m.Verdict != want {
			t.Fatalf("%v against band %.2f..%.2f (re-measure %v): verdict %s, want %s", v, b.Lo, b.Hi, m.Remeasure, m.Verdict, want)
		}
		words := map[Verdict]string{Regression: "is below it too: a regression", Improvement: "is above it too: an improvement",
			NotConfirmed: "but the re-measure", NoChange: "inside the band, no significant change"}
		if !strings.Contains(m.Text, words[want]) || !strings.Contains(m.Text, "decode "+tokS(v)+" tok/s, "+signed(m.ChangePct)) {
			t.Fatalf("%s: %s", want, m.Text)
		}
		if (v < b.Median) != strings.Contains(m.Text, ", -") {
			t.Fatalf("the sign of the change contradicts the numbers: %s", m.Text)
		}
	}
	for _, v := range []Verdict{Regression, Improvement, NotConfirmed, NoChange} {
		if !seen[v] {
			t.Errorf("no case of %s among the random values", v)
		}
	}
}

func TestRemeasuredRefusesNonSuspects(t *testing.T) {
	t.Parallel()
	f := realFile(t, "rocm_strixhalo-gfx1151_2026-09-30.csv")
	rep := CompareNightly(New(), f, DefaultRules())
	p, _ := PointOf(f, "Qwen3-0.6B-4bit")
	if err := rep.Remeasured("Qwen3-0.6B-4bit", p); err == nil || !strings.Contains(err.Error(), "not a suspected change (not enough history)") {
		t.Errorf("%v", err)
	}
	if err := rep.Remeasured("Nope", p); err == nil || !strings.Contains(err.Error(), "not a model of") {
		t.Errorf("%v", err)
	}
	if got := rep.Models[0].Text; got != "decode 8.07 tok/s; not enough history: 0 of the 8 comparable nightly runs a noise band needs" {
		t.Errorf("%q", got)
	}
}

func TestRulesValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultRules().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []Rules{{Window: 1, MinHistory: 1, K: 3}, {Window: 10, MinHistory: 11, K: 3}, {Window: 10, MinHistory: 5, K: 0}, {Window: 10, MinHistory: 5, K: 3, MinChangePct: 95}} {
		if err := r.Validate(); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}

// The first baseline's two files pair as the maintainers' page did: median 1.054x over
// the five models, 1.27x on Qwen3-0.6B.
func TestCompareRuntimesRealBaseline(t *testing.T) {
	t.Parallel()
	pairs, med, n := CompareRuntimes(realFile(t, "rocm_strixhalo-gfx1151_2026-09-30.csv"), realFile(t, "pylm_strixhalo-gfx1151_2026-09-30.csv"), 0)
	if n != 5 || len(pairs) != 5 || fmt.Sprintf("%.3f", med) != "1.054" {
		t.Errorf("%d pairs, median %.3f over %d", len(pairs), med, n)
	}
	for _, p := range pairs {
		if p.Model == "Qwen3-0.6B-4bit" && fmt.Sprintf("%.2f", p.DecodeRatio) != "1.27" {
			t.Errorf("%+v", p)
		}
	}
	only, _, n := CompareRuntimes(realFile(t, "rocm_strixhalo-gfx1151_2026-10-07_fused-default-on.csv"), nil, 0)
	if n != 0 || len(only) != 2 || only[0].MlxLM != nil || only[0].DecodeRatio != 0 {
		t.Errorf("without a baseline: %+v", only)
	}
}

// Mixtral read three times by mlxcel, 7.65, 8.22 and 11.16 tok/s (the real row of
// 2026-09-30 and two repeats added to a copy), spreads 42.7 % of its median: the run
// did not settle, so it gets no ratio and leaves the median, while the models with
// single readings keep theirs. A threshold above the spread gives the ratio back.
func TestCompareRuntimesUnstableRepeats(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", "rocm_strixhalo-gfx1151_2026-09-30.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var mixtral string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Mixtral-8x7B-Instruct-v0.1-4bit,") {
			mixtral = l
		}
	}
	repeat := func(v string) string { return strings.Replace(mixtral, ",7.65,", ","+v+",", 1) + "\n" }
	f, err := benchcsv.Parse(append(b, repeat("8.22")+repeat("11.16")...), "rocm_strixhalo-gfx1151_2026-09-30.csv")
	if err != nil {
		t.Fatal(err)
	}
	base := realFile(t, "pylm_strixhalo-gfx1151_2026-09-30.csv")
	pairs, med, n := CompareRuntimes(f, base, 0)
	if n != 4 {
		t.Errorf("%d ratios, want the 4 stable models", n)
	}
	for _, p := range pairs {
		if p.Model != "Mixtral-8x7B-Instruct-v0.1-4bit" {
			if p.DecodeRatio == 0 || len(p.Unstable) > 0 {
				t.Errorf("%s: %+v", p.Model, p)
			}
			continue
		}
		if p.DecodeRatio != 0 || fmt.Sprint(p.Unstable) != "[mlxcel]" || p.Mlxcel.Repeats() != "7.65 / 8.22 / 11.16" || round1(p.Mlxcel.SpreadPct()) != 42.7 {
			t.Errorf("Mixtral: %+v, spread %.1f", p, p.Mlxcel.SpreadPct())
		}
	}
	if fmt.Sprintf("%.3f", med) == "1.054" {
		t.Errorf("the median %.3f still counts Mixtral", med)
	}
	if _, _, n := CompareRuntimes(f, base, 50); n != 5 {
		t.Errorf("with a 50%% threshold %d ratios, want 5", n)
	}
}
