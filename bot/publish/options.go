package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/config"
)

// Target is what every kind of publication is told: the results folder, the clone
// of the target repository, the configuration, the bot branch and its push, and where
// the writes go. Options, BaselineOptions and CompareOptions embed it; each kind's
// comment says what its folder, commit and default branch are.
type Target struct {
	// ResultsDir is the results folder the kind's job wrote.
	ResultsDir string
	// RepoDir is a clone of the target repository (bare or not) holding the commit the
	// results were measured on, or able to fetch it from Remote. Only its git objects
	// are read (the attribution rules of that commit); its checkout is not touched and
	// nothing of it runs.
	RepoDir string
	Config  config.Config
	// Branch is the bot branch; "" takes the kind's.
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
	// the documents instead of GitHub (the kind's, and summary.json).
	Sink Sink
	// Repo is the target repository on GitHub, where links point; "" takes the
	// GitHub sink's. Without one (a dry run) links are repo-relative paths.
	Repo gh.Repo
	// ServerURL is where links point, default https://github.com.
	ServerURL string
}

// Marks are what the request that asked left on GitHub for the end of its publication
// to finish (Marks.end): the check run made at acceptance (0 in token mode), the
// status comment, and the comment that asked, which gets the final reaction; 0 skips
// one. Options, CompareOptions and BisectOptions embed it; a baseline has none.
type Marks struct {
	CheckRunID       int64
	TriggerCommentID int64
	StatusCommentID  int64
}

// check fills t's defaults (the remote, the commit identity, the server links point
// to, the GitHub sink's repository) and says what is missing to publish results
// written by job (a `perfbot run ...` command) from a clone, to GitHub or into a
// dry-run folder.
func (t *Target) check(job string) []error {
	var errs []error
	if t.ResultsDir == "" {
		errs = append(errs, fmt.Errorf("no results folder: pass the folder `perfbot %s` wrote", job))
	}
	if t.RepoDir == "" {
		errs = append(errs, errors.New("no repository: pass a clone of the target repository"))
	}
	gs, toGitHub := t.Sink.(githubSink)
	if t.Sink == nil || t.Sink == (dirSink{}) {
		errs = append(errs, errors.New("neither a GitHub client nor a dry-run folder: give one"))
	}
	if toGitHub && t.Repo.Owner == "" {
		t.Repo = gs.repo
	}
	if toGitHub && (gs.api == nil || t.Repo.Owner == "") {
		errs = append(errs, errors.New("no GitHub repository (owner/name) to publish to"))
	}
	if t.Remote == "" {
		t.Remote = "origin"
	}
	if t.Author.Name == "" {
		t.Author = gitpub.Identity{Name: "perfbot[bot]", Email: "perfbot[bot]@users.noreply.github.com"}
	}
	if t.ServerURL == "" {
		t.ServerURL = "https://github.com"
	}
	t.ServerURL = strings.TrimRight(t.ServerURL, "/")
	return errs
}

// destination is where the writes go and the bot branch before the push.
func (t Target) destination() (Sink, Git) { return t.Sink, Git{Branch: t.Branch, Remote: t.Remote} }

// plan opens a kind's plan: its links go to the target's server and repository; base,
// branch, notes and err are what planning found.
func (t Target) plan(base, branch string, notes []string, err error) Plan {
	return Plan{Server: t.ServerURL, Repo: t.Repo, Base: base, Branch: branch, Notes: notes, Err: err}
}

// push is the push of change, by the target's author, from its clone to its remote;
// baseBranch "" asks GitHub for the default branch.
func (t Target) push(baseBranch string, change gitpub.Change) *PushSpec {
	change.Author = t.Author
	return &PushSpec{Repo: t.RepoDir, Remote: t.Remote, Token: t.GitToken, BaseBranch: baseBranch, Change: change}
}

// pinned is the commit a baseline's or a compare's results commit is built on, the
// commit's date and its files.
type pinned struct {
	base  string
	when  time.Time
	files map[string][]byte // by repository path
}

// pin resolves sha in the target's clone as the base (what names it in the error) and
// dates the commit by the run's end, else its start, so the same results again are the
// same commit.
func (c *pinned) pin(ctx context.Context, t Target, sha, what string, finished, started time.Time) error {
	base, err := resolveCommit(ctx, t.RepoDir, sha)
	if err != nil {
		return fmt.Errorf("pinning %s: %w", what, err)
	}
	c.base, c.when, c.files = base, finished, map[string][]byte{}
	if c.when.IsZero() {
		c.when = started
	}
	return nil
}

// checked is the normalized options o, or what is wrong with them: doing says what
// they were refused for.
func checked[O any](o O, doing string, errs []error) (O, error) {
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("%s: %w", doing, err)
	}
	return o, nil
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

// Outcome is one GitHub write: created, updated, unchanged, completed, reacted,
// written (dry run), skipped or failed.
type Outcome struct {
	Action string `json:"action"`
	Number int64  `json:"number,omitempty"`
	URL    string `json:"url,omitempty"`
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error,omitempty"`
}

// String is the outcome for a log line: the action, then its link, its detail in
// parentheses and its error.
func (o Outcome) String() string {
	s := o.Action
	if o.URL != "" {
		s += " " + o.URL
	}
	if o.Detail != "" {
		s += " (" + o.Detail + ")"
	}
	if o.Error != "" {
		s += ": " + o.Error
	}
	return s
}
