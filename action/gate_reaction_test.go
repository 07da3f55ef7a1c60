package action

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// The gate job reacts eyes on an accepted command and says so; a reaction GitHub
// refuses fails the job (the requester would otherwise see no sign the command was
// taken), with an error that names the permission, and is not reported as made, while
// the run is still handed on.
func TestGateJobReactionMadeOrFailed(t *testing.T) {
	t.Parallel()
	for _, refused := range []bool{false, true} {
		t.Run(fmt.Sprintf("refused=%v", refused), func(t *testing.T) {
			t.Parallel()
			c := gatetest.Cases()[0] // an issue comment by a write user: an accepted profile
			s := fakegithub.New(t)
			c.Expect(t, s)
			answer := s.Example(201, "reaction", map[string]any{"content": "eyes"})
			if refused {
				answer = fakegithub.JSON(403, map[string]any{"message": "Resource not accessible by integration"})
			}
			s.Expect("POST", fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", c.Repo(t), commentID(t, c)), answer)
			res, e, log, err := gateStep(t, c, s, nil)
			if refused {
				if err == nil || !strings.Contains(log, "::error ") || !strings.Contains(log, "GitHub answered 403") || !strings.Contains(log, "issues: write") {
					t.Fatalf("a refused reaction: the gate job returned %v, want it failed with an error that names GitHub's 403 and the permission\nlog:\n%s", err, log)
				}
				if res.gate == nil || res.gate.Reacted != "" {
					t.Errorf("a refused reaction is reported as made: %+v", res.gate)
				}
			} else {
				if err != nil {
					t.Fatalf("gate job: %v\nlog:\n%s", err, log)
				}
				if res.gate.Reacted != "eyes" {
					t.Errorf("the reaction made is %q, want eyes", res.gate.Reacted)
				}
			}
			if outs := readOutputs(t, e.output); outs["accepted"] != "true" || outs["sha"] != gatetest.MasterSHA {
				t.Errorf("outputs %v, want the accepted run handed on", outs)
			}
		})
	}
}
