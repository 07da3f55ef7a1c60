package gittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoCommitsAsTheIdentity: Repo commits every file of the folder on main as the
// fixed identity, and Git reads it back.
func TestRepoCommitsAsTheIdentity(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commit := Repo(t, dir)
	if len(commit) != 40 {
		t.Fatalf("commit %q", commit)
	}
	if got := Git(t, dir, "log", "-1", "--format=%an <%ae> %cn <%ce>"); got != "Maintainer <maintainer@example.com> Maintainer <maintainer@example.com>" {
		t.Errorf("identity %q", got)
	}
	if got := Git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
		t.Errorf("branch %q", got)
	}
	if got := Git(t, dir, "show", commit+":a.txt"); got != "a" {
		t.Errorf("a.txt at the commit: %q", got)
	}
}

// TestRunNamesTheFailure: a failing git command's error names the command and what git
// wrote to stderr.
func TestRunNamesTheFailure(t *testing.T) {
	dir := t.TempDir()
	Git(t, dir, "init", "--quiet")
	_, err := Run(Command(dir, "rev-parse", "--verify", "no-such-ref"))
	if err == nil || !strings.Contains(err.Error(), "git -C "+dir+" rev-parse --verify no-such-ref") || !strings.Contains(err.Error(), "fatal:") {
		t.Errorf("err = %v, want the command and git's message", err)
	}
}
