package action

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/hosttest"
)

// A nightly on a host whose GPU another tenant holds the whole time: the guard gives up
// on every sweep, so the verdict is contended (the host's state, not the code's), and
// the step still fails, naming the sweeps that gave no result, as `perfbot run bench`
// does.
func TestBenchOnAHostThatStaysBusyFails(t *testing.T) {
	t.Parallel()
	cfg := strings.Replace(jobsConfig, "max_wait_secs: 60", "max_wait_secs: 1", 1)
	if cfg == jobsConfig {
		t.Fatal("the test config has no max_wait_secs: 60 to shorten")
	}
	h := newHostJobs(t, cfg, benchFiles(t))
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	if err := os.MkdirAll(filepath.Join(hosttest.KFDDir(h.root), strconv.Itoa(holder.Process.Pid)), 0o755); err != nil {
		t.Fatal(err)
	}
	_, e, log, err := h.step(t, map[string]string{"job": "bench"})
	if !errors.Is(err, ErrJobFailed) {
		t.Fatalf("a nightly the guard gave up on: %v\n%s", err, log)
	}
	if v := readOutputs(t, e.output)["verdict"]; v != VerdictContended {
		t.Errorf("verdict %q, want %q", v, VerdictContended)
	}
	a := annotations(t, log)
	if !hasAnnotation(a["error"], "perfbot bench failed", "did not give a result") {
		t.Errorf("no error naming the sweeps without a result: %q", a["error"])
	}
	if !hasAnnotation(a["error"], "perfbot: the mlxcel sweep guard gave up") || !hasAnnotation(a["error"], "perfbot: the mlx-lm sweep guard gave up") {
		t.Errorf("no error for each sweep the guard gave up on: %q", a["error"])
	}
	if hasAnnotation(a["error"], "harness problem") {
		t.Errorf("a busy host reported as harness problems: %q", a["error"])
	}
}
