// Package gittest runs a package's tests with git isolated from the machine: a home
// without user or system config (as on a fresh runner), no inherited repository
// variables, and loopback traffic kept off any proxy. It holds test setup only.
package gittest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Main is a TestMain body: it isolates git, unsets the extra variables, runs the tests
// and exits with their code.
func Main(m *testing.M, unset ...string) {
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
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
