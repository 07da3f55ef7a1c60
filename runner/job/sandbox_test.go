package job

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/sandbox"
)

// The requests take the sandbox from the host's environment, never from the
// repository: on with a bwrap that is not there is a start-up error, off is off.
func TestRequestsTakeTheSandboxFromTheHost(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t)
	repo := fakeRepo(t)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	missing := env(map[string]string{sandbox.EnvMode: "bwrap", sandbox.EnvBwrap: filepath.Join(fh.tmp, "no-bwrap")})
	if _, err := (ProfileRequest{Host: fh.h, RepoDir: repo, OutDir: fh.tmp, Getenv: missing}).Options(); err == nil || !strings.Contains(err.Error(), "install bubblewrap") {
		t.Errorf("profile request: %v, want the missing bwrap", err)
	}
	if _, err := (GemmRequest{Host: fh.h, RepoDir: repo, Getenv: missing}).Options(); err == nil || !strings.Contains(err.Error(), "install bubblewrap") {
		t.Errorf("gemm request: %v, want the missing bwrap", err)
	}
	off := env(map[string]string{sandbox.EnvMode: "off"})
	po, err := ProfileRequest{Host: fh.h, RepoDir: repo, OutDir: fh.tmp, Getenv: off}.Options()
	if err != nil || po.Sandbox == nil || po.Sandbox.On() {
		t.Errorf("profile request: %+v %v, want the sandbox off", po.Sandbox, err)
	}
	gopts, err := GemmRequest{Host: fh.h, RepoDir: repo, Getenv: off}.Options()
	if err != nil || gopts.Sandbox == nil || gopts.Sandbox.On() {
		t.Errorf("gemm request: %+v %v, want the sandbox off", gopts.Sandbox, err)
	}
}

// A checkout whose target folder is a symbolic link (to the toolchain, say) is refused
// before anything runs: the sandbox would make the link's target writable.
func TestProfileSandboxRefusesALinkedTarget(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t)
	repo := fakeRepo(t)
	toolchain := t.TempDir()
	if err := os.Symlink(toolchain, filepath.Join(repo, "target")); err != nil {
		t.Fatal(err)
	}
	_, err := Profile(context.Background(), ProfileOptions{
		Host: fh.h, RepoDir: repo, Config: loadConfig(t, repo), OutDir: filepath.Join(fh.tmp, "out"), TraceDir: filepath.Join(fh.tmp, "tr"),
		Guard: fh.guardOptions(), Sandbox: &sandbox.Settings{Mode: sandbox.Bwrap, Bwrap: "/usr/bin/bwrap"},
	})
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("error %v, want the linked target refused", err)
	}
	if ents, _ := os.ReadDir(toolchain); len(ents) > 0 {
		t.Errorf("something was written through the link: %v", ents)
	}
}
