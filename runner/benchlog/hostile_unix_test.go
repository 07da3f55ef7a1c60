//go:build unix

package benchlog

import (
	"testing"

	"github.com/lablup/perfbot/internal/streamtest"
)

// A FIFO or a device given as a log is refused at once, without waiting on it.
func TestParseFileRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	for _, p := range []string{streamtest.Fifo(t, "run_bench.log"), "/dev/zero"} {
		streamtest.Refused(t, "bench log", p, "not a regular file", func(p string) error { _, err := ParseFile(p); return err })
	}
}
