package job

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/proc"
)

// The unguarded build step leaves nothing running: a child the build starts in the
// background is stopped when the build exits, and its exit code comes through.
func TestRunLoggedLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "build.log")
	code, out, err := runLogged(context.Background(), host.Local(), dir, log,
		[]string{"sh", "-c", `sleep 600 & echo "child $!"; exit 4`})
	if err != nil || code != 4 {
		t.Fatalf("runLogged = %d, %v", code, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] != "child" {
		t.Fatalf("output %q", out)
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.WaitExit(pid, 20*time.Second); err != nil {
		t.Errorf("the build's child outlived it: %v", err)
	}
}
