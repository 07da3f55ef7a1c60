//go:build unix

package rocprof

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO or a device given as a trace is refused at once: reading /dev/zero would never
// end and opening a FIFO without a writer would never return.
func TestReadersRefuseWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "run_kernel_trace.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		for name, read := range map[string]func(string) error{
			"trace":  func(p string) error { _, err := ReadKernelTrace(p); return err },
			"stats":  func(p string) error { _, err := ReadKernelStats(p); return err },
			"agents": func(p string) error { _, err := ReadAgentInfo(p); return err },
		} {
			done := make(chan error, 1)
			go func() { done <- read(p) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("%s %s: got %v, want a refusal", name, p, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s %s: blocked", name, p)
			}
		}
	}
}
