package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
)

// Results of one commit are never published on another commit of the repository, named
// by --base or by the session, and nothing is pushed when they are.
func TestPublishRefusesAnotherExistingCommit(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	// A second commit that exists in the checkout without moving its HEAD.
	other := gitT(t, tg.checkout, "commit-tree", "-p", "HEAD", "-m", "other", "HEAD^{tree}")
	cases := []struct {
		name    string
		base    string
		session string // the session's commit; "" keeps the profiled one
	}{
		{"base option", other, ""},
		{"base option, abbreviated", other[:12], ""},
		{"session commit", "", other},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := layResults(t, tg.base, profile{date: "2026-09-30"})
			if c.session != "" {
				p := filepath.Join(res, "gfx1151_"+tg.base[:8], "session.json")
				b := readFile(t, p)
				writeFile(t, p, strings.ReplaceAll(b, tg.base, c.session))
			}
			out := t.TempDir()
			_, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}, Base: c.base})
			want := "the results are of commit " + tg.base[:8] + " (folder gfx1151_" + tg.base[:8] + ") but the base is " + other + ": publish on the profiled commit"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, want)
			}
			if errors.Is(err, gitpub.ErrRefused) {
				t.Error("the refusal came from git, not from the check before it")
			}
			if tg.branch(t) != "" {
				t.Error("something was pushed")
			}
			for _, name := range []string{DryPR, DryEpic} {
				if _, err := os.Stat(filepath.Join(out, name)); err == nil {
					t.Errorf("%s was written for results of another commit", name)
				}
			}
		})
	}
}

// prBody is the pull request body a dry run wrote.
func prBody(t *testing.T, out string) string {
	t.Helper()
	_, body, ok := strings.Cut(readFile(t, filepath.Join(out, DryPR)), "\n\n---\n\n")
	if !ok {
		t.Fatalf("%s has no body", DryPR)
	}
	return body
}

// GitHub takes a pull request body of up to 65,536 characters: a body of exactly that
// many goes as it is, one character more is cut, with a note, to fit.
func TestPublishPRBodyAtGitHubsLimit(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed})
	prep := prepare(t, tg, res, [][]string{{"sh", "-c", "exit 3"}}, "")
	// The body grows with a failing verification command's text (it shows in the draft
	// reason, the table and the output heading) and with the digits of the issue.
	publish := func(pad, issue int) string {
		t.Helper()
		out := t.TempDir()
		p := prep
		p.Verify = []patch.VerifyResult{prep.Verify[0]}
		p.Verify[0].Command = []string{"sh", "-c", "exit 3 #" + strings.Repeat("x", pad)}
		o := Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}, Issue: issue, Prepared: &p}
		if err := os.Remove(filepath.Join(res, "gfx1151_"+tg.base[:8], patch.PreparedFile)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if _, err := Publish(context.Background(), o); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		return prBody(t, out)
	}
	runes := func(s string) int { return len([]rune(s)) }
	b0 := runes(publish(0, 0))
	perPad := (runes(publish(100, 0)) - b0) / 100
	withIssue := runes(publish(0, 1)) - b0 // ", requested in #1"
	if perPad < 1 || withIssue < 2 {
		t.Fatalf("the body does not grow with the padding (%d) or the issue (%d)", perPad, withIssue)
	}
	left := report.MaxComment - b0 - withIssue
	pad := left / perPad
	digits := 1 + left%perPad
	issue, _ := strconv.Atoi("1" + strings.Repeat("0", digits-1))

	at := publish(pad, issue)
	if n := runes(at); n != report.MaxComment || !strings.HasSuffix(at, report.PRMarker+"\n") {
		t.Errorf("a body of %d characters (want %d) was changed or cut:\n%s", n, report.MaxComment, at[max(0, len(at)-300):])
	}
	over := publish(pad, issue*10)
	if n := runes(over); n > report.MaxComment || !strings.Contains(over, "_(truncated: ") || !strings.HasPrefix(over, at[:1000]) {
		t.Errorf("a body of %d characters was not cut to GitHub's limit with a note (%d characters):\n%s", report.MaxComment+1, n, over[max(0, len(over)-300):])
	}
}

// The documents a dry run writes and the page it commits, whole, for a profile with a
// failed run, the numeric tests, a failing verification and the real guard log: every
// table, figure and sentence users see. Commit hashes and temporary paths, which differ
// between machines, are replaced by names.
func TestDryRunGolden(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layResults(t, tg.base, profile{date: "2026-09-30", tests: []patch.TestOutcome{patch.Passed, patch.Failed, patch.Passed},
		failed: []results.RunRecord{{Name: "granite-4.0-h-tiny-4bit_greedy", Model: "granite", ModelDir: "models/mlx/granite-4.0-h-tiny-4bit",
			Sampling: "greedy", Status: results.StatusBenchCrashed, Reason: "the bench exited 137 (out of memory)"}}})
	out := t.TempDir()
	prepare(t, tg, res, [][]string{{"python3", patch.CheckerPath}, {"sh", "-c", "echo 'dispatch table out of date' >&2; exit 4"}}, "")
	o := Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}, Marks: Marks{TriggerCommentID: triggerID}, Issue: 12}
	sum, err := Publish(context.Background(), o)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	names := strings.NewReplacer(sum.Git.Commit, "<commit>", tg.base, "<base>", tg.base[:8], "<base8>", sum.Git.Commit[:8], "<commit8>",
		res, "<results>", tg.checkout, "<checkout>", out, "<out>")
	for _, name := range []string{DryPR, DryEpic, DryStatus, DryCheckRun, DryStepSummary, DrySummary} {
		golden.Check(t, "testdata/golden/"+name, names.Replace(readFile(t, filepath.Join(out, name))))
	}
	golden.Check(t, "testdata/golden/page.md", names.Replace(tg.file(t, sum.Git.Commit, sum.Report)))
}

// A checker that prints its success line and then exits non-zero is reported as failed
// in the pull request body and the summary, never as passed (runner/patch's tests cover
// one that hangs past its timeout or is killed).
func TestPublishCheckerSuccessLineThenFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, script, why string
	}{
		{"exit 1", "exit 1", "exit 1"},
		{"exit 2 after a failure line", "echo '  src/a.rs:3: enumerates Metal'; exit 2", "exit 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tg := newTarget(t)
			res := layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed})
			py := filepath.Join(t.TempDir(), "python3")
			writeFile(t, py, "#!/bin/sh\necho 'Kernel port dispatch check passed: 12 files, 2 awaiting a predicate'\n"+c.script+"\n")
			if err := os.Chmod(py, 0o755); err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			prepare(t, tg, res, [][]string{}, py)
			o := Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			sum, err := Publish(ctx, o)
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if sum.Patch == nil || sum.Patch.Checker != "failed" {
				t.Errorf("summary patch %+v, want the checker failed", sum.Patch)
			}
			body := prBody(t, out)
			want := "Checker `" + py + " " + patch.CheckerPath + "`: **failed** (" + c.why + ")."
			if !strings.Contains(body, "\n"+want+"\n") || strings.Contains(body, "**passed**") {
				t.Errorf("the body lacks %q or says passed:\n%s", want, body)
			}
		})
	}
}

// normalize fills every default and says what is missing, all at once.
func TestOptionsNormalize(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return testNow }
	base := Options{Target: Target{ResultsDir: "r", RepoDir: "c", Sink: ToDir("d"), Config: testConfig()}}
	cases := []struct {
		name string
		edit func(*Options)
		want func(*Options) // the defaults expected on top of base
		err  string
	}{
		{"defaults", func(*Options) {}, func(o *Options) {
			// The branch stays "": planning names the request's own (BranchName).
			o.Epic, o.Remote, o.ServerURL, o.Command = epicIssue, "origin", "https://github.com", "/profile rocm"
			o.Author = gitpub.Identity{Name: "perfbot[bot]", Email: "perfbot[bot]@users.noreply.github.com"}
		}, ""},
		{"given values kept", func(o *Options) {
			o.Branch, o.Epic, o.Remote, o.ServerURL, o.Command, o.Now =
				"b", 7, "up", "https://ghe.example.com//", "/profile rocm models=llama", now
			o.Author = gitpub.Identity{Name: "n", Email: "e"}
		}, func(o *Options) {
			o.Branch, o.Epic, o.Remote, o.ServerURL, o.Command =
				"b", 7, "up", "https://ghe.example.com", "/profile rocm models=llama"
			o.Author = gitpub.Identity{Name: "n", Email: "e"}
		}, ""},
		{"epic 0 takes the default", func(o *Options) {
			o.Epic = 0
		}, func(o *Options) {
			// The branch stays "": planning names the request's own (BranchName).
			o.Epic, o.Remote, o.ServerURL, o.Command = epicIssue, "origin", "https://github.com", "/profile rocm"
			o.Author = gitpub.Identity{Name: "perfbot[bot]", Email: "perfbot[bot]@users.noreply.github.com"}
		}, ""},
		{"everything missing", func(o *Options) {
			*o = Options{}
		}, nil, "publishing: no results folder: pass the folder `perfbot run profile` wrote\n" +
			"no repository: pass a clone of the target repository\n" +
			"neither a GitHub client nor a dry-run folder: give one\n" +
			"no bot branch: set branches.profile in the configuration"},
		{"bad kind and number", func(o *Options) {
			o.IssueKind, o.Issue = "push", -1
		}, nil, "publishing: issue kind \"push\": want \"pr\" or \"issue\"\nissue -1: not an issue number"},
	}
	for _, c := range cases {
		o := base
		c.edit(&o)
		got, err := o.normalize()
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := o
		c.want(&want)
		want.Now, got.Now = nil, nil
		if got.Config.Results.Profiles == "" || got.Config.Results.Reports == "" {
			t.Errorf("%s: results paths left empty: %+v", c.name, got.Config.Results)
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Options{}), cmpopts.IgnoreFields(Options{}, "Sink")); diff != "" {
			t.Errorf("%s: options (-want +got):\n%s", c.name, diff)
		}
	}
	o := base
	o.Config.Results.Profiles, o.Config.Results.Reports = "", ""
	got, err := o.normalize()
	if err != nil || got.Config.Results.Profiles != "benchmarks/rocm_profiles" || got.Config.Results.Reports != "docs/benchmark_results" {
		t.Errorf("empty results paths: %+v %v, want the defaults", got.Config.Results, err)
	}
	for _, given := range [][2]string{{"", "r/x"}, {"p/x", ""}} {
		o = base
		o.Config.Results.Profiles, o.Config.Results.Reports = given[0], given[1]
		want := [2]string{given[0], given[1]}
		if want[0] == "" {
			want[0] = "benchmarks/rocm_profiles"
		}
		if want[1] == "" {
			want[1] = "docs/benchmark_results"
		}
		if got, _ := o.normalize(); got.Config.Results.Profiles != want[0] || got.Config.Results.Reports != want[1] {
			t.Errorf("results paths %q given: %+v, want %q", given, got.Config.Results, want)
		}
	}
	// The clock: the one given, else the wall clock.
	o = base
	o.Now = now
	if got, _ := o.normalize(); got.Now == nil || !got.Now().Equal(testNow) {
		t.Errorf("a clock given was not kept")
	}
	o.Now = nil
	if got, _ := o.normalize(); got.Now == nil || time.Since(got.Now()) > time.Hour {
		t.Errorf("no clock given: want the wall clock")
	}
}

// The baseline's options take each default only where nothing was given: the branch
// from the options, then the configuration, then perfbot's default; the results paths
// one by one; the issue from the epic.
func TestBaselineOptionsNormalize(t *testing.T) {
	t.Parallel()
	d := config.Default()
	base := BaselineOptions{Target: Target{ResultsDir: "r", RepoDir: "c", Sink: ToDir("d"), Config: testConfig()}}
	cases := []struct {
		name                        string
		edit                        func(*BaselineOptions)
		branch, benchmarks, reports string
		issue                       int
	}{
		{"given", func(o *BaselineOptions) {
			o.Branch, o.Issue = "nightly", 9
			o.Config.Branches.Baseline, o.Config.Results.Benchmarks, o.Config.Results.Reports = "cfg", "b/x", "r/x"
		}, "nightly", "b/x", "r/x", 9},
		{"from the configuration", func(o *BaselineOptions) {
			o.Config.Branches.Baseline = "cfg"
		}, "cfg", d.Results.Benchmarks, d.Results.Reports, epicIssue},
		{"defaults", func(o *BaselineOptions) {
			o.Config.Branches.Baseline, o.Config.Results.Benchmarks, o.Config.Results.Reports = "", "", ""
			o.Issue = -1
		}, d.Branches.Baseline, d.Results.Benchmarks, d.Results.Reports, epicIssue},
		{"one results path given", func(o *BaselineOptions) {
			o.Config.Results.Benchmarks, o.Config.Results.Reports = "", "r/x"
		}, d.Branches.Baseline, d.Results.Benchmarks, "r/x", epicIssue},
		{"the other given", func(o *BaselineOptions) {
			o.Config.Results.Benchmarks, o.Config.Results.Reports = "b/x", ""
		}, d.Branches.Baseline, "b/x", d.Results.Reports, epicIssue},
	}
	for _, c := range cases {
		o := base
		c.edit(&o)
		got, err := o.normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Branch != c.branch || got.Config.Results.Benchmarks != c.benchmarks || got.Config.Results.Reports != c.reports || got.Issue != c.issue || got.Remote != "origin" {
			t.Errorf("%s: branch %q benchmarks %q reports %q issue %d remote %q; want %q %q %q %d origin",
				c.name, got.Branch, got.Config.Results.Benchmarks, got.Config.Results.Reports, got.Issue, got.Remote, c.branch, c.benchmarks, c.reports, c.issue)
		}
	}
	if _, err := (BaselineOptions{}).normalize(); err == nil || !strings.HasPrefix(err.Error(), "publishing the baseline: no results folder: pass the folder `perfbot run bench` wrote\n") {
		t.Errorf("nothing given: %v", err)
	}
}

// A CSV link from the baseline page points at a row when it has one, at the file
// otherwise.
func TestBaselineRowLink(t *testing.T) {
	t.Parallel()
	p := &BaselinePlan{o: BaselineOptions{Target: Target{Config: testConfig()}}, pagePath: "docs/benchmark_results/rocm-baseline-gfx1151-2026-10-20.md"}
	for line, want := range map[int]string{0: "../../benchmarks/a.csv", 1: "../../benchmarks/a.csv#L1", 12: "../../benchmarks/a.csv#L12"} {
		if got := p.rowLink("a.csv", line); got != want {
			t.Errorf("line %d: %q, want %q", line, got, want)
		}
	}
}

// A night whose mlx-lm sweep failed still publishes mlxcel's figures: no ratios (a dash,
// never 0.00x) and no mlx-lm row in the environment.
func TestPublishBaselineWithoutMLXLM(t *testing.T) {
	t.Parallel()
	for _, n := range []night{{date: "2026-10-20", llama: "39.40", noMLXLM: true}, {date: "2026-10-20", llama: "39.40", headerOnly: "pylm"}} {
		page := dryNightPage(t, n)
		if strings.Contains(page, "mlx-lm baseline |") || strings.Contains(page, "0.00x") {
			t.Errorf("%+v: the page names an mlx-lm baseline or a zero ratio:\n%s", n, page)
		}
		want := "| [Qwen3-0.6B-4bit](../../benchmarks/rocm_strixhalo-gfx1151_2026-10-20.csv#L5) | 4417.27 | — | 278.48 | — | — |"
		if !strings.Contains(page, want) {
			t.Errorf("%+v: no row %q:\n%s", n, want, page)
		}
		if failed := strings.Contains(page, "the mlx-lm sweep: failed: scripts/bench\\_mlxlm.py exited 1"); failed != n.noMLXLM {
			t.Errorf("%+v: the failed sweep named %v:\n%s", n, failed, page)
		}
	}
}

// A mlxcel sweep that stopped before its first model leaves a CSV of a header: the page
// has no hardware row to copy from it. A re-measurement that gave no reading says why,
// and that the suspect stays unconfirmed, instead of a figure.
func TestPublishBaselinePageEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		n          night
		has, lacks []string
	}{
		{"header-only mlxcel CSV", night{date: "2026-10-20", llama: "39.40", headerOnly: "rocm"},
			[]string{"| mlx-lm baseline | mlx-lm-0.31.3+mlx-0.32.3.dev20260912+a7d4c85a |"}, []string{"| hardware (CSV) |"}},
		{"re-measured without a reading", night{date: "2026-10-20", llama: "35.41", noReading: "the bench exited 137"},
			[]string{"Meta-Llama-3.1-8B-Instruct-4bit was re-measured alone (", "): no reading, the bench exited 137; the suspect stays unconfirmed"}, []string{"tok/s in "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			page := dryNightPage(t, tc.n)
			wantIn(t, page, tc.has...)
			wantOut(t, page, tc.lacks...)
		})
	}
}

// A verdict row shows a change when there is something to change against: a band or,
// without one, the last baseline; a new model has neither.
func TestBaselineVerdictRows(t *testing.T) {
	t.Parallel()
	pt := func(v float64) *baseline.Point { return &baseline.Point{Values: []float64{v}} }
	band := &baseline.Band{Runs: 12, Lo: 9, Hi: 11}
	rep := &baseline.Report{Models: []baseline.ModelResult{
		{Model: "banded", New: pt(10.5), Baseline: pt(10), Band: band, ChangePct: 5},
		{Model: "band only", New: pt(9.5), Band: band, ChangePct: -5},
		{Model: "baseline only", New: pt(10.2), Baseline: pt(10), ChangePct: 2},
		{Model: "new", New: pt(7), ChangePct: 0},
		{Model: "flat", New: pt(10), Band: band, ChangePct: 0},
		{Model: "no reading", Status: "FAIL:oom"},
	}}
	p := &BaselinePlan{n: &nightly{man: results.Nightly{Comparison: rep}}}
	var got []string
	for _, r := range p.verdictRows(Links{}) {
		got = append(got, r.Model+" "+r.Decode+" "+r.Change+" "+r.Band)
	}
	want := []string{
		"banded 10.50 +5.0% 9.00 to 11.00 (12 runs)",
		"band only 9.50 -5.0% 9.00 to 11.00 (12 runs)",
		"baseline only 10.20 +2.0% —",
		"new 7.00 — —",
		"flat 10.00 +0.0% 9.00 to 11.00 (12 runs)",
		"no reading — — —",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%q\nwant\n%q", got, want)
	}
}

// git() returns a few seconds after git exits even when a child git left behind still
// holds its output open (a credential helper, say), instead of waiting for that child.
func TestGitDoesNotWaitForItsChildren(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	out, err := runGitUnder(t, "sleep 60 &\necho $! > "+pidFile+"\nexit 1")
	var failed bool
	var secs int
	if _, serr := fmt.Sscanf(out, "%t %d", &failed, &secs); err != nil || serr != nil || !failed || secs > 30 {
		t.Errorf("git() with a child holding its output: %q, %v; want a failure within seconds", out, err)
	}
}

// git()'s error carries git's stderr up to 1,000 bytes; past that it is cut and says so.
func TestGitErrorCut(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{1000: strings.Repeat("e", 1000), 1001: strings.Repeat("e", 1000) + " ..."} {
		out, err := runGitUnder(t, fmt.Sprintf("printf '%%%ds' '' | tr ' ' e >&2\nexit 1", n))
		_, msg, _ := strings.Cut(out, "\n")
		if err != nil || !strings.HasSuffix(msg, ": "+want) {
			t.Errorf("stderr of %d bytes: error %q (%v), want it to end with %d bytes", n, msg, err, len(want))
		}
	}
}

// runGitUnder runs git() once in a helper process (TestMain's PUBLISH_TEST_HELPER=git)
// whose PATH finds a fake git with the given shell body first, and returns what the
// helper printed.
func runGitUnder(t *testing.T, body string) (string, error) {
	t.Helper()
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "git"), "#!/bin/sh\n"+body+"\n")
	if err := os.Chmod(filepath.Join(bin, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), "PUBLISH_TEST_HELPER=git", "PATH="+bin+":"+os.Getenv("PATH"))
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	return string(out), err
}

// The guard evidence of a run that sampled nothing has no rows and no idle-window note.
func TestGuardRowsWithoutSamples(t *testing.T) {
	t.Parallel()
	if rows, notes := report.GuardRows(nil); rows != nil || notes != nil {
		t.Errorf("no events: rows %v, notes %q", rows, notes)
	}
}

// The pull request names the sampling modes the session asked for; a session file that
// does not list them takes them from the runs.
func TestPublishSamplingFromSessionOrRuns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sampling []string
		want     string
	}{{[]string{"greedy", "sampled"}, "with sampling greedy, sampled,"}, {[]string{}, "with sampling greedy,"}} {
		tg := newTarget(t)
		out := t.TempDir()
		res := layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed, sampling: c.sampling})
		if _, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}, Issue: 12}); err != nil {
			t.Fatalf("%q: %v", c.sampling, err)
		}
		if pr := readFile(t, filepath.Join(out, DryPR)); !strings.Contains(pr, c.want) {
			t.Errorf("session sampling %q: the pull request lacks %q:\n%s", c.sampling, c.want, pr)
		}
	}
}

// findFolder takes the results root or the folder itself; a <gfx>_<commit> folder
// without run summaries is not a results folder.
func TestFindFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	empty := filepath.Join(root, "gfx1151_0123abcd")
	full := filepath.Join(root, "gfx1151_89abcdef")
	for _, d := range []string{empty, full} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(full, "llama_greedy_summary.json"), "{}")
	for in, want := range map[string]string{root: full, full: full} {
		if got, err := findFolder(in); err != nil || got != want {
			t.Errorf("findFolder(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := findFolder(empty); err == nil || !strings.Contains(err.Error(), "no run summaries in") {
		t.Errorf("a folder without summaries: %v", err)
	}
}

// A file is committed by its suffix only when it has a name before the suffix.
func TestCommittable(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"llama_summary.json": true, "_summary.json": false, "x_bench.log": true, "_bench.log": false, "trace.csv": false} {
		if got := committable(name); got != want {
			t.Errorf("committable(%q) = %v, want %v", name, got, want)
		}
	}
}

// The runs come in the session's order, the first one included; runs the session
// does not list come after, by name.
func TestReadSummariesInTheSessionsOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"a_greedy", "b_greedy", "c_greedy", "d_greedy"} {
		writeFile(t, filepath.Join(dir, n+"_summary.json"), `{"name": "`+n+`"}`)
	}
	for _, tc := range []struct {
		session []string
		want    []string
	}{
		{[]string{"c_greedy", "a_greedy", "b_greedy"}, []string{"c_greedy", "a_greedy", "b_greedy", "d_greedy"}},
		{[]string{"d_greedy", "b_greedy"}, []string{"d_greedy", "b_greedy", "a_greedy", "c_greedy"}},
		{nil, []string{"a_greedy", "b_greedy", "c_greedy", "d_greedy"}},
	} {
		f := &folder{dir: dir}
		for _, n := range tc.session {
			f.session.Runs = append(f.session.Runs, results.RunRecord{Name: n})
		}
		if err := f.readSummaries(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range f.runs {
			got = append(got, s.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("session %q: runs in order %q, want %q", tc.session, got, tc.want)
		}
	}
}

// The page's date and the commit time come from the session: its date, else its end
// (or start); with neither, today, with a note that a rerun on another day differs.
func TestPublishDates(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 10, 1, 0, 30, 0, 0, time.UTC)
	start := time.Date(2026, 9, 29, 23, 50, 0, 0, time.UTC)
	const noDate = "the session has no date: the report is dated today and a rerun on another day makes another page"
	for _, tc := range []struct {
		name     string
		session  results.Session
		date     string
		when     time.Time
		withNote bool
	}{
		{"a date only", results.Session{Date: "2026-09-30"}, "2026-09-30", time.Date(2026, 9, 30, 0, 0, 0, 0, time.UTC), false},
		{"a date and an end on the next day", results.Session{Date: "2026-09-30", Finished: end}, "2026-09-30", end, false},
		{"an end only", results.Session{Finished: end}, "2026-10-01", end, false},
		{"a start only", results.Session{Started: start}, "2026-09-29", start, false},
		{"no session", results.Session{}, testNow.Format(time.DateOnly), testNow, true},
	} {
		p := &ProfilePlan{f: &folder{session: tc.session}, o: Options{Now: func() time.Time { return testNow }}}
		p.dates()
		if p.date != tc.date || p.sum.Date != tc.date || !p.when.Equal(tc.when) {
			t.Errorf("%s: date %q (summary %q), time %s; want %q, %s", tc.name, p.date, p.sum.Date, p.when, tc.date, tc.when)
		}
		if got := slices.Contains(p.sum.Notes, noDate); got != tc.withNote {
			t.Errorf("%s: notes %q", tc.name, p.sum.Notes)
		}
	}
}

// A rules file in use is named by its SHA-256; the embedded rules have no digest.
func TestRulesDataDigest(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("units: []\n"))
	if got := report.RulesData(attrib.Default(), []byte("units: []\n")).Digest; got != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %q, want the file's SHA-256", got)
	}
	if got := report.RulesData(attrib.Default(), nil).Digest; got != "" {
		t.Errorf("embedded rules: digest %q, want none", got)
	}
}

// The commit message, whole: the files the patch changed are named only when it
// changed some.
func TestCommitMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		patch *Patch
		want  string
	}{
		{nil, ""},
		{&Patch{Decision: "hold"}, "grouped_gemm numeric tests: hold.\n"},
		{&Patch{Decision: "switch", Changed: []string{"a.rs", "b.py"}}, "grouped_gemm numeric tests: switch (changed a.rs, b.py).\n"},
	} {
		p := &ProfilePlan{f: &folder{gfx: "gfx1151", commit8: "abababab"}, date: "2026-09-30", rk: &rank.Ranking{}, pagePath: "docs/p.md"}
		p.sum.Runs, p.sum.Patch = []string{"r1", "r2"}, tc.patch
		want := "rocm: decode profile of gfx1151 at abababab (2026-09-30)\n\nRuns: r1, r2.\nRanked port order: " + p.rk.OrderLine() + ".\n" + tc.want + "Report: docs/p.md\n"
		if got := p.commitMessage(); got != want {
			t.Errorf("patch %+v: message\n%q\nwant\n%q", tc.patch, got, want)
		}
	}
}

// The method rows, whole, at their edges: a build of whole seconds, one of 0 s (no
// time recorded), no profiler flags, no workload; a folder without a session.
func TestSessionMethodEdges(t *testing.T) {
	t.Parallel()
	cmd := strings.Join(results.BuildCommand, " ")
	flags := report.Row{Label: "profiler flags passed", Value: "--kernel-trace --stats"}
	work := report.Row{Label: "workload (bench arguments)", Value: "-n 1 --warmup-tokens 0 --ignore-eos --prompt-tokens 0"}
	for _, tc := range []struct {
		name      string
		has       bool
		s         results.Session
		wantBuild string
		wantRest  []report.Row
	}{
		{"whole seconds", true, results.Session{Build: results.Build{Status: "ok", Seconds: 41}}, "build (41 s)", nil},
		{"a fraction", true, results.Session{Build: results.Build{Status: "ok", Seconds: 0.25}}, "build (0.25 s)", nil},
		{"no time", true, results.Session{Build: results.Build{Status: "ok"}}, "build", nil},
		{"flags and a one-token workload", true, results.Session{Profiler: []string{"--kernel-trace", "--stats"}, Shape: results.Shape{Generate: 1}}, "build", []report.Row{flags, work}},
		{"no session", false, results.Session{Profiler: []string{"--kernel-trace"}, Shape: results.Shape{Generate: 1}}, "build", nil},
	} {
		f := &folder{hasSession: tc.has, session: tc.s}
		build, rest := f.sessionMethod()
		if build != (report.Row{Label: tc.wantBuild, Value: cmd}) {
			t.Errorf("%s: build row %+v, want %q", tc.name, build, tc.wantBuild)
		}
		if diff := cmp.Diff(tc.wantRest, rest); diff != "" {
			t.Errorf("%s: rows (-want +got):\n%s", tc.name, diff)
		}
	}
}

// A host that knows neither its ROCm nor its GPU, and says why, is still read as the
// runner's facts (a table of unknowns with their reasons), not key by key.
func TestReadHostOfAnUnknownROCm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	info := hostinfo.Info{ROCm: hostinfo.Fact{Reason: "no /opt/rocm/.info/version"}, GPU: hostinfo.Fact{Reason: "rocminfo: not found"}}
	writeJSON(t, filepath.Join(dir, "hostinfo.json"), info)
	f := &folder{dir: dir}
	if err := f.readHost(); err != nil {
		t.Fatal(err)
	}
	var want []report.Row
	for _, r := range info.Table() {
		want = append(want, report.Row{Label: r.Name, Value: r.Value})
	}
	if diff := cmp.Diff(want, f.env); diff != "" || !f.hasHost {
		t.Errorf("host facts (-want +got):\n%s", diff)
	}
}

// With no epic configured (0), nothing is written for one.
func TestPublishWithoutAnEpic(t *testing.T) {
	t.Parallel()
	_, sum, out := dryProfile(t, profile{date: "2026-09-30"}, false, func(o *Options) { o.Config.Epic = 0 })
	if want := (Outcome{Action: "skipped", Detail: "no epic issue is configured"}); sum.Epic != want {
		t.Errorf("epic %+v, want %+v", sum.Epic, want)
	}
	wantNotWritten(t, out, DryEpic)
}

// A byte count of 0 is shown as it is, not as 0 GiB.
func TestReadHostZeroBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hostinfo.json"), `{"gpu": "Radeon", "vram_bytes": 0}`)
	f := &folder{dir: dir}
	if err := f.readHost(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.env, report.Row{Label: "GPU memory", Value: "0"}) {
		t.Errorf("environment %v, want GPU memory 0", f.env)
	}
}

// An open regression issue whose body a maintainer rewrote (no nights table left) is
// told once that the model is back inside its band, as any other.
func TestPublishBaselineRecoveryOnAHandEditedIssue(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	out := t.TempDir()
	publishNight := dryNights(t, tg, out)
	publishNight(night{date: "2026-10-20", llama: "35.41"})
	issue := filepath.Join(out, "regression-"+llama+".md")
	writeFile(t, issue, "Triaged: the drop comes from the driver update, see the epic.\n\n"+report.RegressionMarker("rocm_strixhalo-gfx1151", llama)+"\n")
	sum := publishNight(night{date: "2026-10-21", llama: "39.31"})
	if body := readFile(t, issue); len(sum.Regressions) != 1 || !strings.Contains(body, "On 2026-10-21 Meta-Llama-3.1-8B-Instruct-4bit was back inside its noise band") {
		t.Errorf("recovery %+v:\n%s", sum.Regressions, body)
	}
}

// A night published after later ones (a rerun of its results) moves "first seen" back
// to it when it shows the regression too.
func TestPublishBaselineFirstSeenFromAnEarlierNight(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	out := t.TempDir()
	publishNight := dryNights(t, tg, out)
	issue := filepath.Join(out, "regression-"+llama+".md")
	publishNight(night{date: "2026-10-20", llama: "35.41"})
	publishNight(night{date: "2026-10-21", llama: "35.60"})
	if body := readFile(t, issue); !strings.Contains(body, "First seen 2026-10-20; still there on 2026-10-21.") {
		t.Fatalf("after two nights:\n%s", body)
	}
	publishNight(night{date: "2026-10-19", llama: "35.50"})
	if body := readFile(t, issue); !strings.Contains(body, "First seen 2026-10-19;") {
		t.Errorf("after the earlier night:\n%s", body)
	}
}

// A commit that was not pushed shows as a step only when git said why.
func TestStepsOfACommitNotPushed(t *testing.T) {
	t.Parallel()
	for _, gitErr := range []string{"pushing perfbot/rocm-profile: rejected", ""} {
		p := &ProfilePlan{o: Options{Target: Target{Branch: "perfbot/rocm-profile"}}}
		steps, _ := p.steps(&Applied{Git: Git{Error: gitErr}})
		var commit []report.Step
		for _, s := range steps {
			if s.Name == "commit" {
				commit = append(commit, s)
			}
		}
		var want []report.Step
		if gitErr != "" {
			want = []report.Step{{Name: "commit", Outcome: "not pushed", Error: gitErr}}
		}
		if diff := cmp.Diff(want, commit); diff != "" {
			t.Errorf("git error %q: commit steps (-want +got):\n%s", gitErr, diff)
		}
	}
}

// In token mode there is no check run and, from the schedule or a dispatch, no
// trigger or status comment, nor anyone who asked: none is touched or read (the stub
// fails on any call it was not told of).
func TestPublishWithoutCheckRunOrTriggerComment(t *testing.T) {
	t.Parallel()
	tg, h, c := onGitHub(t)
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("POST", pullsPath, h.createPR())
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
	h.s.Expect("POST", epicPath, h.createEpic())
	o := ghOptions(tg, layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed}), c, 0)
	o.CheckRunID, o.TriggerCommentID = 0, 0
	o.Requester, o.TriggerCommentURL = "", ""
	sum, err := Publish(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Notes) > 0 {
		t.Errorf("notes %q", sum.Notes)
	}
	if want := (Outcome{Action: "skipped", Detail: "no status comment id was given"}); sum.Status != want {
		t.Errorf("status %+v, want %+v", sum.Status, want)
	}
	if want := (Outcome{Action: "skipped", Detail: "no check run (token mode)"}); sum.CheckRun != want {
		t.Errorf("check run %+v, want %+v", sum.CheckRun, want)
	}
	if want := (Outcome{Action: "skipped", Detail: "no trigger comment id was given"}); sum.Reaction != want {
		t.Errorf("reaction %+v, want %+v", sum.Reaction, want)
	}
}

// With no tracking issue (no epic configured, none given) the nightly writes no
// tracking comment.
func TestPublishBaselineWithoutATrackingIssue(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	out := t.TempDir()
	cfg := testConfig()
	cfg.Epic = 0
	sum, err := PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: layNight(t, tg.base, night{date: "2026-10-20", llama: "39.31"}), RepoDir: tg.checkout, Config: cfg, Sink: ToDir(out)}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Outcome{Action: "skipped", Detail: "no tracking issue: set epic: in the configuration or pass --issue"}); sum.Tracking != want {
		t.Errorf("tracking %+v, want %+v", sum.Tracking, want)
	}
	wantNotWritten(t, out, DryTracking)
}

// The nightly's step summary is its pull request body when the commit was pushed, and
// a list of the errors when publishing failed; a dry run also leaves its summary as
// summary.json, and a run on GitHub leaves none.
func TestPublishBaselineStepSummary(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	out := t.TempDir()
	o := BaselineOptions{Target: Target{ResultsDir: layNight(t, tg.base, night{date: "2026-10-20", llama: "39.31"}), RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}}
	sum, err := PublishBaseline(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// The dry run's pull request file is the title as a heading, then the body.
	if pr := readFile(t, filepath.Join(out, DryBaselinePR)); !sum.Git.Pushed || !strings.HasPrefix(sum.StepSummary, "<!-- perfbot:rocm-baseline -->\n") || !strings.HasSuffix(pr, "\n"+sum.StepSummary) {
		t.Errorf("pushed %t; step summary\n%s\nwant the pull request body\n%s", sum.Git.Pushed, sum.StepSummary, readFile(t, filepath.Join(out, DryBaselinePR)))
	}
	var saved BaselineSummary
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, DrySummary))), &saved); err != nil {
		t.Fatal(err)
	}
	sum.StepSummary = "" // not part of summary.json
	if diff := cmp.Diff(sum, saved); diff != "" {
		t.Errorf("summary.json (-returned +saved):\n%s", diff)
	}
}

// A concurrent push to the bot branch between our look and our push: the lease
// catches it, publish looks again and wins without losing the other commit unseen.
func TestPublishPushRace(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	// The remote's pre-receive hook moves the bot branch once, as a second pusher
	// would, before git updates the ref under its lease.
	hook := filepath.Join(tg.bare, "hooks", "pre-receive")
	writeFile(t, hook, fmt.Sprintf(`#!/bin/sh
if [ ! -e "$GIT_DIR/raced" ]; then
  touch "$GIT_DIR/raced"
  env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git update-ref refs/heads/%s %s
fi
`, botBranch, tg.base))
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	res := layResults(t, tg.base, profile{date: "2026-09-30"})
	sum, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(t.TempDir())}})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tg.bare, "raced")); err != nil {
		t.Fatal("the race was not staged: the hook did not run")
	}
	if sum.Git.Retries != 1 || !sum.Git.Pushed || sum.Git.Action != gitpub.ActionUpdated {
		t.Errorf("git = %+v, want one lost race, then an update over the other pusher's ref", sum.Git)
	}
	if got := tg.branch(t); got != sum.Git.Commit {
		t.Errorf("the remote branch holds %s, want %s", got, sum.Git.Commit)
	}
}
