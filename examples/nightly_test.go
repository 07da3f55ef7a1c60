package examples

import (
	"reflect"
	"testing"
)

// The nightly's publish job pushes the baseline branch and, with trend.publish: pages,
// the Pages branch: a branch push needs contents: write alone, so the job asks for
// nothing beyond what the pull request, the tracking comment and the regression issues
// need (no pages: write, no id-token), and the bench job, which runs the commit, stays
// read-only.
func TestNightlyPermissionsStayMinimal(t *testing.T) {
	wf := readWorkflow(t, nightlyFile)
	want := map[string]any{"contents": "write", "pull-requests": "write", "issues": "write"}
	if got := wf.Jobs["publish"].Permissions; !reflect.DeepEqual(got, want) {
		t.Errorf("publish permissions %v, want %v", got, want)
	}
	if got := wf.Jobs["bench"].Permissions; !reflect.DeepEqual(got, map[string]any{"contents": "read"}) {
		t.Errorf("bench permissions %v, want contents: read alone", got)
	}
}
