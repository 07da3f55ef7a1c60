//go:build unix

package rocprof

import (
	"testing"

	"github.com/lablup/perfbot/internal/streamtest"
)

// A FIFO or a device given as a trace is refused at once: reading /dev/zero would never
// end and opening a FIFO without a writer would never return.
func TestReadersRefuseWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	fifo := streamtest.Fifo(t, "run_kernel_trace.csv")
	for _, p := range []string{fifo, "/dev/zero"} {
		for name, read := range map[string]func(string) error{
			"trace":  func(p string) error { _, err := ReadKernelTrace(p); return err },
			"stats":  func(p string) error { _, err := ReadKernelStats(p); return err },
			"agents": func(p string) error { _, err := ReadAgentInfo(p); return err },
		} {
			streamtest.Refused(t, name, p, "not a regular file", read)
		}
	}
}
