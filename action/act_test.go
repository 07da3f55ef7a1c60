package action

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/hosttest"
	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
)

const (
	actRepo      = "lablup/mlxcel"
	actIssue     = 12
	actCommentID = 4242
	// actBotBranch is the bot branch of the request on issue #12.
	actBotBranch = "perfbot/rocm-profile-issue-12"
	actToken     = "ghs_actworkflowtoken0123456789"
	actCommenter = "maintainer"
	// The App of the dispatched run: its id, installation, installation token and slug.
	actAppID        = 42
	actInstallation = 7
	actAppToken     = "ghs_actinstallationtoken0123456789"
	actAppSlug      = "perfbot-act"
)

// envNoAct makes the act tests skip. bench/mutation.sh sets it: a mutation run
// measures action by its Go tests alone (docs/mutation.md, "action").
const envNoAct = "PERFBOT_TEST_NO_ACT"

// actBinary finds act: on PATH or in GOPATH/bin, where .ci/run installs it.
func actBinary(t *testing.T) string {
	t.Helper()
	if os.Getenv(envNoAct) != "" {
		t.Skip(envNoAct + " is set: the act tests do not run (bench/mutation.sh sets it)")
	}
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
	return actEventSaying(t, dir, "Please profile this.\n/profile rocm models=llama sampling=greedy\n")
}

// actEventSaying is actEvent with the comment's body body.
func actEventSaying(t *testing.T, dir, body string) string {
	t.Helper()
	m, err := fakegithub.Object(testfix.Path(t, "github", "webhooks", "issue_comment.created.json"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{
		"repository.full_name": actRepo, "repository.name": "mlxcel", "repository.owner.login": "lablup",
		"repository.default_branch": "main", "issue.number": actIssue, "comment.id": actCommentID,
		"comment.body": body, "comment.user.login": actCommenter,
		"comment.user.type": "User", "sender.login": actCommenter, "sender.type": "User",
	} {
		if err := fakegithub.Set(m, k, v); err != nil {
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
func expectGate(t *testing.T, s *fakegithub.Stub, base string) {
	expectGateReads(t, s)
	s.Expect("GET", "/repos/"+actRepo+"/git/ref/heads/main", fakegithub.JSONFileWith(200, rest(t, "git-ref"), map[string]any{"ref": "refs/heads/main", "object.sha": base}))
	expectReaction(t, s, "eyes", "Bearer "+actToken)
}

// expectGateReads declares the gate's first reads, whatever the command: the config
// (jobsConfig) and the commenter's permission (write).
func expectGateReads(t *testing.T, s *fakegithub.Stub) {
	repo := "/repos/" + actRepo
	s.Expect("GET", repo+"/contents/.github/perfbot.yml?ref=main", s.Example(200, "content-file-response-if-content-is-a-file", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(jobsConfig)), "encoding": "base64", "size": len(jobsConfig),
		"name": "perfbot.yml", "path": ".github/perfbot.yml", "type": "file",
	}))
	s.Expect("GET", repo+"/collaborators/"+actCommenter+"/permission", fakegithub.JSONFileWith(200,
		rest(t, "repository-collaborator-permission-response-if-user-has-admin-permissions"), map[string]any{"permission": "write", "role_name": "write"}))
}

// expectReaction declares the reaction on the command's comment, made with auth (the
// Authorization header).
func expectReaction(t *testing.T, s *fakegithub.Stub, content, auth string) {
	s.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", actRepo, actCommentID), fakegithub.JSONFileWith(201, rest(t, "reaction"), map[string]any{"content": content})).
		JSONBody(map[string]any{"content": content}).Match(fakegithub.Header("Authorization", auth))
}

// expectPublish declares publish's calls: it reads the default branch, opens the pull
// request, writes the epic comment and reacts rocket on the command's comment (with
// the Authorization header auth).
func expectPublish(t *testing.T, s *fakegithub.Stub, auth string) {
	repo := "/repos/" + actRepo
	expectReaction(t, s, "rocket", auth)
	s.Expect("GET", repo, fakegithub.JSONFileWith(200, rest(t, "full-repository"), map[string]any{"default_branch": "main", "full_name": actRepo}))
	// The request: #12 is an issue (no pull_request key), the comment names who asked;
	// its bot branch is perfbot/rocm-profile-issue-12.
	issue, err := fakegithub.Object(rest(t, "issue"))
	if err != nil {
		t.Fatal(err)
	}
	delete(issue, "pull_request")
	issue["number"], issue["state"] = 12, "open"
	s.Expect("GET", repo+"/issues/12", fakegithub.JSON(200, issue))
	s.Expect("GET", fmt.Sprintf("%s/issues/comments/%d", repo, actCommentID), fakegithub.JSONFileWith(200, rest(t, "issue-comment"), map[string]any{
		"id": actCommentID, "user.login": actCommenter, "html_url": fmt.Sprintf("https://github.com/lablup/mlxcel/issues/12#issuecomment-%d", actCommentID)}))
	s.Expect("GET", repo+"/pulls?state=open&head=lablup:"+actBotBranch, fakegithub.JSON(200, []any{}))
	s.Expect("POST", repo+"/pulls", fakegithub.JSONFileWith(201, rest(t, "pull-request"), map[string]any{
		"number": 57, "html_url": "https://github.com/lablup/mlxcel/pull/57", "head.ref": actBotBranch, "base.ref": "main",
	})).JSONBody(map[string]any{"head": actBotBranch, "base": "main"})
	// The run's artifacts, for the traces link (act's run id is 1; its artifacts live in
	// act's own store, so the listing stands for GitHub's: the traces the profile job
	// uploaded, in GitHub's documented shape).
	traces := "https://api.github.com" + repo + "/actions/artifacts/8000"
	s.Expect("GET", repo+"/actions/runs/1/artifacts", fakegithub.JSON(200, map[string]any{"total_count": 1, "artifacts": []any{map[string]any{
		"id": 8000, "node_id": "MDg6QXJ0aWZhY3QxMQ==", "name": "perfbot-traces-1", "size_in_bytes": 556, "url": traces,
		"archive_download_url": traces + "/zip", "expired": false,
		"created_at": "2026-12-03T18:00:00Z", "updated_at": "2026-12-03T18:00:00Z", "expires_at": "2027-03-03T18:00:00Z",
	}}}))
	s.Expect("GET", repo+"/issues/1814/comments", fakegithub.JSON(200, []any{})).Times(2)
	s.Expect("POST", repo+"/issues/1814/comments", fakegithub.JSONFileWith(201, rest(t, "issue-comment"), map[string]any{
		"id": 9001, "user.login": DefaultTokenLogin, "html_url": "https://github.com/lablup/mlxcel/issues/1814#issuecomment-9001",
	}))
}

// The example workflows the act tests run: the one the server dispatches, the one for a
// comment without a server, and the nightly.
const (
	dispatchWorkflow = "perfbot-profile.yml"
	commentWorkflow  = "perfbot-comment.yml"
	nightlyWorkflow  = "perfbot-nightly.yml"
)

// actRig runs an example workflow with act in host mode on the fake gfx1151 host, with
// the GitHub API on 127.0.0.1.
type actRig struct {
	act, repoRoot, dir, home string
	// artifacts is the stand-in artifact store: one folder per artifact name.
	artifacts string
	// dumps is where the fake cargo writes what the pinned commit's build could read.
	dumps         string
	env, standIns []string
	// secrets are what must show neither in act's log nor to the code under test,
	// besides the workflow's token.
	secrets []string
}

// Stand-ins for the actions that need github.com, given to act with
// --local-repository. The ones the workflows skip under act only serve their metadata
// (act reads every action's metadata before a job starts). Checkout and the artifact
// pair run: checkout clones the test's target clone (PERFBOT_ACT_CHECKOUT) at ref and,
// as actions/checkout does unless persist-credentials is false, leaves the token in
// .git/config; upload-artifact and download-artifact copy a folder to and from
// PERFBOT_ACT_ARTIFACTS/<name>, so the workflow hands its results on by the same steps
// as on GitHub, only the store is local.
var standIns = map[string]string{
	"actions/setup-go@v5": "name: stand-in for actions/setup-go@v5\ndescription: never runs under act\nruns:\n  using: node20\n  main: index.js\n",
	"actions/checkout@v4": `name: stand-in for actions/checkout@v4
description: clones PERFBOT_ACT_CHECKOUT at ref into the workspace
inputs:
  ref: {required: false, default: ""}
  token: {required: false, default: "${{ github.token }}"}
  persist-credentials: {required: false, default: "true"}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        REF: ${{ inputs.ref }}
        TOKEN: ${{ inputs.token }}
        PERSIST: ${{ inputs.persist-credentials }}
      run: |
        set -euo pipefail
        cd "$GITHUB_WORKSPACE"
        git -c init.defaultBranch=main init -q .
        git remote add origin "$(git -C "$PERFBOT_ACT_CHECKOUT" remote get-url origin)"
        git fetch -q --no-tags "$PERFBOT_ACT_CHECKOUT" "+refs/heads/*:refs/remotes/origin/*"
        git -c advice.detachedHead=false checkout -q --detach "${REF:-$(git -C "$PERFBOT_ACT_CHECKOUT" rev-parse HEAD)}"
        if [ "$PERSIST" != false ]; then
          git config --local http.https://github.com/.extraheader "AUTHORIZATION: basic $(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)"
        fi
`,
	"actions/upload-artifact@v4": `name: stand-in for actions/upload-artifact@v4
description: copies path to PERFBOT_ACT_ARTIFACTS/name
inputs:
  name: {required: true}
  path: {required: true}
  if-no-files-found: {required: false, default: warn}
  retention-days: {required: false, default: "0"}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        NAME: ${{ inputs.name }}
        SRC: ${{ inputs.path }}
      run: |
        set -euo pipefail
        case "$NAME" in "" | */* | .*) echo "bad artifact name $NAME" >&2; exit 1 ;; esac
        if [ ! -d "$SRC" ]; then echo "no folder $SRC to upload" >&2; exit 1; fi
        if [ -e "$PERFBOT_ACT_ARTIFACTS/$NAME" ]; then echo "artifact $NAME exists" >&2; exit 1; fi
        mkdir -p "$PERFBOT_ACT_ARTIFACTS/$NAME"
        cp -R "$SRC/." "$PERFBOT_ACT_ARTIFACTS/$NAME/"
`,
	"actions/download-artifact@v4": `name: stand-in for actions/download-artifact@v4
description: copies PERFBOT_ACT_ARTIFACTS/name to path
inputs:
  name: {required: true}
  path: {required: true}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        NAME: ${{ inputs.name }}
        DST: ${{ inputs.path }}
      run: |
        set -euo pipefail
        if [ ! -d "$PERFBOT_ACT_ARTIFACTS/$NAME" ]; then echo "no artifact $NAME" >&2; exit 1; fi
        mkdir -p "$DST"
        cp -R "$PERFBOT_ACT_ARTIFACTS/$NAME/." "$DST/"
`,
}

func newActRig(t *testing.T) *actRig {
	t.Helper()
	r := &actRig{act: actBinary(t), repoRoot: testfix.RepoRoot(t), dir: t.TempDir()}
	goBin := goBinary
	r.home = filepath.Join(r.dir, "home")
	r.artifacts = filepath.Join(r.dir, "artifacts")
	r.dumps = filepath.Join(r.dir, "dumps")
	bin := filepath.Join(r.dir, "bin")
	root := hosttest.Root(t, r.dir)
	for _, d := range []string{r.home, r.artifacts, r.dumps} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
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
		"FAKEHOST_ROCMINFO=" + testfix.Path(t, "rocprofv3", "rocminfo-gfx1151.txt"), "FAKE_CARGO_DUMP=" + r.dumps,
		"PERFBOT_ACT_ARTIFACTS=" + r.artifacts,
		EnvRoot + "=" + root, "ROCM_GPU_GUARD_LOCK=" + filepath.Join(r.dir, "guard.lock"), "ROCM_GPU_GUARD_COMPILER_RE=" + noCompiler,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	for a, meta := range standIns {
		d := filepath.Join(r.dir, "stand-ins", strings.NewReplacer("/", "-", "@", "-").Replace(a))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "action.yml"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		r.standIns = append(r.standIns, "--local-repository", a+"="+d)
	}
	return r
}

// perfbotRef is the ref of lablup/perfbot every step of the example workflow uses: one
// release tag or commit, never a branch.
func perfbotRef(t *testing.T, workflow string) string {
	t.Helper()
	b, err := os.ReadFile(workflow)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, m := range regexp.MustCompile(`uses:\s*lablup/perfbot@(\S+)`).FindAllStringSubmatch(string(b), -1) {
		if !slices.Contains(refs, m[1]) {
			refs = append(refs, m[1])
		}
	}
	if len(refs) != 1 {
		t.Fatalf("%s uses lablup/perfbot at %q, want one ref", workflow, refs)
	}
	return refs[0]
}

// run runs act for one event of the example workflow in the clone repo (which the
// checkout stand-in clones) and returns its log; act must succeed.
func (r *actRig) run(t *testing.T, workflow, repo string, s *fakegithub.Stub, ghRepo string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	wf := filepath.Join(r.repoRoot, "examples", "workflows", workflow)
	args = append(append(args,
		"-W", wf,
		"-P", "ubuntu-latest=-self-hosted", "-P", "self-hosted=-self-hosted", "-P", "gfx1151=-self-hosted",
		// The exact ref the workflow pins, served from this checkout.
		"--local-repository", "lablup/perfbot@"+perfbotRef(t, wf)+"="+r.repoRoot,
		"--env", "GITHUB_API_URL="+strings.TrimSuffix(s.URL(), "/"), "--env", "GITHUB_REPOSITORY="+ghRepo,
		"-s", "GITHUB_TOKEN="+actToken), r.standIns...)
	// The publish job clones the target's remote (a bare repository on disk).
	args = append(args, "--env", EnvRepoURL+"="+hosttest.Git(t, r.home, repo, "remote", "get-url", "origin"))
	cmd := exec.CommandContext(ctx, r.act, args...)
	cmd.Dir = repo
	cmd.Env = append(r.env, "PERFBOT_ACT_CHECKOUT="+repo)
	// act and everything it starts live in one process group, stopped with the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	log := string(out)
	if err != nil {
		t.Fatalf("act: %v\n%s", err, tail(log, 300))
	}
	// No token or key shows in the log.
	for i, secret := range append([]string{actToken}, r.secrets...) {
		if strings.Contains(log, secret) {
			t.Errorf("secret %d appears in act's log", i)
		}
	}
	return log
}

// jobLine matches a line act logs for a job of a workflow (act pads the job's name).
func jobLine(workflowName, job, text string) *regexp.Regexp {
	return regexp.MustCompile(`\[` + regexp.QuoteMeta(workflowName+"/"+job) + ` *\] ` + regexp.QuoteMeta(text))
}

// secretFile writes a secret for act's --secret-file (a dotenv file: a double-quoted
// value with \n for its line breaks), readable by this user only, so the secret is
// neither in act's argv nor in its environment (which act in host mode hands to every
// step).
func secretFile(t *testing.T, name, value string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(p, []byte(name+"=\""+strings.ReplaceAll(value, "\n", `\n`)+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkSplit checks the trust boundary of a run: the GPU job (gpu) checked out the
// pinned commit and built it, and neither the build's environment nor the git configs
// it could read held the token; the results went through the artifact store (which
// holds one file matching artifactFile, "<artifact name>/<file>"); the publish job (publish) ran no
// checkout and downloaded the artifact.
func checkSplit(t *testing.T, r *actRig, log, workflowName, gpu, publish, artifactFile string) {
	t.Helper()
	if !jobLine(workflowName, gpu, "⭐ Run Main actions/checkout@v4").MatchString(log) {
		t.Errorf("the %s job did not check out:\n%s", gpu, tail(log, 80))
	}
	if jobLine(workflowName, publish, "⭐ Run Main actions/checkout").MatchString(log) {
		t.Errorf("the %s job checked out the repository", publish)
	}
	if !jobLine(workflowName, publish, "⭐ Run Main actions/download-artifact@v4").MatchString(log) {
		t.Errorf("the %s job did not download the results artifact", publish)
	}
	dumps, _ := filepath.Glob(filepath.Join(r.dumps, "cargo-*.txt"))
	// Each test's rig is new; the dumps are this run's.
	if len(dumps) == 0 {
		t.Fatalf("the fake cargo left no dump in %s: the %s job built nothing", r.dumps, gpu)
	}
	secret := regexp.MustCompile(`(?im)^INPUT_(GITHUB-TOKEN|APP-PRIVATE-KEY)=.|^GITHUB_TOKEN=|extraheader|authorization`)
	sawConfig := false
	for _, d := range dumps {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		sawConfig = sawConfig || strings.Contains(text, "## git config of ")
		for i, leak := range append([]string{actToken, base64.StdEncoding.EncodeToString([]byte("x-access-token:" + actToken))}, r.secrets...) {
			if strings.Contains(text, leak) {
				t.Errorf("%s: the code under test could read secret %d", filepath.Base(d), i)
			}
		}
		if m := secret.FindString(text); m != "" {
			t.Errorf("%s: the code under test could read %q", filepath.Base(d), m)
		}
	}
	if !sawConfig {
		t.Errorf("no dump shows a git config: the build did not run in the checkout")
	}
	if found, _ := filepath.Glob(filepath.Join(r.artifacts, filepath.FromSlash(artifactFile))); len(found) != 1 {
		t.Errorf("the artifact store holds %v for %s, want one file", found, artifactFile)
	}
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

// The serverless example workflow, run by act in host mode on the fake gfx1151 host
// with the GitHub API on 127.0.0.1: the issue comment goes through the gate job, the
// GPU job profiles, runs the numeric tests and the patch without any token, and hands
// its results folder to the publish job as an artifact; publish, without a checkout,
// pushes the bot branch to the bare remote and opens the pull request and the epic
// comment on the API. The run leaves the results folder, the step summaries and the
// outputs.
func TestActRunsTheProfileWorkflow(t *testing.T) {
	r := newActRig(t)
	tg := hosttest.NewTarget(t, r.home, targetFiles(t, jobsConfig))
	s := fakegithub.New(t)
	expectGate(t, s, tg.Base)
	expectPublish(t, s, "Bearer "+actToken)
	log := r.run(t, commentWorkflow, tg.Repo, s, actRepo, "issue_comment", "-e", actEvent(t, r.dir), "--actor", actCommenter)
	checkSplit(t, r, log, "perfbot comment", "profile", "publish", "perfbot-results-comment-4242/gfx1151_*/"+results.SessionFile)
	checkPublished(t, r, tg, s, log, "comment-4242")
}

// The server's way in: the dispatch-only workflow with the typed inputs, the same
// split, and publish, as the App with the key from the repository's secret, finishes
// the server's status comment and check run. Neither the key nor a token reaches the
// GPU job.
func TestActRunsTheDispatchedProfile(t *testing.T) {
	r := newActRig(t)
	tg := hosttest.NewTarget(t, r.home, targetFiles(t, jobsConfig))
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	// The key's second line stands for the key: it must show nowhere but in the secret.
	r.secrets = append(r.secrets, actAppToken, strings.Split(keyPEM, "\n")[1])
	s := fakegithub.New(t)
	s.Expect("GET", "/repos/"+actRepo+"/installation", fakegithub.JSONFileWith(200, rest(t, "installation"), map[string]any{"id": actInstallation}))
	s.Expect("POST", fmt.Sprintf("/app/installations/%d/access_tokens", actInstallation), fakegithub.JSONFileWith(201, rest(t, "installation-token"), map[string]any{
		"token": actAppToken, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}))
	s.Expect("GET", "/app", fakegithub.JSONFileWith(200, rest(t, "integration"), map[string]any{"id": actAppID, "slug": actAppSlug}))
	// An installation token goes as "token", the workflow's as "Bearer".
	expectPublish(t, s, "token "+actAppToken)
	comments := "/repos/" + actRepo + "/issues/comments/501"
	status := fakegithub.JSONFileWith(200, rest(t, "issue-comment"), map[string]any{"id": 501, "user.login": actAppSlug + "[bot]",
		"body": "<!-- perfbot:status -->\n**/profile rocm**: running.", "html_url": "https://github.com/lablup/mlxcel/issues/12#issuecomment-501"})
	s.Expect("GET", comments, status)
	s.Expect("PATCH", comments, status)
	s.Expect("PATCH", "/repos/"+actRepo+"/check-runs/777", fakegithub.JSONFileWith(200, rest(t, "check-run"), map[string]any{"id": 777, "status": "completed", "conclusion": "success"})).
		JSONBody(map[string]any{"status": "completed", "conclusion": "success"})
	// The inputs as the server's dispatch sends them.
	log := r.run(t, dispatchWorkflow, tg.Repo, s, actRepo, "workflow_dispatch",
		"--input", "job=profile", "--input", "request_id=77", "--input", "sha="+tg.Base, "--input", "models=llama", "--input", "sampling=greedy",
		"--input", "epic=0", "--input", "issue=12", "--input", "status_comment_id=501", "--input", "trigger_comment_id=4242", "--input", "check_run_id=777",
		"--secret-file", secretFile(t, "PERFBOT_APP_PRIVATE_KEY", keyPEM), "--var", fmt.Sprintf("PERFBOT_APP_ID=%d", actAppID))
	if jobLine("perfbot", "bench", "").MatchString(log) || jobLine("perfbot", "publish-bench", "").MatchString(log) {
		t.Errorf("the bench job ran on a profile dispatch")
	}
	checkSplit(t, r, log, "perfbot", "profile", "publish", "perfbot-results-77/gfx1151_*/"+results.SessionFile)
	checkPublished(t, r, tg, s, log, "77")
}

// expectNightly declares the nightly publish job's calls: the default branch, the open
// regression issues, the baseline pull request (opened as #58) and the tracking
// comment on the epic.
func expectNightly(t *testing.T, s *fakegithub.Stub) {
	repo := "/repos/" + actRepo
	s.Expect("GET", repo, fakegithub.JSONFileWith(200, rest(t, "full-repository"), map[string]any{"default_branch": "main", "full_name": actRepo}))
	s.Expect("GET", repo+"/issues?state=open&creator=github-actions[bot]", fakegithub.JSON(200, []any{}))
	s.Expect("GET", repo+"/pulls?state=open&head=lablup:perfbot/rocm-baseline", fakegithub.JSON(200, []any{}))
	s.Expect("POST", repo+"/pulls", fakegithub.JSONFileWith(201, rest(t, "pull-request"), map[string]any{
		"number": 58, "html_url": "https://github.com/lablup/mlxcel/pull/58", "head.ref": "perfbot/rocm-baseline", "base.ref": "main",
	})).JSONBody(map[string]any{"head": "perfbot/rocm-baseline", "base": "main"})
	s.Expect("GET", repo+"/issues/1814/comments", fakegithub.JSON(200, []any{})).Times(2)
	s.Expect("POST", repo+"/issues/1814/comments", fakegithub.JSONFileWith(201, rest(t, "issue-comment"), map[string]any{
		"id": 9002, "user.login": DefaultTokenLogin, "html_url": "https://github.com/lablup/mlxcel/issues/1814#issuecomment-9002",
	}))
}

// postedPR is the body of the pull request the run opened.
func postedPR(s *fakegithub.Stub) string {
	for _, req := range s.Requests() {
		if req.Method == "POST" && req.Path == "/repos/"+actRepo+"/pulls" {
			m, _ := req.JSON()
			body, _ := m["body"].(string)
			return body
		}
	}
	return ""
}

// The nightly example, dispatched by hand: the bench job builds and runs the default
// branch's head with the repository's harnesses on the fake host, without any token,
// and hands its benchmarks folder on; the publish job, without a checkout, pushes the
// baseline branch with the CSVs, the baseline page and the trend page of the history
// (committed beside it, the default), opens its pull request linking the trend page
// and writes the tracking comment.
func TestActRunsTheNightly(t *testing.T) {
	r := newActRig(t)
	date := time.Now().Format(time.DateOnly)
	tg := benchTarget(t, r, jobsConfig, date)
	s := fakegithub.New(t)
	expectNightly(t, s)
	log := r.run(t, nightlyWorkflow, tg.Repo, s, actRepo, "workflow_dispatch")
	stem := "rocm_strixhalo-gfx1151_" + date
	checkSplit(t, r, log, "perfbot nightly", "bench", "publish", "perfbot-results-nightly-*/"+stem+results.NightlySuffix)
	for _, want := range []string{"| results: ", "(complete)", "| page: docs/benchmark_results/rocm-baseline-gfx1151-" + date + ".md",
		"| pull request: https://github.com/lablup/mlxcel/pull/58"} {
		if !strings.Contains(log, want) {
			t.Errorf("the report steps did not print %q:\n%s", want, tail(log, 120))
		}
	}
	head := hosttest.Git(t, r.home, tg.Bare, "rev-parse", "refs/heads/perfbot/rocm-baseline")
	if parent := hosttest.Git(t, r.home, tg.Bare, "rev-parse", head+"^"); parent != tg.Base {
		t.Errorf("the baseline commit's parent is %s, want %s", parent, tg.Base)
	}
	committed := strings.Split(hosttest.Git(t, r.home, tg.Bare, "diff", "--name-only", tg.Base, head), "\n")
	// The CSVs, the baseline page and its chart, and the trend page (trend.publish:
	// commit, the default) with its host's SVG.
	const trendDir = "docs/benchmark_results/trend/"
	for _, f := range []string{"benchmarks/" + stem + ".csv", "benchmarks/pylm_strixhalo-gfx1151_" + date + ".csv",
		"docs/benchmark_results/rocm-baseline-gfx1151-" + date + ".md", "docs/benchmark_results/rocm-baseline-gfx1151-" + date + ".svg",
		trendDir + "README.md", trendDir + "strixhalo-gfx1151.svg"} {
		if !slices.Contains(committed, f) {
			t.Errorf("the baseline commit lacks %s; it holds:\n%s", f, strings.Join(committed, "\n"))
		}
	}
	trendPage := hosttest.Git(t, r.home, tg.Bare, "show", head+":"+trendDir+"README.md")
	if !strings.Contains(trendPage, "](strixhalo-gfx1151.svg)") || !strings.Contains(trendPage, "../../../benchmarks/"+stem+".csv#L") {
		t.Errorf("the trend page does not show its chart or link tonight's CSV:\n%s", trendPage)
	}
	if svg := hosttest.Git(t, r.home, tg.Bare, "show", head+":"+trendDir+"strixhalo-gfx1151.svg"); !strings.HasPrefix(svg, "<svg") && !strings.HasPrefix(svg, "<?xml") {
		t.Errorf("the trend chart is not an SVG:\n%.200s", svg)
	}
	// The baseline page and the pull request body link the trend page.
	page := hosttest.Git(t, r.home, tg.Bare, "show", head+":docs/benchmark_results/rocm-baseline-gfx1151-"+date+".md")
	if !strings.Contains(page, "](trend/README.md)") {
		t.Errorf("the baseline page does not link the trend page")
	}
	if body := postedPR(s); !strings.Contains(body, "the trend page, [") || !strings.Contains(body, "/blob/"+head+"/"+trendDir+"README.md)") {
		t.Errorf("the pull request body does not link the trend page in the baseline commit:\n%s", body)
	}
	// So does the tracking comment.
	tracking := ""
	for _, req := range s.Requests() {
		if req.Method == "POST" && req.Path == "/repos/"+actRepo+"/issues/1814/comments" {
			m, _ := req.JSON()
			tracking, _ = m["body"].(string)
		}
	}
	if !strings.Contains(tracking, "the trend page, [") || !strings.Contains(tracking, "/blob/"+head+"/"+trendDir+"README.md)") {
		t.Errorf("the tracking comment does not link the trend page in the baseline commit:\n%s", tracking)
	}
}

// The nightly with trend.publish: pages: the publish job adds the HTML trend page as one
// commit over the Pages branch a maintainer started (their file stays), its points
// linking tonight's CSV in the baseline commit; the baseline commit holds no trend page,
// and the pull request body links the Pages URL.
func TestActRunsTheNightlyToPages(t *testing.T) {
	r := newActRig(t)
	date := time.Now().Format(time.DateOnly)
	tg := benchTarget(t, r, jobsConfig+"trend: {publish: pages, path: nightly}\n", date)
	site := filepath.Join(r.dir, "site")
	hosttest.Git(t, r.home, r.dir, "init", "--quiet", "--initial-branch=gh-pages", site)
	if err := os.WriteFile(filepath.Join(site, "index.html"), []byte("<p>mlxcel</p>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosttest.Git(t, r.home, site, "add", "-A")
	hosttest.Git(t, r.home, site, "-c", "user.name=m", "-c", "user.email=m@example.com", "commit", "--quiet", "-m", "site")
	hosttest.Git(t, r.home, site, "push", "--quiet", tg.Bare, "HEAD:refs/heads/gh-pages")
	theirs := hosttest.Git(t, r.home, site, "rev-parse", "HEAD")
	s := fakegithub.New(t)
	expectNightly(t, s)
	log := r.run(t, nightlyWorkflow, tg.Repo, s, actRepo, "workflow_dispatch")
	stem := "rocm_strixhalo-gfx1151_" + date
	checkSplit(t, r, log, "perfbot nightly", "bench", "publish", "perfbot-results-nightly-*/"+stem+results.NightlySuffix)

	baselineHead := hosttest.Git(t, r.home, tg.Bare, "rev-parse", "refs/heads/perfbot/rocm-baseline")
	if committed := hosttest.Git(t, r.home, tg.Bare, "diff", "--name-only", tg.Base, baselineHead); strings.Contains(committed, "nightly/") || !strings.Contains(committed, stem+".csv") {
		t.Errorf("the baseline commit holds:\n%s", committed)
	}
	head := hosttest.Git(t, r.home, tg.Bare, "rev-parse", "refs/heads/gh-pages")
	if parent := hosttest.Git(t, r.home, tg.Bare, "rev-parse", head+"^"); parent != theirs {
		t.Errorf("the Pages commit's parent is %s, want the maintainer's %s", parent, theirs)
	}
	if changed := hosttest.Git(t, r.home, tg.Bare, "diff", "--name-only", theirs, head); changed != "nightly/index.html" {
		t.Errorf("the Pages commit changed:\n%s", changed)
	}
	page := hosttest.Git(t, r.home, tg.Bare, "show", head+":nightly/index.html")
	if !strings.Contains(page, "<svg") || !strings.Contains(page, "https://github.com/lablup/mlxcel/blob/"+baselineHead+"/benchmarks/"+stem+".csv#L") {
		t.Errorf("the trend page has no chart or no link to tonight's CSV in the baseline commit:\n%.2000s", page)
	}
	const url = "https://lablup.github.io/mlxcel/nightly/"
	if body := postedPR(s); !strings.Contains(body, "the trend page, [") || !strings.Contains(body, "]("+url+")") {
		t.Errorf("the pull request body does not link the Pages URL:\n%s", body)
	}
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
			s := fakegithub.New(t)
			c.Expect(t, s)
			repo, issue := "/repos/"+c.Repo(t), c.Issue(t)
			s.Expect("GET", fmt.Sprintf("%s/issues/%d/comments", repo, issue), fakegithub.JSON(200, []any{}))
			s.Expect("POST", fmt.Sprintf("%s/issues/%d/comments", repo, issue), s.Example(201, "issue-comment", map[string]any{"user.login": DefaultTokenLogin})).
				Match(fakegithub.MatchFunc("the reply", func(req fakegithub.Request) error {
					b, _ := req.JSON()
					if body, _ := b["body"].(string); !strings.Contains(body, c.Want.Reply) {
						return fmt.Errorf("reply %q does not say %q", body, c.Want.Reply)
					}
					return nil
				}))
			dir := t.TempDir()
			log := r.run(t, commentWorkflow, tg.Repo, s, c.Repo(t), "issue_comment", "-e", c.WriteEvent(t, dir), "--env", EnvBotLogin+"="+gatetest.BotLogin)
			if jobLine("perfbot comment", "profile", "⭐ Run Main").MatchString(log) {
				t.Errorf("the GPU job ran after a refusal:\n%s", tail(log, 80))
			}
			if !jobLine("perfbot comment", "gate", "  ✅  Success - Main Run perfbot").MatchString(log) {
				t.Errorf("the gate step did not succeed:\n%s", tail(log, 80))
			}
		})
	}
}

// The serverless workflow's gate job starts only for a comment that may hold a perfbot
// command: a comment without one is skipped before any runner starts, so no job runs
// and the API hears nothing (the stub fails on any call). The other act tests show a
// comment with a command getting through: at the start of the body (the refusals) and
// after a newline (the profile).
func TestActGateSkipsCommentsWithoutACommand(t *testing.T) {
	r := newActRig(t)
	tg := hosttest.NewTarget(t, r.home, targetFiles(t, jobsConfig))
	for _, body := range []string{"LGTM, thanks!", "/lgtm\n/retest", "We should profile this on rocm.\nbench numbers later"} {
		t.Run(body, func(t *testing.T) {
			s := fakegithub.New(t)
			m, err := fakegithub.Object(testfix.Path(t, "github", "webhooks", "issue_comment.created.json"))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range map[string]any{"repository.full_name": actRepo, "comment.body": body} {
				if err := fakegithub.Set(m, k, v); err != nil {
					t.Fatal(err)
				}
			}
			b, _ := json.Marshal(m)
			event := filepath.Join(t.TempDir(), "event.json")
			if err := os.WriteFile(event, b, 0o644); err != nil {
				t.Fatal(err)
			}
			log := r.run(t, commentWorkflow, tg.Repo, s, actRepo, "issue_comment", "-e", event)
			if strings.Contains(log, "⭐ Run") {
				t.Errorf("a job ran for a comment without a command:\n%s", tail(log, 80))
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("%d API calls for a comment without a command", n)
			}
		})
	}
}

// checkPublished checks what a full run left: the outputs the last step printed, the
// step summaries, the bot commit on the remote with the results folder, and the pull
// request and epic comment on the API.
func checkPublished(t *testing.T, r *actRig, tg hosttest.Target, s *fakegithub.Stub, log, requestID string) {
	t.Helper()
	report := reportLines(t, log)
	if want := requestID + " at " + tg.Base; report["request"] != want {
		t.Errorf("request line %q, want %q", report["request"], want)
	}
	folder, verdicts, _ := strings.Cut(report["results"], " ")
	if verdicts != "(complete; numeric tests: switch; patch: ready)" {
		t.Errorf("verdicts %q, want the profile complete, the gates switched and the patch ready", verdicts)
	}
	if want := "https://github.com/lablup/mlxcel/pull/57 (created, success)"; report["pull request"] != want {
		t.Errorf("pull request line %q, want %q", report["pull request"], want)
	}
	if !strings.HasPrefix(report["report"], "docs/benchmark_results/rocm-decode-profile-gfx1151-") {
		t.Errorf("report path %q", report["report"])
	}
	// The body links the traces artifact by its URL on the run's page.
	if body := postedPR(s); !regexp.MustCompile(`the full traces are in the \[traces artifact\]\(\S+/actions/runs/1/artifacts/8000\)`).MatchString(body) {
		t.Errorf("the pull request body does not link the traces artifact:\n%s", body)
	}

	// The results folder the profile job left (in the job's RUNNER_TEMP, which act
	// removes with the job) is committed whole on the bot branch of the remote: take it
	// from there.
	if filepath.Base(folder) != "gfx1151_"+tg.Base[:8] {
		t.Fatalf("results folder %s, want gfx1151_%s", folder, tg.Base[:8])
	}
	head := hosttest.Git(t, r.home, tg.Bare, "rev-parse", "refs/heads/"+actBotBranch)
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
	sess, err := results.ReadSession(filepath.Join(committed, results.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	if sess.Commit != tg.Base || sess.State != "complete" || len(sess.Runs) != 1 || sess.Runs[0].Status != results.StatusOK {
		t.Errorf("session: commit %s state %s runs %+v", sess.Commit, sess.State, sess.Runs)
	}
	for _, f := range []string{results.GemmTestsFile, results.GuardLogFile, results.HostInfoFile, "Meta-Llama-3.1-8B-Instruct-4bit_greedy_summary.json"} {
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

// A compare in the serverless workflow: the gate pins B (ref=main) and A (base=old),
// hands A and the cap on as its outputs base and repeats, and the bench job runs the
// compare of A against B with them (act runs the gate and the bench job: -j bench).
func TestActGateHandsACompareOn(t *testing.T) {
	r := newActRig(t)
	tg := benchTarget(t, r, jobsConfig, time.Now().Format(time.DateOnly))
	// B: a 10 % faster decode over A, the target's first commit.
	head := commitChange(t, r, tg, "B: a faster decode", "decode 1.1\n")
	hosttest.Git(t, r.home, tg.Repo, "push", "--quiet", "origin", "HEAD:refs/heads/main")

	s := fakegithub.New(t)
	expectGate(t, s, head)
	s.Expect("GET", "/repos/"+actRepo+"/git/ref/heads/old", fakegithub.JSONFileWith(200, rest(t, "git-ref"), map[string]any{"ref": "refs/heads/old", "object.sha": tg.Base}))

	event := actEventSaying(t, r.dir, "/bench rocm compare base=old ref=main models=llama repeats=5\n")
	log := r.run(t, commentWorkflow, tg.Repo, s, actRepo, "issue_comment", "-e", event, "--actor", actCommenter, "-j", "bench")
	if !jobLine("perfbot comment", "bench", "  ✅  Success - Main Run perfbot").MatchString(log) {
		t.Fatalf("the bench job did not run the compare:\n%s", tail(log, 120))
	}
	res := regexp.MustCompile(`\| results: (\S+) \((\w+)\)`).FindStringSubmatch(log)
	if res == nil || filepath.Base(res[1]) != "gfx1151_"+tg.Base[:8]+"_"+head[:8] || res[2] != VerdictComplete {
		t.Errorf("the bench job's report %q, want the compare folder of A %s and B %s, complete:\n%s", res, tg.Base[:8], head[:8], tail(log, 120))
	}
	// The cap reached the session; on an issue the CSV pair is named by the short SHAs.
	if want := fmt.Sprintf("label %s-%s, up to 5 repeats per side", tg.Base[:7], head[:7]); !strings.Contains(log, want) {
		t.Errorf("the compare does not start with %q:\n%s", want, tail(log, 120))
	}
}

// A bisection in the serverless workflow: the gate resolves both short SHAs, checks the
// bad one is on main and the good one its ancestor, hands the range on (sha the bad
// commit, base the good one, models the one model), and the bisect job checks out the
// whole history and bisects it on the fake host to the commit that planted a slower
// decode (act runs the gate and the bisect job: -j bisect).
func TestActGateHandsABisectOn(t *testing.T) {
	r := newActRig(t)
	tg := benchTarget(t, r, jobsConfig, time.Now().Format(time.DateOnly))
	culprit := commitChange(t, r, tg, "a slower decode", "decode 0.8\n")
	bad := commitChange(t, r, tg, "a comment", "# unrelated\ndecode 0.8\n")
	hosttest.Git(t, r.home, tg.Repo, "push", "--quiet", "origin", "HEAD:refs/heads/main")

	s := fakegithub.New(t)
	repo := "/repos/" + actRepo
	expectGateReads(t, s)
	for _, sha := range []string{tg.Base, bad} {
		s.Expect("GET", repo+"/commits/"+sha[:7], fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
			return fakegithub.Response{Status: 200, Header: http.Header{"Content-Type": {"application/vnd.github.sha"}}, Body: []byte(sha)}
		}).Unchecked())
	}
	s.Expect("GET", repo+"/compare/"+bad+"...main", s.Example(200, "commit-comparison", map[string]any{"status": "identical"}))
	s.Expect("GET", repo+"/compare/"+tg.Base+"..."+bad, s.Example(200, "commit-comparison", map[string]any{"status": "ahead", "ahead_by": 2}))
	expectReaction(t, s, "eyes", "Bearer "+actToken)

	event := actEventSaying(t, r.dir, "/bench rocm bisect good="+tg.Base[:7]+" bad="+bad[:7]+" models=llama\n")
	log := r.run(t, commentWorkflow, tg.Repo, s, actRepo, "issue_comment", "-e", event, "--actor", actCommenter, "-j", "bisect")
	if !jobLine("perfbot comment", "bisect", "  ✅  Success - Main Run perfbot").MatchString(log) {
		t.Fatalf("the bisect job did not run the bisection:\n%s", tail(log, 120))
	}
	if want := "request: comment-" + strconv.Itoa(actCommentID) + ", " + tg.Base + ".." + bad; !strings.Contains(log, want) {
		t.Errorf("the bisect job's report does not say %q:\n%s", want, tail(log, 120))
	}
	res := regexp.MustCompile(`\| results: (\S+) \((\w+)\)`).FindStringSubmatch(log)
	if res == nil || filepath.Base(res[1]) != "gfx1151_"+tg.Base[:8]+"_"+bad[:8] || res[2] != VerdictComplete {
		t.Fatalf("the bisect job's report %q, want the bisection folder of %s..%s, complete:\n%s", res, tg.Base[:8], bad[:8], tail(log, 120))
	}
	// The folder is cleaned away with the workspace; the job's log names the outcome.
	if want := "bisection found: " + culprit + " is the first bad commit"; !strings.Contains(log, want) {
		t.Errorf("the bisect job's log does not say %q:\n%s", want, tail(log, 120))
	}
}

// benchTarget is a target repository with the config cfg and the bench scripts, for a
// rig whose fake harness dates its CSVs date.
func benchTarget(t *testing.T, r *actRig, cfg, date string) hosttest.Target {
	r.env = append(r.env, "FAKE_HARNESS_DATE="+date, "FAKE_HARNESS=")
	files := targetFiles(t, cfg)
	maps.Copy(files, benchFiles(t))
	return hosttest.NewTarget(t, r.home, files)
}

// commitChange commits change as fake-change.txt (which the fake harness reads) on the
// target's clone, with message msg, and returns the new commit.
func commitChange(t *testing.T, r *actRig, tg hosttest.Target, msg, change string) string {
	if err := os.WriteFile(filepath.Join(tg.Repo, "fake-change.txt"), []byte(change), 0o644); err != nil {
		t.Fatal(err)
	}
	hosttest.Git(t, r.home, tg.Repo, "add", "fake-change.txt")
	hosttest.Git(t, r.home, tg.Repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "-m", msg)
	return hosttest.Git(t, r.home, tg.Repo, "rev-parse", "HEAD")
}
