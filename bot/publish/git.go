package publish

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// git runs a git command in dir with hooks off, untranslated output and no prompt, and
// returns its trimmed stdout. It serves the scratch worktree and the dry run's local
// refs; commits and pushes belong to bot/gitpub.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	argv := append([]string{"-C", dir, "-c", "core.hooksPath=/dev/null"}, args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 1000 {
			msg = msg[:1000] + " ..."
		}
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// worktree is a scratch checkout of the base commit where the patch is applied and
// verified, so the caller's checkout is never touched and every run starts from the
// same files.
type worktree struct {
	repo string
	dir  string
}

func addWorktree(ctx context.Context, repo, base string) (*worktree, error) {
	tmp, err := os.MkdirTemp("", "perfbot-publish-")
	if err != nil {
		return nil, fmt.Errorf("making a scratch worktree: %w", err)
	}
	dir := filepath.Join(tmp, "tree")
	if _, err := git(ctx, repo, "worktree", "add", "--quiet", "--detach", dir, base); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("checking out the base commit %s in a scratch worktree: %w", base, err)
	}
	return &worktree{repo: repo, dir: dir}, nil
}

// remove deletes the worktree; it runs even after ctx ended.
func (w *worktree) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = git(ctx, w.repo, "worktree", "remove", "--force", w.dir)
	os.RemoveAll(filepath.Dir(w.dir))
	_, _ = git(ctx, w.repo, "worktree", "prune")
}

// resolveCommit turns a SHA (full or abbreviated) into the full commit SHA in repo.
func resolveCommit(ctx context.Context, repo, rev string) (string, error) {
	sha, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || len(sha) != 40 {
		return "", fmt.Errorf("commit %s is not in %s: fetch it, or pass the pinned base commit", rev, repo)
	}
	return sha, nil
}

// localRemote says whether a remote URL is on this machine (a path or file:// URL).
func localRemote(u string) bool {
	if strings.HasPrefix(u, "file://") || filepath.IsAbs(u) || strings.HasPrefix(u, "./") || strings.HasPrefix(u, "../") {
		return true
	}
	// scp-like host:path and URL schemes are remote.
	return !strings.Contains(u, ":")
}
