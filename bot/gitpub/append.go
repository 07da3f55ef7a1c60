package gitpub

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// emptyTree is git's empty tree: the base of the first commit of a branch that does not
// exist yet.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// Append adds ONE commit with c's files over the head of c.Branch as the remote holds
// it (a first, parentless commit when the branch does not exist yet), leaving every
// other file of the branch as it was, and pushes it only while the branch still points
// at that head: it never replaces a commit it did not build on. When the branch moved
// meanwhile (another pusher) it looks again and builds on the new head, up to
// maxRetries times. c.Base must be "": the branch's head is the base. A branch that
// already holds exactly these files is left alone (ActionUnchanged). It is for a branch
// that keeps its history, such as the one GitHub Pages serves; the same checks as
// Publish apply (a configured branch, never a default one; clean paths; size bounds).
func (p *Publisher) Append(ctx context.Context, c Change) (Result, error) {
	if c.Base != "" {
		return Result{}, &RefusedError{Reasons: []string{"Append builds on the branch's head: leave Change.Base empty"}}
	}
	if len(c.Remove) > 0 {
		return Result{}, &RefusedError{Reasons: []string{"Append only adds or replaces files: Change.Remove must be empty"}}
	}
	s, err := p.open(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("appending to %s: %w", c.Branch, err)
	}
	def := p.DefaultBranch
	if def == "" {
		if def, err = s.remoteDefault(ctx); err != nil {
			return Result{}, fmt.Errorf("appending to %s: %w", c.Branch, err)
		}
	}
	maxSize := p.MaxFileSize
	if maxSize <= 0 {
		maxSize = DefaultMaxFileSize
	}
	check := c
	check.Base = strings.Repeat("0", 40) // checked per attempt below
	if err := validateChange(check, p.Branches, def, maxSize); err != nil {
		return Result{}, err
	}
	res := Result{LocalRef: localRefPrefix + c.Branch}
	for attempt := 0; ; attempt++ {
		head, err := s.remoteBranch(ctx, c.Branch)
		if err != nil {
			return res, fmt.Errorf("appending to %s: %w", c.Branch, err)
		}
		res.Previous = head
		at := c
		at.Base = emptyTree
		if head != "" {
			if err := s.ensureCommit(ctx, head); err != nil {
				return res, fmt.Errorf("appending to %s: %w", c.Branch, err)
			}
			at.Base = head
		}
		tree, err := s.buildTree(ctx, at)
		if errors.Is(err, ErrNoChange) && head != "" {
			res.Commit, res.Action = head, ActionUnchanged
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("appending to %s: %w", c.Branch, err)
		}
		commit, err := s.commitOn(ctx, c, tree, head)
		if err != nil {
			return res, fmt.Errorf("appending to %s: %w", c.Branch, err)
		}
		res.Commit, res.Tree = commit, tree
		if _, err := s.g.run(ctx, gitOpts{}, "update-ref", "-m", "perfbot append", res.LocalRef, commit); err != nil {
			return res, fmt.Errorf("appending to %s: keeping commit %s at %s: %w", c.Branch, commit, res.LocalRef, err)
		}
		if p.beforePush != nil {
			p.beforePush(attempt)
		}
		// The lease is the head we built on ("" = the branch must still be absent): a
		// commit someone else pushed meanwhile is never overwritten.
		outcome, err := s.push(ctx, c.Branch, commit, head)
		switch {
		case err == nil && outcome == pushUpToDate:
			res.Action = ActionUnchanged
			return res, nil
		case err == nil:
			res.Pushed, res.Action = true, ActionCreated
			if head != "" {
				res.Action = ActionUpdated
			}
			return res, nil
		case outcome == pushRace && attempt < maxRetries:
			res.Retries++
			continue
		case outcome == pushRace:
			return res, &PushError{Branch: c.Branch, Commit: commit, LocalRef: res.LocalRef,
				Reason: fmt.Sprintf("the branch moved under us on each of %d attempts (someone else keeps pushing to it)", attempt+1), err: err}
		default:
			return res, &PushError{Branch: c.Branch, Commit: commit, LocalRef: res.LocalRef, err: err}
		}
	}
}

// commitOn writes the commit of c's tree over parent ("" for a first commit), as the
// bot at c.Date.
func (s *publication) commitOn(ctx context.Context, c Change, tree, parent string) (string, error) {
	date := gitDate(c.Date)
	env := []string{
		"GIT_AUTHOR_NAME=" + c.Author.Name, "GIT_AUTHOR_EMAIL=" + c.Author.Email, "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=" + c.Author.Name, "GIT_COMMITTER_EMAIL=" + c.Author.Email, "GIT_COMMITTER_DATE=" + date,
	}
	args := []string{"commit-tree", "--no-gpg-sign", tree}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	msg := strings.TrimRight(c.Message, " \t\r\n") + "\n"
	sha, err := s.g.run(ctx, gitOpts{env: env, stdin: strings.NewReader(msg)}, args...)
	if err != nil {
		return "", fmt.Errorf("writing the commit: %w", err)
	}
	return sha, nil
}
