package gitpub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/config"
)

// TriggerKind is what asked for a publication: a pull request, an issue, or the nightly.
type TriggerKind string

// The kinds of trigger a bot branch can belong to.
const (
	TriggerPR      TriggerKind = "pr"      // a command on pull request #Number
	TriggerIssue   TriggerKind = "issue"   // a command on issue #Number
	TriggerNightly TriggerKind = "nightly" // the scheduled nightly run (no number)
)

// Trigger is one request the bot publishes for; each has its own bot branch.
type Trigger struct {
	Kind   TriggerKind
	Number int // the pull request or issue number; 0 for the nightly
}

func (t Trigger) String() string {
	switch t.Kind {
	case TriggerPR:
		return "pull request #" + strconv.Itoa(t.Number)
	case TriggerIssue:
		return "issue #" + strconv.Itoa(t.Number)
	case TriggerNightly:
		return "the nightly"
	}
	return fmt.Sprintf("trigger %q #%d", string(t.Kind), t.Number)
}

// maxNumber bounds pull request and issue numbers to what fits an int32 (GitHub's
// numbers do), so a name parses back to the number it was made from.
const maxNumber = 1<<31 - 1

// BranchName is the bot branch of trigger t under prefix (a configured bot branch such
// as perfbot/rocm-profile): prefix-pr-N for pull request N, prefix-issue-N for issue N,
// and prefix itself for the nightly.
//
// The names are siblings of prefix, never below it: git cannot hold both a and a/b
// (refs are files and folders), so a name like prefix/pr-N would be refused while a
// prefix branch from before per-request branches exists, and that branch would in turn
// block the flat name. With a dash, the existing branch keeps working next to the new
// ones. The nightly keeps the prefix itself: it is one standing request, and its
// branch (perfbot/rocm-baseline) and open pull request carry on in place.
//
// The result is checked with config.CheckBranch, the rule the configuration's branch
// names pass; an invalid prefix, an unknown kind or a number out of range is an error.
func BranchName(prefix string, t Trigger) (string, error) {
	if msg := config.CheckBranch(prefix); msg != "" {
		return "", fmt.Errorf("bot branch prefix %q: %s", prefix, msg)
	}
	var name string
	switch t.Kind {
	case TriggerPR, TriggerIssue:
		if t.Number < 1 || t.Number > maxNumber {
			return "", fmt.Errorf("%s: the number must be between 1 and %d", t, maxNumber)
		}
		name = prefix + "-" + string(t.Kind) + "-" + strconv.Itoa(t.Number)
	case TriggerNightly:
		if t.Number != 0 {
			return "", fmt.Errorf("the nightly has no number (got %d)", t.Number)
		}
		name = prefix
	default:
		return "", fmt.Errorf("unknown trigger kind %q: want %q, %q or %q", string(t.Kind), TriggerPR, TriggerIssue, TriggerNightly)
	}
	if msg := config.CheckBranch(name); msg != "" {
		return "", fmt.Errorf("bot branch for %s: %s", t, msg)
	}
	return name, nil
}

// ParseBranchName is the inverse of BranchName: it says which trigger name is the bot
// branch of under prefix, and false for any other name (another prefix, a suffix
// BranchName does not make such as prefix-mywork, a number with a leading zero).
func ParseBranchName(prefix, name string) (Trigger, bool) {
	if prefix == "" {
		return Trigger{}, false
	}
	if name == prefix {
		return Trigger{Kind: TriggerNightly}, true
	}
	rest, ok := strings.CutPrefix(name, prefix+"-")
	if !ok {
		return Trigger{}, false
	}
	for _, kind := range []TriggerKind{TriggerPR, TriggerIssue} {
		digits, ok := strings.CutPrefix(rest, string(kind)+"-")
		if !ok || digits == "" || len(digits) > 10 || digits[0] == '0' {
			continue
		}
		n, err := strconv.Atoi(digits)
		if err != nil || n < 1 || n > maxNumber || strconv.Itoa(n) != digits {
			continue
		}
		return Trigger{Kind: kind, Number: n}, true
	}
	return Trigger{}, false
}

// isBotBranch reports whether name is one of the configured bot branches or the bot
// branch of a trigger under one of them.
func isBotBranch(name string, configured []string) bool {
	for _, c := range configured {
		if _, ok := ParseBranchName(c, name); ok {
			return true
		}
	}
	return false
}

// ErrNoBranch is a branch the remote does not have.
var ErrNoBranch = errors.New("no such branch on the remote")

// ErrBranchMoved is a branch that no longer points at the commit the caller saw, so it
// was left as it is.
var ErrBranchMoved = errors.New("the branch moved")

// ErrTooManyBranches is a listing cut at MaxBranches.
var ErrTooManyBranches = errors.New("too many bot branches")

// ErrShallow is a question about history that a shallow clone cannot answer and whose
// missing history could not be fetched.
var ErrShallow = errors.New("the clone's history is cut (shallow)")

// MaxBranches bounds ListBranches. Cleaning up after each publication keeps the bot's
// branches far below it.
const MaxBranches = 1000

// maxListing bounds what `git ls-remote` may print (about 100 bytes a branch).
const maxListing = 32 << 20

// Branch is a remote bot branch and the commit it points at.
type Branch struct {
	Name    string
	SHA     string
	Trigger Trigger // what ParseBranchName says the name belongs to
}

// BranchHead returns the commit the remote's branch points at now, fetched into the
// local repository so it can be used as a Change.Base or with IsAncestor. A branch the
// remote lacks is an error wrapping ErrNoBranch.
func (p *Publisher) BranchHead(ctx context.Context, branch string) (string, error) {
	if err := checkRefName(branch); err != nil {
		return "", fmt.Errorf("reading the head of a branch: %w", err)
	}
	s, err := p.open(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the head of %s: %w", branch, err)
	}
	return s.branchHead(ctx, branch)
}

func (s *publication) branchHead(ctx context.Context, branch string) (string, error) {
	sha, err := s.remoteBranch(ctx, branch)
	if err != nil {
		return "", err
	}
	if sha == "" {
		return "", fmt.Errorf("reading the head of %s on %s: %w", branch, s.remote, ErrNoBranch)
	}
	if !fullSHA.MatchString(sha) {
		return "", fmt.Errorf("reading the head of %s on %s: the remote names %q, not a SHA-1 commit id", branch, s.remote, sha)
	}
	if err := s.ensureCommit(ctx, sha); err != nil {
		return "", fmt.Errorf("reading the head of %s: %w", branch, err)
	}
	return sha, nil
}

// DefaultBranchHead returns the remote's default branch (Publisher.DefaultBranch, else
// what the remote's HEAD names) and the commit it points at now, fetched. It is the
// base a results commit is built on, so the pull request holds only the bot's files.
func (p *Publisher) DefaultBranchHead(ctx context.Context) (branch, sha string, err error) {
	s, err := p.open(ctx)
	if err != nil {
		return "", "", fmt.Errorf("reading the default branch: %w", err)
	}
	branch = p.DefaultBranch
	if branch == "" {
		if branch, err = s.remoteDefault(ctx); err != nil {
			return "", "", err
		}
	}
	if err := checkRefName(branch); err != nil {
		return "", "", fmt.Errorf("reading the default branch: %w", err)
	}
	sha, err = s.branchHead(ctx, branch)
	return branch, sha, err
}

// IsAncestor reports whether commit is in the history of of (a commit is in its own
// history). Both are full SHAs, fetched from the remote when the repository lacks them.
// A partial clone has every commit, so it answers as a full one. In a shallow clone a
// "no" may only mean the history is cut: the rest of of's history is then fetched and
// the question asked again, and when that is not possible the answer is an error
// wrapping ErrShallow, never a wrong "no".
func (p *Publisher) IsAncestor(ctx context.Context, commit, of string) (bool, error) {
	for _, c := range []string{commit, of} {
		if !fullSHA.MatchString(c) {
			return false, fmt.Errorf("is %s in the history of %s: %q is not a full commit SHA (40 hex digits)", commit, of, c)
		}
	}
	s, err := p.open(ctx)
	if err != nil {
		return false, fmt.Errorf("is %s in the history of %s: %w", commit, of, err)
	}
	for _, c := range []string{commit, of} {
		if err := s.ensureCommit(ctx, c); err != nil {
			return false, fmt.Errorf("is %s in the history of %s: %w", commit, of, err)
		}
	}
	yes, err := s.isAncestor(ctx, commit, of)
	if err != nil || yes {
		// A shallow clone only drops parents: what it finds in the history is there.
		return yes, err
	}
	cut, err := s.historyCut(ctx, of)
	if err != nil || !cut {
		return false, err
	}
	// Fetch the whole history of of: by SHA, else with the remote's branches.
	unshallow := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--unshallow", s.remote}
	_, errSHA := s.g.run(ctx, gitOpts{}, append(unshallow, of)...)
	if cut, err = s.historyCut(ctx, of); err == nil && cut && ctx.Err() == nil {
		_, err = s.g.run(ctx, gitOpts{}, append(unshallow, "+refs/heads/*:"+fetchedRefPrefix+"*")...)
		if err == nil {
			cut, err = s.historyCut(ctx, of)
		}
	}
	switch {
	case err != nil:
		return false, fmt.Errorf("is %s in the history of %s: %w: fetching the rest: %w", commit, of, ErrShallow, err)
	case cut:
		if errSHA == nil {
			errSHA = errors.New("the remote sent no more of it")
		}
		return false, fmt.Errorf("is %s in the history of %s: %w: fetching the rest: %w", commit, of, ErrShallow, errSHA)
	}
	return s.isAncestor(ctx, commit, of)
}

// isAncestor asks git merge-base --is-ancestor: exit 0 yes, 1 no, anything else fails.
func (s *publication) isAncestor(ctx context.Context, commit, of string) (bool, error) {
	args := []string{"merge-base", "--is-ancestor", commit, of}
	_, stderr, err := s.g.exec(ctx, gitOpts{maxOut: 4 << 10}, args...)
	var ee interface{ ExitCode() int }
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() == nil && errors.As(err, &ee) && ee.ExitCode() == 1 && strings.TrimSpace(stderr) == "":
		return false, nil
	}
	return false, fmt.Errorf("is %s in the history of %s: %w", commit, of, s.g.wrap(args, err, stderr))
}

// maxShallowRoots bounds how many cut points of a shallow clone are checked one by one;
// past it the history counts as cut and is fetched.
const maxShallowRoots = 64

// historyCut reports whether the history of of reaches a commit whose parents a shallow
// clone left out.
func (s *publication) historyCut(ctx context.Context, of string) (bool, error) {
	shallow, err := s.g.run(ctx, gitOpts{maxOut: 4 << 10}, "rev-parse", "--is-shallow-repository")
	if err != nil {
		return false, fmt.Errorf("asking whether the clone is shallow: %w", err)
	}
	if shallow != "true" {
		return false, nil
	}
	file, err := s.g.run(ctx, gitOpts{maxOut: 64 << 10}, "rev-parse", "--path-format=absolute", "--git-path", "shallow")
	if err != nil {
		return false, fmt.Errorf("finding the clone's shallow file: %w", err)
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(s.g.dir, file)
	}
	roots, err := readShallow(file)
	if err != nil || len(roots) > maxShallowRoots {
		// Unreadable, or too many cut points to check one by one: fetch the history.
		return true, nil
	}
	for _, r := range roots {
		yes, err := s.isAncestor(ctx, r, of)
		if err != nil {
			return false, err
		}
		if yes {
			return true, nil
		}
	}
	return false, nil
}

// readShallow reads a shallow file's commit ids, bounded.
func readShallow(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, (maxShallowRoots+1)*41))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

// ListBranches lists the remote's bot branches under prefix: the names BranchName makes
// from it (prefix itself, prefix-pr-N, prefix-issue-N) and no others, sorted by name.
// More than MaxBranches is an error wrapping ErrTooManyBranches that still returns the
// first MaxBranches, so a cleanup can make progress.
func (p *Publisher) ListBranches(ctx context.Context, prefix string) ([]Branch, error) {
	if err := checkRefName(prefix); err != nil {
		return nil, fmt.Errorf("listing bot branches: %w", err)
	}
	s, err := p.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the bot branches %s*: %w", prefix, err)
	}
	out, err := s.g.run(ctx, gitOpts{maxOut: maxListing}, "ls-remote", "--heads", s.remote,
		"refs/heads/"+prefix, "refs/heads/"+prefix+"-*")
	if err != nil {
		return nil, fmt.Errorf("listing the bot branches %s* on %s: %w", prefix, s.remote, err)
	}
	var list []Branch
	for _, line := range strings.Split(out, "\n") {
		sha, ref, ok := strings.Cut(line, "\t")
		name, isHead := strings.CutPrefix(ref, "refs/heads/")
		if !ok || !isHead || !fullSHA.MatchString(sha) {
			continue
		}
		if t, ok := ParseBranchName(prefix, name); ok {
			list = append(list, Branch{Name: name, SHA: sha, Trigger: t})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	if len(list) > MaxBranches {
		return list[:MaxBranches], fmt.Errorf("listing the bot branches %s* on %s: %w: %d, more than %d; delete the stale ones", prefix, s.remote, ErrTooManyBranches, len(list), MaxBranches)
	}
	return list, nil
}

// DeleteBranch deletes the remote bot branch name, only while it still points at
// expectSHA (git push --force-with-lease=refs/heads/NAME:SHA with an empty source), and
// drops the local refs this package keeps for it. It refuses, before anything is
// written, any name that is not a configured bot branch (Publisher.Branches) or the
// bot branch of a trigger under one (see BranchName), and the default branch, main and
// master whatever the configuration says: a person's branch is never deleted. A branch
// already gone is an error wrapping ErrNoBranch; one that moved, ErrBranchMoved (it is
// kept: someone else's commit is never deleted unseen).
func (p *Publisher) DeleteBranch(ctx context.Context, name, expectSHA string) error {
	var bad []string
	if !fullSHA.MatchString(expectSHA) {
		bad = append(bad, fmt.Sprintf("the expected commit %q is not a full 40-hex SHA: give the SHA ListBranches returned", expectSHA))
	}
	if err := checkRefName(name); err != nil {
		bad = append(bad, err.Error())
	} else if !isBotBranch(name, p.Branches) {
		bad = append(bad, fmt.Sprintf("branch %q is not a bot branch (%s): only those are deleted", name, describeBotBranches(p.Branches)))
	}
	if len(bad) > 0 {
		return &RefusedError{Reasons: bad}
	}
	s, err := p.open(ctx)
	if err != nil {
		return fmt.Errorf("deleting branch %s: %w", name, err)
	}
	def := p.DefaultBranch
	if def == "" {
		if def, err = s.remoteDefault(ctx); err != nil {
			return fmt.Errorf("deleting branch %s: %w", name, err)
		}
	}
	if err := checkBranch(name, p.Branches, def); err != nil {
		return &RefusedError{Reasons: []string{err.Error()}}
	}
	ref := "refs/heads/" + name
	now, err := s.remoteBranch(ctx, name)
	switch {
	case err != nil:
		return fmt.Errorf("deleting branch %s: %w", name, err)
	case now == "":
		s.dropLocal(ctx, name)
		return fmt.Errorf("deleting branch %s: %w", name, ErrNoBranch)
	case now != expectSHA:
		return fmt.Errorf("deleting branch %s: %w: it points at %s, not %s; kept", name, ErrBranchMoved, now, expectSHA)
	}
	if p.beforePush != nil {
		p.beforePush(0)
	}
	args := []string{"push", "--porcelain", "--no-verify", "--force-with-lease=" + ref + ":" + expectSHA, s.remote, ":" + ref}
	stdout, stderr, err := s.g.exec(ctx, gitOpts{maxOut: 64 << 10}, args...)
	status, summary := pushStatus(stdout, ref)
	switch {
	case err == nil:
		s.dropLocal(ctx, name)
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("deleting branch %s: %w", name, s.g.wrap(args, err, stderr))
	case status == "!" && isRace(summary):
		return fmt.Errorf("deleting branch %s: %w since it was seen at %s (%s); kept", name, ErrBranchMoved, expectSHA, summary)
	case status == "!":
		return fmt.Errorf("deleting branch %s: %w", name, s.g.wrap(args, fmt.Errorf("rejected %s", summary), stderr))
	}
	return fmt.Errorf("deleting branch %s: %w", name, s.g.wrap(args, err, stderr))
}

// dropLocal removes the local refs kept for a deleted bot branch. They only mirror the
// remote or keep a commit for a retry, so failing to remove one changes nothing.
func (s *publication) dropLocal(ctx context.Context, name string) {
	for _, ref := range []string{localRefPrefix + name, fetchedRefPrefix + name} {
		_, _ = s.g.run(ctx, gitOpts{}, "update-ref", "-d", ref)
	}
}

// describeBotBranches names the bot branches for an error.
func describeBotBranches(configured []string) string {
	if len(configured) == 0 {
		return "none are configured"
	}
	var parts []string
	for _, c := range configured {
		parts = append(parts, c+", "+c+"-pr-N, "+c+"-issue-N")
	}
	return strings.Join(parts, "; ")
}
