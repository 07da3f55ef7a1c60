package gitpub

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrDiffTooLong is a diff cut at the caller's bound: the text returned is its start.
var ErrDiffTooLong = errors.New("the diff is longer than the bound")

// Diff is the unified diff that laying files on commit would make (the files as a
// Change would commit them), without committing or pushing anything: a patch shown
// rather than applied. It runs git's own diff with no external or textconv driver, so
// nothing of the repository runs. A diff longer than max bytes comes back cut, with an
// error wrapping ErrDiffTooLong; files equal to commit's make an empty diff.
func (p *Publisher) Diff(ctx context.Context, commit string, files map[string][]byte, max int) (string, error) {
	if !fullSHA.MatchString(commit) {
		return "", fmt.Errorf("diffing against %q: not a full commit SHA (40 hex digits)", commit)
	}
	if max <= 0 {
		return "", fmt.Errorf("diffing against %s: the bound must be positive, got %d", commit, max)
	}
	paths := make([]string, 0, len(files))
	for f := range files {
		if err := checkPath(f); err != nil {
			return "", fmt.Errorf("diffing against %s: %w", commit, err)
		}
		paths = append(paths, f)
	}
	sort.Strings(paths)
	s, err := p.open(ctx)
	if err != nil {
		return "", fmt.Errorf("diffing against %s: %w", commit, err)
	}
	if err := s.ensureCommit(ctx, commit); err != nil {
		return "", fmt.Errorf("diffing against %s: %w", commit, err)
	}
	tree, err := s.buildTree(ctx, Change{Base: commit, Files: files})
	if errors.Is(err, ErrNoChange) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("diffing against %s: %w", commit, err)
	}
	args := append([]string{"diff-tree", "-p", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", commit + "^{tree}", tree, "--"}, paths...)
	out, err := s.g.run(ctx, gitOpts{maxOut: max}, args...)
	if errors.Is(err, errTooMuchOutput) {
		return cutUTF8(out, max), fmt.Errorf("diffing against %s: %w (%d bytes)", commit, ErrDiffTooLong, max)
	}
	if err != nil {
		return "", fmt.Errorf("diffing against %s: %w", commit, err)
	}
	return out, nil
}

// cutUTF8 cuts s to at most n bytes at a line end when there is one, never inside a
// UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		return s[:i+1]
	}
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}
