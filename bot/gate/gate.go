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
	// MergeBase is the best common ancestor of base and head (branches or SHAs).
	MergeBase(ctx context.Context, r gh.Repo, base, head string) (string, error)
	// Compare is how head stands to base: identical, ahead, behind or diverged, and by
	// how many commits (a bisection's range).
	Compare(ctx context.Context, r gh.Repo, base, head string) (gh.Comparison, error)
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
	ReasonCompare    Reason = "compare"         // a compare without both commits, or of one commit with itself
	ReasonBisect     Reason = "bisect"          // a bisection's range off the default branch, reversed, too long or over its runs
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
	// Compare is true for /profile rocm compare and /bench rocm compare: SHA is B, the
	// changed commit, and Base is A, the commit it is compared with, 40 hex digits,
	// pinned now like SHA; BasePinnedFrom says where it came from. Repeats is the most
	// repeats per side (Command.Repeats). Base is "" and Repeats 0 otherwise.
	Compare        bool
	Base           string
	BasePinnedFrom string
	Repeats        int
	// For /bench rocm bisect (Kind command.Bisect): SHA is the first known bad commit
	// and Base the last known good one, both pinned now, Base an ancestor of SHA on the
	// default branch; Models its one model. Commits is the range's size, both ends
	// included, as GitHub counts it (merged commits too); MaxRuns the bisection's budget
	// of single-model runs (limits.max_bisect_runs) and MinRuns the fewest the range
	// needs. All 0 otherwise.
	Commits, MaxRuns, MinRuns int
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
	if cmd.Kind == command.Bisect {
		p := &pinner{api: api, ev: ev, perm: perm}
		why, err := p.pinBisect(ctx, cmd, *cfg, &req)
		if err != nil {
			return Decision{}, err
		}
		if why != nil {
			return d.denied(why.reason, why.reply), nil
		}
		d.Outcome, d.Request = Accepted, req
		return d, nil
	}
	if cmd.Kind == command.Profile || cmd.Kind == command.Bench {
		if cmd.Compare && !ev.IsPR && (cmd.BaseKind == command.RefNone || cmd.RefKind == command.RefNone) {
			return d.denied(ReasonCompare, fmt.Sprintf(
				"A compare on an issue names both commits: %s for A, the commit compared with, and %s for B, the changed one (a SHA of 7 to 40 hex digits or a branch of this repository each), e.g. %s. On a pull request, A defaults to the merge base with its target branch and B to its head.",
				code("base="), code("ref="), code(strings.Join(compareWords(cmd), " ")+" base=main ref=my-branch"))), nil
		}
		p := &pinner{api: api, ev: ev, perm: perm}
		sha, from, why, reason, err := p.pin(ctx, cmd)
		if err != nil {
			return Decision{}, err
		}
		if why != "" {
			return d.denied(reason, why), nil
		}
		req.SHA, req.PinnedFrom = sha, from
		if cmd.Compare {
			base, baseFrom, why, reason, err := p.pinBase(ctx, cmd, sha)
			if err != nil {
				return Decision{}, err
			}
			if why != "" {
				return d.denied(reason, why), nil
			}
			if base == sha {
				return d.denied(ReasonCompare, fmt.Sprintf(
					"A and B are the same commit, %s (A: %s; B: %s): there is nothing to compare. Name another commit with %s or %s.",
					code(sha), mdtext.Text(baseFrom), mdtext.Text(from), code("base="), code("ref="))), nil
			}
			req.Base, req.BasePinnedFrom = base, baseFrom
		}
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
		Edited:  ev.Action == "edited",
		Compare: cmd.Compare, Repeats: cmd.Repeats,
	}
	// A compare answers on its own thread: it gets no ranking comment on the epic.
	if cmd.Kind == command.Profile && !cmd.Compare {
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

// pinner fixes the commits of an accepted run; it reads the pull request once.
type pinner struct {
	api  GitHub
	ev   Event
	perm string
	pr   *gh.PullHead
}

// pull is the pull request of the event, nil on an issue.
func (p *pinner) pull(ctx context.Context) (*gh.PullHead, error) {
	if p.pr == nil && p.ev.IsPR {
		h, err := p.api.PullHead(ctx, p.ev.Repo, p.ev.Issue)
		if err != nil {
			return nil, fmt.Errorf("reading the pull request: %w", err)
		}
		p.pr = &h
	}
	return p.pr, nil
}

// pin fixes the commit an accepted run will use (B of a compare). why is the reply of
// a denial.
func (p *pinner) pin(ctx context.Context, cmd command.Command) (sha, from, why string, reason Reason, err error) {
	ev := p.ev
	if cmd.RefKind != command.RefNone {
		return p.named(ctx, "ref", cmd.Ref, cmd.RefKind, cmd.FullSHA())
	}
	pr, err := p.pull(ctx)
	if err != nil {
		return "", "", "", "", err
	}
	if pr != nil {
		if pr.Fork {
			repo := "a fork"
			if pr.Repo != "" {
				repo = "the fork " + code(pr.Repo)
			}
			return "", "", fmt.Sprintf("The head of pull request #%d is in %s. perfbot runs a fork's code on the GPU host only when someone with %s or %s permission reviews it and names its full SHA: %s",
				ev.Issue, repo, code("maintain"), code("admin"), code(cmd.Text+" ref="+pr.SHA)), ReasonFork, nil
		}
		return pr.SHA, fmt.Sprintf("the head of pull request #%d", ev.Issue), "", "", nil
	}
	sha, err = p.api.BranchHead(ctx, ev.Repo, ev.DefaultBranch)
	if err != nil {
		return "", "", "", "", fmt.Errorf("reading the head of the default branch %s: %w", ev.DefaultBranch, err)
	}
	return sha, "the head of the default branch " + ev.DefaultBranch, "", "", nil
}

// pinBase fixes A of a compare whose B is head: base= resolved with the rules of ref=,
// or on a pull request the merge base of head with the pull request's target branch.
func (p *pinner) pinBase(ctx context.Context, cmd command.Command, head string) (sha, from, why string, reason Reason, err error) {
	if cmd.BaseKind != command.RefNone {
		return p.named(ctx, "base", cmd.Base, cmd.BaseKind, cmd.FullBaseSHA())
	}
	pr, err := p.pull(ctx)
	if err != nil {
		return "", "", "", "", err
	}
	if pr == nil {
		return "", "", "", "", errors.New("pinning a compare on an issue without base=: the gate refuses it before pinning")
	}
	target := pr.Base
	if target == "" {
		return "", "", "", "", fmt.Errorf("pull request #%d names no target branch", p.ev.Issue)
	}
	// The merge base is on the target branch, a branch of the repository itself: it
	// is trusted as the head of ref=BRANCH is.
	mb, err := p.api.MergeBase(ctx, p.ev.Repo, target, head)
	if errors.Is(err, gh.ErrNotFound) {
		return "", "", fmt.Sprintf("perfbot found no merge base of %s with the target branch %s of pull request #%d. Name the commit to compare with: %s.",
			code(head), code(target), p.ev.Issue, code("base=SHA|BRANCH")), ReasonRef, nil
	}
	if err != nil {
		return "", "", "", "", fmt.Errorf("finding the merge base of %s with %s: %w", head, target, err)
	}
	return mb, fmt.Sprintf("the merge base of pull request #%d with %s", p.ev.Issue, target), "", "", nil
}

// named resolves a commit named with key= (ref or base) by the rules of
// docs/commands.md: a branch of the repository itself, or a SHA that is on the default
// branch or the pull request's own branch, or named in full by maintain/admin.
func (p *pinner) named(ctx context.Context, key, ref string, kind command.RefKind, fullSHA bool) (sha, from, why string, reason Reason, err error) {
	ev := p.ev
	switch kind {
	case command.RefBranch:
		sha, err := p.api.BranchHead(ctx, ev.Repo, ref)
		if errors.Is(err, gh.ErrNotFound) {
			return "", "", fmt.Sprintf("%s has no branch %s. Name a branch of this repository or a commit SHA with `%s=`.",
				ev.Repo, code(ref), key), ReasonRef, nil
		}
		if err != nil {
			return "", "", "", "", fmt.Errorf("reading branch %s: %w", ref, err)
		}
		return sha, "branch " + ref, "", "", nil

	case command.RefSHA:
		full, err := p.api.CommitSHA(ctx, ev.Repo, ref)
		if errors.Is(err, gh.ErrNotFound) || isStatus(err, http.StatusUnprocessableEntity) {
			return "", "", fmt.Sprintf("%s has no commit %s (or the short SHA is ambiguous). Name a commit of this repository with `%s=`, or its full 40-digit SHA.",
				ev.Repo, code(ref), key), ReasonRef, nil
		}
		if err != nil {
			return "", "", "", "", fmt.Errorf("resolving commit %s: %w", ref, err)
		}
		if fullSHA && gh.AtLeast(p.perm, MaintainPermission) {
			return full, "commit " + full + " named by " + ev.Author, "", "", nil
		}
		on, err := p.api.Contains(ctx, ev.Repo, ev.DefaultBranch, full)
		if err != nil && !errors.Is(err, gh.ErrNotFound) {
			return "", "", "", "", fmt.Errorf("checking commit %s: %w", ref, err)
		}
		if !on {
			pr, err := p.pull(ctx)
			if err != nil {
				return "", "", "", "", err
			}
			if pr != nil && !pr.Fork {
				on, err = p.api.Contains(ctx, ev.Repo, pr.SHA, full)
				if err != nil && !errors.Is(err, gh.ErrNotFound) {
					return "", "", "", "", fmt.Errorf("checking commit %s: %w", ref, err)
				}
			}
		}
		if !on {
			where := "the default branch " + code(ev.DefaultBranch)
			if ev.IsPR {
				where += " or this pull request's own branch"
			}
			return "", "", fmt.Sprintf("Commit %s is not on %s: it may come from a fork. Name a branch with `%s=BRANCH`, or someone with %s or %s permission can name the commit's full 40-digit SHA after reviewing it.",
				code(full), where, key, code("maintain"), code("admin")), ReasonRef, nil
		}
		return full, "commit " + full, "", "", nil
	}
	return "", "", "", "", fmt.Errorf("%s= of an unknown kind %d", key, kind)
}

// compareWords are the fixed words of a compare command, e.g. /bench rocm compare.
func compareWords(cmd command.Command) []string {
	return []string{"/" + string(cmd.Kind), cmd.Backend, "compare"}
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
