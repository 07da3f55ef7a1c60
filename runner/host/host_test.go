package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, p, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// Host paths map under the root for reads, listings and globs, and globs come back as
// host paths.
func TestFilesUnderRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "opt/rocm/core-10.0/.info/version"), "10.0.0\n", 0o644)
	write(t, filepath.Join(root, "opt/rocm/core-9.9/.info/version"), "9.9.0\n", 0o644)
	h := New(root, "", nil)
	b, err := h.ReadFile("/opt/rocm/core-10.0/.info/version")
	if err != nil || string(b) != "10.0.0\n" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	ents, err := h.ReadDir("/opt/rocm")
	if err != nil || len(ents) != 2 {
		t.Fatalf("ReadDir = %v, %v", ents, err)
	}
	m, err := h.Glob("/opt/rocm/core-*/.info/version")
	if err != nil || strings.Join(m, " ") != "/opt/rocm/core-10.0/.info/version /opt/rocm/core-9.9/.info/version" {
		t.Fatalf("Glob = %v, %v", m, err)
	}
	if _, err := h.ReadFile("relative/path"); err == nil {
		t.Fatal("a relative host path must be refused")
	}
	if _, err := h.ReadFile("/missing"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file error = %v", err)
	}
	if r, _ := Real(Local(), "/proc/1/stat"); r != "/proc/1/stat" {
		t.Fatalf("Local maps /proc/1/stat to %q", r)
	}
}

// Commands are found on the host's PATH in order, run with the host's environment
// (PATH replaced), and a missing one reports exec.ErrNotFound in Err.
func TestCommandsOnHostPath(t *testing.T) {
	t.Parallel()
	first, second := t.TempDir(), t.TempDir()
	write(t, filepath.Join(first, "tool"), "#!/bin/sh\necho first \"$PATH\" \"$FAKE\"\n", 0o755)
	write(t, filepath.Join(second, "tool"), "#!/bin/sh\necho second\n", 0o755)
	write(t, filepath.Join(second, "notexec"), "#!/bin/sh\n", 0o644)
	h := New("/", first+":"+second, []string{"PATH=/usr/bin", "FAKE=yes"})
	out, err := h.Command(context.Background(), "tool").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "first "+first+":"+second+" yes"; got != want {
		t.Fatalf("tool printed %q, want %q", got, want)
	}
	if p, err := h.LookPath("tool"); err != nil || p != filepath.Join(first, "tool") {
		t.Fatalf("LookPath = %q, %v", p, err)
	}
	for _, name := range []string{"notexec", "no-such-tool"} {
		cmd := h.Command(context.Background(), name)
		if !errors.Is(cmd.Err, exec.ErrNotFound) {
			t.Errorf("%s: Err = %v, want exec.ErrNotFound", name, cmd.Err)
		}
		if err := cmd.Run(); err == nil {
			t.Errorf("%s ran", name)
		}
	}
	if p, err := h.LookPath(filepath.Join(second, "tool")); err != nil || p != filepath.Join(second, "tool") {
		t.Fatalf("LookPath with a slash = %q, %v", p, err)
	}
}
