package gate_test

import (
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gate/gatetest"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/runner/changepoint"
	"github.com/lablup/perfbot/runner/results"
)

const repoPath = "/repos/Codertocat/Hello-World"

// expectBisect declares the calls of an accepted bisection of 9fceb02..aa218f5 with
// ahead commits between the ends' compare.
func expectBisect(s *fakegithub.Stub, perm string, ahead int) {
	s.Expect("GET", repoPath+"/collaborators/Codertocat/permission",
		s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", map[string]any{"permission": perm, "role_name": perm}))
	for short, full := range map[string]string{gatetest.ShortSHA: gatetest.FullOfShort, gatetest.BadShort: gatetest.BranchSHA} {
		s.Expect("GET", repoPath+"/commits/"+short, fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
			return fakegithub.Response{Status: 200, Header: http.Header{"Content-Type": {"application/vnd.github.sha"}}, Body: []byte(full)}
		}).Unchecked())
	}
	s.Expect("GET", repoPath+"/compare/"+gatetest.BranchSHA+"...master",
		s.Example(200, "commit-comparison", map[string]any{"status": "ahead"}))
	s.Expect("GET", repoPath+"/compare/"+gatetest.FullOfShort+"..."+gatetest.BranchSHA,
		s.Example(200, "commit-comparison", map[string]any{"status": "ahead", "ahead_by": ahead}))
}

// Every field of an accepted bisection: B is the bad commit, A (Base) the good one,
// the range's size and the runs it may and must take.
func TestAcceptedBisect(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	cfg := testConfig(t)
	cfg.Limits.MaxBisectRuns = 40
	expectBisect(s, "write", 31)
	d, err := decide(t, s, event(t, "/bench rocm bisect good=9fceb02 bad=aa218f5 models=qwen3"), gate.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != gate.Accepted || d.Reply != "" {
		t.Fatalf("decision %+v", d)
	}
	r := d.Request
	want := gate.Request{Command: r.Command, Kind: command.Bisect, Repo: gh.Repo{Owner: "Codertocat", Name: "Hello-World"},
		InstallationID: 1, Issue: 1, CommentID: 492700400, Requester: "Codertocat", Permission: "write",
		SHA: gatetest.BranchSHA, PinnedFrom: "commit " + gatetest.BranchSHA + " (bad=)",
		Base: gatetest.FullOfShort, BasePinnedFrom: "commit " + gatetest.FullOfShort + " (good=)",
		Commits: 32, MaxRuns: 40, MinRuns: 8 + 5*3, Models: []string{"qwen3"}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("request\n %+v\nwant\n %+v", r, want)
	}
}

// A failure to ask GitHub about the range is an error, not a decision.
func TestBisectAPIFailureIsAnError(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	s.Expect("GET", repoPath+"/collaborators/Codertocat/permission",
		s.Example(200, "repository-collaborator-permission-response-if-user-has-admin-permissions", nil))
	for short, full := range map[string]string{gatetest.ShortSHA: gatetest.FullOfShort, gatetest.BadShort: gatetest.BranchSHA} {
		s.Expect("GET", repoPath+"/commits/"+short, fakegithub.Func(func(fakegithub.Request) fakegithub.Response {
			return fakegithub.Response{Status: 200, Body: []byte(full)}
		}).Unchecked())
	}
	s.Expect("GET", repoPath+"/compare/"+gatetest.BranchSHA+"...master", s.Example(200, "commit-comparison", map[string]any{"status": "ahead"}))
	s.Expect("GET", repoPath+"/compare/"+gatetest.FullOfShort+"..."+gatetest.BranchSHA, fakegithub.Status(502))
	d, err := decide(t, s, event(t, "/bench rocm bisect good=9fceb02 bad=aa218f5"), gate.Options{Config: testConfig(t)})
	var ae *gh.APIError
	if !errors.As(err, &ae) || ae.Status != 502 || d.Outcome != "" {
		t.Errorf("decision %+v, error %v", d, err)
	}
}

// The gate counts runs with the bisection's own defaults, whose budget is the
// config's default, and never lets the config widen a range past the format's cap.
func TestBisectLimits(t *testing.T) {
	t.Parallel()
	def := config.Default()
	if got, want := def.Limits.MaxBisectRuns, changepoint.DefaultBisectParams().Budget; got != want {
		t.Errorf("limits.max_bisect_runs defaults to %d, the bisection's budget to %d", got, want)
	}
	// A config without the key (0) keeps the bisection's own budget.
	p := gate.BisectParams(config.Config{})
	if !reflect.DeepEqual(p, changepoint.DefaultBisectParams()) {
		t.Errorf("params %+v", p)
	}
	if got := gate.BisectParams(config.Config{Limits: config.Limits{MaxBisectRuns: 17}}).Budget; got != 17 {
		t.Errorf("budget %d, want the config's 17", got)
	}
	if got := gate.BisectParams(config.Config{Limits: config.Limits{MaxBisectRuns: 17}}).MinRuns(2); got != 2*changepoint.DefaultBisectParams().EndRuns {
		t.Errorf("MinRuns(2) = %d", got)
	}
	if config.MinBisectRuns != 2*changepoint.DefaultBisectParams().EndRuns {
		t.Errorf("config.MinBisectRuns %d, the bisection starts with %d runs of each end", config.MinBisectRuns, changepoint.DefaultBisectParams().EndRuns)
	}
	for _, c := range []struct{ set, want int }{{0, 64}, {2, 2}, {100, 100}, {results.MaxBisectCommits, results.MaxBisectCommits}, {results.MaxBisectCommits + 1, results.MaxBisectCommits}} {
		if got := gate.MaxBisectCommits(config.Config{Limits: config.Limits{MaxBisectCommits: c.set}}); got != c.want {
			t.Errorf("max_bisect_commits %d: %d, want %d", c.set, got, c.want)
		}
	}
}
