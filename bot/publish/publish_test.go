package publish

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/runner/patch"
)

func ghOptions(tg *target, res string, c *gh.Client, status int64) Options {
	return Options{
		Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToGitHub(c, testRepo), Repo: testRepo,
			// The branch is the standing one these tests follow (per-request names:
			// request_test.go).
			BaseBranch: "main", Branch: botBranch},
		Marks: Marks{CheckRunID: checkRunID, TriggerCommentID: triggerID, StatusCommentID: status}, Issue: 12,
		// What the request is, given, so the stub sees only the writes.
		IssueKind: gitpub.TriggerIssue, Requester: "maintainer", TriggerCommentURL: "https://github.com/lablup/mlxcel/issues/12#issuecomment-4242",
		Now: func() time.Time { return testNow },
	}
}

// The life of the bot branch: a first publish creates everything, the same results
// again change nothing on GitHub or the remote, and a newer profile updates the pull
// request and the epic comment while the comment keeps the earlier ranking.
func TestPublishLifecycle(t *testing.T) {
	t.Parallel()
	tg, h, c := onGitHub(t)
	first := layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed, trace: true})
	// publish publishes res, finishing the status comment status, and checks what
	// each write did.
	publish := func(name, res string, status int64, want map[string]string) Summary {
		t.Helper()
		sum, err := Publish(context.Background(), ghOptions(tg, res, c, status))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantActions(t, name, sum, want)
		return sum
	}

	// 1. First publish.
	h.addStatus(501)
	h.s.Expect("GET", pullsPath+"?state=open&head=lablup:"+botBranch, h.listPRs())
	h.s.Expect("POST", pullsPath, h.createPR()).JSONBody(map[string]any{"head": botBranch, "base": "main", "draft": fakegithub.Absent})
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
	h.s.Expect("POST", epicPath, h.createEpic())
	h.expectFinish(501, true, "success", "rocket")
	sum := publish("first publish", first, 501, map[string]string{"git": "created", "pr": "created", "epic": "created", "status": "updated", "check": "completed", "reaction": "reacted"})
	commit1 := tg.branch(t)
	if commit1 == "" || commit1 != sum.Git.Commit || !sum.Git.Pushed {
		t.Fatalf("the remote branch holds %q, summary says %+v", commit1, sum.Git)
	}
	if got := gitT(t, tg.bare, "rev-parse", commit1+"^"); got != tg.base {
		t.Errorf("the bot commit's parent is %s, want the pinned base %s", got, tg.base)
	}
	// A pull request with nothing to make it a draft is not called one.
	if strings.Contains(sum.StepSummary, "draft") || !strings.Contains(sum.StepSummary, "; pull request: [") {
		t.Errorf("the step summary of a ready pull request:\n%s", sum.StepSummary)
	}
	files := treeFiles(t, tg.bare, commit1)
	page1 := "docs/benchmark_results/rocm-decode-profile-gfx1151-2026-09-30.md"
	folder := "benchmarks/rocm_profiles/gfx1151_" + tg.base[:8] + "/"
	for _, p := range []string{page1, folder + "guard.log", folder + "Qwen3-30B-A3B-4bit_greedy_summary.json",
		folder + "Meta-Llama-3.1-8B-Instruct-4bit_greedy_decode_kernels.csv", folder + "gemm_tests.json",
		patch.RustPath, patch.CheckerPath} {
		if !files[p] {
			t.Errorf("the commit lacks %s", p)
		}
	}
	for p := range files {
		if strings.HasSuffix(p, "_kernel_trace.csv") {
			t.Errorf("the commit holds a trace: %s", p)
		}
	}
	if !slices.Contains(sum.Skipped, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_kernel_trace.csv") {
		t.Errorf("the trace is not listed as skipped: %v", sum.Skipped)
	}
	if src := tg.file(t, commit1, patch.RustPath); strings.Count(src, patch.NewGate) != 3 || strings.Contains(src, "!crate::metal_is_available() && !crate::cuda_is_available()") {
		t.Errorf("the committed test file does not have the three new gates:\n%s", src)
	}
	committed := map[string]bool{}
	for p := range files {
		committed[p] = true
	}
	if err := report.Validate(tg.file(t, commit1, page1), committed, page1); err != nil {
		t.Errorf("the committed page: %v", err)
	}
	prBody := h.pr["body"].(string)
	blob := "https://github.com/lablup/mlxcel/blob/" + commit1 + "/"
	if err := report.Validate(prBody, committed, blob); err != nil {
		t.Errorf("the pull request body: %v", err)
	}
	for _, s := range []string{blob + page1, "requested in #12", "#2065, #2068, #2063, #2064, #2067", "Verification of the patched tree", report.PRMarker} {
		if !strings.Contains(prBody, s) {
			t.Errorf("the pull request body lacks %q", s)
		}
	}
	epic1 := h.epic[0]["body"].(string)
	if err := report.Validate(epic1, committed, blob); err != nil {
		t.Errorf("the epic comment: %v", err)
	}
	for _, s := range []string{report.EpicMarker, "This is the first ranking: there is no earlier one to compare with.", "https://github.com/lablup/mlxcel/pull/57"} {
		if !strings.Contains(epic1, s) {
			t.Errorf("the epic comment lacks %q:\n%s", s, epic1)
		}
	}
	status1 := h.statuses[501]["body"].(string)
	for _, s := range []string{"done.", "https://github.com/lablup/mlxcel/pull/57", blob + page1} {
		if !strings.Contains(status1, s) {
			t.Errorf("the status comment lacks %q:\n%s", s, status1)
		}
	}

	// 2. The same results again: nothing is pushed, created or edited.
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
	h.expectFinish(501, false, "success", "rocket")
	sum = publish("second publish", first, 501, map[string]string{"git": "unchanged", "pr": "unchanged", "epic": "unchanged", "status": "unchanged", "check": "completed", "reaction": "reacted"})
	if sum.Git.Pushed || tg.branch(t) != commit1 {
		t.Errorf("the second publish pushed: %+v", sum.Git)
	}
	for _, n := range sum.Notes {
		if strings.Contains(n, "opened earlier with draft") {
			t.Errorf("a note on the draft state of a pull request whose state is right: %q", n)
		}
	}

	// 3. A newer profile of Llama alone: the MoE port is no longer reached, so the
	// order changes; the pull request and the epic comment are edited in place.
	newer := layPrepared(t, tg, profile{date: "2026-10-04", runs: fixtureRuns[:1], tests: allPassed})
	h.addStatus(502)
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("PATCH", pullsPath+"/57", h.editPR())
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
	h.s.Expect("PATCH", commentsPath+fmt.Sprint(h.epic[0]["id"]), h.editComment())
	h.expectFinish(502, true, "success", "rocket")
	sum = publish("newer publish", newer, 502, map[string]string{"git": "updated", "pr": "updated", "epic": "updated", "status": "updated", "check": "completed", "reaction": "reacted"})
	commit2 := tg.branch(t)
	if got := gitT(t, tg.bare, "rev-list", "--count", tg.base+".."+commit2); got != "1" {
		t.Errorf("the branch has %s commits on the base, want 1 (replaced, not stacked)", got)
	}
	files = treeFiles(t, tg.bare, commit2)
	if files[page1] || !files["docs/benchmark_results/rocm-decode-profile-gfx1151-2026-10-04.md"] {
		t.Errorf("the newer commit does not replace the older page: %v", sortedKeys(files))
	}
	if len(h.epic) != 1 {
		t.Fatalf("the epic has %d bot comments, want 1", len(h.epic))
	}
	epic2 := h.epic[0]["body"].(string)
	hist, err := report.ParseHistory(epic2)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Date != "2026-10-04" || hist[1].Date != "2026-09-30" {
		t.Fatalf("history = %+v, want the newer and the first ranking", hist)
	}
	if hist[1].Report != blob+page1 || hist[1].PR != "https://github.com/lablup/mlxcel/pull/57" {
		t.Errorf("the first ranking's links were not kept: %+v", hist[1])
	}
	if slices.Equal(hist[0].Order, hist[1].Order) {
		t.Fatalf("the order did not change: %v", hist[0].Order)
	}
	for _, s := range []string{"moved down from place 1", "(was #2065, #2068, #2063, #2064, #2067)"} {
		if !strings.Contains(epic2, s) {
			t.Errorf("the epic comment does not say what changed (%q):\n%s", s, epic2)
		}
	}
	if !strings.Contains(h.pr["body"].(string), "2026-10-04") {
		t.Error("the pull request body was not updated to the newer profile")
	}
}

func actions(s Summary) map[string]string {
	return map[string]string{"git": s.Git.Action, "pr": s.PR.Action, "epic": s.Epic.Action,
		"status": s.Status.Action, "check": s.CheckRun.Action, "reaction": s.Reaction.Action}
}

// treeFiles lists the files of a commit.
func treeFiles(t testing.TB, dir, commit string) map[string]bool {
	t.Helper()
	files := map[string]bool{}
	for _, p := range strings.Split(gitT(t, dir, "ls-tree", "-r", "--name-only", commit), "\n") {
		files[p] = true
	}
	return files
}

func sortedKeys(m map[string]bool) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The API fails in the ways GitHub does; each case declares every call it expects.
func TestPublishGitHubFailures(t *testing.T) {
	t.Parallel()
	notFound := fakegithub.JSON(404, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/issues/comments#list-issue-comments"})
	forbidden := fakegithub.JSON(403, map[string]string{"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"})
	cases := []struct {
		name      string
		expect    func(t *testing.T, h *hub)
		wantErr   string // "" = success
		wantSleep []time.Duration
		want      map[string]string
	}{
		{
			name: "502 then success",
			expect: func(t *testing.T, h *hub) {
				h.s.Expect("GET", pullsPath, fakegithub.Status(502))
				h.s.Expect("GET", pullsPath, h.listPRs())
				h.s.Expect("POST", pullsPath, fakegithub.Status(502))
				h.s.Expect("POST", pullsPath, h.createPR())
				h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
				h.s.Expect("POST", epicPath, h.createEpic())
				h.expectFinish(501, true, "success", "rocket")
			},
			wantSleep: []time.Duration{time.Second, time.Second},
			want:      map[string]string{"git": "created", "pr": "created", "epic": "created", "status": "updated", "check": "completed", "reaction": "reacted"},
		},
		{
			name: "secondary rate limit",
			expect: func(t *testing.T, h *hub) {
				h.s.Expect("GET", pullsPath, h.listPRs())
				h.s.Expect("POST", pullsPath, h.createPR())
				h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
				h.s.Expect("POST", epicPath, fakegithub.Recorded(rateLimitFile(t, "secondary-403.headers.txt"), rateLimitFile(t, "secondary-403.body.json")))
				h.s.Expect("POST", epicPath, h.createEpic())
				h.expectFinish(501, true, "success", "rocket")
			},
			wantSleep: []time.Duration{60 * time.Second},
			want:      map[string]string{"git": "created", "pr": "created", "epic": "created", "status": "updated", "check": "completed", "reaction": "reacted"},
		},
		{
			name: "epic issue not found",
			expect: func(t *testing.T, h *hub) {
				h.s.Expect("GET", pullsPath, h.listPRs())
				h.s.Expect("POST", pullsPath, h.createPR())
				h.s.Expect("GET", epicPath, notFound)
				h.expectFinish(501, true, "failure", "confused")
			},
			wantErr: "epic issue #1814 was not found",
			want:    map[string]string{"git": "created", "pr": "created", "epic": "failed", "status": "updated", "check": "completed", "reaction": "reacted"},
		},
		{
			name: "token without permission",
			expect: func(t *testing.T, h *hub) {
				h.s.Expect("GET", pullsPath, h.listPRs())
				h.s.Expect("POST", pullsPath, forbidden)
				h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
				h.s.Expect("POST", epicPath, h.createEpic())
				h.expectFinish(501, true, "failure", "confused")
			},
			wantErr: "pull_requests: write",
			want:    map[string]string{"git": "created", "pr": "failed", "epic": "created", "status": "updated", "check": "completed", "reaction": "reacted"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg := newTarget(t)
			h := newHub(t)
			sl := &sleeps{}
			c := client(t, h.s, sl)
			h.addStatus(501)
			tc.expect(t, h)
			res := layResults(t, tg.base, profile{date: "2026-09-30"})
			sum, err := Publish(context.Background(), ghOptions(tg, res, c, 501))
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to say %q", err, tc.wantErr)
				}
				status := h.statuses[501]["body"].(string)
				if !strings.Contains(status, "failed.") || !strings.Contains(status, report.Text(tc.wantErr)) {
					t.Errorf("the status comment does not report the failure:\n%s", status)
				}
				if sum.OK() {
					t.Error("the summary says success")
				}
			}
			if diff := cmp.Diff(tc.want, actions(sum)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if tg.branch(t) != sum.Git.Commit || sum.Git.Commit == "" {
				t.Errorf("the results were not pushed: %+v", sum.Git)
			}
			if diff := cmp.Diff(tc.wantSleep, sl.got()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// A failed verification opens the pull request as a draft that says why.
func TestPublishFailedVerificationMakesDraft(t *testing.T) {
	t.Parallel()
	tg, h, c := onGitHub(t)
	h.addStatus(501)
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("POST", pullsPath, h.createPR()).JSONBody(map[string]any{"draft": true})
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
	h.s.Expect("POST", epicPath, h.createEpic())
	h.expectFinish(501, true, "neutral", "rocket")
	res := layResults(t, tg.base, profile{date: "2026-09-30", tests: allPassed})
	prepare(t, tg, res, [][]string{{"python3", patch.CheckerPath}, {"sh", "-c", "echo 'kernel dispatch table out of date' >&2; exit 4"}}, "")
	o := ghOptions(tg, res, c, 501)
	sum, err := Publish(context.Background(), o)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if !sum.Draft || sum.Verify.Passed || len(sum.Verify.Failed) != 1 {
		t.Errorf("summary draft=%t verify=%+v", sum.Draft, sum.Verify)
	}
	b := h.pr["body"].(string)
	for _, s := range []string{"**Draft:**", "exit 4", "kernel dispatch table out of date", "stays a draft"} {
		if !strings.Contains(b, s) {
			t.Errorf("the draft's body lacks %q", s)
		}
	}
	if h.pr["draft"] != true {
		t.Error("the pull request is not a draft")
	}
}

// A pull request opened ready for review stays so when a later publish would make a
// draft (GitHub's REST API cannot convert it): the body says why, and a note says to
// convert it by hand.
func TestPublishDraftOfAnOpenPullRequest(t *testing.T) {
	t.Parallel()
	tg, h, c := onGitHub(t)
	res := layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed})
	h.addStatus(501)
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("POST", pullsPath, h.createPR()).JSONBody(map[string]any{"draft": fakegithub.Absent})
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
	h.s.Expect("POST", epicPath, h.createEpic())
	h.expectFinish(501, true, "success", "rocket")
	if _, err := Publish(context.Background(), ghOptions(tg, res, c, 501)); err != nil {
		t.Fatalf("first publish: %v", err)
	}

	h.addStatus(502)
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("PATCH", pullsPath+"/57", h.editPR())
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2)
	h.expectFinish(502, true, "neutral", "rocket")
	prepare(t, tg, res, [][]string{{"sh", "-c", "exit 4"}}, "")
	o := ghOptions(tg, res, c, 502)
	sum, err := Publish(context.Background(), o)
	if err != nil {
		t.Fatalf("second publish: %v", err)
	}
	const note = "pull request #57 was opened earlier with draft=false; GitHub's REST API cannot change that: convert it by hand"
	if !sum.Draft || !slices.Contains(sum.Notes, note) || h.pr["draft"] != false {
		t.Errorf("draft %t, pull request draft %v, notes %q", sum.Draft, h.pr["draft"], sum.Notes)
	}
	if !strings.Contains(h.pr["body"].(string), "**Draft:**") {
		t.Error("the edited body does not say why it should be a draft")
	}
}

// A results folder of another commit than the base is refused before anything is
// written.
func TestPublishRefusesResultsOfAnotherCommit(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layResults(t, tg.base, profile{date: "2026-09-30"})
	out := t.TempDir()
	other := strings.Repeat("ab", 20)
	_, err := Publish(context.Background(), Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(out)}, Base: other})
	if err == nil || !strings.Contains(err.Error(), "is not in") {
		t.Fatalf("error %v, want the unknown base named", err)
	}
	if tg.branch(t) != "" {
		t.Error("something was pushed")
	}
	sum := readFile(t, filepath.Join(out, DrySummary))
	if !strings.Contains(sum, `"conclusion": "failure"`) {
		t.Errorf("summary.json does not record the failure:\n%s", sum)
	}
	if errors.Is(err, gitpub.ErrRefused) {
		t.Error("the refusal came from git, not from the check before it")
	}
}
