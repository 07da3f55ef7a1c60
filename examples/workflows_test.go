package examples

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/server"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/testfix"
	"gopkg.in/yaml.v3"
)

// The example workflows: the one the server dispatches (copied as the host's
// `workflow`, perfbot.yml), the serverless one for comments, and the nightly.
const (
	dispatchFile = "perfbot-profile.yml"
	commentFile  = "perfbot-comment.yml"
	nightlyFile  = "perfbot-nightly.yml"
)

type step struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	If   string            `yaml:"if"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

type wfJob struct {
	If          string `yaml:"if"`
	RunsOn      any    `yaml:"runs-on"`
	Needs       any    `yaml:"needs"`
	Permissions any    `yaml:"permissions"`
	Steps       []step `yaml:"steps"`
	raw         string // the job's YAML, to search
}

type workflow struct {
	On   map[string]any   `yaml:"on"`
	Jobs map[string]wfJob `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "examples", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var raw struct {
		Jobs map[string]yaml.Node `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for id, n := range raw.Jobs {
		out, err := yaml.Marshal(&n)
		if err != nil {
			t.Fatal(err)
		}
		j := wf.Jobs[id]
		j.raw = string(out)
		wf.Jobs[id] = j
	}
	return wf
}

func exampleWorkflows(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testfix.RepoRoot(t), "examples", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example workflows: %v", err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	return names
}

// One comment starts one run: the server answers comments and dispatches the workflow
// it names, so that workflow must not also take the comment; only the serverless one
// does. A deployment copies one of the two (docs/install.md says which).
func TestOneCommentStartsOneRun(t *testing.T) {
	t.Parallel()
	var onComment []string
	for _, name := range exampleWorkflows(t) {
		if _, ok := readWorkflow(t, name).On["issue_comment"]; ok {
			onComment = append(onComment, name)
		}
	}
	if !slices.Equal(onComment, []string{commentFile}) {
		t.Errorf("example workflows triggered by issue_comment: %v, want only %s (a comment must start one run, not one per workflow)", onComment, commentFile)
	}
	dispatch := readWorkflow(t, dispatchFile)
	if got := slices.Sorted(maps.Keys(dispatch.On)); !slices.Equal(got, []string{"workflow_dispatch"}) {
		t.Errorf("%s is triggered by %v, want workflow_dispatch alone: the server dispatches it", dispatchFile, got)
	}
	if got := slices.Sorted(maps.Keys(readWorkflow(t, commentFile).On)); !slices.Equal(got, []string{"issue_comment"}) {
		t.Errorf("%s is triggered by %v, want issue_comment alone", commentFile, got)
	}
	// The dispatch workflow declares every input the server sends, and requires none it
	// does not send.
	var declared struct {
		Inputs map[string]struct {
			Required bool `yaml:"required"`
		} `yaml:"inputs"`
	}
	b, _ := yaml.Marshal(dispatch.On["workflow_dispatch"])
	if err := yaml.Unmarshal(b, &declared); err != nil {
		t.Fatal(err)
	}
	// A compare sends the most inputs: base and repeats besides the rest.
	sent := server.Inputs(queue.Request{Base: "9fceb02d0ae598e95dc970b74767f19372d61af8", Repeats: 10})
	for name, in := range declared.Inputs {
		if _, ok := sent[name]; in.Required && !ok {
			t.Errorf("%s requires input %s, which the server does not send", dispatchFile, name)
		}
	}
	for name := range sent {
		if _, ok := declared.Inputs[name]; !ok {
			t.Errorf("the server sends input %s, which %s does not declare (GitHub refuses the dispatch)", name, dispatchFile)
		}
	}
}

// The serverless gate job starts only for a comment that may hold a perfbot command:
// its if: is true for every comment in which bot/command finds one (it may not lose a
// command the server would take), and false for everyday comments.
func TestGateIfSkipsCommentsWithoutACommand(t *testing.T) {
	t.Parallel()
	gate, ok := readWorkflow(t, commentFile).Jobs["gate"]
	if !ok || gate.If == "" {
		t.Fatalf("%s has no gate job with an if:", commentFile)
	}
	starts := func(body string) bool {
		v, err := fakegithub.EvalExpr(gate.If, func(name string) string {
			return map[string]string{"github.event.comment.body": body, "github.event_name": "issue_comment"}[name]
		})
		if err != nil {
			t.Fatalf("evaluating the gate's if: %v", err)
		}
		return fakegithub.Truthy(v)
	}
	cfg, err := config.Parse([]byte(gatetest.Config), "perfbot.yml")
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, verb := range command.Verbs() {
		for _, indent := range []string{"", " ", "  ", "   "} {
			for _, before := range []string{"", "Please run\n", "Please run\r\n", "> quoted\n\n"} {
				for _, after := range []string{"", " rocm", "\tx", " help\nthanks"} {
					commands = append(commands, before+indent+verb+after)
				}
			}
		}
	}
	for _, c := range gatetest.Cases() {
		if body, ok := c.Edits["comment.body"].(string); ok {
			commands = append(commands, body)
		}
	}
	n := 0
	for _, body := range commands {
		if _, found, _ := command.Parse(body, cfg); !found {
			continue
		}
		n++
		if !starts(body) {
			t.Errorf("the gate's if: skips %q, which holds a command", body)
		}
	}
	if n < 100 {
		t.Errorf("only %d of the bodies hold a command: the test checks too little", n)
	}
	for _, body := range []string{"", "LGTM, thanks!", "/lgtm", "/retest\n/lgtm", "We should profile this on rocm.", "see https://example.com/profile\nbench later"} {
		if _, found, _ := command.Parse(body, cfg); found {
			t.Fatalf("%q holds a command", body)
		}
		if starts(body) {
			t.Errorf("the gate's if: starts a runner for %q, which holds no command", body)
		}
	}
}

// perfbotStep is the job input of a `uses: lablup/perfbot@...` step, "" for another step.
func perfbotStep(s step) string {
	if !strings.HasPrefix(s.Uses, "lablup/perfbot@") {
		return ""
	}
	return s.With["job"]
}

// hostJobs are the Action's jobs that check out, build or run the pinned commit.
var hostJobs = []string{"profile", "gemm-tests", "patch", "bench", "bisect"}

// The split: a job that checks out, builds or runs the target repository's code holds
// no secret and a read-only token, checks out without leaving credentials, hands its
// results on as an artifact and cleans up; the job that publishes holds the key, never
// checks out, and publishes the downloaded artifact.
func TestSecretsNeverShareAJobWithTheCode(t *testing.T) {
	t.Parallel()
	for _, name := range exampleWorkflows(t) {
		wf := readWorkflow(t, name)
		uploads := map[string]string{} // GPU job -> artifact name
		for id, j := range wf.Jobs {
			runsCode, publishes := false, false
			for _, s := range j.Steps {
				runsCode = runsCode || strings.HasPrefix(s.Uses, "actions/checkout@") || slices.Contains(hostJobs, perfbotStep(s))
				publishes = publishes || perfbotStep(s) == "publish"
			}
			where := fmt.Sprintf("%s: job %s", name, id)
			if runsCode && publishes {
				t.Errorf("%s runs the repository's code and publishes", where)
			}
			if runsCode {
				for _, p := range checkCodeJob(j) {
					t.Errorf("%s runs the repository's code: %s", where, p)
				}
				for _, s := range j.Steps {
					if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.HasPrefix(s.With["name"], "perfbot-results-") {
						uploads[id] = s.With["name"]
					}
				}
			}
			if publishes {
				for _, p := range checkPublishJob(j) {
					t.Errorf("%s publishes: %s", where, p)
				}
			}
		}
		// Each publish job downloads the artifact its GPU job uploaded.
		for id, j := range wf.Jobs {
			for _, s := range j.Steps {
				if !strings.HasPrefix(s.Uses, "actions/download-artifact@") {
					continue
				}
				var needs []string
				switch n := j.Needs.(type) {
				case string:
					needs = []string{n}
				case []any:
					for _, v := range n {
						needs = append(needs, fmt.Sprint(v))
					}
				}
				if !slices.ContainsFunc(needs, func(n string) bool { return uploads[n] == s.With["name"] }) {
					t.Errorf("%s: job %s downloads %q, which no job it needs uploads (%v)", name, id, s.With["name"], uploads)
				}
			}
		}
		if len(uploads) == 0 {
			t.Errorf("%s: no job hands its results on as an artifact", name)
		}
	}
}

// checkCodeJob returns what is wrong with a job that runs the repository's code.
func checkCodeJob(j wfJob) []string {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if p, ok := j.Permissions.(map[string]any); !ok || len(p) > 1 || len(p) == 1 && p["contents"] != "read" {
		bad("permissions %v, want contents: read alone (or none)", j.Permissions)
	}
	for _, word := range []string{"secrets.", "app-private-key", "github-token", "app-id"} {
		if strings.Contains(j.raw, word) {
			bad("it names %s", word)
		}
	}
	results := false
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["persist-credentials"] != "false" {
			bad("actions/checkout without persist-credentials: false leaves the token in .git/config for the code under test")
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.HasPrefix(s.With["name"], "perfbot-results-") {
			// The results folder itself (a nightly's), or the folder it was staged in
			// by name (a profile's <gfx>_<commit8>).
			results = regexp.MustCompile(`^\$\{\{ steps\.[a-z-]+\.outputs\.results-dir \}\}$`).MatchString(s.With["path"]) ||
				s.With["path"] == "${{ runner.temp }}/perfbot-artifact" && strings.Contains(j.raw, ".outputs.results-dir")
		}
	}
	if !results {
		bad("no actions/upload-artifact step hands the results folder (steps.<id>.outputs.results-dir) on as perfbot-results-...")
	}
	if last := j.Steps[len(j.Steps)-1]; last.If != "always()" || last.Run == "" || !strings.Contains(last.Run, "GITHUB_WORKSPACE") {
		bad("the last step does not clean the workspace with if: always()")
	}
	return problems
}

// checkPublishJob returns what is wrong with a job that publishes.
func checkPublishJob(j wfJob) []string {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if j.RunsOn != "${{ vars.PERFBOT_PUBLISH_RUNNER || 'ubuntu-latest' }}" {
		bad("runs-on %v, want ${{ vars.PERFBOT_PUBLISH_RUNNER || 'ubuntu-latest' }}, away from the GPU runner", j.RunsOn)
	}
	for _, m := range regexp.MustCompile(`needs\.([A-Za-z0-9_-]+)\.outputs`).FindAllStringSubmatch(j.raw, -1) {
		if m[1] != "gate" {
			bad("it reads the outputs of job %s, which the code that job ran could forge", m[1])
		}
	}
	downloaded := ""
	for _, s := range j.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/checkout@"):
			bad("it checks out the repository")
		case strings.HasPrefix(s.Uses, "actions/download-artifact@"):
			downloaded = s.With["path"]
		case perfbotStep(s) == "publish":
			if downloaded == "" || s.With["results"] != downloaded {
				bad("publish takes results %q, not the folder the artifact was downloaded to before it (%q)", s.With["results"], downloaded)
			}
			if s.With["ref"] == "" {
				bad("publish has no ref: the pinned commit")
			}
		case perfbotStep(s) != "":
			bad("it runs job %s besides publish", perfbotStep(s))
		}
	}
	if !strings.HasPrefix(downloaded, "${{ runner.temp }}/") {
		bad("the artifact goes to %q, want a folder under ${{ runner.temp }}", downloaded)
	}
	return problems
}

// The checks above fail on the mistakes they exist to catch.
func TestSplitChecksCatchMistakes(t *testing.T) {
	t.Parallel()
	wf := readWorkflow(t, dispatchFile)
	gpu, pub := wf.Jobs["profile"], wf.Jobs["publish"]
	if p := checkCodeJob(gpu); len(p) != 0 {
		t.Fatalf("the profile job: %v", p)
	}
	if p := checkPublishJob(pub); len(p) != 0 {
		t.Fatalf("the publish job: %v", p)
	}
	withStep := func(j wfJob, i int, edit func(*step)) wfJob {
		j.Steps = slices.Clone(j.Steps)
		s := j.Steps[i]
		s.With = maps.Clone(s.With)
		edit(&s)
		j.Steps[i] = s
		return j
	}
	for _, c := range []struct {
		name string
		job  wfJob
		want string
	}{
		{"write token", func() wfJob { j := gpu; j.Permissions = map[string]any{"contents": "write"}; return j }(), "permissions"},
		{"a secret", func() wfJob { j := gpu; j.raw += "\nkey: ${{ secrets.PERFBOT_APP_PRIVATE_KEY }}"; return j }(), "secrets."},
		{"credentials kept", withStep(gpu, 0, func(s *step) { delete(s.With, "persist-credentials") }), "persist-credentials"},
		{"no cleanup", func() wfJob { j := gpu; j.Steps = j.Steps[:len(j.Steps)-1]; return j }(), "clean"},
	} {
		if got := strings.Join(checkCodeJob(c.job), "\n"); !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want one with %q", c.name, got, c.want)
		}
	}
	checkout := step{Uses: "actions/checkout@v4", With: map[string]string{"persist-credentials": "false"}}
	for _, c := range []struct {
		name string
		job  wfJob
		want string
	}{
		{"on the GPU runner", func() wfJob { j := pub; j.RunsOn = []any{"self-hosted", "gfx1151"}; return j }(), "runs-on"},
		{"a checkout", func() wfJob { j := pub; j.Steps = append([]step{checkout}, j.Steps...); return j }(), "checks out"},
		{"another folder", withStep(pub, 2, func(s *step) { s.With["results"] = "results" }), "not the folder"},
		{"the GPU job's outputs", func() wfJob { j := pub; j.raw += "\nRESULTS: ${{ needs.profile.outputs.results-dir }}"; return j }(), "could forge"},
	} {
		if got := strings.Join(checkPublishJob(c.job), "\n"); !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want one with %q", c.name, got, c.want)
		}
	}
}

// The examples run one release of perfbot's Action, by tag or commit, never a branch:
// whoever can push a moving ref would choose the code that runs next to the App's key.
// docs/install.md names the same ref.
func TestPerfbotIsPinned(t *testing.T) {
	t.Parallel()
	refs := map[string][]string{}
	for _, name := range exampleWorkflows(t) {
		b, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "examples", "workflows", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`uses:\s*lablup/perfbot@(\S+)`).FindAllStringSubmatch(string(b), -1) {
			refs[m[1]] = append(refs[m[1]], name)
		}
	}
	if len(refs) != 1 {
		t.Fatalf("the example workflows use lablup/perfbot at %v, want one ref", refs)
	}
	ref := slices.Collect(maps.Keys(refs))[0]
	if !regexp.MustCompile(`^(v\d+\.\d+\.\d+|[0-9a-f]{40})$`).MatchString(ref) {
		t.Errorf("lablup/perfbot@%s: want a release tag vX.Y.Z or a full commit SHA, not a branch", ref)
	}
	doc, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "lablup/perfbot@"+ref) {
		t.Errorf("docs/install.md does not name lablup/perfbot@%s, the ref the examples use", ref)
	}
}
