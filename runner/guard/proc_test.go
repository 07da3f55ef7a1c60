package guard

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/lablup/perfbot/runner/host"
)

// The process scanner keeps its descriptors to a quarter of the open-file limit, at
// most 4096; checked in helper processes started under lower limits.
func TestScannerDescriptorBudget(t *testing.T) {
	t.Parallel()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	s, err := newProcScanner(host.Local(), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(min(lim.Cur/4, 4096)); s.maxFD != want {
		t.Errorf("open-file limit %d: budget %d, want %d", lim.Cur, s.maxFD, want)
	}
	for limit, want := range map[string]string{"200": "50", "1200": "300"} {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		cmd := exec.CommandContext(ctx, "sh", "-c", `ulimit -n "$1" && exec "$0"`, os.Args[0], limit)
		cmd.Env = append(os.Environ(), "GUARD_TEST_HELPER=fdbudget")
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("helper under ulimit -n %s: %v", limit, err)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("under ulimit -n %s: budget %s, want %s", limit, got, want)
		}
	}
}
