//go:build unix

package benchlog

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO or a device given as a log is refused at once, without waiting on it.
func TestParseFileRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "run_bench.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		done := make(chan error, 1)
		go func() { _, err := ParseFile(p); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: got %v, want a refusal", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: blocked", p)
		}
	}
}
