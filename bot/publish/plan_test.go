package publish

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/golden"
)

// describePlan writes a plan out as text: the commit, then each step, then the end.
func describePlan(p Plan) string {
	var b strings.Builder
	if p.Err != nil {
		fmt.Fprintf(&b, "error: %v\n", p.Err)
	}
	if c := p.Push; c != nil {
		fmt.Fprintf(&b, "push to %s on %s at %s\n", c.Change.Branch, c.Change.Base, c.Change.Date.UTC().Format("2006-01-02T15:04:05Z"))
		var names []string
		for k, v := range c.Change.Files {
			names = append(names, fmt.Sprintf("  %s (%d bytes)", k, len(v)))
		}
		sort.Strings(names)
		b.WriteString(strings.Join(names, "\n") + "\n")
		fmt.Fprintf(&b, "message:\n%s", c.Change.Message)
	}
	for _, st := range append(append([]Step{}, p.Steps...), p.End...) {
		switch st := st.(type) {
		case PRStep:
			fmt.Fprintf(&b, "pull request %q from %s, draft %t, file %s\n", st.Title, st.Head, st.Draft, st.File)
		case CommentStep:
			fmt.Fprintf(&b, "%s on #%d, file %s, skip %q\n", st.What, st.Issue, st.File, st.Skip)
		default:
			fmt.Fprintf(&b, "%T\n", st)
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

// The plan of a profile: the commit of the page, the results and the patched sources,
// the pull request and the epic comment, then the end; nothing is written.
func TestPlanProfileGolden(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	res := layPrepared(t, tg, profile{date: "2026-09-30", tests: allPassed, trace: true})
	before := gitT(t, tg.bare, "for-each-ref")
	o, err := Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(t.TempDir())}}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	p := PlanProfile(context.Background(), o)
	got := strings.ReplaceAll(describePlan(p.Plan), p.Base, "<base>")
	golden.Check(t, "testdata/golden/plan-profile.txt", got)
	if after := gitT(t, tg.bare, "for-each-ref"); after != before {
		t.Errorf("planning changed the remote")
	}
}

// The directory sink writes each document once, says created, updated or unchanged as
// GitHub would, reads a marked comment back and never reacts.
func TestDirSink(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "dry")
	s := ToDir(dir)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spec := gh.PRSpec{Head: "b", Base: "main", Title: "T", Body: "body", Draft: true}
	for _, want := range []string{"created", "unchanged"} {
		w, err := s.PullRequest(ctx, spec, "pr.md")
		if err != nil || w.Action != want || w.File != "pr.md" || w.Link != "" || !w.Draft {
			t.Errorf("pull request: %+v %v, want %s", w, err, want)
		}
	}
	var earlier []string
	c := Comment{Issue: 7, Marker: "<!-- m -->", File: "c.md", Body: func(e string) (string, error) {
		earlier = append(earlier, e)
		return e + "x", nil
	}}
	for _, want := range []string{"created", "updated"} {
		if w, err := s.Comment(ctx, c); err != nil || w.Action != want || w.Number != 7 {
			t.Errorf("comment: %+v %v, want %s", w, err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "c.md")); string(b) != "xx" || len(earlier) != 2 || earlier[1] != "x" {
		t.Errorf("comment file %q, earlier bodies %q", b, earlier)
	}
	if o, err := s.React(ctx, 5, "rocket"); err != nil || o.Action != "skipped" || o.Detail != "dry run: would react rocket" {
		t.Errorf("react: %+v %v", o, err)
	}
	o, err := s.CheckRun(ctx, 0, gh.CheckOutput{Title: "T", Conclusion: "success", Summary: "S"}, "check.md")
	if b, _ := os.ReadFile(filepath.Join(dir, "check.md")); err != nil || o.Action != "created" || string(b) != "# T\n\nConclusion: success.\n\n---\n\nS" {
		t.Errorf("check run: %+v %v %q", o, err, b)
	}
}

// The plan of a nightly baseline: the commit of the CSVs, the evidence and the page,
// the regression issues, the pull request and the tracking comment, then the end.
func TestPlanBaselineGolden(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	o, err := BaselineOptions{Target: Target{ResultsDir: layNight(t, tg.base, night{date: "2026-10-20", llama: "39.31"}), RepoDir: tg.checkout,
		Config: testConfig(), Sink: ToDir(t.TempDir())}}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	p := PlanBaseline(context.Background(), o)
	got := strings.ReplaceAll(describePlan(p.Plan), p.Base, "<base>")
	golden.Check(t, "testdata/golden/plan-baseline.txt", got)
}

// The GitHub sink makes each effect one REST write (the stub fails on any call it was
// not told of): the pull request is created, the marked comment is found and made from
// the comment it finds, the check run is completed and the trigger gets its reaction;
// every outcome names what was written.
func TestGitHubSink(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	s := ToGitHub(client(t, h.s, &sleeps{}), testRepo)
	ctx := context.Background()
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("POST", pullsPath, h.createPR())
	w, err := s.PullRequest(ctx, gh.PRSpec{Head: "perfbot/rocm-profile", Base: "main", Title: "T", Body: "body"}, DryPR)
	if err != nil || w.Action != "created" || w.Number != 57 || w.Link != "https://github.com/lablup/mlxcel/pull/57" || w.File != "" {
		t.Errorf("pull request: %+v %v", w, err)
	}
	h.s.Expect("GET", epicPath, h.listEpic()).Times(2) // found, then upserted
	h.s.Expect("POST", epicPath, h.createEpic())
	var earlier []string
	w, err = s.Comment(ctx, Comment{Issue: epicIssue, Marker: "<!-- m -->", File: DryEpic, Body: func(e string) (string, error) {
		earlier = append(earlier, e)
		return "<!-- m -->\nranking", nil
	}})
	if err != nil || w.Action != "created" || w.Number != epicIssue || w.Link == "" || len(earlier) != 1 || earlier[0] != "" {
		t.Errorf("comment: %+v %v, earlier %q", w, err, earlier)
	}
	h.s.Expect("PATCH", checkPath+fmt.Sprint(checkRunID), h.checkRun()).JSONBody(map[string]any{"conclusion": "neutral", "status": "completed"})
	o, err := s.CheckRun(ctx, checkRunID, gh.CheckOutput{Conclusion: "neutral", Title: "T", Summary: "S"}, DryCheckRun)
	if want := (Outcome{Action: "completed", Number: checkRunID, Detail: "neutral"}); err != nil || o != want {
		t.Errorf("check run: %+v %v, want %+v", o, err, want)
	}
	if o, err := s.CheckRun(ctx, 0, gh.CheckOutput{}, DryCheckRun); err != nil || o.Action != "skipped" {
		t.Errorf("check run without an id: %+v %v", o, err)
	}
	h.s.Expect("POST", commentsPath+fmt.Sprint(triggerID)+"/reactions", h.reaction()).JSONBody(map[string]any{"content": "rocket"})
	if o, err := s.React(ctx, triggerID, "rocket"); err != nil || o.Action != "reacted" || o.Detail != "rocket" {
		t.Errorf("react: %+v %v", o, err)
	}
}
