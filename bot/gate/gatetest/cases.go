package gatetest

import (
	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
)

// Config is the perfbot.yml every case's repository has on its default branch.
const Config = `version: 1
epic: 7
models:
  llama: {dir: models/mlx/Meta-Llama-3.1-8B-Instruct-4bit, model_type: llama, weights_gib: 4.5}
  qwen3: {dir: models/mlx/Qwen3-30B-A3B-4bit, model_type: qwen3_moe, weights_gib: 16.0}
default_models: [llama]
sampling: [greedy, t0.7-p0.95]
`

// The commits of the cases.
const (
	MasterSHA   = "6113728f27ae82c7b1a177c8d03f9e96e0adf246"
	PRSHA       = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	ForkSHA     = "b1f6e5c0a9d84e2f93c7d5a6e4b3c2d1f0e9a8b7"
	BranchSHA   = "aa218f56b14c9653891f9e74264a383fa43fefbd"
	ShortSHA    = "9fceb02"
	FullOfShort = "9fceb02d0ae598e95dc970b74767f19372d61af8"
)

var (
	issueCreated = []string{"github", "webhooks", "issue_comment.created.json"}
	issueEdited  = []string{"github", "webhooks", "issue_comment.edited.json"}
	issueDeleted = []string{"github", "webhooks", "issue_comment.deleted.json"}
	prCreated    = []string{"github", "webhooks-pr-comments", "prow.issue_comment.created.pr.lgtm.json"}
	prDrone      = []string{"github", "webhooks-pr-comments", "drone.issue_comment.created.pr.json"}
)

func body(s string) map[string]any { return map[string]any{"comment.body": s} }

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

var (
	defaultModels   = []string{"llama"}
	defaultSampling = []string{"greedy", "t0.7-p0.95"}
)

// Cases returns the table. Each call returns fresh values.
func Cases() []Case {
	return append([]Case{
		{
			Name: "issue comment by a write user is accepted on the default branch head", Payload: issueCreated,
			Edits: body("/profile rocm"),
			World: World{Config: Config, Permission: "write", Branches: map[string]string{DefaultBranch: MasterSHA}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: MasterSHA,
				Models: defaultModels, Sampling: defaultSampling, Epic: 7},
		},
		{
			Name: "PR comment by a write user pins the pull request head", Payload: prCreated,
			Edits: body("Looks good.\n/profile rocm models=qwen3,llama sampling=t0.70,greedy epic=#12\r\nthanks"),
			World: World{Config: Config, Permission: "write", PR: &PR{SHA: PRSHA}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: PRSHA,
				Models: []string{"qwen3", "llama"}, Sampling: []string{"t0.7", "greedy"}, Epic: 12},
		},
		{
			Name: "read-only user is denied whatever author_association says", Payload: issueCreated,
			Edits: with(body("/profile rocm"), "comment.author_association", "OWNER"),
			World: World{Config: Config, Permission: "read"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonPermission, Reply: "has the `read` permission on Codertocat/Hello-World; running perfbot needs `write`"},
		},
		{
			Name: "triage user is denied", Payload: prDrone,
			Edits: body("/bench rocm"),
			World: World{Config: Config, Permission: "triage"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonPermission, Reply: "`triage`"},
		},
		{
			Name: "quoted command is ignored", Payload: issueCreated,
			Edits: body("> /profile rocm\n\nThat is what I would run."),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonNoCommand},
		},
		{
			Name: "line a quote runs on into is ignored", Payload: issueCreated,
			Edits: body("> You wrote:\n/profile rocm\n\nok"),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonNoCommand},
		},
		{
			Name: "command in a fenced code block is ignored", Payload: issueCreated,
			Edits: body("Try:\n\n~~~text\n/profile rocm models=llama\n~~~\n"),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonNoCommand},
		},
		{
			Name: "command in a <pre> or <blockquote> element is ignored", Payload: issueCreated,
			Edits: body("Output:\n<pre>\n/profile rocm\n</pre>\n<blockquote>\n\n/bench rocm\n\n</blockquote>\n"),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonNoCommand},
		},
		{
			Name: "command inside <details> is read as written", Payload: issueCreated,
			Edits: body("<details><summary>Run it</summary>\n\n/profile rocm models=qwen3\n\n</details>"),
			World: World{Config: Config, Permission: "write", Branches: map[string]string{DefaultBranch: MasterSHA}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: MasterSHA,
				Models: []string{"qwen3"}, Sampling: defaultSampling, Epic: 7},
		},
		{
			Name: "command in an indented code block is ignored", Payload: issueCreated,
			Edits: body("Try:\n\n    /profile rocm\n"),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonNoCommand},
		},
		{
			Name: "command in the middle of a line is ignored", Payload: issueCreated,
			Edits: body("Please run /profile rocm when you can"),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonNoCommand},
		},
		{
			Name: "another bot's command is ignored", Payload: prCreated, // /lgtm as captured
			Want: Want{Outcome: gate.Ignored, Reason: gate.ReasonNoCommand},
		},
		{
			Name: "command edited in by another user is refused", Payload: issueEdited,
			Edits: with(body("/profile rocm"), "sender.login", "mallory"),
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonTampered, Reply: "was edited by `mallory`"},
		},
		{
			Name: "command edited in by its author is accepted", Payload: issueEdited,
			Edits: body("/profile rocm models=qwen3"),
			World: World{Config: Config, Permission: "admin", Branches: map[string]string{DefaultBranch: MasterSHA}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: MasterSHA,
				Models: []string{"qwen3"}, Sampling: defaultSampling, Epic: 7},
		},
		{
			Name: "edit that left the command as it was is ignored", Payload: issueEdited,
			Edits: with(body("/profile rocm\n\nthanks!"), "changes.body.from", "/profile rocm\n\nthanks"),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonUnchanged},
		},
		{
			Name: "deleted comment is ignored", Payload: issueDeleted,
			Edits: body("/profile rocm"),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonDeleted},
		},
		{
			Name: "bot comment is ignored", Payload: issueCreated,
			Edits: with(body("/profile rocm"), "comment.user.login", "dependabot[bot]", "comment.user.type", "Bot"),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonBot},
		},
		{
			Name: "perfbot's own comment is ignored", Payload: issueCreated,
			Edits: with(body("perfbot could not run the command on line 1:\n/profile rocm"), "comment.user.login", BotLogin),
			Want:  Want{Outcome: gate.Ignored, Reason: gate.ReasonBot},
		},
		{
			Name: "fork head is refused even for an admin", Payload: prCreated,
			Edits: body("/profile rocm"),
			World: World{Config: Config, Permission: "admin", PR: &PR{SHA: ForkSHA, Fork: true}},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonFork, Reply: "/profile rocm ref=" + ForkSHA},
		},
		{
			Name: "bench of a fork head names the bench command to post", Payload: prDrone,
			Edits: body("/bench rocm"),
			World: World{Config: Config, Permission: "maintain", PR: &PR{SHA: ForkSHA, Fork: true}},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonFork, Reply: "`/bench rocm ref=" + ForkSHA + "`"},
		},
		{
			Name: "fork head with maintain and the full SHA is accepted", Payload: prCreated,
			Edits: body("/profile rocm ref=" + ForkSHA),
			World: World{Config: Config, Permission: "maintain", Commits: map[string]string{ForkSHA: ForkSHA}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: ForkSHA,
				Models: defaultModels, Sampling: defaultSampling, Epic: 7},
		},
		{
			Name: "fork head with write and the full SHA is refused", Payload: prCreated,
			Edits: body("/profile rocm ref=" + ForkSHA),
			World: World{Config: Config, Permission: "write", Commits: map[string]string{ForkSHA: ForkSHA},
				Contains: []Containment{{Head: DefaultBranch, SHA: ForkSHA}}, PR: &PR{SHA: ForkSHA, Fork: true}},
			Want: Want{Outcome: gate.Denied, Reason: gate.ReasonRef, Reply: "may come from a fork"},
		},
		{
			Name: "short SHA on the default branch is resolved and accepted", Payload: issueCreated,
			Edits: body("/profile rocm ref=" + ShortSHA),
			World: World{Config: Config, Permission: "write", Commits: map[string]string{ShortSHA: FullOfShort},
				Contains: []Containment{{Head: DefaultBranch, SHA: FullOfShort, Contained: true}}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: FullOfShort,
				Models: defaultModels, Sampling: defaultSampling, Epic: 7},
		},
		{
			Name: "short SHA on the pull request's own branch is accepted", Payload: prCreated,
			Edits: body("/profile rocm ref=" + ShortSHA),
			World: World{Config: Config, Permission: "write", Commits: map[string]string{ShortSHA: FullOfShort},
				PR:       &PR{SHA: PRSHA},
				Contains: []Containment{{Head: DefaultBranch, SHA: FullOfShort}, {Head: PRSHA, SHA: FullOfShort, Contained: true}}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: FullOfShort,
				Models: defaultModels, Sampling: defaultSampling, Epic: 7},
		},
		{
			Name: "unknown SHA is refused", Payload: issueCreated,
			Edits: body("/profile rocm ref=deadbeef"),
			World: World{Config: Config, Permission: "write", Commits: map[string]string{"deadbeef": ""}},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonRef, Reply: "has no commit `deadbeef`"},
		},
		{
			Name: "branch ref is pinned to its head", Payload: prCreated,
			Edits: body("/profile rocm ref=feature/rocm-gemm"),
			World: World{Config: Config, Permission: "write", Branches: map[string]string{"feature/rocm-gemm": BranchSHA}},
			Want: Want{Outcome: gate.Accepted, Kind: command.Profile, SHA: BranchSHA,
				Models: defaultModels, Sampling: defaultSampling, Epic: 7},
		},
		{
			Name: "missing branch is refused", Payload: issueCreated,
			Edits: body("/profile rocm ref=gone"),
			World: World{Config: Config, Permission: "write", Branches: map[string]string{"gone": ""}},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonRef, Reply: "has no branch `gone`"},
		},
		{
			Name: "unknown model gets the valid ones", Payload: issueCreated,
			Edits: body("/profile rocm models=llama,mistral"),
			World: World{Config: Config, Permission: "write"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonBadCommand, Reply: "Valid: `llama`, `qwen3`"},
		},
		{
			Name: "temperature above 2 is refused", Payload: issueCreated,
			Edits: body("/profile rocm sampling=t2.5"),
			World: World{Config: Config, Permission: "write"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonBadCommand, Reply: "temperature must be in \\[0, 2\\]"},
		},
		{
			Name: "top-p above 1 is refused", Payload: issueCreated,
			Edits: body("/profile rocm sampling=t0.7-p1.5"),
			World: World{Config: Config, Permission: "write"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonBadCommand, Reply: "top-p must be in (0, 1\\]"},
		},
		{
			Name: "two commands are refused", Payload: issueCreated,
			Edits: body("/profile rocm\nand then\n/bench rocm"),
			World: World{Config: Config, Permission: "write"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonBadCommand, Reply: "one command per comment"},
		},
		{
			Name: "unknown subcommand lists the valid ones", Payload: issueCreated,
			Edits: body("/perfbot restart"),
			World: World{Config: Config, Permission: "write"},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonBadCommand, Reply: "Valid: `help`, `status`, `cancel`"},
		},
		{
			Name: "help is answered for anyone", Payload: issueCreated,
			Edits: body("/perfbot help"),
			World: World{Config: Config},
			Want:  Want{Outcome: gate.Accepted, Kind: command.Help, Reply: "`/profile rocm [models=NAME,...]"},
		},
		{
			Name: "status parses", Payload: prDrone,
			Edits: body("/perfbot status"),
			World: World{Config: Config, Permission: "write"},
			Want:  Want{Outcome: gate.Accepted, Kind: command.Status},
		},
		{
			Name: "cancel with an id parses", Payload: issueCreated,
			Edits: body("/perfbot cancel 42"),
			World: World{Config: Config, Permission: "maintain"},
			Want:  Want{Outcome: gate.Accepted, Kind: command.Cancel, ID: "42"},
		},
		{
			Name: "bench on an issue runs the default branch head", Payload: issueCreated,
			Edits: body("/bench rocm"),
			World: World{Config: Config, Permission: "write", Branches: map[string]string{DefaultBranch: MasterSHA}},
			Want:  Want{Outcome: gate.Accepted, Kind: command.Bench, SHA: MasterSHA},
		},
		{
			Name: "repository without a config is told so", Payload: issueCreated,
			Edits: body("/profile rocm"),
			World: World{NoConfig: true},
			Want:  Want{Outcome: gate.Denied, Reason: gate.ReasonNoConfig, Reply: "has no `.github/perfbot.yml`"},
		},
	}, append(compareCases(), bisectCases()...)...)
}
