// Package gitrun runs one local git command the way perfbot's readers of a repository
// need it: hooks off, untranslated output, no prompt, a bounded error message, and a
// context that stops it. It is for plumbing on local repositories (resolving a commit,
// adding a worktree, moving a local ref); commits, pushes and reads of a remote belong to
// bot/gitpub.
package gitrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// maxMessage bounds the part of git's stderr an error carries.
const maxMessage = 1000

// Out runs git with args in dir and returns its stdout without the trailing newlines.
// An error names the git subcommand and carries the start of git's stderr.
func Out(ctx context.Context, dir string, args ...string) (string, error) {
	argv := append([]string{"-C", dir, "-c", "core.hooksPath=/dev/null"}, args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > maxMessage {
			msg = msg[:maxMessage] + " ..."
		}
		sub := ""
		if len(args) > 0 {
			sub = args[0]
		}
		return "", fmt.Errorf("git %s: %w: %s", sub, err, msg)
	}
	return strings.TrimRight(out.String(), "\n"), nil
}
