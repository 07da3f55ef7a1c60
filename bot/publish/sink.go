package publish

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/runner/results"
)

// Sink receives the effects of a plan: GitHub (ToGitHub) or a folder of files (ToDir,
// the dry run). Each effect returns what it did as an Outcome; an error also comes back
// as the error, the outcome's action then being "failed".
type Sink interface {
	// DryRun says whether the effects become files rather than GitHub writes.
	DryRun() bool
	// Push builds the commit on the bot branch and pushes it (bot/gitpub).
	Push(ctx context.Context, s PushSpec) (Pushed, error)
	// PullRequest opens or updates the one pull request of s.Head; file names the
	// dry run's document.
	PullRequest(ctx context.Context, s gh.PRSpec, file string) (Written, error)
	// Comment upserts a marked comment, or edits the comment c.ID: the body is made
	// from the comment's current text.
	Comment(ctx context.Context, c Comment) (Written, error)
	// FindIssues maps each key of want to its open issue, found by its marker among
	// the open issues whose body holds prefix.
	FindIssues(ctx context.Context, prefix string, want []Issue) (map[string]gh.Issue, error)
	// Issue opens (or edits, when is.Current is open) an issue found by its marker.
	Issue(ctx context.Context, is Issue) (Written, error)
	// CheckRun completes the check run id.
	CheckRun(ctx context.Context, id int64, out gh.CheckOutput, file string) (Outcome, error)
	// React reacts to the comment id (id > 0).
	React(ctx context.Context, id int64, content string) (Outcome, error)
	// BaseBranch is the branch the pull request merges into: given, else the
	// repository's default branch (a dry run takes main).
	BaseBranch(ctx context.Context, given string) (string, error)
	// Thread reads issue or pull request n (its kind and state); a dry run cannot and
	// returns an error wrapping errNotAsked.
	Thread(ctx context.Context, n int) (gh.Thread, error)
	// TriggerComment reads the comment id (its author and link); a dry run cannot and
	// returns an error wrapping errNotAsked.
	TriggerComment(ctx context.Context, id int64) (gh.Comment, error)
	// Open readies the sink: the dry run makes its folder.
	Open() error
	// Record keeps a document of the run itself (the step summary, summary.json) in
	// the dry-run folder; GitHub has no place for it.
	Record(name string, body []byte) error
}

// PushSpec is one commit to put on a bot branch of the clone Repo.
type PushSpec struct {
	Repo, Remote, Token string
	// BaseBranch is the branch the pull request merges into; "" asks GitHub (a dry
	// run takes main).
	BaseBranch string
	Change     gitpub.Change
}

// Pushed is what Push did: the remote and the branch the pull request merges into, as
// found, and the notes of a dry run.
type Pushed struct {
	Result     gitpub.Result
	Remote     string
	BaseBranch string
	Notes      []string
}

// Written is one document written: the outcome, the link to it on GitHub ("" in a dry
// run), the dry run's file ("" on GitHub), and for a pull request its draft state.
type Written struct {
	Outcome
	Link  string
	File  string
	Draft bool
}

// Comment is one comment perfbot edits: the marked comment kept on Issue (Marker), or
// the comment ID (the status comment); File is the dry run's document.
type Comment struct {
	Issue  int
	Marker string
	ID     int64
	File   string
	// Body makes the body from the comment's current text ("" when there is none).
	Body func(earlier string) (string, error)
}

// Issue is one issue found by its marker: Key names it (the dry run's file is File).
type Issue struct {
	Key, Marker, File string
	Title, Body       string
	// Current is the open issue found, nil when there is none.
	Current *gh.Issue
	// Close is the comment the issue is closed with once its body is written; ""
	// leaves it open.
	Close string
}

// readError is a failure to read a comment's current text, renderError one of
// Comment.Body: the callers tell them from a failed write. Each says what it wraps.
type (
	readError   struct{ error }
	renderError struct{ error }
)

func (e readError) Unwrap() error   { return e.error }
func (e renderError) Unwrap() error { return e.error }

// stage says where a Comment effect failed: "read", "render" or "write".
func stage(err error) string {
	var re readError
	var rn renderError
	switch {
	case errors.As(err, &re):
		return "read"
	case errors.As(err, &rn):
		return "render"
	}
	return "write"
}

// GitHub is what publishing needs from the API; *gh.Client has it.
type GitHub interface {
	UpsertPR(ctx context.Context, r gh.Repo, s gh.PRSpec) (gh.PR, gh.Action, error)
	FindCommentWithMarker(ctx context.Context, r gh.Repo, issue int, marker string) (*gh.Comment, error)
	UpsertComment(ctx context.Context, r gh.Repo, issue int, marker, body string) (gh.Comment, gh.Action, error)
	UpdateComment(ctx context.Context, r gh.Repo, id int64, body string) (gh.Comment, gh.Action, error)
	CompleteCheckRun(ctx context.Context, r gh.Repo, id int64, o gh.CheckOutput) error
	React(ctx context.Context, r gh.Repo, commentID int64, content string) error
	DefaultBranch(ctx context.Context, r gh.Repo) (string, error)
	OpenIssuesWithMarker(ctx context.Context, r gh.Repo, marker string) ([]gh.Issue, error)
	UpsertIssue(ctx context.Context, r gh.Repo, marker, title, body string) (gh.Issue, gh.Action, error)
	EditIssue(ctx context.Context, r gh.Repo, cur gh.Issue, title, body string) (gh.Issue, gh.Action, error)
	Thread(ctx context.Context, r gh.Repo, number int) (gh.Thread, error)
	CommentByID(ctx context.Context, r gh.Repo, id int64) (gh.Comment, error)
}

// errNotAsked is what a dry run answers when asked what only GitHub knows.
var errNotAsked = errors.New("a dry run does not ask GitHub")

// ToGitHub makes the effects GitHub writes on repo through api, and pushes to the
// clone's remote.
func ToGitHub(api GitHub, repo gh.Repo) Sink { return githubSink{api: api, repo: repo} }

// ToDir makes the effects files in dir (created when missing), and pushes only to a
// remote on this machine: the dry run.
func ToDir(dir string) Sink { return dirSink{dir: dir} }

type githubSink struct {
	api  GitHub
	repo gh.Repo
}

func (githubSink) DryRun() bool { return false }

func (s githubSink) BaseBranch(ctx context.Context, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	b, err := s.api.DefaultBranch(ctx, s.repo)
	if err != nil {
		return "", fmt.Errorf("finding the branch the pull request merges into: %w", err)
	}
	return b, nil
}

func (s githubSink) Thread(ctx context.Context, n int) (gh.Thread, error) {
	return s.api.Thread(ctx, s.repo, n)
}

func (s githubSink) TriggerComment(ctx context.Context, id int64) (gh.Comment, error) {
	return s.api.CommentByID(ctx, s.repo, id)
}

func (s githubSink) Push(ctx context.Context, p PushSpec) (Pushed, error) {
	out := Pushed{Remote: p.Remote, BaseBranch: p.BaseBranch}
	if out.BaseBranch == "" {
		b, err := s.api.DefaultBranch(ctx, s.repo)
		if err != nil {
			return out, fmt.Errorf("finding the branch the pull request merges into: %w", err)
		}
		out.BaseBranch = b
	}
	res, err := pushTo(ctx, p, out.Remote, out.BaseBranch)
	out.Result = res
	return out, err
}

func (s githubSink) PullRequest(ctx context.Context, spec gh.PRSpec, _ string) (Written, error) {
	pr, action, err := s.api.UpsertPR(ctx, s.repo, spec)
	if err != nil {
		return Written{Outcome: Outcome{Action: "failed", Error: err.Error()}, Draft: pr.Draft}, fmt.Errorf("opening the pull request: %w", err)
	}
	return Written{Outcome: Outcome{Action: string(action), Number: int64(pr.Number), URL: pr.URL}, Link: pr.URL, Draft: pr.Draft}, nil
}

func (s githubSink) Comment(ctx context.Context, c Comment) (Written, error) {
	if c.ID > 0 {
		body, err := c.Body("")
		if err != nil {
			return Written{Outcome: Outcome{Action: "failed", Error: err.Error()}}, renderError{err}
		}
		cm, action, err := s.api.UpdateComment(ctx, s.repo, c.ID, body)
		if err != nil {
			return Written{Outcome: Outcome{Action: "failed", Number: c.ID, Error: err.Error()}}, err
		}
		return Written{Outcome: Outcome{Action: string(action), Number: c.ID, URL: cm.URL}, Link: cm.URL}, nil
	}
	failed := Outcome{Action: "failed", Number: int64(c.Issue)}
	found, err := s.api.FindCommentWithMarker(ctx, s.repo, c.Issue, c.Marker)
	if err != nil {
		failed.Error = err.Error()
		return Written{Outcome: failed}, readError{err}
	}
	earlier := ""
	if found != nil {
		earlier = found.Body
	}
	body, err := c.Body(earlier)
	if err != nil {
		return Written{Outcome: Outcome{Action: "failed", Error: err.Error()}}, renderError{err}
	}
	cm, action, err := s.api.UpsertComment(ctx, s.repo, c.Issue, c.Marker, body)
	if err != nil {
		failed.Error = err.Error()
		return Written{Outcome: failed}, err
	}
	return Written{Outcome: Outcome{Action: string(action), Number: int64(c.Issue), URL: cm.URL}, Link: cm.URL}, nil
}

func (s githubSink) FindIssues(ctx context.Context, prefix string, want []Issue) (map[string]gh.Issue, error) {
	issues, err := s.api.OpenIssuesWithMarker(ctx, s.repo, prefix)
	if err != nil {
		return nil, err
	}
	out := map[string]gh.Issue{}
	for _, is := range issues {
		for _, w := range want {
			if strings.Contains(is.Body, w.Marker) {
				out[w.Key] = is
			}
		}
	}
	return out, nil
}

func (s githubSink) Issue(ctx context.Context, is Issue) (Written, error) {
	var got gh.Issue
	var action gh.Action
	var err error
	if is.Current != nil {
		got, action, err = s.api.EditIssue(ctx, s.repo, *is.Current, is.Title, is.Body)
	} else {
		got, action, err = s.api.UpsertIssue(ctx, s.repo, is.Marker, is.Title, is.Body)
	}
	if err != nil {
		return Written{Outcome: Outcome{Action: "failed", Error: err.Error()}}, err
	}
	return Written{Outcome: Outcome{Action: string(action), Number: int64(got.Number), URL: got.URL}, Link: got.URL}, nil
}

func (s githubSink) CheckRun(ctx context.Context, id int64, out gh.CheckOutput, _ string) (Outcome, error) {
	if id <= 0 {
		return Outcome{Action: "skipped", Detail: "no check run (token mode)"}, nil
	}
	if err := s.api.CompleteCheckRun(ctx, s.repo, id, out); err != nil {
		return Outcome{Action: "failed", Number: id, Error: err.Error()}, fmt.Errorf("completing the check run: %w", err)
	}
	return Outcome{Action: "completed", Number: id, Detail: out.Conclusion}, nil
}

func (s githubSink) React(ctx context.Context, id int64, content string) (Outcome, error) {
	if err := s.api.React(ctx, s.repo, id, content); err != nil {
		return Outcome{Action: "failed", Number: id, Detail: content, Error: err.Error()}, fmt.Errorf("reacting to the trigger comment: %w", err)
	}
	return Outcome{Action: "reacted", Number: id, Detail: content}, nil
}

func (githubSink) Record(string, []byte) error { return nil }

func (githubSink) Open() error { return nil }

type dirSink struct{ dir string }

func (dirSink) DryRun() bool { return true }

func (dirSink) BaseBranch(_ context.Context, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	return "main", nil
}

func (dirSink) Thread(context.Context, int) (gh.Thread, error) { return gh.Thread{}, errNotAsked }

func (dirSink) TriggerComment(context.Context, int64) (gh.Comment, error) {
	return gh.Comment{}, errNotAsked
}

func (s dirSink) Push(ctx context.Context, p PushSpec) (Pushed, error) {
	out := Pushed{Remote: p.Remote, BaseBranch: p.BaseBranch}
	remote, note, err := dryRunRemote(ctx, p.Repo, p.Remote, s.dir)
	if note != "" {
		out.Notes = append(out.Notes, note)
	}
	if err != nil {
		return out, err
	}
	out.Remote = remote
	if out.BaseBranch == "" {
		out.BaseBranch = "main"
	}
	res, err := pushTo(ctx, p, out.Remote, out.BaseBranch)
	out.Result = res
	if err != nil {
		return out, err
	}
	if note := pointLocalBranch(ctx, p.Repo, p.Change.Branch, res.Commit); note != "" {
		out.Notes = append(out.Notes, note)
	}
	return out, nil
}

// write writes one document and says whether it was created, updated or unchanged, as
// the GitHub write would.
func (s dirSink) write(name, body string) (string, error) {
	file := filepath.Join(s.dir, name)
	old, err := os.ReadFile(file)
	action := string(gh.Created)
	switch {
	case err == nil && string(old) == body:
		return string(gh.Unchanged), nil
	case err == nil:
		action = string(gh.Updated)
	}
	if err := results.WriteFileAtomic(file, []byte(body)); err != nil {
		return "failed", fmt.Errorf("writing the dry run's %s: %w", name, err)
	}
	return action, nil
}

func (s dirSink) written(name, body string, number int64) (Written, error) {
	action, err := s.write(name, body)
	w := Written{Outcome: Outcome{Action: action, Number: number, URL: name}, File: name}
	if err != nil {
		w.Error = err.Error()
	}
	return w, err
}

// PullRequest writes the pull request with its head, base and draft state on top.
func (s dirSink) PullRequest(_ context.Context, spec gh.PRSpec, file string) (Written, error) {
	doc := fmt.Sprintf("# %s\n\nHead `%s` into `%s`; draft: %t.\n\n---\n\n%s", spec.Title, spec.Head, spec.Base, spec.Draft, spec.Body)
	w, err := s.written(file, doc, 0)
	w.Draft = spec.Draft
	return w, err
}

// Comment keeps the comment as its file, written whatever id it has.
func (s dirSink) Comment(_ context.Context, c Comment) (Written, error) {
	earlier := ""
	if b, err := os.ReadFile(filepath.Join(s.dir, c.File)); err == nil && c.ID <= 0 {
		earlier = string(b)
	}
	body, err := c.Body(earlier)
	if err != nil {
		return Written{Outcome: Outcome{Action: "failed", Error: err.Error()}}, renderError{err}
	}
	return s.written(c.File, body, int64(c.Issue))
}

// FindIssues reads the issues back from the files an earlier dry run wrote.
func (s dirSink) FindIssues(_ context.Context, prefix string, want []Issue) (map[string]gh.Issue, error) {
	if _, err := os.ReadDir(s.dir); err != nil {
		return nil, err
	}
	out := map[string]gh.Issue{}
	for _, w := range want {
		b, err := os.ReadFile(filepath.Join(s.dir, w.File))
		if err == nil && strings.Contains(string(b), prefix) {
			out[w.Key] = gh.Issue{Body: string(b), URL: w.File}
		}
	}
	return out, nil
}

func (s dirSink) Issue(_ context.Context, is Issue) (Written, error) {
	w, err := s.written(is.File, "# "+is.Title+"\n\n"+is.Body, 0)
	w.Number = 0
	return w, err
}

// CheckRun writes the check run's output with its title and conclusion on top.
func (s dirSink) CheckRun(_ context.Context, _ int64, out gh.CheckOutput, file string) (Outcome, error) {
	doc := fmt.Sprintf("# %s\n\nConclusion: %s.\n\n---\n\n%s", out.Title, out.Conclusion, out.Summary)
	action, err := s.write(file, doc)
	o := Outcome{Action: action, Detail: out.Conclusion, URL: file}
	if err != nil {
		o.Error = err.Error()
	}
	return o, err
}

// React says what the reaction would be.
func (dirSink) React(_ context.Context, id int64, content string) (Outcome, error) {
	return Outcome{Action: "skipped", Number: id, Detail: "dry run: would react " + content}, nil
}

func (s dirSink) Open() error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("making the dry-run folder: %w", err)
	}
	return nil
}

func (s dirSink) Record(name string, body []byte) error {
	_, err := s.write(name, string(body))
	return err
}

// pushTo builds the one commit on the bot branch and pushes it to remote (bot/gitpub).
func pushTo(ctx context.Context, p PushSpec, remote, baseBranch string) (gitpub.Result, error) {
	pub := &gitpub.Publisher{Dir: p.Repo, Remote: remote, DefaultBranch: baseBranch, Token: p.Token, Branches: []string{p.Change.Branch}}
	res, err := pub.Publish(ctx, p.Change)
	if err != nil {
		return res, fmt.Errorf("committing the results to %s: %w", p.Change.Branch, err)
	}
	return res, nil
}

// dryRunRemote is where a dry run pushes: remote when it is on this machine, else a bare
// repository made in dryDir (note then says so).
func dryRunRemote(ctx context.Context, repo, remote, dryDir string) (string, string, error) {
	u, err := git(ctx, repo, "remote", "get-url", remote)
	if err == nil && localRemote(u) {
		return remote, "", nil
	}
	bare, err := filepath.Abs(filepath.Join(dryDir, "remote.git"))
	if err != nil {
		return "", "", fmt.Errorf("making the dry run's remote: %w", err)
	}
	if _, err := os.Stat(bare); err != nil {
		if _, err := git(ctx, dryDir, "init", "--quiet", "--bare", bare); err != nil {
			return "", "", fmt.Errorf("making the dry run's remote: %w", err)
		}
	}
	return bare, "dry run: the repository's remote is not on this machine, so the commit was pushed to " + bare, nil
}

// pointLocalBranch points a dry run's local bot branch at commit, unless it is checked
// out; the note says what was not done.
func pointLocalBranch(ctx context.Context, repo, branch, commit string) string {
	head, _ := git(ctx, repo, "symbolic-ref", "--quiet", "HEAD")
	if head == "refs/heads/"+branch {
		return "dry run: the bot branch is checked out in the repository, so it was not moved"
	}
	if _, err := git(ctx, repo, "update-ref", "-m", "perfbot publish --dry-run", "refs/heads/"+branch, commit); err != nil {
		return "dry run: the local bot branch was not updated: " + err.Error()
	}
	return ""
}
