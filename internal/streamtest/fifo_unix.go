//go:build unix

package streamtest

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Fifo makes a named pipe nobody writes to, named name in a temp dir.
func Fifo(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Refused calls read(path) and fails the test unless it returns, within seconds, an
// error containing want: a reader must neither block on a FIFO nor read a device.
func Refused(t testing.TB, what, path, want string, read func(string) error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- read(path) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %s: got %v, want an error with %q", what, path, err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s %s: blocked", what, path)
	}
}
