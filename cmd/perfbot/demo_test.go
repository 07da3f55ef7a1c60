package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/internal/golden"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

// The demo runs the whole flow from the binary alone and its outputs meet the
// component tests' expectations: the report's figures are the summaries', the patched
// tree passes the sample's own checker, the bot branch holds exactly the page, the
// results and the patch, the read-only user got a reply, and the epic comment carries
// the ranked order the demo prints.
func TestDemo(t *testing.T) {
	bin := buildPerfbot(t)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "demo", "--out", out, "--keep")
	cmd.Dir = t.TempDir() // not the repository: the demo needs nothing of it
	home := t.TempDir()
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + t.TempDir(), "LANG=C"}
	stdout, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("perfbot demo: %v\n%s\n%s", err, stdout, stderr)
	}
	log := string(stdout)
	checkDemoGolden(t, out)
	for _, want := range []string{
		"answered 202", "accepted: eyes on the command", "refused reader with a reply",
		"another GPU tenant", "the guard rejected the contended attempt", "step profile: verdict complete",
		"step publish: success", "finished: reactions eyes, rocket",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the demo's log lacks %q:\n%s", want, log)
		}
	}

	folders, _ := filepath.Glob(filepath.Join(out, "results", "gfx1151_*"))
	if len(folders) != 1 {
		t.Fatalf("results folders %v", folders)
	}
	folder := folders[0]
	sess, err := results.ReadSession(filepath.Join(folder, results.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.Runs) != 4 {
		t.Fatalf("%d runs, want the four models", len(sess.Runs))
	}
	o := readOutcome(t, folder)
	page, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkE2EPage(t, string(page), folder, sess, o)
	// The guard's evidence shows the planted tenant's rejection and the rerun.
	guardLog, err := os.ReadFile(filepath.Join(folder, "guard.log"))
	if err != nil || !strings.Contains(string(guardLog), "REJECTED") {
		t.Errorf("the guard log has no rejected attempt (%v)", err)
	}

	// The bot branch: one commit on main's head (the profiled commit is #1900's head,
	// not on main), and the pull request's full diff against main (three dots, as
	// GitHub shows it) holds exactly the page, its chart and the results folder:
	// nothing of #1900, and not the gate patch, whose tests ran on #1900's code.
	bare := filepath.Join(out, "work", "remote", "mlxcel.git")
	gitOut := func(args ...string) string {
		t.Helper()
		c := exec.Command("git", append([]string{"--git-dir", bare}, args...)...)
		c.Env = cmd.Env
		b, err := c.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(b))
	}
	const botBranch = "perfbot/rocm-profile-pr-1900"
	pinned := sess.Commit
	if parent, main := gitOut("rev-parse", botBranch+"^"), gitOut("rev-parse", "main"); parent != main || parent == pinned {
		t.Errorf("the bot commit's parent is %s, want main's head %s (not the profiled %s)", parent, main, pinned)
	}
	got := strings.Split(gitOut("diff", "--name-only", "main..."+botBranch), "\n")
	entries, err := os.ReadDir(folder)
	if err != nil {
		t.Fatal(err)
	}
	pageName := strings.TrimPrefix(regexp.MustCompile(`report page \((\S+)\)`).FindString(log), "report page (")
	pageName = strings.TrimSuffix(pageName, ")")
	want := []string{pageName, strings.TrimSuffix(pageName, ".md") + ".svg"}
	for _, e := range entries {
		// The prepared patch is shown in the pull request, not committed.
		if e.Name() == patch.PreparedFile {
			continue
		}
		want = append(want, "benchmarks/rocm_profiles/"+filepath.Base(folder)+"/"+e.Name())
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files of the bot pull request, main...%s (-want +got):\n%s", botBranch, diff)
	}

	// The patch the bot pull request shows applies to the profiled commit, and the
	// patched tree passes the sample repository's own checker.
	botPR, err := os.ReadFile(filepath.Join(out, "github", "pull-1901.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)The patch that would apply to the profiled commit:\n\n```text\n(.*?\n)```").FindSubmatch(botPR)
	if m == nil {
		t.Fatalf("the bot pull request shows no patch:\n%s", botPR)
	}
	tree := filepath.Join(t.TempDir(), "tree")
	if b, err := exec.Command("git", "clone", "--quiet", bare, tree).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, b)
	}
	for _, args := range [][]string{{"checkout", "--quiet", "--detach", pinned}, {"apply", "--check", "-"}, {"apply", "-"}} {
		c := exec.Command("git", args...)
		c.Dir, c.Stdin = tree, bytes.NewReader(m[1])
		if b, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	check := exec.Command("python3", "scripts/ci/check_kernel_port_dispatch.py")
	check.Dir = tree
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("the sample's checker fails on the patched tree: %v\n%s", err, b)
	}
	if pull := string(botPR); !strings.Contains(pull, "not yet on main") || !strings.Contains(pull, "requested in #1900 by @maintainer") {
		t.Errorf("the bot pull request does not say its commit is not on main, or who asked:\n%s", pull)
	}

	// The read-only user's reply, and the ranking on the epic.
	pull, err := os.ReadFile(filepath.Join(out, "github", "pull-1900.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile("(?s)comment \\d+ by perfbot\\[bot\\].*`reader` has the `read` permission").Match(pull) {
		t.Errorf("no reply to the read-only user on #1900:\n%s", pull)
	}
	// #1900's head is not on main: its reviewers get the report on #1900 itself.
	if n := strings.Count(string(pull), publish.RequestMarker); n != 1 || !strings.Contains(string(pull), "pull/1901") {
		t.Errorf("%d reports on #1900 (want one, linking the results pull request #1901):\n%s", n, pull)
	}
	epic, err := os.ReadFile(filepath.Join(out, "github", "issue-1814.md"))
	if err != nil {
		t.Fatal(err)
	}
	var printed []string
	for _, m := range regexp.MustCompile(`(?m)^  \d+\. (#\d+) `).FindAllStringSubmatch(log, -1) {
		printed = append(printed, m[1])
	}
	if len(printed) != 5 || !strings.Contains(string(epic), "Ranked port order: **"+strings.Join(printed, ", ")+"**") {
		t.Errorf("the epic comment does not carry the printed order %v:\n%s", printed, epic)
	}
}

// checkDemoGolden compares what the demo published (the report page, the GitHub side as
// Markdown, the step summaries, the committed results' figures and the bot commit's
// file list) with testdata/demo, after masking what changes from run to run: the bot
// commit's id, today's date, the guard's waits, sample counts and idle resets, the build's and the tests' durations, and comment and check run ids.
// A change of any figure, word or published file shows as a difference.
func checkDemoGolden(t *testing.T, out string) {
	t.Helper()
	bare := filepath.Join(out, "work", "remote", "mlxcel.git")
	refs, err := exec.Command("git", "--git-dir", bare, "for-each-ref", "--format=%(objectname)", "refs/heads/perfbot/").Output()
	if err != nil {
		t.Fatalf("listing the bot branches: %v", err)
	}
	botCommits := strings.Fields(string(refs))
	if len(botCommits) == 0 {
		t.Fatal("the demo left no bot branch")
	}
	today := regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)
	// A guard row: section | waited for idle | attempts | rejected | samples | contended
	// samples | idle resets | outcome. The wait, the sample counts and the resets depend
	// on the machine's load, and so does which run the planted tenant meets: it arrives
	// when the demo reads the first profiled attempt's log line, and on a busy machine
	// that attempt may have ended by then, so the next run is the one rejected. The
	// golden copy masks the attempts and rejections; checkGuardRows asserts them.
	guardRow := regexp.MustCompile(`(?m)^(\| ` + "`" + `[^` + "`" + `]+` + "`" + ` \| )[^|]+ \| \d+ \| \d+ \| \d+ \| \d+ \| [^|]+\|`)
	checkGuardRows(t, filepath.Join(out, "report.md"))
	durations := regexp.MustCompile(`"duration_ns": \d+`)
	// The build's time shows once it takes a measurable part of a second.
	buildTime := regexp.MustCompile(`build \([\d.]+ s\)`)
	// Comment and check run ids are GitHub's to give: the order of concurrent writes
	// (a reply and a status comment) decides them.
	// So are the workflow run's: the fake numbers runs from the counter its comments
	// use.
	ids := regexp.MustCompile(`(comment |check run |perfbot:reply |issuecomment-|/actions/runs/)\d+`)
	// The demo's host root reads the machine's own /proc (the guard watches real
	// processes) and HOME's toolchains: the kernel, the host memory and rustc are the
	// machine's facts, not the demo's, and differ from one machine to the next.
	machineRow := regexp.MustCompile(`(?m)^\| (host memory|kernel|rustc) \| .* \|$`)
	machineJSON := regexp.MustCompile(`"(host_memory|kernel|rustc)": \{\n    "(value|unknown)": "[^"\n]*"`)
	machineMem := regexp.MustCompile(`"host_memory_bytes": \d+`)
	mask := func(s string) string {
		for _, c := range botCommits {
			s = strings.ReplaceAll(s, c, "<bot-commit>")
			s = strings.ReplaceAll(s, c[:8], "<bot-commit8>")
		}
		s = today.ReplaceAllString(s, "<date>")
		s = guardRow.ReplaceAllString(s, "${1}<wait> | <attempts> | <rejected> | <n> | <n> | <resets> |")
		s = buildTime.ReplaceAllString(s, "build")
		s = ids.ReplaceAllString(s, "${1}<id>")
		s = machineRow.ReplaceAllString(s, "| $1 | <this machine's> |")
		s = machineJSON.ReplaceAllString(s, `"$1": {`+"\n"+`    "<known or not>": "<this machine's>"`)
		s = machineMem.ReplaceAllString(s, `"host_memory_bytes": <n>`)
		return durations.ReplaceAllString(s, `"duration_ns": <n>`)
	}
	var files []string
	for _, pat := range []string{"report.md", "github/*.md", "actions/*.summary.md", "results/*/*_summary.json", "results/*/*_decode_kernels.csv", "results/*/gemm_*.json", "results/*/hostinfo.json"} {
		m, _ := filepath.Glob(filepath.Join(out, pat))
		files = append(files, m...)
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(out, f)
		text := mask(string(body))
		if strings.HasPrefix(filepath.ToSlash(rel), "github/") {
			text = sortSections(text)
		}
		fmt.Fprintf(&b, "==== %s\n%s\n", mask(filepath.ToSlash(rel)), text)
	}
	names, err := exec.Command("git", "--git-dir", bare, "diff", "--name-only", "main..."+botCommits[0]).Output()
	if err != nil {
		t.Fatalf("the bot pull request's files: %v", err)
	}
	fmt.Fprintf(&b, "==== files of the bot pull request (main...bot branch)\n%s", mask(string(names)))
	golden.Check(t, "testdata/demo.golden", b.String())
}

// sortSections puts the "## " sections of a Markdown file (one comment each) in a
// fixed order, keeping what comes before the first: with their ids masked, the order
// GitHub numbered concurrent writes in is no longer part of the comparison.
func sortSections(s string) string {
	parts := strings.Split(s, "\n## ")
	rest := parts[1:]
	slices.Sort(rest)
	return strings.Join(append(parts[:1], rest...), "\n## ")
}

// checkGuardRows asserts what the golden copy masks in the report's guard table: the
// planted tenant had at least one attempt rejected, and every run was rerun until it
// ended clean (attempts = rejected + 1).
func checkGuardRows(t *testing.T, report string) {
	t.Helper()
	body, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| ` + "`" + `([^` + "`" + `]+)` + "`" + ` \| [^|]+ \| (\d+) \| (\d+) \| \d+ \| \d+ \| [^|]+\| ([^|]+) \|$`)
	rows := row.FindAllStringSubmatch(string(body), -1)
	if len(rows) == 0 {
		t.Fatal("the report has no guard table rows")
	}
	var rejectedRuns []string
	for _, r := range rows {
		attempts, _ := strconv.Atoi(r[2])
		rejected, _ := strconv.Atoi(r[3])
		if attempts != rejected+1 || strings.TrimSpace(r[4]) != "clean, exit 0" {
			t.Errorf("guard row %s: %d attempts, %d rejected, %q; want one clean attempt after the rejected ones", r[1], attempts, rejected, r[4])
		}
		if rejected > 0 {
			rejectedRuns = append(rejectedRuns, fmt.Sprintf("%s (%d)", r[1], rejected))
		}
	}
	// The tenant arrives and leaves as the demo reads the log, which a busy machine
	// delays: it may meet a later run than the first profiled one, and more than one
	// run before it is gone. At least one run met it, and every run ended clean.
	if len(rejectedRuns) == 0 {
		t.Errorf("no run had an attempt rejected: the guard did not see the planted tenant")
	}
}
