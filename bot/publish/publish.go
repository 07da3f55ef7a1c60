package publish

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
)

// Files a dry run writes instead of the GitHub writes.
const (
	DryPR          = "pr.md"
	DryEpic        = "epic-comment.md"
	DryStatus      = "status-comment.md"
	DryCheckRun    = "check-run.md"
	DryStepSummary = "step-summary.md"
	DrySummary     = "summary.json"
)

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Options says what profile results to publish and where. Its Target's ResultsDir is
// the folder `perfbot run profile` wrote: the <gfx>_<commit> folder, or the folder
// holding exactly one of them. Its Branch "" takes the request's own branch under
// Config.Branches.Profile (gitpub.BranchName: <profile>-pr-N or <profile>-issue-N for
// Issue N, <profile> itself without an Issue). A dry run's folder gets pr.md,
// epic-comment.md, status-comment.md, check-run.md, step-summary.md and summary.json.
type Options struct {
	Target
	// Base is the pinned commit that was profiled; "" takes the session's commit. The
	// attribution rules and the patch are read from it. The results commit itself is
	// built on the default branch's head at publishing time, so the pull request holds
	// only perfbot's files.
	Base string

	Marks
	Issue int // the issue or pull request the command came from
	// IssueKind says whether Issue is a pull request (gitpub.TriggerPR) or an issue
	// (gitpub.TriggerIssue); "" asks GitHub. A dry run cannot ask: it takes an issue
	// and says so.
	IssueKind gitpub.TriggerKind
	// Requester is the login that asked for the run; "" takes the trigger comment's
	// author from GitHub (a dry run leaves it out).
	Requester string
	// TriggerCommentURL links the comment that asked; "" takes it from GitHub.
	TriggerCommentURL string
	// Epic overrides Config.Epic when positive (the command's epic= argument).
	Epic int
	// Command is the command as the status comment names it; default "/profile rocm".
	Command string
	// RunLinks are the workflow run's links (its page, its traces artifact), added to
	// the status comment's and the check run's.
	RunLinks []report.Link

	// Prepared is the grouped_gemm gate patch prepared for these results, used when
	// the results folder has no gemm_patch.json (the command line prepares it on a
	// maintainer's own checkout). Publish itself never prepares one: that runs the
	// repository's code.
	Prepared *patch.Prepared

	Now func() time.Time
}

func (o Options) normalize() (Options, error) {
	errs := o.check("run profile")
	if o.Branch == "" && o.Config.Branches.Profile == "" {
		errs = append(errs, errors.New("no bot branch: set branches.profile in the configuration"))
	}
	switch o.IssueKind {
	case "", gitpub.TriggerPR, gitpub.TriggerIssue:
	default:
		errs = append(errs, fmt.Errorf("issue kind %q: want %q or %q", string(o.IssueKind), gitpub.TriggerPR, gitpub.TriggerIssue))
	}
	if o.Issue < 0 {
		errs = append(errs, fmt.Errorf("issue %d: not an issue number", o.Issue))
	}
	if o.Epic <= 0 {
		o.Epic = o.Config.Epic
	}
	if o.Command == "" {
		o.Command = "/profile rocm"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Config.Results.Profiles == "" || o.Config.Results.Reports == "" {
		d := config.Default()
		if o.Config.Results.Profiles == "" {
			o.Config.Results.Profiles = d.Results.Profiles
		}
		if o.Config.Results.Reports == "" {
			o.Config.Results.Reports = d.Results.Reports
		}
	}
	return checked(o, "publishing", errs)
}

// Summary says what Publish did; a dry run writes it as summary.json.
type Summary struct {
	DryRun  bool     `json:"dry_run"`
	Results string   `json:"results"`
	GFX     string   `json:"gfx"`
	Commit  string   `json:"commit"`
	Date    string   `json:"date"`
	Runs    []string `json:"runs"`
	Order   []string `json:"order"`
	// Ranking is the ranked port order with its evidence.
	Ranking *rank.Ranking `json:"-"`
	Report  string        `json:"report"`
	Files   []string      `json:"files"`
	Skipped []string      `json:"skipped,omitempty"`
	Git     Git           `json:"git"`
	// OnMain says whether the profiled commit is in the default branch's history;
	// the results commit is built on that branch's head (Git.Base) either way.
	OnMain    bool   `json:"on_main"`
	Trigger   string `json:"trigger,omitempty"`   // "pull request #1900", "issue #1814"
	Requester string `json:"requester,omitempty"` // who asked
	Gated
	PR   Outcome `json:"pr"`
	Epic Outcome `json:"epic"`
	// Request is the report posted on the requesting pull request (a profile of a
	// commit not yet on the default branch); Stale the bot branches of closed
	// requests that were deleted or kept.
	Request Outcome   `json:"request_comment,omitzero"`
	Stale   []Outcome `json:"stale_branches,omitempty"`
	Reported
	Ending
}

// Gated is what the grouped_gemm gate patch and its verification did, and the draft
// state of the pull request they decide.
type Gated struct {
	Patch  *Patch   `json:"patch,omitempty"`
	Verify Verify   `json:"verify"`
	Draft  bool     `json:"draft"`
	Why    []string `json:"draft_reasons,omitempty"`
}

// Patch is what the grouped_gemm patch did.
type Patch struct {
	Decision string   `json:"decision"`
	Changed  []string `json:"changed,omitempty"`
	Checker  string   `json:"checker,omitempty"`
	Error    string   `json:"error,omitempty"`
	Withholding
}

// Withholding says why a patch is shown but not committed (the profiled commit is not
// on the default branch, or the branch changed the patched files since), and which
// files it would change.
type Withholding struct {
	Withheld string   `json:"withheld,omitempty"`
	Pending  []string `json:"pending,omitempty"`
}

// Verify is the verification of the patched tree.
type Verify struct {
	Passed   bool     `json:"passed"`
	Commands []string `json:"commands"`
	Failed   []string `json:"failed,omitempty"`
}

// Publish publishes a results folder (see the package comment): PlanProfile, then the
// plan's effects through o.Sink. The Summary says what each step did, also when an
// error is returned: a failed GitHub write does not undo the push, and the status
// comment, check run and reaction still report the failure. An error before anything
// was done (bad options) comes with a zero Summary.
func Publish(ctx context.Context, o Options) (Summary, error) {
	return publish[Options, Summary](ctx, o, func(o Options) *ProfilePlan { return &ProfilePlan{o: o} }, PlanProfile)
}

// Fail reports a publish that could not start, cause saying why (the results artifact
// was refused, the repository could not be fetched): the status comment, the check run,
// the reaction and the step summary say so, as after any failure in Publish; nothing is
// read or pushed. ResultsDir and RepoDir may be empty.
func Fail(ctx context.Context, o Options, cause error) (Summary, error) {
	if o.ResultsDir == "" {
		o.ResultsDir = "-" // not read
	}
	if o.RepoDir == "" {
		o.RepoDir = "-" // not read
	}
	o, err := o.normalize()
	if err != nil {
		return Summary{}, errors.Join(cause, err)
	}
	pl := &ProfilePlan{o: o}
	sum, err := run(ctx, o.Sink, Git{Branch: o.Branch, Remote: o.Remote}, pl, func() planned[Summary] {
		pl.Plan = pl.layout(cause)
		return pl
	})
	if !errors.Is(err, cause) {
		err = errors.Join(cause, err)
	}
	return sum, err
}

// ProfilePlan is the plan of a profile's publication, with what the planning found
// (the summary before anything is written).
type ProfilePlan struct {
	Plan
	o   Options
	sum Summary // what planning found: folder, runs, order, files, patch, verify

	f        *folder
	rk       *rank.Ranking
	base     string
	date     string
	when     time.Time
	models   []string
	sampling []string

	files     map[string][]byte
	pagePath  string
	gemmMD    string
	verifyMD  string
	verified  bool
	draftWhy  []string
	gemmPatch *patch.Report

	// The request: its trigger, who asked, the comment, and its bot branch.
	trigger    gitpub.Trigger
	requester  string
	commentURL string
	branch     string
	// The default branch, its head the results commit is built on, and whether the
	// profiled commit (base) is in its history.
	mainBranch string
	mainHead   string
	onMain     bool
	// withheld is the gate patch shown but not committed.
	withheld *report.Withheld
}

// PlanProfile plans the publication of a profile's results folder (o normalized): it
// reads and ranks the results, reads the rules and the patched sources of the base
// commit from the git objects, and renders the page. It writes nothing; a failure is
// the plan's Err, which the plan's end steps report.
func PlanProfile(ctx context.Context, o Options) *ProfilePlan {
	p := &ProfilePlan{o: o, sum: Summary{DryRun: o.Sink.DryRun()}}
	p.Plan = p.layout(p.prepare(ctx))
	return p
}

// layout lays the steps out; err is why planning failed.
func (p *ProfilePlan) layout(err error) Plan {
	o := p.o
	pl := o.plan(p.mainHead, p.branch, p.sum.Notes, err)
	if err == nil {
		pl.Push = o.push(p.mainBranch, gitpub.Change{Base: p.mainHead, Branch: p.branch, Files: p.files, Message: p.commitMessage(), Date: p.when})
		pl.Steps = []Step{
			PRStep{Title: p.title(), Head: p.branch, Draft: len(p.draftWhy) > 0, File: DryPR, Body: p.prBody, NoteDraft: true},
		}
		if st, ok := p.requestStep(); ok {
			pl.Steps = append(pl.Steps, st)
		}
		pl.Steps = append(pl.Steps, p.epicStep(), p.staleStep())
	}
	pl.End = o.end(p)
	return pl
}

// title is the pull request's title; it says when the profiled commit is not on the
// default branch.
func (p *ProfilePlan) title() string {
	t := fmt.Sprintf("rocm: decode profile of %s at %s (%s)", p.f.gfx, p.f.commit8, p.date)
	if line := p.offMainLine(); line != "" {
		t += ", " + line
	}
	return t
}

// staleStep deletes the bot branches of closed requests, as the configuration says.
func (p *ProfilePlan) staleStep() StaleStep {
	o := p.o
	st := StaleStep{Prefix: o.Config.Branches.Profile, Keep: p.branch, Repo: o.RepoDir, Token: o.GitToken}
	switch {
	case !o.Config.Branches.DeleteStale:
		st.Skip = "branches.delete_stale is false"
	case o.Sink.DryRun():
		st.Skip = "a dry run does not ask GitHub which requests are closed"
	}
	return st
}

// summary is the plan's summary with what applying it did.
func (p *ProfilePlan) summary(a *Applied) Summary {
	s := p.sum
	s.DryRun = a.DryRun
	s.Git = a.Git
	s.Request, s.Stale = a.Aside.Outcome, a.Stale
	if a.Pushed { // the pull request's step ran
		s.Draft, s.Why = len(p.draftWhy) > 0, p.draftWhy
	}
	s.PR, s.Epic = a.PR.Outcome, a.Comment.Outcome
	s.Reported, s.Ending = a.Reported, ending(a)
	return s
}

// prepare reads and ranks the results, patches and verifies a scratch checkout of the
// base commit, and renders the page: everything before the push.
func (p *ProfilePlan) prepare(ctx context.Context) error {
	o := p.o
	f, err := readFolder(o.ResultsDir)
	if err != nil {
		return err
	}
	p.f = f
	p.sum.Results, p.sum.GFX = f.name, f.gfx
	p.sum.Skipped = f.skipped
	p.sum.Notes = append(p.sum.Notes, f.notes...)
	for _, s := range f.runs {
		p.sum.Runs = append(p.sum.Runs, s.Name)
	}

	if err := p.pinBase(ctx); err != nil {
		return err
	}
	if err := p.resolveRequest(ctx); err != nil {
		return err
	}
	if err := p.pinMain(ctx); err != nil {
		return err
	}
	rules, rulesBytes, err := p.readRules(ctx)
	if err != nil {
		return err
	}
	kernels, err := rank.ReadKernels(f.dir, f.runs)
	if err != nil {
		return fmt.Errorf("ranking: %w", err)
	}
	// A unit's headline run is at the configured default sampling (greedy unless the
	// config says otherwise).
	ro := rank.Options{Headline: rank.HeadlineOf(o.Config.SamplingTags), Kernels: kernels}
	if p.rk, err = rank.RankWith(f.runs, rules, ro); err != nil {
		return fmt.Errorf("ranking: %w", err)
	}
	p.sum.Order = p.rk.Order
	p.sum.Ranking = p.rk
	p.dates()
	p.models, p.sampling = f.session.Models, f.session.Sampling
	if len(p.sampling) == 0 {
		p.sampling = distinct(f.runs, (*results.Summary).SamplingTag)
	}
	if len(p.models) == 0 {
		p.models = distinct(f.runs, func(s *results.Summary) string { return configName(o.Config, s.ModelName()) })
	}

	p.files = map[string][]byte{}
	p.usePatch(ctx)

	resultsDir := path.Join(o.Config.Results.Profiles, f.name)
	for _, name := range f.files {
		b, err := infile.ReadFile(filepath.Join(f.dir, name), gitpub.DefaultMaxFileSize)
		if err != nil {
			return fmt.Errorf("reading the results: %w", err)
		}
		p.files[path.Join(resultsDir, name)] = b
	}
	p.pagePath = path.Join(o.Config.Results.Reports, fmt.Sprintf("rocm-decode-profile-%s-%s.md", f.gfx, p.date))
	if svg, err := unitChart(f, p.rk); err == nil {
		p.files[chartPath(p.pagePath)] = svg
	}
	page, err := p.renderPage(rules, rulesBytes, resultsDir)
	if err != nil {
		return err
	}
	p.files[p.pagePath] = []byte(page)
	p.sum.Report, p.sum.Files = p.pagePath, fileNames(p.files)
	return nil
}

// pinBase resolves the base commit and checks it is the profiled one.
func (p *ProfilePlan) pinBase(ctx context.Context) error {
	want := p.o.Base
	if want == "" {
		want = p.f.session.Commit
	}
	if want == "" {
		want = p.f.commit8
	}
	sha, err := resolveCommit(ctx, p.o.RepoDir, want)
	if err != nil {
		return fmt.Errorf("pinning the base commit: %w", err)
	}
	if !strings.HasPrefix(sha, p.f.commit8) {
		return fmt.Errorf("pinning the base commit: the results are of commit %s (folder %s) but the base is %s: publish on the profiled commit", p.f.commit8, p.f.name, sha)
	}
	if !fullSHA.MatchString(sha) {
		return fmt.Errorf("pinning the base commit: %q is not a full SHA", sha)
	}
	p.base = sha
	p.sum.Commit = sha
	return nil
}

// dates fixes the page's date and the commit time from the session, so a rerun of the
// same results makes the same page and commit.
func (p *ProfilePlan) dates() {
	p.date, p.when = p.f.sessionDate(), p.f.sessionTime()
	if p.when.IsZero() && p.date != "" {
		p.when, _ = time.Parse(time.DateOnly, p.date)
	}
	if p.when.IsZero() {
		p.when = p.o.Now()
		p.sum.Notes = append(p.sum.Notes, "the session has no date: the report is dated today and a rerun on another day makes another page")
	}
	if p.date == "" {
		p.date = p.when.Format(time.DateOnly)
	}
	p.sum.Date = p.date
}

// readRules reads the configuration's attribution rules from the base commit's git
// objects (a regular file, bounded), never from a working tree; none configured means
// perfbot's own. It returns the file's bytes for the page's digest.
func (p *ProfilePlan) readRules(ctx context.Context) (*attrib.Rules, []byte, error) {
	name := p.o.Config.Rules
	if name == "" {
		return attrib.Default(), nil, nil
	}
	b, err := readBlob(ctx, p.o.RepoDir, p.o.Remote, p.o.GitToken, p.base, name, maxRulesBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the attribution rules: %w", err)
	}
	rules, err := attrib.Parse(b, name)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the attribution rules: %w", err)
	}
	return rules, b, nil
}

// usePatch takes the grouped_gemm gate patch and its verification as the runner
// prepared them (gemm_patch.json, or Options.Prepared): the changed sources go into
// the commit as data, the report and the verification into the pull request. Nothing
// of the repository runs here. A patch that was not applied, or a verification that
// failed, makes the pull request a draft that says why.
func (p *ProfilePlan) usePatch(ctx context.Context) {
	if p.f.gemm == nil {
		p.verified = true
		p.verifyMD = "### Verification of the patched tree\n\nNo patch: the results have no grouped_gemm numeric tests (" + gemmTests + "), so no source file changes and there is no patched tree to verify.\n"
		p.sum.Verify = Verify{Passed: true}
		return
	}
	ps := &Patch{Decision: string(p.f.gemm.Decide())}
	p.sum.Patch = ps
	prep := p.f.prepared
	if prep == nil {
		prep = p.o.Prepared
	}
	if prep == nil {
		ps.Error = "the results have no " + patch.PreparedFile + ": the patch job did not run after gemm-tests"
		p.draftWhy = append(p.draftWhy, "the grouped_gemm gate patch was not applied: "+ps.Error)
		p.notVerified("no patched tree was prepared")
		return
	}
	if err := prep.Matches(*p.f.gemm, p.base); err != nil {
		ps.Error = err.Error()
		p.draftWhy = append(p.draftWhy, "the grouped_gemm gate patch was not applied: "+ps.Error)
		p.notVerified("the prepared patch does not belong to these results")
		return
	}
	if err := p.checkPatch(ctx, prep); err != nil {
		ps.Error = err.Error()
		p.draftWhy = append(p.draftWhy, "the grouped_gemm gate patch was not applied: "+ps.Error)
		p.notVerified("the prepared patch is not the patch of the pinned commit's files")
		return
	}
	switch {
	case prep.Report == nil:
		ps.Error = prep.Error
		p.draftWhy = append(p.draftWhy, "the grouped_gemm gate patch was not applied: "+prep.Error)
	case prep.Error != "":
		ps.Error = prep.Error
		p.draftWhy = append(p.draftWhy, prep.Error)
	}
	if r := prep.Report; r != nil {
		p.gemmPatch = r
		p.gemmMD = r.Markdown()
		ps.Decision = string(r.Decision)
		if r.Checker != nil {
			ps.Checker = r.Checker.Verdict
		}
		content := map[string]string{}
		for _, f := range prep.Files {
			content[f.Path] = f.Content
		}
		var order []string
		patched := map[string][]byte{}
		for _, fr := range r.Files {
			if c, ok := content[fr.Path]; fr.Changed && ok {
				order = append(order, fr.Path)
				patched[fr.Path] = []byte(c)
			}
		}
		p.placePatch(ctx, ps, order, patched)
	}
	p.useVerify(prep.Verify)
}

// checkPatch recomputes the patch from the base commit's own two files, read from the
// git objects, and checks the prepared one is exactly it (patch.Prepared.Check): the
// job that ran the pinned code could have written any content into gemm_patch.json.
func (p *ProfilePlan) checkPatch(ctx context.Context, prep *patch.Prepared) error {
	if prep.Report == nil {
		return nil
	}
	var src [2]string
	for i, path := range []string{patch.RustPath, patch.CheckerPath} {
		b, err := readBlob(ctx, p.o.RepoDir, p.o.Remote, p.o.GitToken, p.base, path, maxPatchedSource)
		if err != nil {
			return fmt.Errorf("checking the prepared patch against the pinned commit: %w", err)
		}
		src[i] = string(b)
	}
	return prep.Check(*p.f.gemm, src[0], src[1])
}

// useVerify takes the verification results of the patched tree.
func (p *ProfilePlan) useVerify(rs []patch.VerifyResult) {
	if len(rs) == 0 {
		p.verified = true
		p.verifyMD = "### Verification of the patched tree\n\nNo verification command is configured (`verify:` in the configuration).\n"
		p.sum.Verify = Verify{Passed: true}
		return
	}
	p.verifyMD = patch.VerifyMarkdown(rs)
	p.verified = patch.VerifyPassed(rs)
	p.sum.Verify.Passed = p.verified
	for _, r := range rs {
		c := strings.Join(r.Command, " ")
		p.sum.Verify.Commands = append(p.sum.Verify.Commands, c)
		if !r.Passed() {
			p.sum.Verify.Failed = append(p.sum.Verify.Failed, c)
			why := fmt.Sprintf("exit %d", r.ExitCode)
			if r.Err != "" {
				why = r.Err
			}
			p.draftWhy = append(p.draftWhy, fmt.Sprintf("verification `%s` failed (%s)", c, why))
		}
	}
}

// notVerified records that no verification result is there to show.
func (p *ProfilePlan) notVerified(why string) {
	p.verified = false
	p.verifyMD = "### Verification of the patched tree\n\nNot verified: " + why + ". This pull request stays a draft until it is.\n"
	p.sum.Verify = Verify{Passed: false}
}

func (p *ProfilePlan) renderPage(rules *attrib.Rules, rulesFile []byte, resultsDir string) (string, error) {
	chartURL := ""
	if _, ok := p.files[chartPath(p.pagePath)]; ok {
		chartURL = path.Base(chartPath(p.pagePath))
	}
	d := pageData(pageInput{
		f: p.f, commit: p.base, date: p.date, models: p.models, sampling: p.sampling, chartURL: chartURL,
		rules: rules, rulesFile: rulesFile, rk: p.rk, gemmPatch: p.gemmPatch, patchProblem: patchProblem(p.sum.Patch),
		profilesDir: p.o.Config.Results.Profiles,
		fileURL: func(name string) string {
			return relPath(path.Dir(p.pagePath), path.Join(resultsDir, name))
		},
	})
	committed := map[string]bool{p.pagePath: true}
	for k := range p.files {
		committed[k] = true
	}
	return renderChecked(d, committed, p.pagePath)
}

func patchProblem(ps *Patch) string {
	if ps == nil {
		return ""
	}
	if ps.Error == "" && ps.Withheld != "" {
		return ps.Withheld + "; the pull request shows it"
	}
	return ps.Error
}

func (p *ProfilePlan) commitMessage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rocm: decode profile of %s at %s (%s)\n\n", p.f.gfx, p.f.commit8, p.date)
	fmt.Fprintf(&b, "Runs: %s.\nRanked port order: %s.\n", strings.Join(p.sum.Runs, ", "), p.rk.OrderLine())
	if ps := p.sum.Patch; ps != nil {
		fmt.Fprintf(&b, "grouped_gemm numeric tests: %s", ps.Decision)
		if len(ps.Changed) > 0 {
			fmt.Fprintf(&b, " (changed %s)", strings.Join(ps.Changed, ", "))
		}
		if ps.Withheld != "" {
			fmt.Fprintf(&b, " (the patch of %s is not committed: %s)", strings.Join(ps.Pending, ", "), ps.Withheld)
		}
		b.WriteString(".\n")
	}
	fmt.Fprintf(&b, "Report: %s\n", p.pagePath)
	return b.String()
}

// fileNames are the repo paths of a commit's files, sorted.
func fileNames(files map[string][]byte) []string {
	return slices.Sorted(maps.Keys(files))
}

// renderLinked renders a document for GitHub and checks its links against the
// committed files and the links root: a document the check refuses comes back with
// the error.
func renderLinked(kind report.Kind, data any, files map[string][]byte, root string) (string, error) {
	md, err := report.Render(kind, data)
	if err != nil {
		return "", err
	}
	return md, validateLinks(md, files, root)
}

// validateLinks checks a document for GitHub against the committed files and the links
// root.
func validateLinks(md string, files map[string][]byte, root string) error {
	committed := map[string]bool{}
	for k := range files {
		committed[k] = true
	}
	return report.Validate(md, committed, root)
}

// prBody is the pull request's body.
func (p *ProfilePlan) prBody(l Links) (string, error) {
	d := report.PRData{
		GFX: p.f.gfx, Date: p.date, Commit: p.base, Models: p.models, Sampling: p.sampling,
		Report: l.Link(path.Base(p.pagePath), p.pagePath), Runs: p.f.runs,
		Order: p.rk.OrderLine(), RankingMD: p.rk.Markdown(), GemmMD: p.gemmMD, VerifyMD: p.verifyMD,
		Draft: len(p.draftWhy) > 0, DraftReasons: p.draftWhy, Notes: p.f.runNotes(),
		Requester: p.requester, OffMain: p.offMain(), Withheld: p.withheld,
	}
	d.Traces, d.Run = runLinkOf(p.o.RunLinks, TracesLinkText), runLinkOf(p.o.RunLinks, RunLinkText)
	if p.commentURL != "" {
		d.TriggerComment = &report.Link{Text: "the comment", URL: p.commentURL}
	}
	prRanking(&d, p.rk, l.Link("the full ranking table", p.pagePath), l.Root, chartPath(p.pagePath), p.files)
	if p.o.Issue > 0 {
		d.Issue = p.o.Issue
	}
	for _, k := range p.sum.Files {
		d.Files = append(d.Files, l.Link(k, k))
	}
	return renderLinked(report.PRBody, d, p.files, l.Root)
}

// epicStep upserts the ranking comment on the epic, keeping the history it holds.
func (p *ProfilePlan) epicStep() CommentStep {
	return CommentStep{Issue: p.o.Epic, Marker: report.EpicMarker, File: DryEpic, What: "epic comment",
		Skip: unless(p.o.Epic > 0, "no epic issue is configured"), Body: p.epicBody, Failed: p.epicFailed}
}

// epicFailed says what a failure to read or write the epic comment is: an epic that
// does not exist says how to fix it.
func (p *ProfilePlan) epicFailed(_ string, w Written, err error) (Outcome, error) {
	if w.File != "" { // a dry run's file could not be written
		return w.Outcome, err
	}
	epic := p.o.Epic
	msg := err.Error()
	if errors.Is(err, gh.ErrNotFound) {
		msg = fmt.Sprintf("epic issue #%d was not found (%v): the results and the pull request are published; set `epic:` in the configuration to an existing issue, or pass epic= with the command", epic, err)
	}
	return Outcome{Action: "failed", Number: int64(epic), Error: msg}, fmt.Errorf("updating the ranking comment on #%d: %s", epic, msg)
}

// unless is why when ok is false, "" otherwise.
func unless(ok bool, why string) string {
	if ok {
		return ""
	}
	return why
}

func (p *ProfilePlan) epicBody(earlier string, l Links) (string, []string, error) {
	var notes []string
	hist, err := report.ParseHistory(earlier)
	if err != nil {
		notes = append(notes, err.Error()+"; the history starts over")
	}
	cur := report.HistoryEntry{
		Key: p.f.name + "@" + p.date, Date: p.date, GFX: p.f.gfx, Commit: p.f.commit8,
		Order: p.rk.Order, Report: l.Root + p.pagePath,
	}
	if l.PR != nil {
		cur.PR = l.PR.URL
	}
	if l.Root == "" {
		cur.Report = ""
	}
	kept, prev := report.MergeHistory(hist, cur)
	d := report.EpicData{Current: cur, Units: report.EpicUnits(p.rk), Report: l.Link(path.Base(p.pagePath), p.pagePath), History: kept, Previous: prev, PR: l.PR}
	if prev != nil {
		d.Changes = report.Changes(prev.Order, cur.Order)
	}
	body, err := renderLinked(report.Epic, d, p.files, l.Root)
	return body, notes, err
}

// statusBody is the status comment: the state reached, not what this call changed.
func (p *ProfilePlan) statusBody(a *Applied) (string, error) {
	steps, links := p.steps(a)
	links = append(links, p.o.RunLinks...)
	state := "done"
	if a.Failed() {
		state = "failed"
	}
	detail := ""
	if p.f != nil && len(p.f.runs) > 0 {
		detail = fmt.Sprintf("%d run(s) of %s at %s; ranked port order %s.", len(p.f.runs), p.f.gfx, p.f.commit8, p.orderLine())
		if line := p.offMainLine(); line != "" {
			detail += " " + strings.ToUpper(line[:1]) + line[1:] + p.withheldWords() + "."
		}
	}
	return report.Render(report.Status, report.StatusData{
		State: state, Command: p.o.Command, Detail: detail, Links: links, Steps: steps, Errors: a.ErrorTexts(),
	})
}

func (p *ProfilePlan) orderLine() string {
	if p.rk == nil {
		return ""
	}
	return p.rk.OrderLine()
}

// steps are the publishing steps as the status comment and summaries show them: the
// state reached, not what this call changed, so a rerun renders the same text.
func (p *ProfilePlan) steps(a *Applied) ([]report.Step, []report.Link) {
	var s statusLines
	s.commit(a, p.branch)
	if !a.Pushed {
		return s.steps, s.links
	}
	s.link("report", a.Links.Link("report", p.pagePath).URL)
	open := "open"
	if a.PR.Draft {
		open = "open as a draft"
	}
	s.pr(a, "pull request", open)
	s.comment("ranking comment", true, p.o.Epic, a.Comment, a.CommentErr, a.CommentSkipped, "not updated")
	s.comment(fmt.Sprintf("report on #%d", p.trigger.Number), false, p.trigger.Number, a.Aside, a.AsideErr, a.AsideSkipped, "not posted")
	var deleted []string
	for _, o := range a.Stale {
		if o.Action == "deleted" {
			deleted = append(deleted, o.Detail)
		}
	}
	if len(deleted) > 0 {
		s.add(report.Step{Name: "stale bot branches", Outcome: "deleted " + strings.Join(deleted, ", ")})
	}
	return s.steps, s.links
}

func (p *ProfilePlan) summaryData(a *Applied, steps []report.Step) report.SummaryData {
	d := report.SummaryData{DryRun: a.DryRun, Draft: a.Pushed && len(p.draftWhy) > 0, Verified: p.verified, Steps: steps, Errors: a.ErrorTexts(), Commit: p.base, Date: p.date}
	if p.f != nil {
		d.GFX, d.Runs = p.f.gfx, p.f.runs
		d.Gemm = gemmData(p.f.gemm, p.gemmPatch, patchProblem(p.sum.Patch))
	}
	if p.rk != nil {
		d.Order, d.RankingMD = p.rk.OrderLine(), p.rk.Markdown()
	}
	if a.Pushed {
		d.Report = a.Links.Link(path.Base(p.pagePath), p.pagePath)
	}
	d.PR = a.Links.PR
	if p.f != nil {
		d.OffMain, d.Withheld = p.offMain(), p.withheld != nil
	}
	return d
}

// checkOutput is the check run's output: its conclusion from what was done.
func (p *ProfilePlan) checkOutput(a *Applied) (gh.CheckOutput, error) {
	steps, _ := p.steps(a)
	conclusion, title := "success", "Decode profile published"
	switch {
	case a.Failed():
		conclusion, title = "failure", "Publishing the decode profile failed"
	case a.Pushed && len(p.draftWhy) > 0:
		conclusion, title = "neutral", "Decode profile published as a draft pull request"
	}
	var body string
	if a.Pushed {
		var err error
		if body, err = report.Render(report.CheckRun, p.summaryData(a, steps)); err != nil {
			return gh.CheckOutput{}, err
		}
	} else {
		body = "Publishing failed before anything was pushed:\n\n"
		for _, e := range a.ErrorTexts() {
			body += "- " + report.Text(e) + "\n"
		}
	}
	body += runLinksText(p.o.RunLinks)
	out := gh.CheckOutput{Conclusion: conclusion, Title: title, Summary: gh.Truncate(body, report.MaxCheckRunSummary)}
	if a.Links.PR != nil {
		out.DetailsURL = a.Links.PR.URL
	}
	return out, nil
}

// stepSummary is the job step summary.
func (p *ProfilePlan) stepSummary(a *Applied) (string, error) {
	if a.Pushed {
		steps, _ := p.steps(a)
		return report.Render(report.StepSummary, p.summaryData(a, steps))
	}
	md := "## ROCm decode profile: publishing failed\n\n"
	for _, e := range a.ErrorTexts() {
		md += "- " + report.Text(e) + "\n"
	}
	return md, nil
}

func distinct(runs []*results.Summary, key func(*results.Summary) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range runs {
		if k := key(s); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// configName is the config's name of the model whose dir the run name starts with, as
// models= takes it; the dir's base name when no configured model has that dir.
func configName(c config.Config, modelDir string) string {
	for _, m := range c.Models {
		if path.Base(strings.TrimRight(filepath.ToSlash(m.Dir), "/")) == modelDir {
			return m.Name
		}
	}
	return modelDir
}

// relPath is the relative link from a folder to a file, both repo-relative.
func relPath(fromDir, to string) string {
	rel, err := filepath.Rel(filepath.FromSlash(fromDir), filepath.FromSlash(to))
	if err != nil {
		return to
	}
	return filepath.ToSlash(rel)
}
