package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/gittest"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/runner/results"
)

// The publish job given a bisection's artifact (a folder holding bisect.json) copies it
// through the strict intake and publishes its outcome as the bisection comment on the
// issue input (here a dry run's file), with the check run; nothing is committed. An
// artifact whose manifest is a link is refused.
func TestPublishBisectArtifact(t *testing.T) {
	home := t.TempDir()
	tg := hosttest.NewTarget(t, home, nil)
	artifact := bisectArtifact(t, tg.Base)
	publishIt := func(artifact string) (*stepEnv, string, error) {
		e := publishEnv(t, home, tg.Bare, map[string]string{"job": "publish", "dry-run": "true", "ref": tg.Base, "results": artifact, "issue": "12"})
		log, err := e.runStep()
		return e, log, err
	}
	e, log, err := publishIt(artifact)
	if err != nil {
		t.Fatalf("publish: %v\n%s", err, log)
	}
	if outs := readOutputs(t, e.output); outs["verdict"] != VerdictSuccess || outs["results-dir"] == "" {
		t.Errorf("outputs %v\n%s", outs, log)
	}
	if sum := e.summaryText(t); !strings.Contains(sum, "**Undecided: the runs did not single out one commit") {
		t.Errorf("the step summary is not the bisection's outcome:\n%s", sum)
	}
	dry := filepath.Join(e.vars["RUNNER_TEMP"], "perfbot", "dry-run")
	comment := readFileString(t, filepath.Join(dry, "bisect-comment.md"))
	for _, want := range []string{"<!-- perfbot:bisect Qwen3-30B-A3B-4bit 11111111..", "**Undecided: the runs did not single out one commit; the most likely first bad commit is " + tg.Base[:8]} {
		if !strings.Contains(comment, want) {
			t.Errorf("the bisection comment lacks %q:\n%s", want, comment)
		}
	}
	if !strings.Contains(readFileString(t, filepath.Join(dry, "check-run.md")), "Conclusion: neutral.") {
		t.Error("the check run is not neutral")
	}
	if out := hosttest.Git(t, home, tg.Bare, "for-each-ref", "refs/heads/perfbot"); out != "" {
		t.Errorf("a bisection committed something: %s", out)
	}

	// The manifest is a link: refused by the intake, the job fails.
	linked := filepath.Join(t.TempDir(), "linked")
	if err := os.MkdirAll(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(artifact, results.BisectFile), filepath.Join(linked, results.BisectFile)); err != nil {
		t.Fatal(err)
	}
	le, log, err := publishIt(linked)
	if err == nil || !strings.Contains(log, "a symbolic link") {
		t.Errorf("a linked manifest: %v\n%s", err, log)
	}
	if sum := le.summaryText(t); !strings.Contains(sum, "publishing failed") || !strings.Contains(sum, "a symbolic link") {
		t.Errorf("the step summary of a refused artifact:\n%s", sum)
	}
}

// bisectArtifact is a bisection's artifact ending at the bad commit: an undecided
// outcome, the most likely first bad commit the bad one.
func bisectArtifact(t *testing.T, bad string) string {
	t.Helper()
	artifact := filepath.Join(t.TempDir(), "artifact")
	commits := []string{strings.Repeat("1", 40), strings.Repeat("2", 40), bad}
	start := time.Date(2026, 10, 26, 3, 0, 0, 0, time.UTC)
	b := results.Bisect{Good: commits[0], Bad: commits[2], Model: "Qwen3-30B-A3B-4bit", Metric: "decode tok/s", Commits: commits, Backend: "rocm",
		Host: "strixhalo-gfx1151", Date: "2026-10-26", Started: start, Finished: start.Add(time.Hour), State: results.SessionComplete,
		Outcome: &results.BisectOutcome{Outcome: results.BisectUndecided, FirstBad: commits[2], LastGood: commits[1], Confidence: 0.55, EndsP: 0.001, ChangePct: -12, Why: "the budget ran out"}}
	for _, c := range commits {
		b.Steps = append(b.Steps, results.BisectMeasurement{Commit: c, Readings: []float64{35, 34.8, 35.2}})
		b.Runs += 3
	}
	if err := os.MkdirAll(artifact, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(artifact); err != nil {
		t.Fatal(err)
	}
	return artifact
}

// Without the issue input, the publish job takes the thread from the issue_comment
// event that asked; another event (a dispatch, the schedule) names none, so there is
// no thread to comment on.
func TestPublishTakesTheThreadFromTheCommentEvent(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	tg := hosttest.NewTarget(t, home, nil)
	artifact := bisectArtifact(t, tg.Base)
	event := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(event, []byte(`{"action":"created","issue":{"number":12},"comment":{"id":4242}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ event, says string }{
		{"issue_comment", "its comment: created bisect-comment.md"},
		{"workflow_dispatch", "its comment: skipped (no issue or pull request to comment on)"},
	} {
		e := publishEnv(t, home, tg.Bare, map[string]string{"job": "publish", "dry-run": "true", "ref": tg.Base, "results": artifact})
		e.vars["GITHUB_EVENT_NAME"], e.vars["GITHUB_EVENT_PATH"] = c.event, event
		log, err := e.runStep()
		if err != nil || !strings.Contains(log, c.says) {
			t.Errorf("%s: %v, want a log saying %q:\n%s", c.event, err, c.says, log)
		}
		_, err = os.Stat(filepath.Join(e.vars["RUNNER_TEMP"], "perfbot", "dry-run", "bisect-comment.md"))
		if (err == nil) != (c.event == "issue_comment") {
			t.Errorf("%s: the bisection comment's file: %v", c.event, err)
		}
	}
}

// The pinned commit of a pull request from a fork is held by no branch of the
// repository, only by refs/pull/N/head, which a clone does not fetch: the publish job
// fetches it by its SHA.
func TestPublishFetchesAPinnedCommitNoBranchHolds(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	tg := hosttest.NewTarget(t, home, nil)
	head := pushCommit(t, home, tg, "refs/pull/7/head", "the pull request's head")
	if held := hosttest.Git(t, home, tg.Bare, "branch", "--contains", head); held != "" {
		t.Fatalf("a branch holds the head: %s", held)
	}
	e := publishEnv(t, home, tg.Bare, map[string]string{"job": "publish", "dry-run": "true", "ref": head, "results": bisectArtifact(t, head), "issue": "7"})
	log, err := e.runStep()
	if err != nil || !strings.Contains(log, "fetched "+head) {
		t.Fatalf("publish of a commit only refs/pull/7/head holds: %v\n%s", err, log)
	}
	if outs := readOutputs(t, e.output); outs["verdict"] != VerdictSuccess {
		t.Errorf("outputs %v\n%s", outs, log)
	}
}

// A dry run reads the repository with the workflow's github-token: it has no App
// token to push with, and the repository may be private.
func TestDryRunPublishReadsWithTheWorkflowsToken(t *testing.T) {
	t.Parallel()
	const token = "ghs_WorkflowToken0123456789abcdefghijklmn"
	home := t.TempDir()
	tg := hosttest.NewTarget(t, home, nil)
	srv := gittest.NewHTTPServer(t, tg.Bare, token)
	e := publishEnv(t, home, srv.URL, map[string]string{"job": "publish", "dry-run": "true", "ref": tg.Base, "results": bisectArtifact(t, tg.Base), "issue": "12", "github-token": token})
	log, err := e.runStep()
	if err != nil {
		t.Fatalf("a dry run from a repository that wants the token: %v\n%s", err, log)
	}
	if good, bad := srv.Requests(token); good == 0 || bad > 0 {
		t.Errorf("%d requests with the workflow's token, %d without", good, bad)
	}
}

// A bisection that found its culprit has the culprit's parent fetched too: publishing
// reads that commit's attribution rules for the culprit's profile A/B.
func TestPublishFetchesTheCulpritsParent(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	tg := hosttest.NewTarget(t, home, nil)
	bad := pushCommit(t, home, tg, "refs/heads/topic", "the culprit")
	artifact := bisectArtifact(t, bad)
	b, err := results.ReadBisect(filepath.Join(artifact, results.BisectFile))
	if err != nil {
		t.Fatal(err)
	}
	b.Commits = []string{tg.Base, bad}
	b.Good, b.Steps, b.Runs = tg.Base, b.Steps[1:], 6
	b.Steps[0].Commit = tg.Base
	b.Outcome = &results.BisectOutcome{Outcome: results.BisectFound, FirstBad: bad, LastGood: tg.Base, Confidence: 0.99, EndsP: 0.001, ChangePct: -12, Why: "found"}
	b.Culprit = "culprit"
	if err := b.Save(artifact); err != nil {
		t.Fatal(err)
	}
	e := publishEnv(t, home, tg.Bare, map[string]string{"job": "publish", "dry-run": "true", "ref": bad, "results": artifact, "issue": "12"})
	log, err := e.runStep()
	if err != nil || !strings.Contains(log, "fetched "+tg.Base+" (its attribution rules, for the culprit's port impact)") {
		t.Errorf("a bisection with its culprit: %v, want the parent %s fetched:\n%s", err, tg.Base, log)
	}
}

// publishEnv is the environment of a dry-run publish step that clones repoURL, git
// configured from home.
func publishEnv(t *testing.T, home, repoURL string, inputs map[string]string) *stepEnv {
	t.Helper()
	e := newStepEnv(t, inputs)
	e.vars["HOME"], e.vars["GIT_CONFIG_NOSYSTEM"], e.vars["PATH"] = home, "1", os.Getenv("PATH")
	e.vars["GITHUB_REPOSITORY"], e.vars[EnvRepoURL] = "lablup/mlxcel", repoURL
	return e
}

// pushCommit commits nothing new on tg's checkout, pushes the commit to ref of the
// remote alone and returns its SHA.
func pushCommit(t *testing.T, home string, tg hosttest.Target, ref, msg string) string {
	t.Helper()
	hosttest.Git(t, home, tg.Repo, "commit", "--quiet", "--allow-empty", "-m", msg)
	sha := hosttest.Git(t, home, tg.Repo, "rev-parse", "HEAD")
	hosttest.Git(t, home, tg.Repo, "push", "--quiet", "origin", "HEAD:"+ref)
	return sha
}
