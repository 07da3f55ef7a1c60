package gate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/mdtext"
)

// GitHub is what the gate asks GitHub. *gh.Client implements it.
type GitHub interface {
	// Permission is the user's permission on the repository: admin, maintain, write,
	// triage, read or none.
	Permission(ctx context.Context, r gh.Repo, user string) (string, error)
	// PullHead is a pull request's head commit and whether it lives in a fork.
	PullHead(ctx context.Context, r gh.Repo, number int) (gh.PullHead, error)
	// BranchHead is the commit a branch of the repository points to now.
	BranchHead(ctx context.Context, r gh.Repo, branch string) (string, error)
	// CommitSHA resolves a SHA of 7 to 40 hex digits to the full SHA.
	CommitSHA(ctx context.Context, r gh.Repo, ref string) (string, error)
	// Contains reports whether sha is head or one of its ancestors.
	Contains(ctx context.Context, r gh.Repo, head, sha string) (bool, error)
	// FileContent reads a file of the repository at a branch.
	FileContent(ctx context.Context, r gh.Repo, file, ref string) ([]byte, error)
}

var _ GitHub = (*gh.Client)(nil)

// Options configures Decide.
type Options struct {
	// BotLogin is perfbot's own login (perfbot[bot] for the App, github-actions[bot] for
	// the Actions token, or a machine user); its comments are ignored.
	BotLogin string
	// ConfigPath is the config file in the repository. Default config.DefaultPath.
	ConfigPath string
	// Config, when set, is used instead of reading ConfigPath at the default branch.
	Config *config.Config
}

// Outcome is what the gate decided.
type Outcome string

// The outcomes.
const (
	// Ignored: not for perfbot, or from a bot. Nothing is answered.
	Ignored Outcome = "ignored"
	// Denied: a command perfbot will not run; Decision.Reply says why.
	Denied Outcome = "denied"
	// Accepted: run Decision.Request.
	Accepted Outcome = "accepted"
)

// Reason is a stable key for why an event was ignored or denied, for logs and metrics.
type Reason string

// The reasons (docs/commands.md lists each with its reply).
const (
	// Ignored.
	ReasonDeleted   Reason = "deleted"    // the comment was deleted
	ReasonAction    Reason = "action"     // an event action other than created, edited, deleted
	ReasonBot       Reason = "bot"        // the comment's author is a bot or perfbot itself
	ReasonNoCommand Reason = "no-command" // no command at the start of a line outside quotes and code
	ReasonUnchanged Reason = "unchanged"  // an edit that left the command as it was

	// Denied.
	ReasonTampered   Reason = "edited-by-other" // someone other than the author edited the command in
	ReasonNoConfig   Reason = "no-config"       // the default branch has no config file
	ReasonBadConfig  Reason = "bad-config"      // the default branch's config does not parse
	ReasonPermission Reason = "permission"      // the commenter is below the minimum permission
	ReasonBadCommand Reason = "bad-command"     // an unknown command, a bad value, two commands
	ReasonFork       Reason = "fork"            // the pull request's head is in a fork
	ReasonRef        Reason = "ref"             // ref= names no branch or commit, or an untrusted one
)

// Decision is the gate's answer for one event.
type Decision struct {
	Outcome Outcome
	// Reason is set for Ignored and Denied.
	Reason Reason
	// Reply is the Markdown answer to post: the reason of a denial, or the help text of
	// an accepted /perfbot help. Empty otherwise.
	Reply string
	// Detail says why an event was ignored, for the log (never posted).
	Detail string
	// Request is what to run, for Accepted.
	Request Request
	// Config is the default branch's config the decision used; nil when none was read.
	Config *config.Config
}

// Request is an accepted command with everything pinned.
type Request struct {
	Command command.Command
	Kind    command.Kind
	Repo    gh.Repo
	// InstallationID is the App installation of the event; 0 outside an App.
	InstallationID int64
	Issue          int
	IsPR           bool
	// CommentID is the comment that triggered the request.
	CommentID int64
	// Requester is the commenter; Permission their permission on the repository (empty
	// for help, which asks none).
	Requester  string
	Permission string
	// SHA is the commit to run, 40 hex digits, fixed now: only this commit ever runs.
	// Empty for help, status and cancel.
	SHA string
	// PinnedFrom says where SHA came from, for the status comment.
	PinnedFrom string
	// Models and Sampling (run tags) to run, for Profile.
	Models   []string
	Sampling []string
	// Epic is the issue that gets the ranking comment: epic= or the config's; 0 none.
	Epic int
	// ID is the request id named by status or cancel; "" when none.
	ID string
	// Edited is true when the command came from its author's edit of the comment.
	Edited bool
}

// MaintainPermission is the permission needed to run a fork's commit (by full SHA) or a
// commit outside the repository's branches.
const MaintainPermission = "maintain"

// Decide applies the rules of docs/commands.md to one issue_comment event. An error
// means GitHub could not be asked (a server error, a rate limit, a canceled ctx): the
// event was not decided and may be tried again. Every refusal is a Denied decision with
// a reply, never an error.
func Decide(ctx context.Context, ev Event, api GitHub, o Options) (Decision, error) {
	switch ev.Action {
	case "deleted":
		return ignore(ReasonDeleted, "the comment was deleted"), nil
	case "created", "edited":
	default:
		return ignore(ReasonAction, fmt.Sprintf("issue_comment action %q is not one perfbot acts on", ev.Action)), nil
	}
	if isBot(ev.Author, ev.AuthorType, o.BotLogin) {
		return ignore(ReasonBot, fmt.Sprintf("the comment's author %s is a bot", ev.Author)), nil
	}
	lines, total := command.Lines(ev.Body)
	if total == 0 {
		return ignore(ReasonNoCommand, "the comment holds no command"), nil
	}
	if ev.Action == "edited" {
		// An edit that leaves the command as it was asks nothing new, whoever made it.
		if !ev.BodyChanged {
			return ignore(ReasonUnchanged, "the edit did not change the comment's body"), nil
		}
		prev, prevTotal := command.Lines(ev.PreviousBody)
		if prevTotal == total && slices.Equal(prev, lines) {
			return ignore(ReasonUnchanged, "the edit did not change the command"), nil
		}
		if !strings.EqualFold(ev.Sender, ev.Author) {
			return deny(ReasonTampered, fmt.Sprintf(
				"This comment by %s was edited by %s. perfbot runs only commands written by the comment's author: %s, post the command in a new comment.",
				login(ev.Author), login(ev.Sender), login(ev.Author))), nil
		}
	}

	cfg, denial, err := loadConfig(ctx, ev, api, o)
	if err != nil || denial != nil {
		return deref(denial), err
	}
	d := Decision{Config: cfg}
	cmd, _, perr := command.Parse(ev.Body, *cfg)
	if perr == nil && cmd.Kind == command.Help {
		d.Outcome, d.Reply = Accepted, command.HelpText(*cfg)
		d.Request = request(ev, cmd, "", *cfg)
		return d, nil
	}

	perm, err := permission(ctx, api, ev)
	if err != nil {
		return Decision{}, err
	}
	min := cfg.Trigger.MinPermission
	if min == "" {
		min = config.Default().Trigger.MinPermission
	}
	if !gh.AtLeast(perm, min) {
		return d.denied(ReasonPermission, fmt.Sprintf(
			"%s has the %s permission on %s; running perfbot needs %s or more. Someone with %s access can post the command.",
			login(ev.Author), code(perm), ev.Repo, code(min), code(min))), nil
	}
	if perr != nil {
		var ce *command.Error
		if errors.As(perr, &ce) {
			return d.denied(ReasonBadCommand, ce.Reply()), nil
		}
		return d.denied(ReasonBadCommand, mdtext.Text(perr.Error())), nil
	}

	req := request(ev, cmd, perm, *cfg)
	if cmd.Kind == command.Profile || cmd.Kind == command.Bench {
		sha, from, why, reason, err := pin(ctx, api, ev, cmd, perm)
		if err != nil {
			return Decision{}, err
		}
		if why != "" {
			return d.denied(reason, why), nil
		}
		req.SHA, req.PinnedFrom = sha, from
	}
	d.Outcome, d.Request = Accepted, req
	return d, nil
}

func request(ev Event, cmd command.Command, perm string, cfg config.Config) Request {
	r := Request{
		Command: cmd, Kind: cmd.Kind, Repo: ev.Repo, InstallationID: ev.InstallationID,
		Issue: ev.Issue, IsPR: ev.IsPR, CommentID: ev.CommentID,
		Requester: ev.Author, Permission: perm,
		Models: cmd.Models, Sampling: cmd.Sampling, ID: cmd.ID,
		Edited: ev.Action == "edited",
	}
	if cmd.Kind == command.Profile {
		r.Epic = cfg.Epic
		if cmd.Epic > 0 {
			r.Epic = cmd.Epic
		}
	}
	return r
}

// loadConfig returns Options.Config or reads the config of the default branch.
func loadConfig(ctx context.Context, ev Event, api GitHub, o Options) (*config.Config, *Decision, error) {
	if o.Config != nil {
		c := *o.Config
		return &c, nil, nil
	}
	path := o.ConfigPath
	if path == "" {
		path = config.DefaultPath
	}
	if ev.DefaultBranch == "" {
		return nil, nil, errors.New("deciding on the comment: the event names no default branch to read the config from")
	}
	data, err := api.FileContent(ctx, ev.Repo, path, ev.DefaultBranch)
	if errors.Is(err, gh.ErrNotFound) {
		d := deny(ReasonNoConfig, fmt.Sprintf(
			"This repository has no %s on its default branch %s, so perfbot does not know which models to run. Add one (see perfbot's docs/config.md).",
			code(path), code(ev.DefaultBranch)))
		return nil, &d, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading the config of %s: %w", ev.Repo, err)
	}
	cfg, err := config.Parse(data, path)
	if err != nil {
		d := deny(ReasonBadConfig, fmt.Sprintf(
			"The config %s on the default branch %s is not valid; fix it and post the command again:\n\n%s",
			code(path), code(ev.DefaultBranch), mdtext.Fenced(err.Error())))
		return nil, &d, nil
	}
	return &cfg, nil, nil
}

// permission asks GitHub, never the payload's author_association. A user GitHub does not
// know on the repository has none.
func permission(ctx context.Context, api GitHub, ev Event) (string, error) {
	perm, err := api.Permission(ctx, ev.Repo, ev.Author)
	if errors.Is(err, gh.ErrNotFound) {
		return "none", nil
	}
	if err != nil {
		return "", fmt.Errorf("checking the commenter's permission: %w", err)
	}
	return perm, nil
}

// pin fixes the commit an accepted run will use. why is the reply of a denial.
func pin(ctx context.Context, api GitHub, ev Event, cmd command.Command, perm string) (sha, from, why string, reason Reason, err error) {
	var pr *gh.PullHead
	pull := func() (*gh.PullHead, error) {
		if pr == nil && ev.IsPR {
			p, err := api.PullHead(ctx, ev.Repo, ev.Issue)
			if err != nil {
				return nil, fmt.Errorf("reading the pull request: %w", err)
			}
			pr = &p
		}
		return pr, nil
	}
	switch cmd.RefKind {
	case command.RefBranch:
		sha, err := api.BranchHead(ctx, ev.Repo, cmd.Ref)
		if errors.Is(err, gh.ErrNotFound) {
			return "", "", fmt.Sprintf("%s has no branch %s. Name a branch of this repository or a commit SHA with `ref=`.",
				ev.Repo, code(cmd.Ref)), ReasonRef, nil
		}
		if err != nil {
			return "", "", "", "", fmt.Errorf("reading branch %s: %w", cmd.Ref, err)
		}
		return sha, "branch " + cmd.Ref, "", "", nil

	case command.RefSHA:
		full, err := api.CommitSHA(ctx, ev.Repo, cmd.Ref)
		if errors.Is(err, gh.ErrNotFound) || isStatus(err, http.StatusUnprocessableEntity) {
			return "", "", fmt.Sprintf("%s has no commit %s (or the short SHA is ambiguous). Name a commit of this repository with `ref=`, or its full 40-digit SHA.",
				ev.Repo, code(cmd.Ref)), ReasonRef, nil
		}
		if err != nil {
			return "", "", "", "", fmt.Errorf("resolving commit %s: %w", cmd.Ref, err)
		}
		if cmd.FullSHA() && gh.AtLeast(perm, MaintainPermission) {
			return full, "commit " + full + " named by " + ev.Author, "", "", nil
		}
		on, err := api.Contains(ctx, ev.Repo, ev.DefaultBranch, full)
		if err != nil && !errors.Is(err, gh.ErrNotFound) {
			return "", "", "", "", fmt.Errorf("checking commit %s: %w", cmd.Ref, err)
		}
		if !on {
			p, err := pull()
			if err != nil {
				return "", "", "", "", err
			}
			if p != nil && !p.Fork {
				on, err = api.Contains(ctx, ev.Repo, p.SHA, full)
				if err != nil && !errors.Is(err, gh.ErrNotFound) {
					return "", "", "", "", fmt.Errorf("checking commit %s: %w", cmd.Ref, err)
				}
			}
		}
		if !on {
			where := "the default branch " + code(ev.DefaultBranch)
			if ev.IsPR {
				where += " or this pull request's own branch"
			}
			return "", "", fmt.Sprintf("Commit %s is not on %s: it may come from a fork. Name a branch with `ref=BRANCH`, or someone with %s or %s permission can name the commit's full 40-digit SHA after reviewing it.",
				code(full), where, code("maintain"), code("admin")), ReasonRef, nil
		}
		return full, "commit " + full, "", "", nil
	}

	p, err := pull()
	if err != nil {
		return "", "", "", "", err
	}
	if p != nil {
		if p.Fork {
			repo := "a fork"
			if p.Repo != "" {
				repo = "the fork " + code(p.Repo)
			}
			return "", "", fmt.Sprintf("The head of pull request #%d is in %s. perfbot runs a fork's code on the GPU host only when someone with %s or %s permission reviews it and names its full SHA: %s",
				ev.Issue, repo, code("maintain"), code("admin"), code(cmd.Text+" ref="+p.SHA)), ReasonFork, nil
		}
		return p.SHA, fmt.Sprintf("the head of pull request #%d", ev.Issue), "", "", nil
	}
	sha, err = api.BranchHead(ctx, ev.Repo, ev.DefaultBranch)
	if err != nil {
		return "", "", "", "", fmt.Errorf("reading the head of the default branch %s: %w", ev.DefaultBranch, err)
	}
	return sha, "the head of the default branch " + ev.DefaultBranch, "", "", nil
}

func isStatus(err error, status int) bool {
	var ae *gh.APIError
	return errors.As(err, &ae) && ae.Status == status
}

// isBot: GitHub marks App accounts with type Bot and a login ending in [bot]; perfbot's
// own login may be a machine user.
func isBot(login, typ, own string) bool {
	if strings.EqualFold(typ, "Bot") || strings.HasSuffix(strings.ToLower(login), "[bot]") {
		return true
	}
	if own == "" {
		return false
	}
	own = strings.TrimSuffix(strings.ToLower(own), "[bot]")
	return strings.EqualFold(login, own)
}

func ignore(r Reason, detail string) Decision {
	return Decision{Outcome: Ignored, Reason: r, Detail: detail}
}

func deny(r Reason, reply string) Decision {
	return Decision{Outcome: Denied, Reason: r, Reply: reply}
}

func (d Decision) denied(r Reason, reply string) Decision {
	d.Outcome, d.Reason, d.Reply = Denied, r, reply
	return d
}

func deref(d *Decision) Decision {
	if d == nil {
		return Decision{}
	}
	return *d
}

// login renders a login as code, so a reply names people without notifying them.
func login(s string) string { return mdtext.Code(s) }

func code(s string) string { return mdtext.Code(s) }
