package server

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gate"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
)

// issueFake is the fake GitHub with the issues `/perfbot accept` reads and labels.
type issueFake struct {
	*fakeGitHub
	issues map[int]gh.Issue
}

func (f *issueFake) IssueByNumber(_ context.Context, _ gh.Repo, n int) (gh.Issue, error) {
	is, ok := f.issues[n]
	if !ok {
		return gh.Issue{}, gh.ErrNotFound
	}
	return is, nil
}

func (f *issueFake) Login(context.Context) (string, error) { return "perfbot[bot]", nil }

func (f *issueFake) AddIssueLabels(_ context.Context, _ gh.Repo, n int, labels ...string) error {
	is := f.issues[n]
	for _, l := range labels {
		if !slices.Contains(is.Labels, l) {
			is.Labels = append(is.Labels, l)
		}
	}
	f.issues[n] = is
	return nil
}

const changeBody = "<!-- perfbot:regression rocm_strixhalo-gfx1151 Qwen3-30B-A3B-4bit 2026-10-26 -->\n## Decode regression: Qwen3-30B-A3B-4bit"

// `/perfbot accept` labels the bot's regression issue of a change for a maintainer, and
// refuses without maintain, on a pull request, on an issue a person opened with the
// marker, and a second time.
func TestAcceptRegressionLabelsTheIssue(t *testing.T) {
	r := newCommandsRig(t)
	ctx := context.Background()
	f := &issueFake{fakeGitHub: r.gh, issues: map[int]gh.Issue{
		30: {Number: 30, Body: changeBody, Author: "perfbot[bot]", State: "open"},
		31: {Number: 31, Body: changeBody, Author: "mallory", State: "open"},
	}}
	accept := func(issue int, isPR bool, perm string) string {
		t.Helper()
		req := gate.Request{Kind: command.Accept, Requester: "maya", Permission: perm}
		if err := r.cm.acceptRegression(ctx, f, commentOn(issue, isPR, 77, "maya"), req, quiet()); err != nil {
			t.Fatal(err)
		}
		return r.gh.lastReply(t)
	}
	if got := accept(30, false, "write"); !strings.Contains(got, "needs `maintain` or `admin` permission") || len(f.issues[30].Labels) != 0 {
		t.Errorf("write permission: %q, labels %v", got, f.issues[30].Labels)
	}
	if got := accept(30, true, "maintain"); !strings.Contains(got, "this is not one") {
		t.Errorf("on a pull request: %q", got)
	}
	if got := accept(31, false, "admin"); !strings.Contains(got, "this is not one") || len(f.issues[31].Labels) != 0 {
		t.Errorf("on a person's issue with the marker: %q, labels %v", got, f.issues[31].Labels)
	}
	got := accept(30, false, "maintain")
	if !slices.Equal(f.issues[30].Labels, []string{report.AcceptedLabel}) || !strings.Contains(got, "Accepted by `maya`: the level of `Qwen3-30B-A3B-4bit` from 2026-10-26") {
		t.Errorf("accept: %q, labels %v", got, f.issues[30].Labels)
	}
	if got := accept(30, false, "maintain"); !strings.Contains(got, "already accepted") || len(f.issues[30].Labels) != 1 {
		t.Errorf("second accept: %q, labels %v", got, f.issues[30].Labels)
	}
}
