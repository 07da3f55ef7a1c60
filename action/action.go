package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/host"
)

// ErrJobFailed is returned when the job failed; why is already on the step as error
// annotations, so the caller prints nothing more (error text may carry hostile input,
// and printed raw it could be read as a workflow command).
var ErrJobFailed = errors.New("the job failed: see the step's error annotations")

// Environment variables the Action reads besides the runtime's own.
const (
	// EnvBotLogin names the account of github-token when it is a machine user's token
	// (its comments are perfbot's own); the default is github-actions[bot], and an App
	// finds its own login.
	EnvBotLogin = "PERFBOT_BOT_LOGIN"
	// EnvRoot reads host files under another root (a fake host, for tests and the demo).
	EnvRoot = "PERFBOT_ROOT"
	// EnvRepoURL is the repository the publish job clones when it publishes results
	// from another job; the default is GITHUB_SERVER_URL/GITHUB_REPOSITORY.git (a path
	// on this machine in tests and the demo).
	EnvRepoURL = "PERFBOT_REPO_URL"
)

// DefaultTokenLogin is the login of the Actions GITHUB_TOKEN's comments.
const DefaultTokenLogin = "github-actions[bot]"

// maxEventBytes bounds the event file, as GitHub bounds webhook payloads.
const maxEventBytes = 25 << 20

// Options are what `perfbot action` hands the Action.
type Options struct {
	Stdout io.Writer // the step's log
	// Getenv reads the runtime's variables and the inputs; nil means os.Getenv.
	Getenv func(string) string
	// Environ is the environment of the host jobs' processes (build, bench, profiler,
	// tests) and of git in the checkout, its PATH where they are looked up; nil means
	// os.Environ(). perfbot passes nil: the step's environment is the process's.
	Environ func() []string
}

// Run runs the job the inputs name and reports it through the runtime: outputs, step
// summary, annotations. It returns ErrJobFailed when the job failed, or another error
// when the step's runtime itself is missing (no GITHUB_OUTPUT).
func Run(ctx context.Context, o Options) error {
	_, err := run(ctx, o)
	return err
}

// result is what a job did, for the tests that look behind the outputs.
type result struct {
	outputs map[string]string
	gate    *gateResult
}

func run(ctx context.Context, o Options) (result, error) {
	rt, err := NewRuntime(o.Stdout, o.Getenv)
	if err != nil {
		return result{}, err
	}
	environ := o.Environ
	if environ == nil {
		environ = os.Environ
	}
	s, err := newStep(rt, environ())
	if err != nil {
		rt.Annotate(Annotation{Level: Error, Title: "perfbot: the step cannot run", Message: err.Error()})
		return result{outputs: rt.Outputs()}, ErrJobFailed
	}
	var res result
	switch s.in.Job {
	case JobProfile:
		err = s.profile(ctx)
	case JobGemmTests:
		err = s.gemmTests(ctx)
	case JobPatch:
		err = s.patchJob(ctx)
	case JobPublish:
		err = s.publish(ctx)
	case JobGate:
		res.gate, err = s.gate(ctx)
	case JobBench:
		err = s.bench(ctx)
	case JobBisect:
		err = s.bisect(ctx)
	}
	s.progressDone()
	res.outputs = rt.Outputs()
	if err != nil {
		title := "perfbot " + s.in.Job + " failed"
		if ctx.Err() != nil {
			title = "perfbot " + s.in.Job + " was interrupted"
		}
		rt.Annotate(Annotation{Level: Error, Title: title, Message: err.Error()})
		return res, ErrJobFailed
	}
	return res, nil
}

// step is one run of the Action: its inputs and the job's surroundings.
type step struct {
	rt *Runtime
	in Inputs
	// environ is the environment of the processes the step starts (Options.Environ).
	environ []string
	// host is the machine of the host jobs: "/" or PERFBOT_ROOT.
	host host.Host
	// workspace is the checkout of the target repository (GITHUB_WORKSPACE).
	workspace string
	// root holds what the host jobs leave for the later steps of the job:
	// RUNNER_TEMP/perfbot.
	root      string
	repo      gh.Repo
	serverURL string
	// progress is the host job's progress file (progress.go); nil when none is kept.
	progress *progressFile
}

func newStep(rt *Runtime, environ []string) (*step, error) {
	in, err := readInputs(rt)
	if err != nil {
		return nil, err
	}
	s := &step{rt: rt, in: in, environ: environ}
	env := rt.Getenv
	if s.in.APIURL == "" {
		s.in.APIURL = env("GITHUB_API_URL")
	}
	s.serverURL = env("GITHUB_SERVER_URL")
	if r := env("GITHUB_REPOSITORY"); r != "" {
		if s.repo, err = gh.ParseRepo(r); err != nil {
			return nil, fmt.Errorf("GITHUB_REPOSITORY: %w", err)
		}
	}
	if in.Job == JobGate {
		return s, nil
	}
	tmp := env("RUNNER_TEMP")
	if tmp == "" {
		return nil, errors.New("RUNNER_TEMP is not set: `perfbot action` runs as a step of a GitHub Actions job")
	}
	s.root = filepath.Join(tmp, "perfbot")
	if in.Job == JobPublish && in.Results != "" {
		// Publishing another job's results needs no checkout: the repository is cloned
		// and only its git objects are read.
		return s, nil
	}
	// The host jobs and publish work on the checkout and leave files for the later
	// steps of the same job.
	s.workspace = env("GITHUB_WORKSPACE")
	if s.workspace == "" {
		return nil, errors.New("GITHUB_WORKSPACE is not set: check out the target repository with actions/checkout before this step")
	}
	if fi, err := os.Stat(s.workspace); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the workspace %s is not a folder: check out the target repository with actions/checkout before this step", s.workspace)
	}
	root := env(EnvRoot)
	if root == "" {
		root = "/"
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s=%s is not a folder", EnvRoot, root)
	}
	// The job's processes (build, bench, profiler, tests) get the step's environment.
	s.host = host.New(root, host.EnvValue(s.environ, "PATH"), s.environ)
	return s, nil
}

// configPath is the config file the host jobs read: the config input, else the
// checkout's .github/perfbot.yml; "" when neither exists (the job decides whether the
// defaults do). It never leads outside the checkout.
func (s *step) configPath() (string, error) {
	rel, given := s.in.Config, s.in.Config != ""
	if !given {
		rel = ".github/perfbot.yml"
	}
	p, err := insideCheckout(s.workspace, rel)
	if err != nil {
		return "", fmt.Errorf("input config: %w", err)
	}
	if p == "" && given {
		return "", fmt.Errorf("input config: the checkout has no %s", rel)
	}
	return p, nil
}

// setOutputs writes outputs in order, skipping empty values.
func (s *step) setOutputs(kv ...string) error {
	var errs []error
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		errs = append(errs, s.rt.SetOutput(kv[i], kv[i+1]))
	}
	return errors.Join(errs...)
}

// client connects to GitHub as the inputs say: the App when app-id is given, else
// github-token. Every token it will use is masked first.
func (s *step) client(ctx context.Context, repo gh.Repo) (*gh.Client, error) {
	if s.in.AppID == 0 && s.in.Token == "" {
		return nil, errors.New("input github-token is empty: pass ${{ github.token }} (or an App with app-id and app-private-key)")
	}
	c, err := gh.Connect(ctx, gh.Credentials{Token: s.in.Token, AppID: s.in.AppID, PrivateKeyPEM: []byte(s.in.AppKey), Repo: repo},
		gh.Options{BaseURL: s.in.APIURL, Login: s.botLogin()})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// botLogin is the account whose comments are perfbot's own: PERFBOT_BOT_LOGIN, else
// the Actions token's github-actions[bot]; "" lets an App find its own.
func (s *step) botLogin() string {
	if login := s.rt.Getenv(EnvBotLogin); login != "" || s.in.AppID != 0 {
		return login
	}
	return DefaultTokenLogin
}

// event reads the event file (GITHUB_EVENT_PATH), bounded.
func (s *step) event() ([]byte, error) {
	p := s.rt.Getenv("GITHUB_EVENT_PATH")
	if p == "" {
		return nil, errors.New("GITHUB_EVENT_PATH is not set: the job has no event to read")
	}
	b, err := infile.ReadFile(p, maxEventBytes)
	if err != nil {
		return nil, fmt.Errorf("reading the event: %w", err)
	}
	return b, nil
}

// eventIssue is the issue or pull request number of an issue_comment event (the
// command's thread), 0 for other events.
func (s *step) eventIssue() int {
	if s.rt.Getenv("GITHUB_EVENT_NAME") != "issue_comment" {
		return 0
	}
	b, err := s.event()
	if err != nil {
		return 0
	}
	var ev struct {
		Issue struct {
			Number int `json:"number"`
		} `json:"issue"`
	}
	if json.Unmarshal(b, &ev) != nil || ev.Issue.Number < 0 {
		return 0
	}
	return ev.Issue.Number
}

// eventPR is the pull request number of an issue_comment event on a pull request, 0
// for a comment on an issue and for other events.
func (s *step) eventPR() int {
	if s.rt.Getenv("GITHUB_EVENT_NAME") != "issue_comment" {
		return 0
	}
	b, err := s.event()
	if err != nil {
		return 0
	}
	var ev struct {
		Issue struct {
			Number      int              `json:"number"`
			PullRequest *json.RawMessage `json:"pull_request"`
		} `json:"issue"`
	}
	if json.Unmarshal(b, &ev) != nil || ev.Issue.Number <= 0 || ev.Issue.PullRequest == nil || string(*ev.Issue.PullRequest) == "null" {
		return 0
	}
	return ev.Issue.Number
}

// git runs git in the checkout and returns its trimmed output.
func (s *step) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", s.workspace}, args...)...)
	cmd.Env = append(slices.Clip(s.environ), "GIT_TERMINAL_PROMPT=0")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(clip(string(ee.Stderr))))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}

// pin checks out the pinned commit (the ref input) in the checkout and returns the
// commit the job runs on. The workflow's checkout may be of a branch that moved since
// the command was accepted: only the pinned commit runs, and the log says so.
func (s *step) pin(ctx context.Context) (string, error) {
	head, err := s.git(ctx, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("reading the checkout's commit: %w (check out the target repository with actions/checkout)", err)
	}
	ref := s.in.Ref
	if ref == "" || strings.HasPrefix(head, ref) {
		return head, nil
	}
	if _, err := s.git(ctx, "cat-file", "-e", ref+"^{commit}"); err != nil {
		if len(ref) != 40 {
			return "", fmt.Errorf("the pinned commit %s is not in the checkout: pass its full SHA as ref, or check out with fetch-depth: 0", ref)
		}
		// A shallow checkout has only its own commit; GitHub serves any commit of the
		// repository by SHA.
		if _, err := s.git(ctx, "fetch", "--quiet", "--no-tags", "--depth=1", "origin", ref); err != nil {
			return "", fmt.Errorf("fetching the pinned commit %s: %w", ref, err)
		}
	}
	if _, err := s.git(ctx, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", ref+"^{commit}"); err != nil {
		return "", fmt.Errorf("checking out the pinned commit %s: %w", ref, err)
	}
	pinned, err := s.git(ctx, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil || !strings.HasPrefix(pinned, ref) {
		return "", fmt.Errorf("checking out the pinned commit %s: the checkout is at %s", ref, pinned)
	}
	s.rt.Annotate(Annotation{Level: Notice, Title: "perfbot: pinned commit",
		Message: fmt.Sprintf("the workflow checked out %s; the job runs the pinned commit %s", head, pinned)})
	return pinned, nil
}

// checkout is where every job on the checkout starts: the pinned commit checked out and
// the config file found.
func (s *step) checkout(ctx context.Context) (commit, cfgPath string, err error) {
	if commit, err = s.pin(ctx); err != nil {
		return "", "", err
	}
	cfgPath, err = s.configPath()
	return commit, cfgPath, err
}
