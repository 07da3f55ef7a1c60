package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
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

// Publish publishes a results folder (see the package comment). The Summary says what
// each step did, also when an error is returned: a failed GitHub write does not undo
// the push, and the status comment, check run and reaction still report the failure.
// An error before anything was done (bad options) comes with a zero Summary.
func Publish(ctx context.Context, o Options) (Summary, error) {
	o, err := o.normalize()
	if err != nil {
		return Summary{}, err
	}
	p := &publisher{o: o, sum: Summary{DryRun: o.GH == nil, Conclusion: "success"}}
	p.sum.Git = Git{Branch: o.Branch, Remote: o.Remote}
	if o.DryRunDir != "" && o.GH == nil {
		if err := os.MkdirAll(o.DryRunDir, 0o755); err != nil {
			return p.sum, fmt.Errorf("making the dry-run folder: %w", err)
		}
	}
	if err := p.prepare(ctx); err != nil {
		p.fail(err)
		p.finish(ctx)
		return p.sum, p.err()
	}
	if err := p.push(ctx); err != nil {
		p.fail(err)
		p.finish(ctx)
		return p.sum, p.err()
	}
	p.pullRequest(ctx)
	p.epic(ctx)
	p.finish(ctx)
	return p.sum, p.err()
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
	p := &publisher{o: o, sum: Summary{DryRun: o.GH == nil, Conclusion: "success"}}
	p.sum.Git = Git{Branch: o.Branch, Remote: o.Remote}
	if o.DryRunDir != "" && o.GH == nil {
		if err := os.MkdirAll(o.DryRunDir, 0o755); err != nil {
			return p.sum, errors.Join(cause, fmt.Errorf("making the dry-run folder: %w", err))
		}
	}
	p.fail(cause)
	p.finish(ctx)
	return p.sum, p.err()
}

// publisher carries one Publish call.
type publisher struct {
	o    Options
	sum  Summary
	errs []error

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
	pushed    bool
	commit    string
	linkRoot  string // where repo links start: a blob URL root, or "" (repo-relative)
	prURL     string
	prNumber  int
	prDraft   bool
	epicURL   string
	prFailed  bool
	gemmPatch *patch.Report
}

func (p *publisher) fail(err error) {
	p.errs = append(p.errs, err)
	p.sum.Errors = append(p.sum.Errors, err.Error())
	p.sum.Conclusion = "failure"
}

func (p *publisher) err() error { return errors.Join(p.errs...) }

// prepare reads and ranks the results, patches and verifies a scratch checkout of the
// base commit, and renders the page: everything before the push.
func (p *publisher) prepare(ctx context.Context) error {
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
	p.sum.Report = p.pagePath
	for k := range p.files {
		p.sum.Files = append(p.sum.Files, k)
	}
	sort.Strings(p.sum.Files)
	return nil
}

// pinBase resolves the base commit and checks it is the profiled one.
func (p *publisher) pinBase(ctx context.Context) error {
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
	p.sum.Commit, p.sum.Git.Base = sha, sha
	return nil
}

// dates fixes the page's date and the commit time from the session, so a rerun of the
// same results makes the same page and commit.
func (p *publisher) dates() {
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
func (p *publisher) readRules(ctx context.Context) (*attrib.Rules, []byte, error) {
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
func (p *publisher) usePatch(ctx context.Context) {
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
		for _, fr := range r.Files {
			if c, ok := content[fr.Path]; fr.Changed && ok {
				ps.Changed = append(ps.Changed, fr.Path)
				p.files[fr.Path] = []byte(c)
			}
		}
	}
	p.useVerify(prep.Verify)
}

// checkPatch recomputes the patch from the base commit's own two files, read from the
// git objects, and checks the prepared one is exactly it (patch.Prepared.Check): the
// job that ran the pinned code could have written any content into gemm_patch.json.
func (p *publisher) checkPatch(ctx context.Context, prep *patch.Prepared) error {
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
func (p *publisher) useVerify(rs []patch.VerifyResult) {
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
func (p *publisher) notVerified(why string) {
	p.verified = false
	p.verifyMD = "### Verification of the patched tree\n\nNot verified: " + why + ". This pull request stays a draft until it is.\n"
	p.sum.Verify = Verify{Passed: false}
}

func (p *publisher) renderPage(rules *attrib.Rules, rulesFile []byte, resultsDir string) (string, error) {
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
	return ps.Error
}

// push commits the page, the results and the patched sources on the bot branch.
func (p *publisher) push(ctx context.Context) error {
	o := p.o
	pr, err := pushCommit(ctx, pushSpec{
		repo: o.RepoDir, remote: o.Remote, branch: o.Branch, baseBranch: o.BaseBranch, token: o.GitToken,
		dryDir: o.DryRunDir, gh: o.GH, ghRepo: o.Repo,
		change: gitpub.Change{Base: p.base, Branch: o.Branch, Files: p.files, Message: p.commitMessage(), Author: o.Author, Date: p.when},
	})
	p.o.BaseBranch = pr.baseBranch
	p.sum.Notes = append(p.sum.Notes, pr.notes...)
	p.sum.Git.Remote = pr.remote
	res := pr.res
	p.sum.Git.Commit, p.sum.Git.Action, p.sum.Git.Pushed, p.sum.Git.Retries = res.Commit, res.Action, res.Pushed, res.Retries
	if err != nil {
		p.sum.Git.Error = err.Error()
		return err
	}
	p.pushed, p.commit = true, res.Commit
	if o.Repo.Owner != "" {
		p.linkRoot = blobRoot(o.ServerURL, o.Repo, res.Commit)
	}
	return nil
}

// blobRoot is where links to the files of commit start on GitHub.
func blobRoot(server string, r gh.Repo, commit string) string {
	return fmt.Sprintf("%s/%s/%s/blob/%s/", server, r.Owner, r.Name, commit)
}

// pushSpec is one commit to put on a bot branch.
type pushSpec struct {
	repo, remote, branch, baseBranch, token string
	dryDir                                  string // a dry run when gh is nil
	gh                                      interface {
		DefaultBranch(ctx context.Context, r gh.Repo) (string, error)
	}
	ghRepo gh.Repo
	change gitpub.Change
}

// pushed is what pushCommit did: the remote and the branch the pull request merges
// into, as found, and the notes of a dry run.
type pushed struct {
	res        gitpub.Result
	remote     string
	baseBranch string
	notes      []string
}

// pushCommit builds the one commit on the bot branch and pushes it (bot/gitpub); a dry
// run pushes only to a remote on this machine and points the local branch at it.
func pushCommit(ctx context.Context, s pushSpec) (pushed, error) {
	out := pushed{remote: s.remote, baseBranch: s.baseBranch}
	dry := s.gh == nil
	if dry {
		remote, note, err := dryRunRemote(ctx, s.repo, s.remote, s.dryDir)
		if note != "" {
			out.notes = append(out.notes, note)
		}
		if err != nil {
			return out, err
		}
		out.remote = remote
		if out.baseBranch == "" {
			out.baseBranch = "main"
		}
	} else if out.baseBranch == "" {
		b, err := s.gh.DefaultBranch(ctx, s.ghRepo)
		if err != nil {
			return out, fmt.Errorf("finding the branch the pull request merges into: %w", err)
		}
		out.baseBranch = b
	}
	pub := &gitpub.Publisher{Dir: s.repo, Remote: out.remote, DefaultBranch: out.baseBranch, Token: s.token, Branches: []string{s.branch}}
	res, err := pub.Publish(ctx, s.change)
	out.res = res
	if err != nil {
		return out, fmt.Errorf("committing the results to %s: %w", s.branch, err)
	}
	if dry {
		if note := pointLocalBranch(ctx, s.repo, s.branch, res.Commit); note != "" {
			out.notes = append(out.notes, note)
		}
	}
	return out, nil
}

// dryRunRemote is where a dry run pushes: remote when it is on this machine, else a bare
// repository made in dryDir (note then says so).
func dryRunRemote(ctx context.Context, repo, remote, dryDir string) (string, string, error) {
	u, err := git(ctx, repo, "remote", "get-url", remote)
	if err == nil && localRemote(u) {
		return remote, "", nil
	}
	bare, err := filepath.Abs(filepath.Join(dryDir, "remote.git"))
	if err != nil {
		return "", "", fmt.Errorf("making the dry run's remote: %w", err)
	}
	if _, err := os.Stat(bare); err != nil {
		if _, err := git(ctx, dryDir, "init", "--quiet", "--bare", bare); err != nil {
			return "", "", fmt.Errorf("making the dry run's remote: %w", err)
		}
	}
	return bare, "dry run: the repository's remote is not on this machine, so the commit was pushed to " + bare, nil
}

// pointLocalBranch points a dry run's local bot branch at commit, unless it is checked
// out; the note says what was not done.
func pointLocalBranch(ctx context.Context, repo, branch, commit string) string {
	head, _ := git(ctx, repo, "symbolic-ref", "--quiet", "HEAD")
	if head == "refs/heads/"+branch {
		return "dry run: the bot branch is checked out in the repository, so it was not moved"
	}
	if _, err := git(ctx, repo, "update-ref", "-m", "perfbot publish --dry-run", "refs/heads/"+branch, commit); err != nil {
		return "dry run: the local bot branch was not updated: " + err.Error()
	}
	return ""
}

func (p *publisher) commitMessage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rocm: decode profile of %s at %s (%s)\n\n", p.f.gfx, p.f.commit8, p.date)
	fmt.Fprintf(&b, "Runs: %s.\nRanked port order: %s.\n", strings.Join(p.sum.Runs, ", "), p.rk.OrderLine())
	if ps := p.sum.Patch; ps != nil {
		fmt.Fprintf(&b, "grouped_gemm numeric tests: %s", ps.Decision)
		if len(ps.Changed) > 0 {
			fmt.Fprintf(&b, " (changed %s)", strings.Join(ps.Changed, ", "))
		}
		b.WriteString(".\n")
	}
	fmt.Fprintf(&b, "Report: %s\n", p.pagePath)
	return b.String()
}

// fitBody cuts a pull request body past GitHub's limit of 65,536 characters, with a
// note saying so; a body within the limit goes as it is.
func fitBody(body string) string {
	if len([]rune(body)) <= report.MaxComment {
		return body
	}
	return gh.Truncate(body, report.MaxComment-100)
}

func (p *publisher) link(text, repoPath string) report.Link {
	return report.Link{Text: text, URL: p.linkRoot + repoPath}
}

func (p *publisher) validateRemote(md string) error {
	committed := map[string]bool{}
	for k := range p.files {
		committed[k] = true
	}
	return report.Validate(md, committed, p.linkRoot)
}

// pullRequest opens or updates the one pull request of the bot branch.
func (p *publisher) pullRequest(ctx context.Context) {
	o := p.o
	d := report.PRData{
		GFX: p.f.gfx, Date: p.date, Commit: p.base, Models: p.models, Sampling: p.sampling,
		Report: p.link(path.Base(p.pagePath), p.pagePath), Runs: p.f.runs,
		Order: p.rk.OrderLine(), RankingMD: p.rk.Markdown(), GemmMD: p.gemmMD, VerifyMD: p.verifyMD,
		Draft: len(p.draftWhy) > 0, DraftReasons: p.draftWhy, Notes: p.f.runNotes(),
	}
	prRanking(&d, p.rk, p.link("the full ranking table", p.pagePath), p.linkRoot, chartPath(p.pagePath), p.files)
	if o.Issue > 0 {
		d.Issue = o.Issue
	}
	for _, k := range p.sum.Files {
		d.Files = append(d.Files, p.link(k, k))
	}
	p.sum.Draft, p.sum.Why = d.Draft, d.DraftReasons
	title := fmt.Sprintf("rocm: decode profile of %s at %s (%s)", p.f.gfx, p.f.commit8, p.date)
	body, err := report.Render(report.PRBody, d)
	if err == nil {
		err = p.validateRemote(body)
	}
	if err != nil {
		p.prFailed = true
		p.sum.PR = Outcome{Action: "failed", Error: err.Error()}
		p.fail(fmt.Errorf("rendering the pull request body: %w", err))
		return
	}
	body = fitBody(body)
	spec := gh.PRSpec{Head: o.Branch, Base: o.BaseBranch, Title: title, Body: body, Draft: d.Draft}
	var api prOpener
	if o.GH != nil {
		api = o.GH
	}
	pr, out, err := openPR(ctx, api, o.Repo, o.DryRunDir, DryPR, spec)
	p.sum.PR = out
	p.prDraft = pr.Draft
	if err != nil {
		p.prFailed = true
		p.fail(err)
		return
	}
	if o.GH == nil {
		return
	}
	p.prURL, p.prNumber = pr.URL, pr.Number
	if pr.Draft != spec.Draft && out.Action != string(gh.Created) {
		p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("pull request #%d was opened earlier with draft=%t; GitHub's REST API cannot change that: convert it by hand", pr.Number, pr.Draft))
	}
}

// epic upserts the ranking comment on the epic, keeping the history it holds.
func (p *publisher) epic(ctx context.Context) {
	o := p.o
	if o.Epic <= 0 {
		p.sum.Epic = Outcome{Action: "skipped", Detail: "no epic issue is configured"}
		return
	}
	var api commenter
	if o.GH != nil {
		api = o.GH
	}
	cm := marked{gh: api, repo: o.Repo, issue: o.Epic, marker: report.EpicMarker, dryDir: o.DryRunDir, dryName: DryEpic}
	earlier, err := cm.read(ctx)
	if err != nil {
		p.epicFailed(err)
		return
	}
	hist, err := report.ParseHistory(earlier)
	if err != nil {
		p.sum.Notes = append(p.sum.Notes, err.Error()+"; the history starts over")
	}
	cur := report.HistoryEntry{
		Key: p.f.name + "@" + p.date, Date: p.date, GFX: p.f.gfx, Commit: p.f.commit8,
		Order: p.rk.Order, Report: p.linkRoot + p.pagePath, PR: p.prURL,
	}
	if p.linkRoot == "" {
		cur.Report = ""
	}
	kept, prev := report.MergeHistory(hist, cur)
	d := report.EpicData{Current: cur, Units: epicUnits(p.rk), Report: p.link(path.Base(p.pagePath), p.pagePath), History: kept, Previous: prev}
	if p.prURL != "" {
		d.PR = &report.Link{Text: fmt.Sprintf("#%d", p.prNumber), URL: p.prURL}
	}
	if prev != nil {
		d.Changes = report.Changes(prev.Order, cur.Order)
	}
	body, err := report.Render(report.Epic, d)
	if err == nil {
		err = p.validateRemote(body)
	}
	if err != nil {
		p.sum.Epic = Outcome{Action: "failed", Error: err.Error()}
		p.fail(fmt.Errorf("rendering the epic comment: %w", err))
		return
	}
	out, err := cm.write(ctx, body)
	switch {
	case err != nil && o.GH == nil:
		p.sum.Epic = out
		p.fail(err)
	case err != nil:
		p.epicFailed(err)
	default:
		p.sum.Epic = out
		if o.GH != nil {
			p.epicURL = out.URL
		}
	}
}

func (p *publisher) epicFailed(err error) {
	msg := err.Error()
	if errors.Is(err, gh.ErrNotFound) {
		msg = fmt.Sprintf("epic issue #%d was not found (%v): the results and the pull request are published; set `epic:` in the configuration to an existing issue, or pass epic= with the command", p.o.Epic, err)
	}
	p.sum.Epic = Outcome{Action: "failed", Number: int64(p.o.Epic), Error: msg}
	p.fail(fmt.Errorf("updating the ranking comment on #%d: %s", p.o.Epic, msg))
}

// finish reports the end: the status comment, the check run, the reaction and the
// step summary. They run after a failure too, to say so.
func (p *publisher) finish(ctx context.Context) {
	o := p.o
	steps, links := p.steps()
	state := "done"
	if !p.sumOK() {
		state = "failed"
	}
	detail := ""
	if p.f != nil && len(p.f.runs) > 0 {
		detail = fmt.Sprintf("%d run(s) of %s at %s; ranked port order %s.", len(p.f.runs), p.f.gfx, p.f.commit8, p.orderLine())
	}
	status, err := report.Render(report.Status, report.StatusData{
		State: state, Command: o.Command, Detail: detail, Links: links, Steps: steps, Errors: p.sum.Errors,
	})
	if err != nil {
		p.fail(fmt.Errorf("rendering the status comment: %w", err))
	} else {
		p.statusComment(ctx, status)
	}
	p.checkRun(ctx, steps)
	p.react(ctx)
	p.stepSummary(steps)
	if o.GH == nil {
		b, err := json.MarshalIndent(p.sum, "", "  ")
		if err == nil {
			_, err = p.writeDry(DrySummary, string(b)+"\n")
		}
		if err != nil {
			p.fail(fmt.Errorf("writing the dry run's summary: %w", err))
		}
	}
}

func (p *publisher) sumOK() bool { return p.sum.Conclusion == "success" }

func (p *publisher) orderLine() string {
	if p.rk == nil {
		return ""
	}
	return p.rk.OrderLine()
}

// steps are the publishing steps as the status comment and summaries show them: the
// state reached, not what this call changed, so a rerun renders the same text.
func (p *publisher) steps() ([]report.Step, []report.Link) {
	var steps []report.Step
	var links []report.Link
	if p.pushed {
		rep := p.link("report", p.pagePath)
		links = append(links, rep)
		steps = append(steps, report.Step{Name: "commit", Outcome: fmt.Sprintf("%s on %s", short(p.commit), p.o.Branch)})
	} else if p.sum.Git.Error != "" {
		steps = append(steps, report.Step{Name: "commit", Outcome: "not pushed", Error: p.sum.Git.Error})
	}
	if p.pushed {
		switch {
		case p.prURL != "":
			l := report.Link{Text: fmt.Sprintf("#%d", p.prNumber), URL: p.prURL}
			links = append(links, report.Link{Text: "pull request", URL: p.prURL})
			out := "open"
			if p.prDraft {
				out = "open as a draft"
			}
			steps = append(steps, report.Step{Name: "pull request", Outcome: out, Link: &l})
		case p.prFailed:
			steps = append(steps, report.Step{Name: "pull request", Outcome: "not opened", Error: p.sum.PR.Error})
		case p.o.GH == nil:
			steps = append(steps, report.Step{Name: "pull request", Outcome: "written to " + DryPR + " (dry run)"})
		}
		switch {
		case p.epicURL != "":
			l := report.Link{Text: fmt.Sprintf("#%d", p.o.Epic), URL: p.epicURL}
			links = append(links, report.Link{Text: "ranking comment", URL: p.epicURL})
			steps = append(steps, report.Step{Name: "ranking comment", Outcome: "up to date", Link: &l})
		case p.sum.Epic.Action == "failed":
			steps = append(steps, report.Step{Name: "ranking comment", Outcome: "not updated", Error: p.sum.Epic.Error})
		case p.sum.Epic.Action == "skipped":
			steps = append(steps, report.Step{Name: "ranking comment", Outcome: "skipped: " + p.sum.Epic.Detail})
		case p.o.GH == nil:
			steps = append(steps, report.Step{Name: "ranking comment", Outcome: "written to " + DryEpic + " (dry run)"})
		}
	}
	return steps, links
}

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}

func (p *publisher) statusComment(ctx context.Context, body string) {
	o := p.o
	if o.GH == nil {
		action, err := p.writeDry(DryStatus, body)
		p.sum.Status = Outcome{Action: action, URL: DryStatus}
		if err != nil {
			p.sum.Status.Error = err.Error()
			p.fail(err)
		}
		return
	}
	if o.StatusCommentID <= 0 {
		p.sum.Status = Outcome{Action: "skipped", Detail: "no status comment id was given"}
		return
	}
	cm, action, err := o.GH.UpdateComment(ctx, o.Repo, o.StatusCommentID, body)
	if err != nil {
		p.sum.Status = Outcome{Action: "failed", Number: o.StatusCommentID, Error: err.Error()}
		p.fail(fmt.Errorf("updating the status comment: %w", err))
		return
	}
	p.sum.Status = Outcome{Action: string(action), Number: o.StatusCommentID, URL: cm.URL}
}

func (p *publisher) summaryData(steps []report.Step) report.SummaryData {
	d := report.SummaryData{DryRun: p.o.GH == nil, Draft: p.sum.Draft, Verified: p.verified, Steps: steps, Errors: p.sum.Errors, Commit: p.base, Date: p.date}
	if p.f != nil {
		d.GFX, d.Runs = p.f.gfx, p.f.runs
		d.Gemm = gemmData(p.f.gemm, p.gemmPatch, patchProblem(p.sum.Patch))
	}
	if p.rk != nil {
		d.Order, d.RankingMD = p.rk.OrderLine(), p.rk.Markdown()
	}
	if p.pushed {
		d.Report = p.link(path.Base(p.pagePath), p.pagePath)
	}
	if p.prURL != "" {
		d.PR = &report.Link{Text: fmt.Sprintf("#%d", p.prNumber), URL: p.prURL}
	}
	return d
}

func (p *publisher) checkRun(ctx context.Context, steps []report.Step) {
	o := p.o
	d := p.summaryData(steps)
	conclusion, title := "success", "Decode profile published"
	switch {
	case !p.sumOK():
		conclusion, title = "failure", "Publishing the decode profile failed"
	case p.sum.Draft:
		conclusion, title = "neutral", "Decode profile published as a draft pull request"
	}
	var body string
	var err error
	if p.pushed {
		body, err = report.Render(report.CheckRun, d)
	} else {
		body = "Publishing failed before anything was pushed:\n\n"
		for _, e := range p.sum.Errors {
			body += "- " + report.Text(e) + "\n"
		}
	}
	if err != nil {
		p.fail(fmt.Errorf("rendering the check run summary: %w", err))
		return
	}
	out := gh.CheckOutput{Conclusion: conclusion, Title: title, Summary: gh.Truncate(body, report.MaxCheckRunSummary), DetailsURL: p.prURL}
	if o.GH == nil {
		doc := fmt.Sprintf("# %s\n\nConclusion: %s.\n\n---\n\n%s", title, conclusion, out.Summary)
		action, err := p.writeDry(DryCheckRun, doc)
		p.sum.CheckRun = Outcome{Action: action, Detail: conclusion, URL: DryCheckRun}
		if err != nil {
			p.sum.CheckRun.Error = err.Error()
			p.fail(err)
		}
		return
	}
	if o.CheckRunID <= 0 {
		p.sum.CheckRun = Outcome{Action: "skipped", Detail: "no check run (token mode)"}
		return
	}
	if err := o.GH.CompleteCheckRun(ctx, o.Repo, o.CheckRunID, out); err != nil {
		p.sum.CheckRun = Outcome{Action: "failed", Number: o.CheckRunID, Error: err.Error()}
		p.fail(fmt.Errorf("completing the check run: %w", err))
		return
	}
	p.sum.CheckRun = Outcome{Action: "completed", Number: o.CheckRunID, Detail: conclusion}
}

func (p *publisher) react(ctx context.Context) {
	o := p.o
	content := "rocket"
	if !p.sumOK() {
		content = "confused"
	}
	if o.TriggerCommentID <= 0 {
		p.sum.Reaction = Outcome{Action: "skipped", Detail: "no trigger comment id was given"}
		return
	}
	if o.GH == nil {
		p.sum.Reaction = Outcome{Action: "skipped", Number: o.TriggerCommentID, Detail: "dry run: would react " + content}
		return
	}
	if err := o.GH.React(ctx, o.Repo, o.TriggerCommentID, content); err != nil {
		p.sum.Reaction = Outcome{Action: "failed", Number: o.TriggerCommentID, Detail: content, Error: err.Error()}
		p.fail(fmt.Errorf("reacting to the trigger comment: %w", err))
		return
	}
	p.sum.Reaction = Outcome{Action: "reacted", Number: o.TriggerCommentID, Detail: content}
}

func (p *publisher) stepSummary(steps []report.Step) {
	var md string
	if p.pushed {
		var err error
		md, err = report.Render(report.StepSummary, p.summaryData(steps))
		if err != nil {
			p.fail(fmt.Errorf("rendering the step summary: %w", err))
			return
		}
	} else {
		md = "## ROCm decode profile: publishing failed\n\n"
		for _, e := range p.sum.Errors {
			md += "- " + report.Text(e) + "\n"
		}
	}
	md = gh.Truncate(md, report.MaxStepSummary)
	p.sum.StepSummary = md
	if p.o.GH == nil {
		if _, err := p.writeDry(DryStepSummary, md); err != nil {
			p.fail(err)
		}
	}
}

// writeDry writes one dry-run document and says whether it was created, updated or
// unchanged, as the GitHub write would.
func (p *publisher) writeDry(name, body string) (string, error) {
	return writeDryFile(p.o.DryRunDir, name, body)
}

func writeDryFile(dir, name, body string) (string, error) {
	file := filepath.Join(dir, name)
	old, err := os.ReadFile(file)
	action := string(gh.Created)
	switch {
	case err == nil && string(old) == body:
		return string(gh.Unchanged), nil
	case err == nil:
		action = string(gh.Updated)
	}
	if err := results.WriteFileAtomic(file, []byte(body)); err != nil {
		return "failed", fmt.Errorf("writing the dry run's %s: %w", name, err)
	}
	return action, nil
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
