package examples

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The jobs that walk history check out all of it: a bisection checks out every commit
// of its range, and the nightly's confirmation and bisection older commits. The others
// build the pinned commit alone, with the default shallow checkout.
func TestHistoryIsCheckedOutWhereItIsWalked(t *testing.T) {
	t.Parallel()
	walks := map[string][]string{dispatchFile: {"bisect"}, commentFile: {"bisect"}, nightlyFile: {"bench"}}
	for _, name := range exampleWorkflows(t) {
		wf := readWorkflow(t, name)
		for id, j := range wf.Jobs {
			for _, s := range j.Steps {
				if !strings.HasPrefix(s.Uses, "actions/checkout@") {
					continue
				}
				depth, walked := s.With["fetch-depth"], slices.Contains(walks[name], id)
				if walked && depth != "0" {
					t.Errorf("%s: job %s checks out with fetch-depth %q, want 0: it walks the history", name, id, depth)
				}
				if !walked && depth != "" {
					t.Errorf("%s: job %s checks out with fetch-depth %q: it builds one commit", name, id, depth)
				}
			}
		}
	}
}

// The bisect job of both workflows runs the Action's bisect job on the range the server
// dispatched or the gate pinned (good-ref the last good commit, bad-ref the pinned
// one, the one model), with a read-only token; its publish job hands the artifact to
// the Action's publish job, pinned to the bad commit, with the ids it finishes.
func TestBisectJobsTakeTheRange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file, if_, good, models string
		needs                   any
		publish                 map[string]string
	}{
		{dispatchFile, "inputs.job == 'bisect'", "${{ inputs.base }}", "${{ inputs.models }}", "bisect", map[string]string{
			"issue": "${{ inputs.issue }}", "trigger-comment-id": "${{ inputs.trigger_comment_id }}",
			"status-comment-id": "${{ inputs.status_comment_id }}", "check-run-id": "${{ inputs.check_run_id }}",
		}},
		{commentFile, "needs.gate.outputs.verdict == 'bisect'", "${{ needs.gate.outputs.base }}", "${{ needs.gate.outputs.models }}", []any{"gate", "bisect"}, map[string]string{
			"trigger-comment-id": "${{ needs.gate.outputs.trigger-comment-id }}",
		}},
	} {
		wf := readWorkflow(t, c.file)
		if c.file == dispatchFile {
			// The server dispatches job: bisect; the choice must offer it.
			opts := fmt.Sprint(wf.On["workflow_dispatch"].(map[string]any)["inputs"].(map[string]any)["job"].(map[string]any)["options"])
			if opts != "[profile bench bisect]" {
				t.Errorf("%s: the job input offers %s, want profile, bench and bisect", c.file, opts)
			}
		}
		j, ok := wf.Jobs["bisect"]
		if !ok {
			t.Fatalf("%s has no bisect job", c.file)
		}
		if j.If != c.if_ || !reflect.DeepEqual(j.Permissions, map[string]any{"contents": "read"}) {
			t.Errorf("%s: bisect job if %q permissions %v", c.file, j.If, j.Permissions)
		}
		var run step
		for _, s := range j.Steps {
			if perfbotStep(s) != "" {
				run = s
			}
		}
		want := map[string]string{"job": "bisect", "ref": "${{ env.PINNED_SHA }}", "good-ref": "${{ env.GOOD_SHA }}", "bad-ref": "${{ env.PINNED_SHA }}", "models": c.models}
		if !reflect.DeepEqual(run.With, want) {
			t.Errorf("%s: the bisect step takes %v, want %v", c.file, run.With, want)
		}
		if !strings.Contains(j.raw, "GOOD_SHA: "+c.good) {
			t.Errorf("%s: GOOD_SHA is not %s:\n%s", c.file, c.good, j.raw)
		}
		p, ok := wf.Jobs["publish-bisect"]
		if !ok {
			t.Fatalf("%s has no publish-bisect job", c.file)
		}
		if fmt.Sprint(p.Needs) != fmt.Sprint(c.needs) {
			t.Errorf("%s: publish-bisect needs %v, want %v", c.file, p.Needs, c.needs)
		}
		for _, s := range p.Steps {
			if perfbotStep(s) != "publish" {
				continue
			}
			for k, v := range c.publish {
				if s.With[k] != v {
					t.Errorf("%s: publish-bisect passes %s %q, want %q", c.file, k, s.With[k], v)
				}
			}
			if s.With["ref"] != "${{ env.PINNED_SHA }}" {
				t.Errorf("%s: publish-bisect publishes at %q, want the pinned bad commit", c.file, s.With["ref"])
			}
		}
	}
}
