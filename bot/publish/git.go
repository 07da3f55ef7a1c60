package publish

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/internal/gitrun"
)

// git runs a local git command (internal/gitrun). It serves the base commit's lookup
// and the dry run's local refs; commits, pushes and file reads belong to bot/gitpub.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitrun.Out(ctx, dir, args...)
}

// maxRulesBytes bounds the attribution rules file read from the base commit, and
// maxPatchedSource each of the two files the gate patch edits (as runner/patch does).
const (
	maxRulesBytes    = 1 << 20
	maxPatchedSource = 1 << 20
)

// readBlob reads one regular file of commit from the repository's git objects
// (bot/gitpub), bounded; a blob a partial clone lacks is fetched from remote.
func readBlob(ctx context.Context, repo, remote, token, commit, path string, max int64) ([]byte, error) {
	pub := &gitpub.Publisher{Dir: repo, Remote: remote, Token: token}
	return pub.ReadBlob(ctx, commit, path, max)
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
