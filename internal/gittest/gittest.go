// Package gittest runs a package's tests with git isolated from the machine: a home
// without user or system config (as on a fresh runner), no inherited repository
// variables, and loopback traffic kept off any proxy. It also runs git for test setup
// with a fixed identity (Git, Command, Run, Repo). It holds test setup only.
package gittest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Main is a TestMain body: it isolates git, unsets the extra variables, runs the tests
// and exits with their code.
func Main(m *testing.M, unset ...string) {
	done := Isolate(unset...)
	code := m.Run()
	done()
	os.Exit(code)
}

// Isolate is Main's isolation for a TestMain that does more: it gives the process a
// fresh home without git config, unsets the repository variables and the extra ones,
// keeps loopback traffic off any proxy, and returns what removes the home. It exits
// the process when it cannot make the home.
func Isolate(unset ...string) (done func()) {
	home, err := os.MkdirTemp("", "perfbot-git-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, k := range append([]string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"}, unset...) {
		os.Unsetenv(k)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	// Tests talk to 127.0.0.1 only; a proxy from the environment must not take those
	// requests.
	os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	os.Setenv("no_proxy", "127.0.0.1,localhost")
	return func() { os.RemoveAll(home) }
}

// Identity is the author and committer of the commits test setup makes.
var Identity = []string{
	"GIT_AUTHOR_NAME=Maintainer", "GIT_AUTHOR_EMAIL=maintainer@example.com",
	"GIT_COMMITTER_NAME=Maintainer", "GIT_COMMITTER_EMAIL=maintainer@example.com",
}

// Command is `git -C dir args...` for test setup: the environment plus Identity,
// without the system config. The caller may add to its Env.
func Command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(append(os.Environ(), Identity...), "GIT_CONFIG_NOSYSTEM=1")
	return cmd
}

// Run runs a git command and returns its output without the final newlines; an error
// carries what git wrote to stderr.
func Run(cmd *exec.Cmd) (string, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(cmd.Args[1:], " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// Git runs `git -C dir args...` for test setup (Command, without the user's config
// either) and returns its output without the final newlines; an error fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := Command(dir, args...)
	cmd.Env = append(cmd.Env, "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := Run(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Repo makes dir a repository on main holding one commit of everything in it, and
// returns the commit.
func Repo(t testing.TB, dir string) string {
	t.Helper()
	Git(t, dir, "init", "--quiet", "--initial-branch=main")
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "--quiet", "-m", "test commit")
	return Git(t, dir, "rev-parse", "HEAD")
}
