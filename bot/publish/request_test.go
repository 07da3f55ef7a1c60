package publish

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/runner/patch"
)

// pullFiles is what the bot pull request of branch changes, as GitHub shows it: the
// three-dot diff against main in the real remote, not the bot commit alone.
func pullFiles(t *testing.T, tg *target, branch string) []string {
	t.Helper()
	return strings.Split(gitT(t, tg.bare, "diff", "--name-only", "main..."+branch), "\n")
}

// onlyPerfbots checks that files are the results folder, the page and its chart, and
// (when patched) the two gate files: nothing of a requesting pull request.
func onlyPerfbots(t *testing.T, what string, files []string, commit string, patched bool) {
	t.Helper()
	folder := "benchmarks/rocm_profiles/gfx1151_" + commit[:8] + "/"
	var gates int
	for _, f := range files {
		switch {
		case strings.HasPrefix(f, folder), strings.HasPrefix(f, "docs/benchmark_results/rocm-decode-profile-gfx1151-"):
		case f == patch.RustPath || f == patch.CheckerPath:
			gates++
		default:
			t.Errorf("%s: the pull request changes %s, which is not perfbot's", what, f)
		}
	}
	if patched && gates != 2 || !patched && gates != 0 {
		t.Errorf("%s: %d gate files in the pull request, want patched=%t:\n%s", what, gates, patched, strings.Join(files, "\n"))
	}
}

// A profile requested on a pull request whose head is not on main: the results commit
// sits on main's head and the pull request holds only perfbot's files (not the
// requesting pull request's code), its title and body say the commit is not on main,
// the gate patch is shown and not committed, and the report is posted on the
// requesting pull request once, edited in place by a rerun. A profile of main asked on
// another pull request gets its own branch and pull request, with the patch committed;
// neither replaces the other.
func TestPublishPerRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tg := w.tg
	ctx := context.Background()
	headA, askA, resA := w.asked(t, 1900, "feature-a")

	sum, err := Publish(ctx, w.options(resA, 1900, askA))
	if err != nil {
		t.Fatalf("publish on #1900: %v", err)
	}
	branchA := "perfbot/rocm-profile-pr-1900"
	if sum.Git.Branch != branchA || sum.OnMain || sum.Git.Base != tg.base || sum.Trigger != "pull request #1900" || sum.Requester != "maintainer" {
		t.Fatalf("branch %q on main %t base %s trigger %q requester %q", sum.Git.Branch, sum.OnMain, sum.Git.Base, sum.Trigger, sum.Requester)
	}
	if got := gitT(t, tg.bare, "rev-parse", branchA+"^"); got != tg.base {
		t.Errorf("the bot commit's parent is %s, want main's head %s", got, tg.base)
	}
	onlyPerfbots(t, "off main", pullFiles(t, tg, branchA), headA, false)
	if sum.Patch == nil || len(sum.Patch.Changed) != 0 || len(sum.Patch.Pending) != 2 || !strings.Contains(sum.Patch.Withheld, "not yet on main") {
		t.Errorf("patch %+v: want it withheld", sum.Patch)
	}
	// The page says why the patch is not in the commit, and where it is shown.
	var pages []string
	for _, f := range pullFiles(t, tg, branchA) {
		if strings.HasSuffix(f, ".md") {
			pages = append(pages, f)
		}
	}
	if len(pages) != 1 || sum.Patch == nil {
		t.Fatalf("report pages %q, patch %+v: want one page and the withheld patch", pages, sum.Patch)
	}
	wantIn(t, tg.file(t, sum.Git.Commit, pages[0]), "The patch was not applied: "+report.Text(sum.Patch.Withheld+"; the pull request shows it"))
	pulls := botPulls(w)
	if len(pulls) != 1 {
		t.Fatalf("bot pull requests %v", pulls)
	}
	prA := pulls[branchA]
	wantTitle := "measured at " + headA[:8] + ", the head of #1900, not yet on main"
	if !strings.Contains(prA.Title, wantTitle) {
		t.Errorf("title %q lacks %q", prA.Title, wantTitle)
	}
	wantIn(t, prA.Body, "not yet on `main`", "requested in #1900 by @maintainer", "issuecomment-", "**The patch is not committed:**",
		"diff --git a/"+patch.RustPath, "+", "gpu_backend_available")
	// A withheld patch is shown, not a reason to mark the pull request a draft.
	wantOut(t, prA.Body, "[!WARNING]", "**Draft:**")
	if strings.Contains(prA.Body, "applies the outcome of the gather_mm numeric tests") {
		t.Errorf("the body says the patch is applied:\n%s", prA.Body)
	}
	reports := markedComments(w, 1900)
	if len(reports) != 1 {
		t.Fatalf("%d reports on #1900, want 1", len(reports))
	}
	wantIn(t, reports[0].Body, "pull/"+strconv.Itoa(prA.Number), "diff --git a/"+patch.RustPath, "holds only perfbot's files")
	if sum.Request.Action != "created" {
		t.Errorf("request comment %+v", sum.Request)
	}

	// A rerun of the same request: the same branch, pull request and comment, unchanged.
	sum, err = Publish(ctx, w.options(resA, 1900, askA))
	if err != nil {
		t.Fatalf("rerun on #1900: %v", err)
	}
	if sum.Git.Action != "unchanged" || sum.PR.Action != "unchanged" || sum.Request.Action != "unchanged" {
		t.Errorf("rerun: git %s pr %s request %s, want all unchanged", sum.Git.Action, sum.PR.Action, sum.Request.Action)
	}
	if n := len(markedComments(w, 1900)); n != 1 || len(botPulls(w)) != 1 {
		t.Errorf("after the rerun: %d reports on #1900, pull requests %v", n, botPulls(w))
	}

	// A profile of main, asked on another pull request: its own branch and pull
	// request, the patch committed, no report on that pull request.
	w.addPull(t, 1950, "feature-b-not-pushed-yet")
	askB := w.ask(t, 1950)
	resB := layPrepared(t, tg, profile{date: "2026-10-02", tests: allPassed})
	sum, err = Publish(ctx, w.options(resB, 1950, askB))
	if err != nil {
		t.Fatalf("publish on #1950: %v", err)
	}
	branchB := "perfbot/rocm-profile-pr-1950"
	if sum.Git.Branch != branchB || !sum.OnMain || sum.Request.Action != "" {
		t.Errorf("branch %q on main %t request %+v", sum.Git.Branch, sum.OnMain, sum.Request)
	}
	onlyPerfbots(t, "on main", pullFiles(t, tg, branchB), tg.base, true)
	if !slices.Equal(sum.Patch.Changed, []string{patch.RustPath, patch.CheckerPath}) || sum.Patch.Withheld != "" {
		t.Errorf("patch %+v: want it committed", sum.Patch)
	}
	pulls = botPulls(w)
	if len(pulls) != 2 || pulls[branchA].Number == pulls[branchB].Number || strings.Contains(pulls[branchB].Title, "not yet on") {
		t.Errorf("bot pull requests %+v: want one per request", pulls)
	}
	if n := len(markedComments(w, 1950)); n != 0 {
		t.Errorf("%d reports on #1950, whose profiled commit is on main", n)
	}
	if got := gitT(t, tg.bare, "rev-parse", branchA); got == "" {
		t.Errorf("the branch of #1900 is gone")
	}
}

// Stale bot branches: the next publish deletes the branch of a closed request and
// keeps an open one's and the standing perfbot/rocm-profile from before per-request
// branches (which blocks none of the new names); with branches.delete_stale false it
// keeps them all.
func TestPublishDeletesStaleBranches(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tg := w.tg
	ctx := context.Background()
	// The branch every profile used to force-push.
	gitT(t, tg.bare, "branch", botBranch, tg.base)
	res := layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed})
	for _, n := range []int{1900, 1950} {
		w.addPull(t, n, "feature-"+strconv.Itoa(n))
		if _, err := Publish(ctx, w.options(res, n, w.ask(t, n))); err != nil {
			t.Fatalf("publish on #%d: %v", n, err)
		}
	}
	w.close(t, 1900)
	heads := func() []string {
		return strings.Fields(gitT(t, tg.bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/perfbot/"))
	}
	all := []string{botBranch, botBranch + "-issue-" + strconv.Itoa(epicIssue), botBranch + "-pr-1900", botBranch + "-pr-1950"}

	// Turned off: the closed request's branch stays.
	o := w.options(res, epicIssue, 0)
	o.Config.Branches.DeleteStale = false
	sum, err := Publish(ctx, o)
	if err != nil {
		t.Fatalf("publish with delete_stale false: %v", err)
	}
	if got := heads(); !slices.Equal(got, all) || len(sum.Stale) != 0 {
		t.Errorf("with delete_stale false: branches %v, stale %+v; want all kept", got, sum.Stale)
	}

	// On: the next publish deletes it, and only it.
	sum, err = Publish(ctx, w.options(res, epicIssue, 0))
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	want := slices.DeleteFunc(slices.Clone(all), func(b string) bool { return b == botBranch+"-pr-1900" })
	if got := heads(); !slices.Equal(got, want) {
		t.Errorf("branches %v, want %v", got, want)
	}
	if len(sum.Stale) != 1 || sum.Stale[0].Action != "deleted" || sum.Stale[0].Detail != botBranch+"-pr-1900" {
		t.Errorf("stale %+v", sum.Stale)
	}
	if !strings.Contains(sum.StepSummary, "deleted "+botBranch+"-pr-1900") {
		t.Errorf("the step summary does not say the branch was deleted:\n%s", sum.StepSummary)
	}
}

// pulls are the open pull requests the bot opened, by head branch.
func botPulls(w *world) map[string]fakegithub.Issue {
	out := map[string]fakegithub.Issue{}
	for _, is := range w.s.Issues(testRepo.String()) {
		if is.PR != nil && is.User == botLogin {
			out[is.PR.Head] = is
		}
	}
	return out
}

// markedComments are the reports perfbot posted on n.
func markedComments(w *world, n int) []fakegithub.Comment {
	var out []fakegithub.Comment
	for _, c := range w.s.Comments(n) {
		if strings.Contains(c.Body, RequestMarker) {
			out = append(out, c)
		}
	}
	return out
}

// A profiled commit on the branch the pull request merges into, which moved on since:
// the results commit sits on the branch's head; the patch is committed when the branch
// left the two patched files as they were, and withheld (shown, not committed) when it
// changed one of them, whose newer content the patch would overwrite.
func TestPublishOnAMovedBranch(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	ctx := context.Background()
	// Two branches ahead of the profiled commit (main itself must not move).
	advance := func(branch, file, body string) string {
		seed := filepath.Join(t.TempDir(), "seed")
		gitT(t, filepath.Dir(seed), "clone", "--quiet", tg.bare, seed)
		writeFile(t, filepath.Join(seed, filepath.FromSlash(file)), body)
		gitT(t, seed, "add", "-A")
		gitT(t, seed, "commit", "--quiet", "-m", "move on")
		gitT(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch)
		return gitT(t, seed, "rev-parse", "HEAD")
	}
	quiet := advance("quiet", "docs/notes.md", "notes\n")
	busy := advance("busy", patch.RustPath, readFile(t, filepath.Join(tg.checkout, filepath.FromSlash(patch.RustPath)))+"// a newer test\n")
	res := layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed})

	for _, c := range []struct {
		branch, head string
		withheld     bool
	}{{"quiet", quiet, false}, {"busy", busy, true}} {
		o := Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(t.TempDir()), BaseBranch: c.branch, Branch: botBranch + "-" + c.branch}}
		sum, err := Publish(ctx, o)
		if err != nil {
			t.Fatalf("%s: %v", c.branch, err)
		}
		if !sum.OnMain || sum.Git.Base != c.head || gitT(t, tg.bare, "rev-parse", sum.Git.Commit+"^") != c.head {
			t.Errorf("%s: on the branch %t, base %s; want the results on its head %s", c.branch, sum.OnMain, sum.Git.Base, c.head)
		}
		files := strings.Split(gitT(t, tg.bare, "diff", "--name-only", c.branch+"..."+sum.Git.Commit), "\n")
		onlyPerfbots(t, c.branch, files, tg.base, !c.withheld)
		switch {
		case c.withheld && (!strings.Contains(sum.Patch.Withheld, "busy changed "+patch.RustPath) || len(sum.Patch.Changed) != 0):
			t.Errorf("%s: patch %+v, want it withheld for the changed test file", c.branch, sum.Patch)
		case !c.withheld && (sum.Patch.Withheld != "" || len(sum.Patch.Changed) != 2):
			t.Errorf("%s: patch %+v, want it committed", c.branch, sum.Patch)
		}
		if got := tg.file(t, sum.Git.Commit, patch.RustPath); c.withheld && !strings.HasSuffix(got, "// a newer test") {
			t.Errorf("%s: the branch's newer test file was overwritten", c.branch)
		}
	}
}

// A profile of a pull request's head, published from a workflow run: the results pull
// request links the run's traces artifact by URL (not "the workflow artifacts"), and
// the check run, the step summary and the status comment say, as the title does, that
// the commit is not on main and the patch is not committed. Without the artifact the
// body links the run whose artifacts hold the traces.
func TestPublishOffMainLinks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	head, ask, res := w.asked(t, 1900, "feature-a")
	cr, err := w.c.CreateCheckRun(ctx, testRepo, gh.CheckRunSpec{Name: "perfbot", HeadSHA: head, ExternalID: "perfbot-request-7", Title: "Queued", Summary: "queued"})
	if err != nil {
		t.Fatal(err)
	}
	status, err := w.c.CreateComment(ctx, testRepo, 1900, "<!-- perfbot:status -->\n**/profile rocm**: in progress.\n")
	if err != nil {
		t.Fatal(err)
	}
	run := "https://github.com/lablup/mlxcel/actions/runs/77"
	traces := run + "/artifacts/9"
	o := w.options(res, 1900, ask)
	o.CheckRunID, o.StatusCommentID, o.Command = cr.ID, status.ID, "/profile rocm"
	o.RunLinks = []report.Link{{Text: RunLinkText, URL: run}, {Text: TracesLinkText, URL: traces}}
	sum, err := Publish(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	pr := botPulls(w)["perfbot/rocm-profile-pr-1900"]
	wantIn(t, pr.Body, "the full traces are in the [traces artifact]("+traces+")")
	if strings.Contains(pr.Body, "in the workflow artifacts") {
		t.Errorf("the body still points at the workflow artifacts:\n%s", pr.Body)
	}
	offMain := "**Measured at `" + head[:8] + "`, the head of #1900, not yet on `main`**; the patch is not committed."
	wantIn(t, sum.StepSummary, offMain)
	var output string
	for _, c := range w.s.CheckRuns() {
		if c.ID == cr.ID {
			output = c.Summary
		}
	}
	wantIn(t, output, offMain, "traces artifact: "+traces)
	cm, ok := w.s.Comment(status.ID)
	if !ok {
		t.Fatal("the status comment is gone")
	}
	wantIn(t, cm.Body, "**/profile rocm**: done.", "Measured at "+head[:8]+", the head of #1900, not yet on main; the patch is not committed.")

	// The run without a traces artifact: the body links the run.
	o.RunLinks = o.RunLinks[:1]
	if _, err := Publish(ctx, o); err != nil {
		t.Fatal(err)
	}
	pr = botPulls(w)["perfbot/rocm-profile-pr-1900"]
	wantIn(t, pr.Body, "the full traces are among the artifacts of the [workflow run]("+run+")")
}

// The title's words for a commit off the default branch name the pull request only
// when a pull request's command asked for the profile; on the default branch there
// are none.
func TestOffMainLineNamesOnlyAPullRequest(t *testing.T) {
	p := &ProfilePlan{f: &folder{commit8: "81d6fe57"}, mainBranch: "main", mainHead: "203ca8c15d781d83f00eed3904cda836d58f7d15"}
	for _, c := range []struct {
		trigger gitpub.Trigger
		onMain  bool
		want    string
	}{
		{gitpub.Trigger{Kind: gitpub.TriggerPR, Number: 1900}, false, "measured at 81d6fe57, the head of #1900, not yet on main"},
		{gitpub.Trigger{Kind: gitpub.TriggerIssue, Number: 1814}, false, "measured at 81d6fe57, not yet on main"},
		{gitpub.Trigger{Kind: gitpub.TriggerNightly}, false, "measured at 81d6fe57, not yet on main"},
		{gitpub.Trigger{Kind: gitpub.TriggerPR, Number: 1900}, true, ""},
	} {
		p.trigger, p.onMain = c.trigger, c.onMain
		if got := p.offMainLine(); got != c.want {
			t.Errorf("%+v on main %v: %q, want %q", c.trigger, c.onMain, got, c.want)
		}
	}
}
