package publish

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/rank"
)

// Options says what to publish and where.
type Options struct {
	// ResultsDir is the folder `perfbot run profile` wrote: the <gfx>_<commit> folder,
	// or the folder holding exactly one of them.
	ResultsDir string
	// RepoDir is a clone of the target repository (bare or not) holding the base
	// commit, or able to fetch it from Remote. Only its git objects are read (the
	// attribution rules of the base commit); its checkout is not touched and nothing
	// of it runs.
	RepoDir string
	Config  config.Config
	// Base is the pinned commit that was profiled; "" takes the session's commit. The
	// attribution rules and the patch are read from it. The results commit itself is
	// built on the default branch's head at publishing time, so the pull request holds
	// only perfbot's files.
	Base string
	// Branch is the bot branch; "" takes the request's own branch under
	// Config.Branches.Profile (gitpub.BranchName: <profile>-pr-N or <profile>-issue-N
	// for Issue N, <profile> itself without an Issue).
	Branch string
	// BaseBranch is the branch the pull request merges into; "" asks GitHub for the
	// default branch (a dry run takes "main").
	BaseBranch string
	// Remote is the remote of RepoDir to push to; "" means origin.
	Remote string
	// GitToken authenticates an https push; it never reaches argv or logs.
	GitToken string
	// Author is the commit identity; zero means perfbot[bot].
	Author gitpub.Identity

	// Sink receives the writes: ToGitHub, or ToDir for a dry run, whose folder gets
	// the documents instead of GitHub (pr.md, epic-comment.md, status-comment.md,
	// check-run.md, step-summary.md and summary.json).
	Sink Sink
	// Repo is the target repository on GitHub, where links point; "" takes the
	// GitHub sink's. Without one (a dry run) links are repo-relative paths.
	Repo gh.Repo
	// ServerURL is where links point, default https://github.com.
	ServerURL string

	CheckRunID       int64 // the check run made at acceptance; 0 in token mode
	TriggerCommentID int64 // the comment that asked for the run; gets the final reaction
	StatusCommentID  int64 // the status comment to finish
	Issue            int   // the issue or pull request the command came from
	// IssueKind says whether Issue is a pull request (gitpub.TriggerPR) or an issue
	// (gitpub.TriggerIssue); "" asks GitHub. A dry run cannot ask: it takes an issue
	// and says so.
	IssueKind gitpub.TriggerKind
	// Requester is the login that asked for the run; "" takes the trigger comment's
	// author from GitHub (a dry run leaves it out).
	Requester string
	// TriggerCommentURL links the comment that asked; "" takes it from GitHub.
	TriggerCommentURL string
	// Epic overrides Config.Epic when positive (the command's epic= argument).
	Epic int
	// Command is the command as the status comment names it; default "/profile rocm".
	Command string
	// RunLinks are the workflow run's links (its page, its traces artifact), added to
	// the status comment's and the check run's.
	RunLinks []report.Link

	// Prepared is the grouped_gemm gate patch prepared for these results, used when
	// the results folder has no gemm_patch.json (the command line prepares it on a
	// maintainer's own checkout). Publish itself never prepares one: that runs the
	// repository's code.
	Prepared *patch.Prepared

	Now func() time.Time
}

// destinationErrors says what is missing to publish results written by job (a
// `perfbot run ...` command) from a clone repo, to GitHub or into a dry-run folder.
func destinationErrors(results, repo, job string, sink Sink, r *gh.Repo) []error {
	var errs []error
	if results == "" {
		errs = append(errs, fmt.Errorf("no results folder: pass the folder `perfbot %s` wrote", job))
	}
	if repo == "" {
		errs = append(errs, errors.New("no repository: pass a clone of the target repository"))
	}
	gs, toGitHub := sink.(githubSink)
	if sink == nil || sink == (dirSink{}) {
		errs = append(errs, errors.New("neither a GitHub client nor a dry-run folder: give one"))
	}
	if toGitHub && r.Owner == "" {
		*r = gs.repo
	}
	if toGitHub && (gs.api == nil || r.Owner == "") {
		errs = append(errs, errors.New("no GitHub repository (owner/name) to publish to"))
	}
	return errs
}

// gitDefaults fills the remote, the commit identity and the server links point to.
func gitDefaults(remote *string, author *gitpub.Identity, server *string) {
	if *remote == "" {
		*remote = "origin"
	}
	if author.Name == "" {
		*author = gitpub.Identity{Name: "perfbot[bot]", Email: "perfbot[bot]@users.noreply.github.com"}
	}
	if *server == "" {
		*server = "https://github.com"
	}
	*server = strings.TrimRight(*server, "/")
}

// target is where the writes go and the bot branch before the push (options).
func (o Options) target() (Sink, Git)         { return o.Sink, Git{Branch: o.Branch, Remote: o.Remote} }
func (o BaselineOptions) target() (Sink, Git) { return o.Sink, Git{Branch: o.Branch, Remote: o.Remote} }
func (o CompareOptions) target() (Sink, Git)  { return o.Sink, Git{Branch: o.Branch, Remote: o.Remote} }

// checked is the normalized options o, or what is wrong with them: doing says what
// they were refused for.
func checked[O any](o O, doing string, errs []error) (O, error) {
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("%s: %w", doing, err)
	}
	return o, nil
}

func (o Options) normalize() (Options, error) {
	errs := destinationErrors(o.ResultsDir, o.RepoDir, "run profile", o.Sink, &o.Repo)
	if o.Branch == "" && o.Config.Branches.Profile == "" {
		errs = append(errs, errors.New("no bot branch: set branches.profile in the configuration"))
	}
	switch o.IssueKind {
	case "", gitpub.TriggerPR, gitpub.TriggerIssue:
	default:
		errs = append(errs, fmt.Errorf("issue kind %q: want %q or %q", string(o.IssueKind), gitpub.TriggerPR, gitpub.TriggerIssue))
	}
	if o.Issue < 0 {
		errs = append(errs, fmt.Errorf("issue %d: not an issue number", o.Issue))
	}
	if o.Epic <= 0 {
		o.Epic = o.Config.Epic
	}
	gitDefaults(&o.Remote, &o.Author, &o.ServerURL)
	if o.Command == "" {
		o.Command = "/profile rocm"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Config.Results.Profiles == "" || o.Config.Results.Reports == "" {
		d := config.Default()
		if o.Config.Results.Profiles == "" {
			o.Config.Results.Profiles = d.Results.Profiles
		}
		if o.Config.Results.Reports == "" {
			o.Config.Results.Reports = d.Results.Reports
		}
	}
	return checked(o, "publishing", errs)
}

// Summary says what Publish did; a dry run writes it as summary.json.
type Summary struct {
	DryRun  bool     `json:"dry_run"`
	Results string   `json:"results"`
	GFX     string   `json:"gfx"`
	Commit  string   `json:"commit"`
	Date    string   `json:"date"`
	Runs    []string `json:"runs"`
	Order   []string `json:"order"`
	// Ranking is the ranked port order with its evidence.
	Ranking *rank.Ranking `json:"-"`
	Report  string        `json:"report"`
	Files   []string      `json:"files"`
	Skipped []string      `json:"skipped,omitempty"`
	Git     Git           `json:"git"`
	// OnMain says whether the profiled commit is in the default branch's history;
	// the results commit is built on that branch's head (Git.Base) either way.
	OnMain    bool     `json:"on_main"`
	Trigger   string   `json:"trigger,omitempty"`   // "pull request #1900", "issue #1814"
	Requester string   `json:"requester,omitempty"` // who asked
	Patch     *Patch   `json:"patch,omitempty"`
	Verify    Verify   `json:"verify"`
	Draft     bool     `json:"draft"`
	Why       []string `json:"draft_reasons,omitempty"`
	PR        Outcome  `json:"pr"`
	Epic      Outcome  `json:"epic"`
	// Request is the report posted on the requesting pull request (a profile of a
	// commit not yet on the default branch); Stale the bot branches of closed
	// requests that were deleted or kept.
	Request Outcome   `json:"request_comment,omitzero"`
	Stale   []Outcome `json:"stale_branches,omitempty"`
	Reported
	Ending
}

// Reported is what the end steps that report to the requester did: the status
// comment, the check run and the reaction.
type Reported struct {
	Status   Outcome `json:"status_comment"`
	CheckRun Outcome `json:"check_run"`
	Reaction Outcome `json:"reaction"`
}

// Ending is how a publication ended, the last part of every kind's summary.
type Ending struct {
	Notes      []string `json:"notes,omitempty"`
	Errors     []string `json:"errors,omitempty"`
	Conclusion string   `json:"conclusion"` // of publishing: success or failure

	// StepSummary is the job step summary (Markdown, under 1 MiB).
	StepSummary string `json:"-"`
}

// ending is how applying a plan ended.
func ending(a *Applied) Ending {
	return Ending{Notes: a.Notes, Errors: a.ErrorTexts(), Conclusion: a.Conclusion(), StepSummary: a.StepSummary}
}

// OK reports whether publishing finished without an error.
func (e Ending) OK() bool { return e.Conclusion == "success" }

// Git is what happened to the bot branch.
type Git struct {
	Branch  string `json:"branch"`
	Remote  string `json:"remote"`
	Base    string `json:"base"`
	Commit  string `json:"commit,omitempty"`
	Action  string `json:"action,omitempty"` // created, updated or unchanged
	Pushed  bool   `json:"pushed"`
	Retries int    `json:"retries,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Patch is what the grouped_gemm patch did.
type Patch struct {
	Decision string   `json:"decision"`
	Changed  []string `json:"changed,omitempty"`
	Checker  string   `json:"checker,omitempty"`
	Error    string   `json:"error,omitempty"`
	// Withheld says why the patch is shown but not committed (the profiled commit is
	// not on the default branch, or the branch changed the patched files since).
	Withheld string `json:"withheld,omitempty"`
	// Pending are the files the withheld patch would change.
	Pending []string `json:"pending,omitempty"`
}

// Verify is the verification of the patched tree.
type Verify struct {
	Passed   bool     `json:"passed"`
	Commands []string `json:"commands"`
	Failed   []string `json:"failed,omitempty"`
}

// Outcome is one GitHub write: created, updated, unchanged, completed, reacted,
// written (dry run), skipped or failed.
type Outcome struct {
	Action string `json:"action"`
	Number int64  `json:"number,omitempty"`
	URL    string `json:"url,omitempty"`
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error,omitempty"`
}
