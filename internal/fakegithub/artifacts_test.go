package fakegithub_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// A run's artifacts are listed in GitHub's documented shape (the fake checks every
// answer against the REST description), paged, and the check run moves to in progress
// with its details URL.
func TestRunArtifactsAndCheckProgress(t *testing.T) {
	e := newEnv(t)
	c := ctx(t)
	got := make(chan fakegithub.Dispatch, 1)
	e.fake.OnDispatch(func(d fakegithub.Dispatch) { got <- d })
	if err := e.client.DispatchWorkflow(c, e.repo, "perfbot-profile.yml", "main", map[string]any{"request-id": "7", "sha": e.main}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if list, err := e.client.RunArtifacts(c, e.repo, d.RunID); err != nil || len(list) != 0 {
		t.Fatalf("a run without artifacts: %v, %v", list, err)
	}
	var traces fakegithub.Artifact
	for i := range 130 { // two pages of 100
		name := fmt.Sprintf("other-%d", i)
		if i == 120 {
			name = "perfbot-traces-7"
		}
		a, err := e.fake.AddArtifact(d.RunID, fakegithub.Artifact{Name: name, Size: 1234})
		if err != nil {
			t.Fatal(err)
		}
		if i == 120 {
			traces = a
		}
	}
	list, err := e.client.RunArtifacts(c, e.repo, d.RunID)
	if err != nil || len(list) != 130 {
		t.Fatalf("listed %d artifacts, %v; want 130", len(list), err)
	}
	a, ok := gh.FindArtifact(list, "perfbot-traces-", "perfbot-traces-7")
	if !ok || a.ID != traces.ID || a.Size != 1234 {
		t.Errorf("found %+v %v, want artifact %d", a, ok, traces.ID)
	}
	if _, err := e.client.RunArtifacts(c, e.repo, 999999); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("artifacts of a run that does not exist: %v, want a 404", err)
	}

	cr, err := e.client.CreateCheckRun(c, e.repo, gh.CheckRunSpec{Name: "perfbot profile", HeadSHA: e.main, ExternalID: "perfbot-request-7", Title: "Queued", Summary: "request 7"})
	if err != nil {
		t.Fatal(err)
	}
	runURL := "https://github.com/lablup/mlxcel/actions/runs/77"
	if err := e.client.StartCheckRun(c, e.repo, cr.ID, gh.CheckProgress{Title: "Running", Summary: "run 77", DetailsURL: runURL}); err != nil {
		t.Fatal(err)
	}
	back, err := e.client.CheckRunByID(c, e.repo, cr.ID)
	if err != nil || back.Status != "in_progress" {
		t.Fatalf("check run after the start: %+v, %v", back, err)
	}
	for _, r := range e.fake.CheckRuns() {
		if r.ID == cr.ID && (r.DetailsURL != runURL || r.Summary != "run 77" || r.Conclusion != "") {
			t.Errorf("check run %+v, want the run's URL and summary, no conclusion", r)
		}
	}
}

func TestArtifactURL(t *testing.T) {
	for _, tc := range []struct {
		run  string
		id   int64
		want string
	}{
		{"https://github.com/o/r/actions/runs/5", 9, "https://github.com/o/r/actions/runs/5/artifacts/9"},
		{"https://github.com/o/r/actions/runs/5/", 9, "https://github.com/o/r/actions/runs/5/artifacts/9"},
		{"", 9, ""},
		{"https://github.com/o/r/actions/runs/5", 0, ""},
	} {
		if got := gh.ArtifactURL(tc.run, tc.id); got != tc.want {
			t.Errorf("ArtifactURL(%q, %d) = %q, want %q", tc.run, tc.id, got, tc.want)
		}
	}
}
