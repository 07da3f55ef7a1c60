package publish

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/runner/results"
)

func TestReadFolderHostFacts(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("c", 40)
	res := layResults(t, base, profile{date: "2026-09-30"})
	f, err := readFolder(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []report.Row{{Label: "ROCm", Value: "10.0.0"}, {Label: "GPU", Value: "Radeon 8060S Graphics"}} {
		if !slices.Contains(f.env, want) {
			t.Errorf("environment %v lacks %v", f.env, want)
		}
	}
	// A hand-made folder with flat facts is shown key by key.
	writeJSON(t, filepath.Join(res, "gfx1151_cccccccc", "hostinfo.json"), map[string]any{"gpu": "Radeon", "vram_bytes": 103079215104, "extra": map[string]any{"rustc": "1.90"}})
	if f, err = readFolder(res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []report.Row{{Label: "GPU", Value: "Radeon"}, {Label: "GPU memory", Value: "96 GiB (103079215104 bytes)"}, {Label: "extra.rustc", Value: "1.90"}} {
		if !slices.Contains(f.env, want) {
			t.Errorf("environment %v lacks %v", f.env, want)
		}
	}
	if f.gfx != "gfx1151" || f.commit8 != "cccccccc" || len(f.runs) != 2 || f.session.Date != "2026-09-30" {
		t.Errorf("folder %+v", f)
	}
}

func TestReadFolderRefusals(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	if _, err := readFolder(empty); err == nil || !strings.Contains(err.Error(), "no run summaries") {
		t.Errorf("empty folder: %v", err)
	}
	two := t.TempDir()
	for _, c := range []string{"gfx1151_aaaaaaaa", "gfx1151_bbbbbbbb"} {
		writeFile(t, filepath.Join(two, c, "x_greedy_summary.json"), "{}")
	}
	if _, err := readFolder(two); err == nil || !strings.Contains(err.Error(), "give the one to publish") {
		t.Errorf("two folders: %v", err)
	}
	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, "gfx1151_aaaaaaaa", "x_greedy_summary.json"), `{"name": "y_greedy"}`)
	if _, err := readFolder(bad); err == nil || !strings.Contains(err.Error(), "same name") {
		t.Errorf("misnamed summary: %v", err)
	}
}

var crashed = results.RunRecord{
	Name: "Qwen3-30B-A3B-4bit_t0.7-p0.95", Model: "qwen3", ModelDir: "models/mlx/Qwen3-30B-A3B-4bit", Sampling: "t0.7-p0.95",
	Status: results.StatusBenchCrashed, Reason: "the profiled run exited with status 139 (SIGSEGV); last lines: [mlx-rocm] decode step 3: HIP kernel launch failed",
}

// The folder reads the runner's manifest as runner/job defines it: its date, commit,
// commit time, build, profiler flags and workload, and the runs that failed with the
// runner's own reasons.
func TestReadFolderSession(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("d", 40)
	gaveUp := results.RunRecord{Name: "Meta-Llama-3.1-8B-Instruct-4bit_t0.7-p0.95", Model: "llama", Sampling: "t0.7-p0.95",
		Status: results.StatusGuardGaveUp, Reason: "gave up after 14400s of waiting without 90s of idle; last seen gpu=[3292996:mlxcel-bench-de] (plain run)"}
	stuck := results.RunRecord{Name: "Qwen3-30B-A3B-4bit_t0.7", Model: "qwen3", Sampling: "t0.7", Status: results.StatusRunning}
	silent := results.RunRecord{Name: "Qwen3-30B-A3B-4bit_t1.0", Model: "qwen3", Sampling: "t1.0", Status: results.StatusNotRun}
	okNoSummary := results.RunRecord{Name: "Meta-Llama-3.1-8B-Instruct-4bit_t0.7", Model: "llama", Sampling: "t0.7", Status: results.StatusOK}
	pr := profile{date: "2026-09-30", failed: []results.RunRecord{crashed, gaveUp, stuck, silent, okNoSummary}}
	res := layResults(t, base, pr)
	f, err := readFolder(res)
	if err != nil {
		t.Fatal(err)
	}
	if !f.hasSession || f.session.Commit != base || f.sessionDate() != "2026-09-30" {
		t.Fatalf("session %+v", f.session)
	}
	if want := time.Date(2026, 9, 30, 19, 41, 0, 0, time.UTC); !f.sessionTime().Equal(want) {
		t.Errorf("commit time %s, want the session's end %s", f.sessionTime(), want)
	}
	wantFailed := []report.RunState{
		{Name: crashed.Name, Status: "bench_crashed", Detail: crashed.Reason},
		{Name: gaveUp.Name, Status: "guard_gave_up", Detail: gaveUp.Reason},
		{Name: stuck.Name, Status: "running", Detail: "the session stopped during this run"},
		{Name: silent.Name, Status: "not_run", Detail: "no reason recorded"},
		{Name: okNoSummary.Name, Status: "ok", Detail: "the session says ok, but the results folder has no Meta-Llama-3.1-8B-Instruct-4bit_t0.7_summary.json"},
	}
	if diff := cmp.Diff(wantFailed, f.failedRuns()); diff != "" {
		t.Errorf("failed runs (-want +got):\n%s", diff)
	}
	if notes := f.runNotes(); len(notes) != 5 || notes[0] != crashed.Name+" has no results (bench_crashed): "+crashed.Reason {
		t.Errorf("notes %q", notes)
	}
	build, rest := f.sessionMethod()
	wantMethod := []report.Row{
		{Label: "build (312.4 s)", Value: "cargo build --release --features rocm --bin mlxcel-bench-decode"},
		{Label: "profiler flags passed", Value: "--kernel-trace --hip-graph-trace --stats --output-format csv"},
		{Label: "workload (bench arguments)", Value: "-n 128 --warmup-tokens 20 --ignore-eos --prompt-tokens 512"},
	}
	if diff := cmp.Diff(wantMethod, append([]report.Row{build}, rest...)); diff != "" {
		t.Errorf("method (-want +got):\n%s", diff)
	}
	// The summaries come in the session's order.
	if f.runs[0].Name != fixtureRuns[0] || f.runs[1].Name != fixtureRuns[1] {
		t.Errorf("runs in order %s, %s", f.runs[0].Name, f.runs[1].Name)
	}
}

// How the session ended and how the bench was built change what the folder tells.
func TestReadFolderSessionStates(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("e", 40)
	for _, tc := range []struct {
		name      string
		edit      func(*results.Session)
		wantNote  string
		wantBuild string
		wantDate  string
	}{
		{"complete", func(*results.Session) {}, "", "build (312.4 s)", "2026-09-30"},
		{"no build", func(s *results.Session) { s.Build = results.Build{Command: results.BuildCommand, Status: "skipped"} },
			"", "build (skipped: the bench was already built)", "2026-09-30"},
		{"failed", func(s *results.Session) {
			s.State, s.Error = "failed", "guarding Qwen3-30B-A3B-4bit_greedy plain: no KFD dir"
			s.Build.Status, s.Build.Reason = "failed", "cargo build exited with status 101: error[E0425]"
		}, "the profile session stopped on an error before every run was done: guarding Qwen3-30B-A3B-4bit_greedy plain: no KFD dir",
			"build (failed: cargo build exited with status 101: error[E0425])", "2026-09-30"},
		{"interrupted", func(s *results.Session) { s.State = "interrupted" }, "the profile session was interrupted before every run was done", "build (312.4 s)", "2026-09-30"},
		{"still running", func(s *results.Session) { s.State, s.Finished = "running", time.Time{} }, "still running", "build (312.4 s)", "2026-09-30"},
		{"no date", func(s *results.Session) { s.Date = "" }, "", "build (312.4 s)", "2026-09-30"},
		{"other gpu", func(s *results.Session) { s.GFX = "gfx1201" }, "session.json says the GPU was gfx1201 but the folder is named for gfx1151", "build (312.4 s)", "2026-09-30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pr := profile{date: "2026-09-30"}
			res := layResults(t, base, pr)
			s := sessionOf(t, base, pr, fixtureRuns)
			tc.edit(&s)
			writeJSON(t, filepath.Join(res, "gfx1151_eeeeeeee", results.SessionFile), s)
			f, err := readFolder(res)
			if err != nil {
				t.Fatal(err)
			}
			says := func(n string) bool { return tc.wantNote != "" && strings.Contains(n, tc.wantNote) }
			if slices.ContainsFunc(f.notes, says) != (tc.wantNote != "") {
				t.Errorf("notes %q; want one saying %q", f.notes, tc.wantNote)
			}
			// The pull request tells how the session ended, but not a folder-name mismatch.
			if tc.name != "other gpu" && slices.ContainsFunc(f.runNotes(), says) != (tc.wantNote != "") {
				t.Errorf("pull request notes %q; want one saying %q", f.runNotes(), tc.wantNote)
			}
			if build, _ := f.sessionMethod(); build.Label != tc.wantBuild || build.Value != strings.Join(results.BuildCommand, " ") {
				t.Errorf("build row %+v, want label %q", build, tc.wantBuild)
			}
			if f.sessionDate() != tc.wantDate {
				t.Errorf("date %q, want %q", f.sessionDate(), tc.wantDate)
			}
		})
	}
}

// A malformed manifest stops publishing with an error naming the file; a missing one
// is a note, and the date then comes from elsewhere.
func TestReadFolderSessionFile(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("f", 40)
	for _, tc := range []struct{ name, body, want string }{
		{"guessed keys", `{"sha": "ffffffff", "runs": [{"run": "x_greedy", "state": "ok"}]}`, "run 1 has no name"},
		{"not json", `{"commit": "ffffffff",`, "unexpected end of JSON input"},
		{"list", `["ffffffff"]`, "want a JSON object"},
		{"bad date", `{"commit": "ffffffff", "date": "yesterday"}`, `date "yesterday" is not YYYY-MM-DD`},
	} {
		res := layResults(t, base, profile{date: "2026-09-30"})
		p := filepath.Join(res, "gfx1151_ffffffff", results.SessionFile)
		writeFile(t, p, tc.body)
		_, err := readFolder(res)
		if err == nil || !strings.Contains(err.Error(), p+" is not a manifest of `perfbot run profile`") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error naming %s and saying %q", tc.name, err, p, tc.want)
		}
	}
	res := layResults(t, base, profile{date: "2026-09-30"})
	if err := os.Remove(filepath.Join(res, "gfx1151_ffffffff", results.SessionFile)); err != nil {
		t.Fatal(err)
	}
	f, err := readFolder(res)
	if err != nil {
		t.Fatal(err)
	}
	if f.hasSession || f.sessionDate() != "" || !slices.ContainsFunc(f.notes, func(n string) bool { return strings.Contains(n, "no session.json") }) {
		t.Errorf("missing manifest: session %+v, notes %q", f.session, f.notes)
	}
	if build, rest := f.sessionMethod(); build.Value != strings.Join(results.BuildCommand, " ") || len(rest) != 0 {
		t.Errorf("method without a session: %+v %+v", build, rest)
	}
}

// A dry run of a session with a crashed run: the page lists it with the runner's
// reason and the method shows the session's build and profiler flags; the pull request
// names it in its notes; the commit is dated at the session's end.
func TestDryRunShowsTheSession(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layResults(t, tg.base, profile{date: "2026-09-30", failed: []results.RunRecord{crashed}})
	out := t.TempDir()
	sum, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	page := tg.file(t, sum.Git.Commit, sum.Report)
	for _, want := range []string{
		"| `" + crashed.Name + "` | " + report.Text("bench_crashed") + " | " + report.Text(crashed.Reason) + " |",
		"| build (312.4 s) | `cargo build --release --features rocm --bin mlxcel-bench-decode` |",
		"| profiler flags passed | `--kernel-trace --hip-graph-trace --stats --output-format csv` |",
		"| workload (bench arguments) | `-n 128 --warmup-tokens 20 --ignore-eos --prompt-tokens 512` |",
		"/profile rocm models=llama,qwen3 sampling=greedy ref=" + tg.base,
	} {
		if !strings.Contains(page, want+"\n") {
			t.Errorf("the page lacks the line\n%s", want)
		}
	}
	if sum.Date != "2026-09-30" || !strings.HasSuffix(sum.Report, "-2026-09-30.md") {
		t.Errorf("date %s, report %s", sum.Date, sum.Report)
	}
	if got := gitT(t, tg.bare, "log", "-1", "--format=%aI", sum.Git.Commit); got != "2026-09-30T19:41:00+00:00" {
		t.Errorf("commit date %s, want the session's end", got)
	}
	pr := readFile(t, filepath.Join(out, DryPR))
	if !strings.Contains(pr, "### Notes\n\n- "+report.Text(crashed.Name+" has no results (bench_crashed): "+crashed.Reason)+"\n") {
		t.Errorf("the pull request does not name the crashed run:\n%s", pr)
	}
}

// A hostile or broken compare folder is refused before anything is pushed, with an
// error that says what is wrong; the check run and the status comment report it.
func TestCompareRefusesHostileResults(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	manifest := func(t *testing.T, dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, results.CompareFile))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, dir string)
		want   string
	}{
		{"oversized", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, results.CompareFile), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(make([]byte, 33<<20)); err != nil {
				t.Fatal(err)
			}
		}, "reading the compare manifest"},
		{"a number out of range", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, results.CompareFile), strings.Replace(manifest(t, dir), `"median_a": 60.39`, `"median_a": 1e999`, 1))
		}, "compare.json is not a manifest of a compare session"},
		{"a negative median", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, results.CompareFile), strings.Replace(manifest(t, dir), `"median_a": 60.39`, `"median_a": -60.39`, 1))
		}, "a median is negative"},
		{"p above 1", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, results.CompareFile), regexp.MustCompile(`"p": [0-9.e-]+`).ReplaceAllString(manifest(t, dir), `"p": 7`))
		}, "not in 0..1"},
		{"a number as text", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, results.CompareFile), strings.Replace(manifest(t, dir), `"median_a": 60.39`, `"median_a": "60.39"`, 1))
		}, "compare.json is not a manifest of a compare session"},
		{"not JSON", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, results.CompareFile), "<html>")
		}, "compare.json is not a manifest of a compare session"},
		{"the CSV a link", func(t *testing.T, dir string) {
			p := filepath.Join(dir, ssmAfter)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/etc/passwd", p); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"the manifest a link", func(t *testing.T, dir string) {
			p := filepath.Join(dir, results.CompareFile)
			if err := os.Rename(p, filepath.Join(dir, "elsewhere.json")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("elsewhere.json", p); err != nil {
				t.Fatal(err)
			}
		}, "compare.json is a symbolic link, not a regular file"},
		{"a side's summary a link", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, results.CompareFile), strings.Replace(strings.Replace(manifest(t, dir), `"kind": "bench"`, `"kind": "profile"`, 1),
				`"csv_before"`, `"dir_a": "a", "dir_b": "b", "csv_before"`, 1))
			for _, side := range []string{"a", "b"} {
				writeFile(t, filepath.Join(dir, side, "x_decode_kernels.csv"), "")
				if err := os.Symlink("/etc/passwd", filepath.Join(dir, side, "x_summary.json")); err != nil {
					t.Fatal(err)
				}
			}
		}, "\"x_summary.json\" is a symbolic link, not a regular file"},
		{"the CSV missing", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, ssmBefore)); err != nil {
				t.Fatal(err)
			}
		}, "the compare names " + ssmBefore},
		{"the CSV not a harness file", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ssmBefore), "model,decode_tok_s\n")
		}, "reading the CSV pair"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := layCompare(t, tg.base, nil)
			tc.break_(t, dir)
			out := t.TempDir()
			sum, err := PublishCompare(context.Background(), compareOptions(tg, dir, ToDir(out)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to say %q", err, tc.want)
			}
			if sum.Git.Pushed || sum.Conclusion != "failure" || sum.CheckRun.Detail != "failure" {
				t.Errorf("summary %+v", sum)
			}
			if got := gitT(t, tg.bare, "for-each-ref", "--format=%(refname)", "refs/heads/"+ssmBranch); got != "" {
				t.Errorf("the compare branch exists: %s", got)
			}
			wantIn(t, readFile(t, filepath.Join(out, DryStatus)), "failed.")
			wantIn(t, readFile(t, filepath.Join(out, DryCheckRun)), "Conclusion: failure.", "Publishing failed before anything was pushed")
			wantNotWritten(t, out, DryCompareComment)
		})
	}
}
