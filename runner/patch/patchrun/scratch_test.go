package patchrun

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/patch"
)

// TestPrepareRefusesAScratchDirItCannotUse: a scratch folder that cannot hold the
// worktree (it does not exist) stops Prepare with the reason, before any checkout,
// and leaves the folders around it as they were. The check runs in a child process
// whose working folder is a temp folder: a Prepare that took the working folder for
// the scratch one would check out and then delete it.
func TestPrepareRefusesAScratchDirItCannotUse(t *testing.T) {
	if args := os.Getenv("PERFBOT_PATCHRUN_SCRATCH_CHILD"); args != "" {
		var a struct {
			Repo, Commit, Missing string
			Outcome               patch.Outcome
		}
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			t.Fatal(err)
		}
		_, err := Prepare(context.Background(), PrepareOptions{RepoDir: a.Repo, Commit: a.Commit, Outcome: a.Outcome, ScratchDir: a.Missing})
		if err == nil || !strings.Contains(err.Error(), "making a scratch worktree") {
			t.Errorf("Prepare with a missing scratch folder: %v, want it refused", err)
		}
		return
	}
	t.Parallel()
	work := t.TempDir()
	marker := filepath.Join(work, "kept")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	repo, commit := gitRepo(t, "upstream")
	parent := t.TempDir()
	args, err := json.Marshal(map[string]any{"Repo": repo, "Commit": commit, "Missing": filepath.Join(parent, "missing"), "Outcome": passOutcome(t)})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPrepareRefusesAScratchDirItCannotUse$", "-test.count=1")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PERFBOT_PATCHRUN_SCRATCH_CHILD="+string(args))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%v:\n%s", err, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the working folder lost its files: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("the scratch folder's parent holds %d entries, want none", len(entries))
	}
}
