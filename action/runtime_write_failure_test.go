package action

import (
	"os"
	"strings"
	"testing"
)

// TestAFailedWriteOfAnOutputOrTheSummaryFails: when the runner's output or summary
// file takes no more bytes (a full disk; /dev/full answers every write with ENOSPC),
// SetOutput and Summary say so, so the step fails instead of leaving an output or a
// summary unwritten while reporting success.
func TestAFailedWriteOfAnOutputOrTheSummaryFails(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full on this system: %v", err)
	}
	e := newStepEnv(t, nil)
	e.vars["GITHUB_OUTPUT"] = "/dev/full"
	e.vars["GITHUB_STEP_SUMMARY"] = "/dev/full"
	rt := e.runtime(t)
	if err := rt.SetOutput("verdict", "complete"); err == nil || !strings.Contains(err.Error(), "setting output verdict") {
		t.Errorf("SetOutput on a full disk: %v, want an error naming the output", err)
	}
	if got := rt.Outputs(); len(got) != 0 {
		t.Errorf("outputs %v recorded though none was written", got)
	}
	if err := rt.Summary("# x\n"); err == nil || !strings.Contains(err.Error(), "writing the step summary") {
		t.Errorf("Summary on a full disk: %v, want an error", err)
	}
}
