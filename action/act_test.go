package action

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/internal/ghstub"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/job"
	"github.com/lablup/perfbot/runner/rank"
)

const (
	actRepo      = "lablup/mlxcel"
	actIssue     = 12
	actCommentID = 4242
	actToken     = "ghs_actworkflowtoken0123456789"
	actCommenter = "maintainer"
)

// actBinary finds act: on PATH or in GOPATH/bin, where .ci/run installs it.
func actBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("act"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "act")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "" {
		t.Skip("act is not installed (go install github.com/nektos/act@v0.2.89; .ci/run does)")
	}
	t.Fatal("act is not installed, and CI must run the workflow end to end: go install github.com/nektos/act@v0.2.89")
	return ""
}

// actEvent is the comment `/profile rocm` on issue #12, by a maintainer: octokit's
// issue_comment payload moved to the target repository.
func actEvent(t *testing.T, dir string) string {
	t.Helper()
	m, err := ghstub.Object(testfix.Path(t, "github", "webhooks", "issue_comment.created.json"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{
		"repository.full_name": actRepo, "repository.name": "mlxcel", "repository.owner.login": "lablup",
		"repository.default_branch": "main", "issue.number": actIssue, "comment.id": actCommentID,
		"comment.body": "Please profile this.\n/profile rocm models=llama sampling=greedy\n", "comment.user.login": actCommenter,
		"comment.user.type": "User", "sender.login": actCommenter, "sender.type": "User",
	} {
		if err := ghstub.Set(m, k, v); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(m)
	p := filepath.Join(dir, "event.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func rest(t *testing.T, name string) string {
	return testfix.Path(t, "github", "rest-openapi-examples", name+".json")
}

// expectGate declares the gate's GitHub calls for the comment: it reads the config, the
// commenter's permission and the default branch's head, and reacts eyes.
func expectGate(t *testing.T, s *ghstub.Stub, base string) {
	repo := "/repos/" + actRepo
	s.Expect("GET", repo+"/contents/.github/perfbot.yml?ref=main", s.Example(200, "content-file-response-if-content-is-a-file", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(jobsConfig)), "encoding": "base64", "size": len(jobsConfig),
		"name": "perfbot.yml", "path": ".github/perfbot.yml", "type": "file",
	}))
	s.Expect("GET", repo+"/collaborators/"+actCommenter+"/permission", ghstub.JSONFileWith(200,
		rest(t, "repository-collaborator-permission-response-if-user-has-admin-permissions"), map[string]any{"permission": "write", "role_name": "write"}))
	s.Expect("GET", repo+"/git/ref/heads/main", ghstub.JSONFileWith(200, rest(t, "git-ref"), map[string]any{"ref": "refs/heads/main", "object.sha": base}))
	expectReaction(t, s, "eyes")
}

func expectReaction(t *testing.T, s *ghstub.Stub, content string) {
	s.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", actRepo, actCommentID), ghstub.JSONFileWith(201, rest(t, "reaction"), map[string]any{"content": content})).
		JSONBody(map[string]any{"content": content}).Match(ghstub.Header("Authorization", "Bearer "+actToken))
}

// expectPublish declares publish's calls: it reads the default branch, opens the pull
// request, writes the epic comment and reacts rocket on the command's comment.
func expectPublish(t *testing.T, s *ghstub.Stub) {
	repo := "/repos/" + actRepo
	expectReaction(t, s, "rocket")
	s.Expect("GET", repo, ghstub.JSONFileWith(200, rest(t, "full-repository"), map[string]any{"default_branch": "main", "full_name": actRepo}))
	s.Expect("GET", repo+"/pulls?state=open&head=lablup:perfbot/rocm-profile", ghstub.JSON(200, []any{}))
	s.Expect("POST", repo+"/pulls", ghstub.JSONFileWith(201, rest(t, "pull-request"), map[string]any{
		"number": 57, "html_url": "https://github.com/lablup/mlxcel/pull/57", "head.ref": "perfbot/rocm-profile", "base.ref": "main",
	})).JSONBody(map[string]any{"head": "perfbot/rocm-profile", "base": "main"})
	s.Expect("GET", repo+"/issues/1814/comments", ghstub.JSON(200, []any{})).Times(2)
	s.Expect("POST", repo+"/issues/1814/comments", ghstub.JSONFileWith(201, rest(t, "issue-comment"), map[string]any{
		"id": 9001, "user.login": DefaultTokenLogin, "html_url": "https://github.com/lablup/mlxcel/issues/1814#issuecomment-9001",
	}))
}

// actRig runs the README's example workflow with act in host mode on the fake gfx1151
// host, with the GitHub API on 127.0.0.1.
type actRig struct {
	act, repoRoot, dir, home string
	env, standIns            []string
}

func newActRig(t *testing.T) *actRig {
	t.Helper()
	r := &actRig{act: actBinary(t), repoRoot: testfix.RepoRoot(t), dir: t.TempDir()}
	goBin := goBinary
	r.home = filepath.Join(r.dir, "home")
	bin := filepath.Join(r.dir, "bin")
	root := hosttest.Root(t, r.dir)
	if err := os.MkdirAll(r.home, 0o755); err != nil {
		t.Fatal(err)
	}
	goVar := func(k string) string {
		cmd := exec.Command(goBin, "env", k)
		cmd.Env = goEnv
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	buildPerfbot(t, bin)
	r.env = []string{
		"HOME=" + r.home, "XDG_CACHE_HOME=" + filepath.Join(r.home, ".cache"), "XDG_CONFIG_HOME=" + filepath.Join(r.home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "TMPDIR=" + r.dir, "LANG=C.UTF-8",
		"PATH=" + hosttest.Path(t, bin, filepath.Dir(goBin)),
		// The action builds perfbot with the same module and build caches, offline.
		"GOCACHE=" + goVar("GOCACHE"), "GOMODCACHE=" + goVar("GOMODCACHE"), "GOPATH=" + goVar("GOPATH"), "GOPROXY=off", "GOFLAGS=", "GOTOOLCHAIN=local",
		"FAKEHOST_ROCMINFO=" + testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"),
		EnvRoot + "=" + root, "ROCM_GPU_GUARD_LOCK=" + filepath.Join(r.dir, "guard.lock"), "ROCM_GPU_GUARD_COMPILER_RE=" + noCompiler,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	// act reads the metadata of every action of a job before it runs the job, skipped
	// steps too; the steps that need github.com (setup-go, upload-artifact) are skipped
	// under act, so local stand-ins with their names serve their metadata.
	for _, a := range []string{"actions/setup-go@v5", "actions/upload-artifact@v4"} {
		d := filepath.Join(r.dir, "stand-ins", strings.NewReplacer("/", "-", "@", "-").Replace(a))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		meta := "name: stand-in for " + a + "\ndescription: never runs under act\nruns:\n  using: node20\n  main: index.js\n"
		if err := os.WriteFile(filepath.Join(d, "action.yml"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		r.standIns = append(r.standIns, "--local-repository", a+"="+d)
	}
	return r
}

// run runs act for one event in the clone repo and returns its log; act must succeed.
func (r *actRig) run(t *testing.T, repo string, s *ghstub.Stub, ghRepo string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	args = append(append(args,
		"-W", filepath.Join(r.repoRoot, "examples", "workflows", "perfbot-profile.yml"),
		"-P", "ubuntu-latest=-self-hosted", "-P", "self-hosted=-self-hosted", "-P", "gfx1151=-self-hosted",
		"--local-repository", "lablup/perfbot@main="+r.repoRoot,
		"--env", "GITHUB_API_URL="+strings.TrimSuffix(s.URL(), "/"), "--env", "GITHUB_REPOSITORY="+ghRepo,
		"-s", "GITHUB_TOKEN="+actToken), r.standIns...)
	cmd := exec.CommandContext(ctx, r.act, args...)
	cmd.Dir = repo
	cmd.Env = r.env
	// act and everything it starts live in one process group, stopped with the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	log := string(out)
	if err != nil {
		t.Fatalf("act: %v\n%s", err, tail(log, 300))
	}
	// The token never shows in the log.
	if strings.Contains(log, actToken) {
		t.Errorf("the token appears in act's log")
	}
	return log
}

// reportLines are the lines the workflow's last step prints, by key.
func reportLines(t *testing.T, log string) map[string]string {
	t.Helper()
	report := map[string]string{}
	for _, key := range []string{"request", "results", "report", "pull request"} {
		m := regexp.MustCompile(`\| ` + key + `: (.*)`).FindStringSubmatch(log)
		if m == nil {
			t.Fatalf("the report step printed no %q line:\n%s", key, tail(log, 200))
		}
		report[key] = strings.TrimSpace(m[1])
	}
	return report
}

// The README's example workflow, run by act in host mode on the fake gfx1151 host with
// the GitHub API on 127.0.0.1: the issue comment goes through the gate job, the GPU job
// profiles, runs the numeric tests and publishes. The run leaves the results folder,
// the step summaries and the outputs, pushes the bot branch to the bare remote and
// opens the pull request and the epic comment on the API.
func TestActRunsTheProfileWorkflow(t *testing.T) {
	r := newActRig(t)
	tg := hosttest.NewTarget(t, r.home, targetFiles(t, jobsConfig))
	s := ghstub.New(t)
	expectGate(t, s, tg.Base)
	expectPublish(t, s)
	log := r.run(t, tg.Repo, s, actRepo, "issue_comment", "-e", actEvent(t, r.dir), "--actor", actCommenter)
	checkPublished(t, r, tg, s, log, "comment-4242")
}

// The server's way in: a workflow_dispatch with the typed inputs skips the gate, and
// publish finishes the server's status comment and check run.
func TestActRunsTheDispatchedProfile(t *testing.T) {
	r := newActRig(t)
	tg := hosttest.NewTarget(t, r.home, targetFiles(t, jobsConfig))
	s := ghstub.New(t)
	expectPublish(t, s)
	comments := "/repos/" + actRepo + "/issues/comments/501"
	status := ghstub.JSONFileWith(200, rest(t, "issue-comment"), map[string]any{"id": 501, "user.login": DefaultTokenLogin,
		"body": "<!-- perfbot:status -->\n**/profile rocm**: running.", "html_url": "https://github.com/lablup/mlxcel/issues/12#issuecomment-501"})
	s.Expect("GET", comments, status)
	s.Expect("PATCH", comments, status)
	s.Expect("PATCH", "/repos/"+actRepo+"/check-runs/777", ghstub.JSONFileWith(200, rest(t, "check-run"), map[string]any{"id": 777, "status": "completed", "conclusion": "success"})).
		JSONBody(map[string]any{"status": "completed", "conclusion": "success"})
	// The inputs as the server's dispatch sends them.
	log := r.run(t, tg.Repo, s, actRepo, "workflow_dispatch",
		"--input", "job=profile", "--input", "request_id=77", "--input", "sha="+tg.Base, "--input", "models=llama", "--input", "sampling=greedy",
		"--input", "epic=0", "--input", "issue=12", "--input", "status_comment_id=501", "--input", "trigger_comment_id=4242", "--input", "check_run_id=777")
	if strings.Contains(log, "[perfbot/gate]") || strings.Contains(log, "[perfbot/bench]") {
		t.Errorf("the gate or the bench job ran on a profile dispatch")
	}
	checkPublished(t, r, tg, s, log, "77")
}

// The gate job in the workflow refuses a read-only commenter and a fork's head with the
// shared cases of bot/gate, as the server does: it replies why, and the GPU job never
// starts.
func TestActGateRefusesLikeTheServer(t *testing.T) {
	r := newActRig(t)
	tg := hosttest.NewTarget(t, r.home, targetFiles(t, jobsConfig))
	for _, name := range []string{"read-only user is denied whatever author_association says", "fork head is refused even for an admin"} {
		t.Run(name, func(t *testing.T) {
			i := slices.IndexFunc(gatetest.Cases(), func(c gatetest.Case) bool { return c.Name == name })
			if i < 0 {
				t.Fatalf("no shared case %q", name)
			}
			c := gatetest.Cases()[i]
			s := ghstub.New(t)
			c.Expect(t, s)
			repo, issue := "/repos/"+c.Repo(t), c.Issue(t)
			s.Expect("GET", fmt.Sprintf("%s/issues/%d/comments", repo, issue), ghstub.JSON(200, []any{}))
			s.Expect("POST", fmt.Sprintf("%s/issues/%d/comments", repo, issue), s.Example(201, "issue-comment", map[string]any{"user.login": DefaultTokenLogin})).
				Match(ghstub.MatchFunc("the reply", func(req ghstub.Request) error {
					b, _ := req.JSON()
					if body, _ := b["body"].(string); !strings.Contains(body, c.Want.Reply) {
						return fmt.Errorf("reply %q does not say %q", body, c.Want.Reply)
					}
					return nil
				}))
			dir := t.TempDir()
			log := r.run(t, tg.Repo, s, c.Repo(t), "issue_comment", "-e", c.WriteEvent(t, dir), "--env", EnvBotLogin+"="+gatetest.BotLogin)
			if strings.Contains(log, "[perfbot/profile] ⭐ Run Main") {
				t.Errorf("the GPU job ran after a refusal:\n%s", tail(log, 80))
			}
			if !strings.Contains(log, "[perfbot/gate]   ✅  Success - Main Run perfbot") {
				t.Errorf("the gate step did not succeed:\n%s", tail(log, 80))
			}
		})
	}
}

// checkPublished checks what a full run left: the outputs the last step printed, the
// step summaries, the bot commit on the remote with the results folder, and the pull
// request and epic comment on the API.
func checkPublished(t *testing.T, r *actRig, tg hosttest.Target, s *ghstub.Stub, log, requestID string) {
	t.Helper()
	report := reportLines(t, log)
	if want := requestID + " at " + tg.Base; report["request"] != want {
		t.Errorf("request line %q, want %q", report["request"], want)
	}
	folder, verdicts, _ := strings.Cut(report["results"], " ")
	if verdicts != "(complete; numeric tests: switch)" {
		t.Errorf("verdicts %q, want the profile complete and the gates switched", verdicts)
	}
	if want := "https://github.com/lablup/mlxcel/pull/57 (created, success)"; report["pull request"] != want {
		t.Errorf("pull request line %q, want %q", report["pull request"], want)
	}
	if !strings.HasPrefix(report["report"], "docs/benchmark_results/rocm-decode-profile-gfx1151-") {
		t.Errorf("report path %q", report["report"])
	}

	// The results folder the profile job left (in the job's RUNNER_TEMP, which act
	// removes with the job) is committed whole on the bot branch of the remote: take it
	// from there.
	if filepath.Base(folder) != "gfx1151_"+tg.Base[:8] {
		t.Fatalf("results folder %s, want gfx1151_%s", folder, tg.Base[:8])
	}
	head := hosttest.Git(t, r.home, tg.Bare, "rev-parse", "refs/heads/perfbot/rocm-profile")
	if parent := hosttest.Git(t, r.home, tg.Bare, "rev-parse", head+"^"); parent != tg.Base {
		t.Errorf("the bot commit's parent is %s, want %s", parent, tg.Base)
	}
	committed := t.TempDir()
	resultsPath := "benchmarks/rocm_profiles/" + filepath.Base(folder)
	files := strings.Split(hosttest.Git(t, r.home, tg.Bare, "diff", "--name-only", tg.Base, head), "\n")
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f, resultsPath+"/"); ok {
			if err := os.WriteFile(filepath.Join(committed, rel), []byte(hosttest.Git(t, r.home, tg.Bare, "show", head+":"+f)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !slices.Contains(files, report["report"]) {
		t.Errorf("the bot commit does not hold the report page %s:\n%s", report["report"], strings.Join(files, "\n"))
	}
	sess, err := job.ReadSession(filepath.Join(committed, job.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	if sess.Commit != tg.Base || sess.State != "complete" || len(sess.Runs) != 1 || sess.Runs[0].Status != job.StatusOK {
		t.Errorf("session: commit %s state %s runs %+v", sess.Commit, sess.State, sess.Runs)
	}
	for _, f := range []string{job.GemmTestsFile, job.GuardLogFile, job.HostInfoFile, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_summary.json"} {
		if _, err := os.Stat(filepath.Join(committed, f)); err != nil {
			t.Errorf("the results folder has no %s: %v", f, err)
		}
	}
	rk, err := rank.Dir(committed, attrib.Default())
	if err != nil {
		t.Fatal(err)
	}

	// The step summaries: the profile's headline table and ranking, and publish's.
	for _, want := range []string{"## perfbot profile, gfx1151", "| `Meta-Llama-3.1-8B-Instruct-4bit_greedy` |", "### Ranked port order",
		"## perfbot gemm-tests", "Decision: **switch**", "## ROCm decode profile, gfx1151", `pull request: [\#57](https://github.com/lablup/mlxcel/pull/57)`} {
		if !strings.Contains(log, want) {
			t.Errorf("the step summaries do not show %q", want)
		}
	}
	if !strings.Contains(log, "**Ranked port order: #"+rk.Order[0]) {
		t.Errorf("the summary's ranking does not start with %s", rk.Order[0])
	}

	// The GitHub side: the pull request and the epic comment as posted.
	var pr, epic map[string]any
	for _, req := range s.Requests() {
		switch {
		case req.Method == "POST" && req.Path == "/repos/"+actRepo+"/pulls":
			pr, _ = req.JSON()
		case req.Method == "POST" && req.Path == "/repos/"+actRepo+"/issues/1814/comments":
			epic, _ = req.JSON()
		}
	}
	if body, _ := pr["body"].(string); !strings.Contains(body, "Meta-Llama-3.1-8B-Instruct-4bit_greedy") {
		t.Errorf("the pull request body does not name the run:\n%s", body)
	}
	if body, _ := epic["body"].(string); !strings.Contains(body, "<!-- perfbot:port-ranking -->") || !strings.Contains(body, "#"+rk.Order[0]) {
		t.Errorf("the epic comment is not the ranking:\n%s", body)
	}
}

// tail returns the last n lines of a log.
func tail(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
