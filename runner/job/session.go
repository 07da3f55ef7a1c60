package job

import (
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/results"
)

func shapeOf(s config.Shape) results.Shape {
	return results.Shape{Prompt: s.Prompt, Generate: s.Generate, Warmup: s.Warmup}
}

// ProfileReport is what Profile did.
type ProfileReport struct {
	// Folder is the results folder, OutDir/<results.profiles>/<gfx>_<commit8>; "" when
	// the session stopped before it knew the GPU and commit.
	Folder  string
	Session results.Session
}

// Failed returns the runs that did not produce results.
func (r ProfileReport) Failed() []results.RunRecord {
	var out []results.RunRecord
	for _, run := range r.Session.Runs {
		if run.Status.Failed() {
			out = append(out, run)
		}
	}
	return out
}

// OnlyGuardGaveUp says every failed run failed because the guard gave up (a busy
// host: worth retrying later), and at least one did.
func (r ProfileReport) OnlyGuardGaveUp() bool {
	failed := r.Failed()
	for _, run := range failed {
		if run.Status != results.StatusGuardGaveUp {
			return false
		}
	}
	return len(failed) > 0
}
