package gitrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/gittest"
)

func TestMain(m *testing.M) { gittest.Main(m) }

// TestOut: the output comes back trimmed, a failure names the subcommand and says git's
// reason, and a hook the repository installs never runs.
func TestOut(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := Out(ctx, dir, "init", "--quiet", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(dir, ".git", "hooks", "post-checkout")
	canary := filepath.Join(dir, "canary")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+canary+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Out(ctx, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "--allow-empty", "-m", "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := Out(ctx, dir, "checkout", "--quiet", "-b", "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("the repository's post-checkout hook ran")
	}
	head, err := Out(ctx, dir, "rev-parse", "HEAD")
	if err != nil || len(head) != 40 || strings.ContainsAny(head, "\n ") {
		t.Errorf("rev-parse HEAD: %q, %v", head, err)
	}
	_, err = Out(ctx, dir, "rev-parse", "--verify", "no-such-ref")
	if err == nil || !strings.HasPrefix(err.Error(), "git rev-parse: ") || !strings.Contains(err.Error(), "fatal: Needed a single revision") {
		t.Errorf("a failing command: %v, want the subcommand and git's reason", err)
	}
}
