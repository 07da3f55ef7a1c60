package action

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// git in the checkout returns soon after git exits even when a process git started
// still holds its output (a hook, a credential helper left behind): the step is not
// held until that process ends.
func TestGitInTheCheckoutDoesNotWaitForItsChildren(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	pidFile := filepath.Join(dir, "child.pid")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nsleep 600 &\necho $! >" + pidFile + "\necho 0123456789abcdef0123456789abcdef01234567\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	s := &step{workspace: dir, environ: os.Environ()}
	done := make(chan error, 1)
	go func() {
		_, err := s.git(context.Background(), "rev-parse", "HEAD")
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the step still waits for git's child a minute after git exited")
	}
}

// A failed git in the checkout is named with what git said, or with its exit status
// when it said nothing.
func TestGitInTheCheckoutSaysWhyItFailed(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n[ \"$3\" = loud ] && echo 'fatal: not a git repository' >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	s := &step{workspace: t.TempDir(), environ: os.Environ()}
	for arg, want := range map[string]string{"loud": "git loud: fatal: not a git repository", "quiet": "git quiet: exit status 3"} {
		if _, err := s.git(context.Background(), arg); err == nil || err.Error() != want {
			t.Errorf("git %s: %v, want %q", arg, err, want)
		}
	}
}
