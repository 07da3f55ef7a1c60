package publish

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/portdiff"
	"github.com/lablup/perfbot/runner/results"
)

// Files a dry run of PublishCompare writes instead of the GitHub writes (with
// status-comment.md, check-run.md, step-summary.md and summary.json).
const (
	DryCompareComment = "compare-comment.md"
	DryComparePR      = "compare-pr.md"
)

// CompareBranchPrefix starts the bot branch of a compare's CSV pair: one branch per
// label (perfbot/rocm-compare-pr-1900), so the pairs of two pull requests are two pull
// requests, as the maintainers commit one pair per change.
const CompareBranchPrefix = "perfbot/rocm-compare-"

// CompareOptions say what compare results to publish and where. Its Target's
// ResultsDir is the compare results folder the GPU job wrote: compare.json, the CSV
// pair <host>_<date>_<label>-before.csv / -after.csv, and for a profile compare one
// results folder per side (a/, b/); RepoDir holds A's commit; Branch "" takes
// CompareBranchPrefix + the compare's label. A dry run's folder gets
// compare-comment.md, compare-pr.md, status-comment.md, check-run.md,
// step-summary.md and summary.json.
type CompareOptions struct {
	Target
	// PR is the pull request (or issue) the compare was asked on: it gets the compare
	// comment. 0 skips the comment.
	PR int
	Marks
	// WorkflowRun is the URL of the workflow run that measured; "" when unknown.
	WorkflowRun string
	// Command is the command as the status comment names it; "" takes
	// "/<kind> rocm compare".
	Command string
}

// CompareSummary says what PublishCompare did; a dry run writes it as summary.json.
type CompareSummary struct {
	DryRun  bool     `json:"dry_run"`
	Results string   `json:"results"`
	Kind    string   `json:"kind"`
	Label   string   `json:"label"`
	A       string   `json:"a"`
	B       string   `json:"b"`
	Files   []string `json:"files"`
	Git     Git      `json:"git"`
	PR      Outcome  `json:"pr"`
	Comment Outcome  `json:"compare_comment"`
	// Reported's CheckRun is the check run's completion; its detail is the
	// conclusion: neutral, or failure when the threshold fails it or publishing failed.
	Reported
	// Failing are the comparisons past compare.fail_slower_pct.
	Failing []string `json:"failing,omitempty"`
	Ending
}

func (o CompareOptions) normalize() (CompareOptions, error) {
	errs := o.check("run ... compare")
	if o.Config.Results.Benchmarks == "" {
		o.Config.Results.Benchmarks = config.Default().Results.Benchmarks
	}
	return checked(o, "publishing the compare", errs)
}

// ComparePlan is the plan of a compare's publication, with what the planning found.
type ComparePlan struct {
	Plan
	o   CompareOptions
	sum CompareSummary

	pinned
	c       *compareFolder
	branch  string
	before  string // repo paths of the CSV pair
	after   string
	diffs   []report.CompareDiff
	failing []string
}

// PublishCompare publishes an A/B compare: the CSV pair as one commit on the compare
// branch (built on A, so the pull request holds the two files alone) and its pull
// request, the compare comment on the pull request that asked (one per kind, edited in
// place), the status comment, the check run (neutral unless compare.fail_slower_pct
// fails it) and the reaction: PlanCompare, then its effects through o.Sink.
func PublishCompare(ctx context.Context, o CompareOptions) (CompareSummary, error) {
	return publish[CompareOptions, CompareSummary](ctx, o, func(o CompareOptions) *ComparePlan { return &ComparePlan{o: o} }, PlanCompare)
}

// PlanCompare plans the publication of a compare results folder (o normalized): it
// reads and checks compare.json and the CSV pair, diffs the two profiles of a profile
// compare with A's rules (read from A's git objects), and decides the check run. It
// writes nothing; a failure is the plan's Err.
func PlanCompare(ctx context.Context, o CompareOptions) *ComparePlan {
	p := &ComparePlan{o: o, sum: CompareSummary{DryRun: o.Sink.DryRun(), Results: o.ResultsDir}}
	err := p.prepare(ctx)
	pl := o.plan(p.base, p.branch, p.sum.Notes, err)
	if err == nil {
		c := p.c
		d := c.doc
		msg := fmt.Sprintf("rocm: A/B %s on %s (%s)\n\nB %s against A %s.\nBefore: %s\nAfter: %s\n",
			d.Label, d.Host, d.Date, d.ShaB, d.ShaA, p.before, p.after)
		if len(p.files) > 0 {
			pl.Push = o.push(o.BaseBranch, gitpub.Change{Base: p.base, Branch: p.branch, Files: p.files, Message: msg, Date: p.when})
			pl.Steps = append(pl.Steps, PRStep{Title: fmt.Sprintf("rocm: A/B %s on %s (%s): before/after CSVs", d.Label, d.Host, d.Date), Head: p.branch, File: DryComparePR,
				Body: func(l Links) (string, error) { return p.renderFor(report.CompareComment, l, nil, o.PR) }})
		}
		pl.Steps = append(pl.Steps,
			CommentStep{Issue: o.PR, Marker: report.CompareMarker(string(d.Kind)), File: DryCompareComment, What: "compare comment",
				Skip: unless(o.PR > 0, "no pull request to comment on"), Body: p.commentBody, Failed: p.commentFailed})
	}
	pl.End = o.end(p)
	p.Plan = pl
	return p
}

func (p *ComparePlan) summary(a *Applied) CompareSummary {
	s := p.sum
	s.DryRun, s.Git, s.Ending = a.DryRun, a.Git, ending(a)
	s.PR, s.Comment, s.Reported, s.Failing = a.PR.Outcome, a.Comment.Outcome, a.Reported, p.failing
	return s
}

func (p *ComparePlan) prepare(ctx context.Context) (err error) {
	if p.c, err = readCompare(p.o.ResultsDir); err != nil {
		return err
	}
	c, d := p.c, p.c.doc
	p.sum.Kind, p.sum.Label, p.sum.A, p.sum.B = string(d.Kind), d.Label, d.ShaA, d.ShaB
	if err := p.pin(ctx, p.o.Target, d.ShaA, "A's commit", d.Finished, d.Started); err != nil {
		return err
	}
	p.sum.Git.Base = p.base
	if p.branch = p.o.Branch; p.branch == "" {
		p.branch = CompareBranchPrefix + d.Label
	}
	if why := config.CheckBranch(p.branch); why != "" {
		return fmt.Errorf("the compare's branch %s", why)
	}
	if d.State != results.SessionComplete {
		p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("the compare session is %s, not complete: what it measured is published", d.State))
	}
	if d.CSVBefore != "" {
		p.before = path.Join(p.o.Config.Results.Benchmarks, d.CSVBefore)
		p.after = path.Join(p.o.Config.Results.Benchmarks, d.CSVAfter)
		p.files[p.before], p.files[p.after] = c.beforeBytes, c.afterBytes
		p.sum.Files = fileNames(p.files)
	} else {
		p.sum.Notes = append(p.sum.Notes, "the compare has no CSV pair (a profile compare, or no run was measured): nothing is committed")
	}
	if d.Kind == results.CompareProfile && (d.DirA == "" || d.DirB == "") {
		p.sum.Notes = append(p.sum.Notes, "the profile compare names no profile folder of a side: no port impact")
	} else if d.Kind == results.CompareProfile {
		if err := p.portDiffs(ctx); err != nil {
			return err
		}
	}
	p.failing = failingLines(d, p.o.Config.Compare.FailSlowerPct)
	// Render once before anything is written, so a document that cannot be made stops
	// the publication before the push.
	if _, err := p.render(report.CompareComment, Links{}, nil); err != nil {
		return err
	}
	return nil
}

// portDiffs diffs the decode profiles of A and B run by run, attributed with A's rules.
func (p *ComparePlan) portDiffs(ctx context.Context) error {
	rules := attrib.Default()
	if name := p.o.Config.Rules; name != "" {
		b, err := readBlob(ctx, p.o.RepoDir, p.o.Remote, p.o.GitToken, p.base, name, maxRulesBytes)
		if err != nil {
			return fmt.Errorf("loading A's attribution rules: %w", err)
		}
		if rules, err = attrib.Parse(b, name); err != nil {
			return fmt.Errorf("loading A's attribution rules: %w", err)
		}
	}
	dirs := [2]string{}
	for i, side := range []string{p.c.doc.DirA, p.c.doc.DirB} {
		dir, err := findFolder(filepath.Join(p.c.dir, side))
		if err == nil {
			err = onlyRegular(dir)
		}
		if err != nil {
			return fmt.Errorf("a profile compare needs the profile of each side (%s/): %w", side, err)
		}
		dirs[i] = dir
	}
	pairs, onlyA, onlyB, err := portdiff.Pairs(dirs[0], dirs[1])
	if err != nil {
		return fmt.Errorf("diffing the two profiles: %w", err)
	}
	for _, name := range onlyA {
		p.sum.Notes = append(p.sum.Notes, "run "+safetext.Quote(name)+" was profiled in A only: no port impact")
	}
	for _, name := range onlyB {
		p.sum.Notes = append(p.sum.Notes, "run "+safetext.Quote(name)+" was profiled in B only: no port impact")
	}
	for _, pr := range pairs {
		d, err := portdiff.Compare(pr[0], pr[1], rules)
		if err != nil {
			return fmt.Errorf("diffing run %s: %w", safetext.Quote(pr[0].Summary.Name), err)
		}
		p.diffs = append(p.diffs, report.CompareDiff{Run: pr[0].Summary.Name, Diff: d})
	}
	return nil
}

// onlyRegular refuses a side's profile folder that is a link or holds a summary or
// decode kernels file that is not a regular file: nothing read leaves the folder.
func onlyRegular(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is %s, not a folder", safetext.Quote(filepath.Base(dir)), kindOf(fi.Mode()))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if (strings.HasSuffix(name, results.SummarySuffix) || strings.HasSuffix(name, results.DecodeKernelsSuffix)) && !e.Type().IsRegular() {
			return fmt.Errorf("%s is %s, not a regular file", safetext.Quote(name), kindOf(e.Type()))
		}
	}
	return nil
}

// kindOf says what a file that is not the regular file it should be is.
func kindOf(m fs.FileMode) string {
	if m&fs.ModeSymlink != 0 {
		return "a symbolic link"
	}
	return infile.Kind(m)
}

// failingLines are the comparisons a threshold fails the check run on: called slower
// (after Holm's correction) with the change of the medians at least pct in the worse
// direction. pct 0 fails nothing.
func failingLines(d results.Compare, pct float64) []string {
	if pct <= 0 {
		return nil
	}
	var out []string
	for _, m := range d.Models {
		for _, r := range m.Results {
			if r.Verdict == abstat.Slower && math.Abs(r.ChangePct) >= pct {
				out = append(out, fmt.Sprintf("%s, %s: slower by %.2f %% (%s)", m.Model, r.Metric, math.Abs(r.ChangePct), r.Why))
			}
		}
	}
	return out
}

func (p *ComparePlan) threshold() string {
	pct := p.o.Config.Compare.FailSlowerPct
	if pct <= 0 {
		return ""
	}
	return fmt.Sprintf("compare.fail_slower_pct is %g: a comparison called slower by %g %% or more fails it", pct, pct)
}

// render makes a compare document from the links so far; errors are listed in it.
func (p *ComparePlan) render(kind report.Kind, l Links, errs []string) (string, error) {
	return p.renderFor(kind, l, errs, 0)
}

// renderFor is render for a document not on the pull request that asked (requested).
func (p *ComparePlan) renderFor(kind report.Kind, l Links, errs []string, requested int) (string, error) {
	c := p.c
	d := c.doc
	in := report.CompareInput{
		Kind: string(d.Kind), Label: d.Label, A: d.ShaA, B: d.ShaB, Host: d.Host, Date: d.Date, Alpha: d.Options.Alpha,
		Runs: len(d.Runs), Rejected: d.Rejected, Complete: d.State == results.SessionComplete, Diffs: p.diffs,
		Metrics: p.metrics(), PR: l.PR, Requested: requested, Failing: p.failing, Threshold: p.threshold(), Errors: errs,
	}
	if p.before != "" {
		in.Before, in.After = l.Link(d.CSVBefore, p.before), l.Link(d.CSVAfter, p.after)
	}
	// Holm's correction ran over every comparison a test decided (a p of 0, from a
	// Welch's t far in its tail, is still one of them).
	for _, m := range in.Metrics {
		if m.Result.Test != abstat.TestNone {
			in.Tested++
		}
	}
	if p.o.WorkflowRun != "" {
		in.WorkflowRun = &report.Link{Text: "workflow run", URL: p.o.WorkflowRun}
	}
	return renderLinked(kind, report.NewCompareData(in), p.files, l.Root)
}

// commentBody is the compare comment, cut with a note to fit limits.comment_max_bytes
// (GitHub's limit at most): a compare of many models can outgrow it.
func (p *ComparePlan) commentBody(_ string, l Links) (string, []string, error) {
	md, err := p.render(report.CompareComment, l, nil)
	if err != nil {
		return "", nil, err
	}
	md, cut := fitComment("compare comment", md, p.o.Config.Limits.CommentMaxBytes)
	return md, notes(cut), nil
}

func (p *ComparePlan) commentFailed(stage string, w Written, err error) (Outcome, error) {
	if stage == "read" {
		return Outcome{Action: "failed", Number: int64(p.o.PR), Error: err.Error()}, fmt.Errorf("finding the compare comment on #%d: %w", p.o.PR, err)
	}
	return w.Outcome, fmt.Errorf("updating the compare comment on #%d: %w", p.o.PR, err)
}

func (p *ComparePlan) command() string {
	if p.o.Command != "" {
		return p.o.Command
	}
	if p.c != nil && p.c.doc.Kind == results.CompareProfile {
		return "/profile rocm compare"
	}
	return "/bench rocm compare"
}

// steps are the publishing steps as the status comment shows them: the state reached.
func (p *ComparePlan) steps(a *Applied) ([]report.Step, []report.Link) {
	var s statusLines
	s.commit(a, p.branch)
	if !p.published(a) {
		return s.steps, s.links
	}
	s.pr(a, "CSV pull request", "open")
	s.comment("compare comment", true, p.o.PR, a.Comment, a.CommentErr, a.CommentSkipped, "not updated")
	return s.steps, s.links
}

// published says the results were read and the CSV pair is on its branch, or there
// was none to push: the documents can be made.
func (p *ComparePlan) published(a *Applied) bool {
	return p.c != nil && p.Plan.Err == nil && (a.Pushed || p.Plan.Push == nil)
}

func (p *ComparePlan) statusBody(a *Applied) (string, error) {
	steps, links := p.steps(a)
	state := "done"
	if a.Failed() {
		state = "failed"
	}
	detail := ""
	if p.c != nil {
		detail = fmt.Sprintf("B %s against A %s: %s.", strs.ShortSHA(p.c.doc.ShaB), strs.ShortSHA(p.c.doc.ShaA), orNone(report.NewCompareData(report.CompareInput{Metrics: p.metrics()}).Headline))
	}
	return report.Render(report.Status, report.StatusData{State: state, Command: p.command(), Detail: detail, Links: links, Steps: steps, Errors: a.ErrorTexts()})
}

func orNone(s string) string {
	if s == "" {
		return "no model was compared"
	}
	return s
}

func (p *ComparePlan) metrics() []report.CompareMetric {
	var out []report.CompareMetric
	for _, m := range p.c.doc.Models {
		for _, r := range m.Results {
			out = append(out, report.CompareMetric{Model: m.Model, Metric: r.Metric, Result: r.Result})
		}
	}
	return out
}

// checkOutput completes the check run: neutral, unless the threshold fails it or
// publishing failed.
func (p *ComparePlan) checkOutput(a *Applied) (gh.CheckOutput, error) {
	conclusion, title := "neutral", "A/B compare published"
	switch {
	case a.Failed():
		conclusion, title = "failure", "Publishing the A/B compare failed"
	case len(p.failing) > 0:
		conclusion, title = "failure", fmt.Sprintf("A/B compare: %d comparison(s) slower than compare.fail_slower_pct allows", len(p.failing))
	}
	var body string
	if p.published(a) {
		var err error
		if body, err = p.render(report.CompareCheck, a.Links, a.ErrorTexts()); err != nil {
			return gh.CheckOutput{}, err
		}
	} else {
		body = "Publishing failed before anything was pushed:\n\n"
		for _, e := range a.ErrorTexts() {
			body += "- " + report.Text(e) + "\n"
		}
	}
	return gh.CheckOutput{Conclusion: conclusion, Title: title, Summary: gh.Truncate(body, report.MaxCheckRunSummary), DetailsURL: a.Comment.Link}, nil
}

func (p *ComparePlan) stepSummary(a *Applied) (string, error) {
	if p.published(a) {
		return p.render(report.CompareComment, a.Links, a.ErrorTexts())
	}
	md := "## ROCm A/B compare: publishing failed\n\n"
	for _, e := range a.ErrorTexts() {
		md += "- " + report.Text(e) + "\n"
	}
	return md, nil
}

// The compare results folder.

// compareFolder is a compare results folder as read from disk: the manifest, checked
// with the folder by runner/results, and the CSV pair's bytes.
type compareFolder struct {
	dir                     string
	doc                     results.Compare
	beforeBytes, afterBytes []byte
}

// readCompare reads and checks the folder (results.ReadCompareFolder: bounded, every
// figure checked, every named file a regular file of the folder) and the CSV pair,
// which must be there and read as bench harness files.
func readCompare(dir string) (*compareFolder, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the compare results: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder: give the compare results folder", safetext.Quote(dir))
	}
	// The manifest itself must not be a link either (ReadCompareFolder checks the files
	// it names).
	if fi, err := os.Lstat(filepath.Join(dir, results.CompareFile)); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the compare's %s is %s, not a regular file", results.CompareFile, kindOf(fi.Mode()))
	}
	doc, err := results.ReadCompareFolder(dir)
	if err != nil {
		return nil, err
	}
	c := &compareFolder{dir: dir, doc: doc}
	if doc.CSVBefore == "" {
		return c, nil
	}
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{{doc.CSVBefore, &c.beforeBytes}, {doc.CSVAfter, &c.afterBytes}} {
		p := filepath.Join(dir, f.name)
		if _, err := benchcsv.ReadFile(p); err != nil {
			return nil, fmt.Errorf("reading the CSV pair: %w", err)
		}
		if *f.dst, err = infile.ReadFile(p, gitpub.DefaultMaxFileSize); err != nil {
			return nil, fmt.Errorf("reading the CSV pair: %w", err)
		}
	}
	return c, nil
}
