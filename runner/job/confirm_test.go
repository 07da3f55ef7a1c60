package job

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/results"
)

const confirmDate = "2026-12-03"

// nightlyHistory is a checkout of bisectHistory(n, at, change) at its last commit,
// Llama its only model folder (the harness's sweep measures that one), and a history
// of ten earlier nights at Llama's level, each naming the first commit (short) as the
// night's commit. It returns the options of tonight's nightly and the commits.
func nightlyHistory(t *testing.T, fh *fakeHost, n, at int, change string) (BenchOptions, []string) {
	t.Helper()
	repo, commits := bisectHistory(t, n, at, change)
	if err := os.RemoveAll(filepath.Join(repo, "models", "mlx", cmpQwen)); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(t.TempDir(), "history")
	writeNights(t, hist, confirmDate, 10, benchModels[:1], commits[0][:8])
	o := BenchOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), OutDir: filepath.Join(fh.tmp, "out"), HistoryDir: hist,
		Guard: fh.guardOptions(), NoBaseline: true, Now: newStepClock(t, confirmDate).Now,
	}
	return o, commits
}

// A 10 % decode slowdown planted in the second of the three commits since the last
// good night: tonight's sweep flags Llama, the A/B of the last good commit and
// tonight's confirms the regression (confirm-<model>/ holds the compare), the
// bisection names the planted commit (bisect-<model>/), and the culprit's profile A/B
// against its parent finds the decode kernels slower.
func TestBenchConfirmsByABAndBisectsToTheCulprit(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE="+confirmDate)
	o, commits := nightlyHistory(t, fh, 4, 2, "# a slower decode step\ndecode 0.9\n")
	rep, prog := runBench(t, o)
	m := rep.Manifest
	if m.State != results.SessionComplete || m.Commit != commits[3] {
		t.Fatalf("manifest %s at %s: %s\n%s", m.State, m.Commit, m.Error, prog.String())
	}
	if len(m.Remeasures) != 1 {
		t.Fatalf("re-measures %+v\n%s", m.Remeasures, prog.String())
	}
	rm := m.Remeasures[0]
	if rm.Model != cmpLlama || rm.Confirm != results.ConfirmDirPrefix+cmpLlama || rm.Verdict != baseline.Regression || rm.Reason != "" || rm.Decode != 31.87 || rm.CSV != "" || rm.Since != confirmDate {
		t.Errorf("re-measure %+v", rm)
	}
	if r := modelResult(m.Comparison, cmpLlama); r == nil || r.Verdict != baseline.Regression || !strings.Contains(r.Text, "the A/B of "+commits[0][:8]+" (last good)") {
		t.Errorf("comparison %+v", r)
	}
	c, err := results.ReadCompareFolder(filepath.Join(rep.Folder, rm.Confirm))
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != results.CompareBench || c.ShaA != commits[0] || c.ShaB != commits[3] || c.State != results.SessionComplete || len(c.Models) != 1 {
		t.Errorf("confirming compare %+v", c)
	}
	if cm, _ := c.Model(cmpLlama); !cm.Done || cm.Results[0].Verdict != abstat.Slower {
		t.Errorf("confirming compare of llama %+v", cm)
	}
	if len(m.Bisects) != 1 {
		t.Fatalf("bisects %+v\n%s", m.Bisects, prog.String())
	}
	nb := m.Bisects[0]
	if nb.Model != cmpLlama || nb.Good != commits[0] || nb.Bad != commits[3] || nb.Dir != results.BisectDirPrefix+cmpLlama || nb.Reason != "" {
		t.Errorf("bisect %+v", nb)
	}
	bis, err := results.ReadBisect(filepath.Join(rep.Folder, nb.Dir, results.BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	if bis.State != results.SessionComplete || bis.Outcome == nil || bis.Outcome.FirstBad != commits[2] || bis.Runs > 60 {
		t.Fatalf("bisection %s, %d runs, outcome %+v\n%s", bis.State, bis.Runs, bis.Outcome, prog.String())
	}
	if bis.Culprit != results.CulpritDir || bis.CulpritReason != "" {
		t.Fatalf("culprit %q (%s)\n%s", bis.Culprit, bis.CulpritReason, prog.String())
	}
	cc, err := results.ReadCompareFolder(filepath.Join(rep.Folder, nb.Dir, bis.Culprit))
	if err != nil {
		t.Fatal(err)
	}
	if cc.Kind != results.CompareProfile || cc.ShaA != commits[1] || cc.ShaB != commits[2] || len(cc.Diffs) != 1 {
		t.Fatalf("culprit compare %+v", cc)
	}
	d := readDiff(t, filepath.Join(rep.Folder, nb.Dir, bis.Culprit, cc.Diffs[0].JSON))
	slower := 0
	for _, k := range d.Kernels {
		if k.MsPerToken.B > k.MsPerToken.A*1.05 {
			slower++
		}
	}
	if len(d.Kernels) == 0 || slower < len(d.Kernels)/2 || d.DecodeTokS.B >= d.DecodeTokS.A {
		t.Errorf("%d of %d kernels slower, decode %v -> %v tok/s", slower, len(d.Kernels), d.DecodeTokS.A, d.DecodeTokS.B)
	}
	wantIn(t, "progress", prog.String(),
		cmpLlama+": off its current segment since "+confirmDate+" (-",
		"; confirming by an A/B of the last good commit "+commits[0][:8]+" (A) and tonight's "+commits[3][:8]+" (B) into confirm-"+cmpLlama+"/",
		cmpLlama+": regression: the A/B of ",
		cmpLlama+": bisecting the 3 commits after "+commits[0][:8]+" into bisect-"+cmpLlama+"/, at most "+strconv.Itoa(config.DefaultBisectRuns)+" runs",
		cmpLlama+": the first bad commit is "+commits[2],
		"profile A/B of the first bad commit "+commits[2][:8]+" against its parent "+commits[1][:8]+" into culprit/")
	if f := rep.Failed(); len(f) != 1 || f[0] != "mlx-lm sweep (not_run)" {
		t.Errorf("failed: %v", f)
	}
	gitClean(t, o.RepoDir)
}

// No change in the commits: tonight's sweep reads Llama low (the host, not the code),
// the A/B of the same levels does not confirm it, says why, and nothing is bisected.
func TestBenchABDoesNotConfirmANoisyNight(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE="+confirmDate, "FAKE_HARNESS_SCALE="+cmpLlama+"=0.9")
	o, commits := nightlyHistory(t, fh, 4, 0, "")
	rep, prog := runBench(t, o)
	m := rep.Manifest
	if len(m.Remeasures) != 1 {
		t.Fatalf("re-measures %+v\n%s", m.Remeasures, prog.String())
	}
	rm := m.Remeasures[0]
	if rm.Confirm != results.ConfirmDirPrefix+cmpLlama || rm.Verdict != baseline.NotConfirmed || rm.Decode != 35.41 ||
		!strings.Contains(rm.Reason, "not confirmed: the A/B of "+commits[0][:8]+" (last good) and "+commits[3][:8]+" (tonight)") {
		t.Errorf("re-measure %+v", rm)
	}
	if len(m.Bisects) != 0 {
		t.Errorf("bisected: %+v", m.Bisects)
	}
	if _, err := os.Stat(filepath.Join(rep.Folder, results.BisectDirPrefix+cmpLlama)); !os.IsNotExist(err) {
		t.Errorf("a bisection folder: %v", err)
	}
	if f := rep.Failed(); len(f) != 1 || f[0] != "mlx-lm sweep (not_run)" {
		t.Errorf("failed: %v", f)
	}
}

// nightly.bisect_runs 0: the A/B confirms the regression and the bisection is skipped
// with the reason; a range of one commit is not bisected either.
func TestBenchBisectionSkipped(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE="+confirmDate)
	o, commits := nightlyHistory(t, fh, 3, 2, "decode 0.9\n")
	o.Config.Nightly.BisectRuns = 0
	rep, prog := runBench(t, o)
	m := rep.Manifest
	if len(m.Remeasures) != 1 || m.Remeasures[0].Verdict != baseline.Regression || len(m.Bisects) != 1 {
		t.Fatalf("re-measures %+v, bisects %+v\n%s", m.Remeasures, m.Bisects, prog.String())
	}
	if nb := m.Bisects[0]; nb.Dir != "" || nb.Good != commits[0] || nb.Bad != commits[2] || !strings.Contains(nb.Reason, "nightly.bisect_runs is 0") {
		t.Errorf("bisect %+v", nb)
	}
	wantIn(t, "progress", prog.String(), cmpLlama+": not bisected: nightly.bisect_runs is 0")

	// The last good night is tonight's parent: one commit, nothing to bisect.
	fh2 := newFakeHost(t, "FAKE_HARNESS_DATE="+confirmDate)
	o2, commits2 := nightlyHistory(t, fh2, 3, 2, "decode 0.9\n")
	writeNights(t, o2.HistoryDir, confirmDate, 10, benchModels[:1], commits2[1][:8])
	rep2, prog2 := runBench(t, o2)
	if b := rep2.Manifest.Bisects; len(b) != 1 || b[0].Dir != "" || !strings.Contains(b[0].Reason, "holds one commit: tonight's is the first bad one") {
		t.Errorf("bisects %+v\n%s", b, prog2.String())
	}
}

// The last good commit cannot be used: the history names a commit the checkout lacks
// (a shallow clone), or a hostile id: the suspect is re-measured by the single re-run,
// and the reason says why there was no A/B.
func TestBenchFallsBackToTheSingleRerun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, commit, want string }{
		{"unknown", "0badc0de", "is not in the checkout (a shallow clone?"},
		{"hostile", "--output=x", "not 7 to 40 hex digits"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fh := newFakeHost(t, "FAKE_HARNESS_DATE="+confirmDate, "FAKE_HARNESS_SCALE="+cmpLlama+"=0.9", "FAKE_HARNESS_SINGLE_SCALE="+cmpLlama+"=0.9")
			o, _ := nightlyHistory(t, fh, 2, 0, "")
			writeNights(t, o.HistoryDir, confirmDate, 10, benchModels[:1], c.commit)
			rep, prog := runBench(t, o)
			m := rep.Manifest
			if len(m.Remeasures) != 1 {
				t.Fatalf("re-measures %+v\n%s", m.Remeasures, prog.String())
			}
			rm := m.Remeasures[0]
			if rm.Confirm != "" || rm.Verdict != baseline.Regression || rm.Decode != 31.87 || rm.CSV == "" ||
				!strings.Contains(rm.Reason, "no A/B (") || !strings.Contains(rm.Reason, c.want) || !strings.Contains(rm.Reason, "re-measured by a single re-run") {
				t.Errorf("re-measure %+v", rm)
			}
			if f := rep.Failed(); len(m.Bisects) != 0 || len(f) != 1 {
				t.Errorf("bisects %+v, failed %v", m.Bisects, f)
			}
		})
	}
}

// interruptedNight is tonight's nightly over a history of n commits whose third
// plants a 10 % decode slowdown, cancelled as SIGINT/SIGTERM cancels it at the first
// progress line holding at; the nightly must say it was interrupted, in its error and
// its manifest.
func interruptedNight(t *testing.T, n int, at string) (BenchReport, []string, *lineHook) {
	t.Helper()
	fh := newFakeHost(t, "FAKE_HARNESS_DATE="+confirmDate)
	o, commits := nightlyHistory(t, fh, n, 2, "decode 0.9\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prog := &lineHook{on: func(line string) {
		if strings.Contains(line, at) {
			cancel()
		}
	}}
	o.Progress = prog
	rep, err := Bench(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || rep.Manifest.State != results.SessionInterrupted {
		t.Fatalf("err %v, state %s\n%s", err, rep.Manifest.State, prog.String())
	}
	worktreesGone(t, o.RepoDir, "")
	return rep, commits, prog
}

// SIGINT/SIGTERM during the confirming A/B: the nightly stops at once, its manifest
// says interrupted, and the A/B's compare.json keeps the runs measured.
func TestBenchInterruptedDuringTheAB(t *testing.T) {
	t.Parallel()
	rep, _, prog := interruptedNight(t, 3, "compare: 2 of")
	m := rep.Manifest
	if len(m.Remeasures) != 1 || m.Remeasures[0].Confirm == "" || len(m.Bisects) != 0 {
		t.Fatalf("re-measures %+v, bisects %+v\n%s", m.Remeasures, m.Bisects, prog.String())
	}
	c, err := results.ReadCompareFolder(filepath.Join(rep.Folder, m.Remeasures[0].Confirm))
	if err != nil || c.State != results.SessionInterrupted || len(c.Runs) < 2 {
		t.Errorf("the A/B: %v, %s, %d runs", err, c.State, len(c.Runs))
	}
}

// SIGINT/SIGTERM during the nightly's bisection: the nightly stops, says interrupted,
// names the bisection with the reason, and its bisect.json is a valid partial one.
func TestBenchInterruptedDuringTheBisection(t *testing.T) {
	t.Parallel()
	rep, commits, prog := interruptedNight(t, 4, "bisect: 3 of at most")
	m := rep.Manifest
	if len(m.Bisects) != 1 {
		t.Fatalf("bisects %+v\n%s", m.Bisects, prog.String())
	}
	nb := m.Bisects[0]
	if nb.Dir != results.BisectDirPrefix+cmpLlama || !strings.HasPrefix(nb.Reason, "interrupted") || nb.Good != commits[0] {
		t.Errorf("bisect %+v", nb)
	}
	back, err := results.ReadNightly(filepath.Join(rep.Folder, m.Stem+results.NightlySuffix))
	if err != nil {
		t.Fatal(err)
	}
	b, err := results.ReadNightBisect(rep.Folder, back.Bisects[0])
	if err != nil || b.State != results.SessionInterrupted || b.Runs != 3 {
		t.Errorf("the partial bisection: %v, %s, %d runs", err, b.State, b.Runs)
	}
}
