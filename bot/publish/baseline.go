package publish

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/bot/trend"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/results"
)

// Files a dry run of PublishBaseline writes instead of the GitHub writes; a regression
// issue is regression-<model>.md (dryRegression).
const (
	DryBaselinePR = "baseline-pr.md"
	DryTracking   = "tracking-comment.md"
)

// BaselineOptions say what nightly results to publish and where. Its Target's
// ResultsDir is the folder `perfbot run bench` wrote (<out>/<results.benchmarks>),
// holding one <stem>.nightly.json; RepoDir holds the measured commit; Branch "" takes
// Config.Branches.Baseline. A dry run's folder gets baseline-pr.md,
// tracking-comment.md, regression-<model>.md and summary.json.
type BaselineOptions struct {
	Target
	// Base is the pinned commit, when the caller knows it: the manifest's commit must
	// be it. "" takes the manifest's commit.
	Base string
	// Issue carries the tracking comment; 0 takes Config.Epic; none skips it.
	Issue int
	// MaxSpreadPct is the widest spread of a runtime's repeats that still gives a
	// ratio on the page; 0 takes baseline.DefaultMaxSpreadPct.
	MaxSpreadPct float64
	// HistoryDir is the nightly history the page's chart draws (with tonight's files);
	// "" takes the checkout's benchmarks folder, as `perfbot run bench` does.
	HistoryDir string
}

// BaselineSummary says what PublishBaseline did; a dry run writes it as summary.json.
type BaselineSummary struct {
	DryRun      bool      `json:"dry_run"`
	Results     string    `json:"results"`
	Stem        string    `json:"stem"`
	Date        string    `json:"date"`
	Commit      string    `json:"commit"`
	Page        string    `json:"page"`
	Files       []string  `json:"files"`
	Git         Git       `json:"git"`
	PR          Outcome   `json:"pr"`
	Tracking    Outcome   `json:"tracking_comment"`
	Regressions []Outcome `json:"regression_issues,omitempty"`
	// Trend says where the trend page went (trend.publish).
	Trend TrendOutcome `json:"trend"`
	Ending
}

func (o BaselineOptions) normalize() (BaselineOptions, error) {
	errs := o.check("run bench")
	d := config.Default()
	if o.Branch == "" {
		o.Branch = o.Config.Branches.Baseline
	}
	if o.Branch == "" {
		o.Branch = d.Branches.Baseline
	}
	if o.Config.Results.Benchmarks == "" {
		o.Config.Results.Benchmarks = d.Results.Benchmarks
	}
	if o.Config.Results.Reports == "" {
		o.Config.Results.Reports = d.Results.Reports
	}
	if o.Config.Trend.Publish == "" {
		o.Config.Trend = d.Trend
	}
	if o.Issue <= 0 {
		o.Issue = o.Config.Epic
	}
	return checked(o, "publishing the baseline", errs)
}

// nightly is one nightly results folder as read from disk.
type nightly struct {
	dir    string
	man    results.Nightly
	files  []string // names in the folder to commit, sorted
	mlxcel *benchcsv.File
	mlxlm  *benchcsv.File
	guard  []results.GuardEvent
}

var manifestName = regexp.MustCompile(`^[A-Za-z0-9._+-]+` + regexp.QuoteMeta(results.NightlySuffix) + `$`)

// readNightly reads the folder: exactly one manifest, the CSVs it names (base names of
// regular files in the folder, harness names only: the manifest is not trusted to
// point anywhere else), the guard's evidence.
func readNightly(dir string) (*nightly, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the results folder: %w", err)
	}
	var manifests []string
	for _, e := range ents {
		if e.Type().IsRegular() && manifestName.MatchString(e.Name()) {
			manifests = append(manifests, e.Name())
		}
	}
	if len(manifests) != 1 {
		return nil, fmt.Errorf("%s holds %d nightly manifests (*%s): publish the folder of one `perfbot run bench`", dir, len(manifests), results.NightlySuffix)
	}
	man, err := results.ReadNightly(filepath.Join(dir, manifests[0]))
	if err != nil {
		return nil, err
	}
	if man.Stem+results.NightlySuffix != manifests[0] {
		return nil, fmt.Errorf("%s names the stem %q: not the manifest of its own folder", manifests[0], man.Stem)
	}
	n := &nightly{dir: dir, man: man, files: []string{manifests[0]}}
	regular := func(name string) bool {
		fi, err := os.Lstat(filepath.Join(dir, name))
		return err == nil && fi.Mode().IsRegular()
	}
	for _, name := range man.CSVs {
		if _, err := benchcsv.ParseName(name); err != nil || filepath.Base(name) != name || !regular(name) {
			return nil, fmt.Errorf("the manifest names %q, which is not a harness CSV of the folder", name)
		}
		n.files = append(n.files, name)
	}
	for _, name := range []string{man.Stem + results.GuardLogSuffix, man.Stem + results.GuardLogSuffix + ".jsonl"} {
		if regular(name) {
			n.files = append(n.files, name)
		}
	}
	sort.Strings(n.files)
	for _, sw := range man.Sweeps {
		if sw.CSV() == "" || !regular(sw.CSV()) {
			continue
		}
		f, err := benchcsv.ReadFile(filepath.Join(dir, sw.CSV()))
		if err != nil {
			return nil, fmt.Errorf("reading the %s sweep's CSV: %w", sw.Name, err)
		}
		if f.Name.Host != man.Host {
			// The history, the chart and the regression issues all go by the host: a
			// folder that names two is not one night of one machine.
			return nil, fmt.Errorf("the %s sweep's CSV %s is of the host %q, but the manifest is of %q", sw.Name, sw.CSV(), f.Name.Host, man.Host)
		}
		switch sw.Name {
		case results.SweepMlxcel:
			n.mlxcel = f
		case results.SweepMlxLM:
			n.mlxlm = f
		}
	}
	if b, err := infile.ReadFile(filepath.Join(dir, man.Stem+results.GuardLogSuffix), gitpub.DefaultMaxFileSize); err == nil {
		if n.guard, err = results.ParseGuardLog(strings.NewReader(string(b))); err != nil {
			return nil, fmt.Errorf("reading the guard's evidence: %w", err)
		}
	}
	return n, nil
}

// BaselinePlan is the plan of a nightly baseline's publication, with what the planning
// found (the summary before anything is written).
type BaselinePlan struct {
	Plan
	o   BaselineOptions
	sum BaselineSummary

	pinned
	n        *nightly
	pagePath string
	pairs    []baseline.RuntimePair
	median   string
	history  *baseline.History // the nightly history with tonight's files, for the chart
	trend    trendPub
	changes  *changeAnalysis // the change points of each model's history (regressions.go)
}

// PublishBaseline publishes a nightly run: the CSVs, the guard's evidence, the manifest
// and the baseline page as one commit on the baseline branch, its pull request, the
// tracking comment edited in place with the latest table and the last nights, and one
// regression issue per confirmed regression, opened once and updated while it
// persists: PlanBaseline, then the plan's effects through o.Sink. The summary says
// what each step did, also when an error is returned.
func PublishBaseline(ctx context.Context, o BaselineOptions) (BaselineSummary, error) {
	return publish[BaselineOptions, BaselineSummary](ctx, o, func(o BaselineOptions) *BaselinePlan { return &BaselinePlan{o: o} }, PlanBaseline)
}

// PlanBaseline plans the publication of a nightly results folder (o normalized): it
// reads the folder and the history of the measured commit's git objects and renders
// the page. It writes nothing; a failure is the plan's Err.
func PlanBaseline(ctx context.Context, o BaselineOptions) *BaselinePlan {
	p := &BaselinePlan{o: o, sum: BaselineSummary{DryRun: o.Sink.DryRun()}}
	err := p.prepare(ctx)
	pl := o.plan(p.base, "", p.sum.Notes, err)
	if err == nil {
		m := p.n.man
		msg := fmt.Sprintf("rocm: nightly baseline of %s at %s (%s)\n\nCSVs: %s.\nPage: %s\n", m.GFX, strs.ShortSHA(p.base), m.Date, strings.Join(m.CSVs, ", "), p.pagePath)
		if p.trend.cfg.Publish == config.TrendCommit && p.trend.out.Page != "" {
			msg += "Trend page: " + p.trend.out.Page + "\n"
		}
		pl.Push = o.push(o.BaseBranch, gitpub.Change{Base: p.base, Branch: o.Branch, Files: p.files, Message: msg, Date: p.when})
		if m.Comparison != nil {
			pl.Steps = append(pl.Steps, p.regressionsStep())
		}
		if p.trend.cfg.Publish == config.TrendPages && p.trend.link != "" {
			pl.Steps = append(pl.Steps, PagesStep{plan: p})
		}
		pl.Steps = append(pl.Steps,
			PRStep{Title: fmt.Sprintf("rocm: nightly baseline of %s at %s (%s)", m.GFX, strs.ShortSHA(p.base), m.Date), Head: o.Branch, File: DryBaselinePR,
				Body: func(l Links) (string, error) {
					return renderLinked(report.BaselinePR, p.prData(l), p.files, l.Root)
				}},
			p.trackingStep())
	}
	pl.End = []Step{StepSummaryStep{Markdown: p.stepSummary}}
	p.Plan = pl
	return p
}

// summary is the plan's summary with what applying it did.
func (p *BaselinePlan) summary(a *Applied) BaselineSummary {
	s := p.sum
	s.DryRun, s.Git, s.Ending = a.DryRun, a.Git, ending(a)
	s.PR, s.Tracking, s.Regressions, s.Trend = a.PR.Outcome, a.Comment.Outcome, a.Issues, p.trend.out
	return s
}

func (p *BaselinePlan) prepare(ctx context.Context) (err error) {
	if p.n, err = readNightly(p.o.ResultsDir); err != nil {
		return err
	}
	n, m := p.n, p.n.man
	p.sum.Results, p.sum.Stem, p.sum.Date = n.dir, m.Stem, m.Date
	if b := p.o.Base; b != "" && (m.Commit == "" || !strings.HasPrefix(b, m.Commit)) {
		return fmt.Errorf("pinning the base commit: the nightly results are of commit %q but the pinned commit is %s: publish the results of the pinned commit", m.Commit, b)
	}
	if err := p.pin(ctx, p.o.Target, m.Commit, "the base commit", m.Finished, m.Started); err != nil {
		return err
	}
	p.sum.Commit, p.sum.Git.Base = p.base, p.base
	for _, name := range n.files {
		b, err := infile.ReadFile(filepath.Join(n.dir, name), gitpub.DefaultMaxFileSize)
		if err != nil {
			return fmt.Errorf("reading the results: %w", err)
		}
		p.files[path.Join(p.o.Config.Results.Benchmarks, name)] = b
	}
	p.pagePath = path.Join(p.o.Config.Results.Reports, fmt.Sprintf("rocm-baseline-%s-%s.md", m.GFX, m.Date))
	p.history = p.loadHistory(ctx)
	p.changes = p.analyseChanges(ctx)
	if svg, err := p.chart(); err != nil {
		p.sum.Notes = append(p.sum.Notes, "no chart on the baseline page: "+err.Error())
	} else {
		p.files[chartPath(p.pagePath)] = svg
	}
	p.planTrend()
	p.pairs, p.median = p.runtimes()
	page, err := report.Render(report.BaselinePage, p.pageData())
	if err != nil {
		return err
	}
	committed := map[string]bool{p.pagePath: true}
	for k := range p.files {
		committed[k] = true
	}
	if err := report.Validate(page, committed, p.pagePath); err != nil {
		return fmt.Errorf("checking the baseline page: %w", err)
	}
	p.files[p.pagePath] = []byte(page)
	p.sum.Page, p.sum.Files = p.pagePath, fileNames(p.files)
	return nil
}

// loadHistory is the nightly history the page charts: HistoryDir when given, else the
// benchmark CSVs of the measured commit, read from its git objects (regular files only,
// bounded; never a working tree), with tonight's files added. A history that cannot be
// read leaves tonight's files alone, with a note.
func (p *BaselinePlan) loadHistory(ctx context.Context) *baseline.History {
	var files []*benchcsv.File
	dir := p.o.HistoryDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "perfbot-history-")
		if err != nil {
			p.sum.Notes = append(p.sum.Notes, "the chart's history: "+err.Error())
		} else {
			defer os.RemoveAll(tmp)
			if err := p.exportHistory(ctx, tmp); err != nil {
				p.sum.Notes = append(p.sum.Notes, "the chart's history: "+err.Error())
			}
			dir = tmp
		}
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		if h, err := baseline.LoadDir(dir); err == nil {
			files = h.Files
		} else {
			p.sum.Notes = append(p.sum.Notes, "the chart's history: "+err.Error())
		}
	}
	for _, f := range []*benchcsv.File{p.n.mlxcel, p.n.mlxlm} {
		if f != nil && !slices.ContainsFunc(files, func(g *benchcsv.File) bool { return g.Name.String() == f.Name.String() }) {
			files = append(files, f)
		}
	}
	return baseline.New(files...)
}

// Bounds of the history read from the measured commit.
const (
	maxHistoryFiles = 5000
	maxHistoryBytes = 256 << 20
)

// exportHistory writes the benchmark CSVs of the measured commit's results.benchmarks
// folder into dir, read from the git objects through bot/gitpub; a file ReadBlob
// refuses is left out with a note.
func (p *BaselinePlan) exportHistory(ctx context.Context, dir string) error {
	pub := &gitpub.Publisher{Dir: p.o.RepoDir, Remote: p.o.Remote, Token: p.o.GitToken}
	folder := strings.Trim(p.o.Config.Results.Benchmarks, "/")
	names, err := pub.ListFiles(ctx, p.base, folder, maxHistoryFiles)
	if err != nil {
		return err
	}
	var total int64
	for _, name := range names {
		if !strings.HasSuffix(name, ".csv") {
			continue
		}
		b, err := pub.ReadBlob(ctx, p.base, folder+"/"+name, gitpub.DefaultMaxFileSize)
		var refused *gitpub.BlobError
		if errors.As(err, &refused) {
			// One file refused (too large, not a regular file) leaves the rest of the
			// history to the charts.
			p.sum.Notes = append(p.sum.Notes, "the chart's history: left out "+err.Error())
			continue
		}
		if err != nil {
			return err
		}
		if total += int64(len(b)); total > maxHistoryBytes {
			return fmt.Errorf("the benchmark CSVs of %s hold more than %d bytes", folder, maxHistoryBytes)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// chart draws the page's SVG: decode tok/s of tonight's models and the ones missing
// tonight, over the nights of the history, with the noise band.
func (p *BaselinePlan) chart() ([]byte, error) {
	m := p.n.man
	o := trend.Options{}
	if m.Comparison != nil {
		o.Rules = m.Comparison.Rules
	}
	return trend.SVG(p.history, m.Host, nil, o)
}

func (p *BaselinePlan) runtimes() ([]baseline.RuntimePair, string) {
	return report.RuntimePairs(p.n.mlxcel, p.n.mlxlm, p.o.MaxSpreadPct)
}

// csvLink is the repo path of a CSV row, relative to the page.
func (p *BaselinePlan) rowLink(file string, line int) string {
	target := path.Join(p.o.Config.Results.Benchmarks, file)
	rel := relPath(path.Dir(p.pagePath), target)
	if line > 0 {
		rel += fmt.Sprintf("#L%d", line)
	}
	return rel
}

func (p *BaselinePlan) pageData() report.BaselinePageData {
	m := p.n.man
	in := report.BaselineInput{
		Manifest: &m, Mlxcel: p.n.mlxcel, MlxLM: p.n.mlxlm, MlxcelCSV: sweepCSV(m, results.SweepMlxcel), MlxLMCSV: sweepCSV(m, results.SweepMlxLM),
		Guard: p.n.guard, GuardLog: m.Stem + results.GuardLogSuffix, Commit: p.base, MaxSpreadPct: p.o.MaxSpreadPct,
		Benchmarks: p.o.Config.Results.Benchmarks, RowLink: p.rowLink, Issues: map[string]report.Link{},
		History: p.history, ChartURL: p.chartURL(), Trend: p.pageTrendLink(),
	}
	p.addChanges(&in)
	return report.NewBaselinePageData(in)
}

// chartURL is the chart's link from the page, "" when there is no chart.
func (p *BaselinePlan) chartURL() string {
	if _, ok := p.files[chartPath(p.pagePath)]; !ok {
		return ""
	}
	return path.Base(chartPath(p.pagePath))
}

// sweepCSV is the CSV the named sweep left, "" when it left none.
func sweepCSV(m results.Nightly, name string) string {
	if sw, ok := m.Sweep(name); ok {
		return sw.CSV()
	}
	return ""
}

func (p *BaselinePlan) verdictRows(l Links) []report.VerdictRow {
	return report.VerdictRows(p.n.man.Comparison, l.Issues)
}

func (p *BaselinePlan) prData(l Links) report.BaselinePRData {
	m := p.n.man
	d := report.BaselinePRData{GFX: m.GFX, Date: m.Date, Commit: p.base, Page: l.Link(path.Base(p.pagePath), p.pagePath),
		Verdicts: p.verdictRows(l), MedianRatio: p.median, Counts: report.VerdictCounts(p.n.man.Comparison), Tenants: m.Tenants}
	if _, ok := p.files[chartPath(p.pagePath)]; ok && l.Root != "" {
		d.Chart = &report.Link{Text: "decode tok/s per model over the nightly history", URL: rawURL(l.Root) + chartPath(p.pagePath)}
	}
	d.Trend = p.trendLink(l)
	for _, pr := range m.Problems {
		if pr.Severity == benchcsv.Error {
			d.Problems = append(d.Problems, pr.String())
		}
	}
	for _, k := range p.sum.Files {
		d.Files = append(d.Files, l.Link(k, k))
	}
	return d
}

// trackingStep edits the one tracking comment: the latest table and the last nights.
func (p *BaselinePlan) trackingStep() CommentStep {
	return CommentStep{Issue: p.o.Issue, Marker: report.TrackingMarker, File: DryTracking, What: "tracking comment",
		Skip: unless(p.o.Issue > 0, "no tracking issue: set epic: in the configuration or pass --issue"), Body: p.trackingBody, Failed: p.trackingFailed}
}

// trackingFailed says what a failure to read or write the tracking comment is.
func (p *BaselinePlan) trackingFailed(stage string, w Written, err error) (Outcome, error) {
	if stage == "read" {
		return Outcome{Action: "failed", Number: int64(p.o.Issue), Error: err.Error()}, fmt.Errorf("finding the tracking comment on #%d: %w", p.o.Issue, err)
	}
	return w.Outcome, fmt.Errorf("updating the tracking comment on #%d: %w", p.o.Issue, err)
}

func (p *BaselinePlan) trackingBody(earlier string, l Links) (string, []string, error) {
	m := p.n.man
	var notes []string
	nights, err := report.ParseNights(earlier)
	if err != nil {
		notes = append(notes, err.Error()+"; the history starts over")
	}
	cur := report.NightEntry{Date: m.Date, Commit: strs.ShortSHA(p.base), MedianRatio: p.median}
	if l.PR != nil {
		cur.PR = l.PR.URL
	}
	if l.Root != "" {
		cur.Page = l.Root + p.pagePath
	}
	if c := m.Comparison; c != nil {
		for _, r := range c.Models {
			if r.New != nil {
				cur.Measured++
			}
			switch r.Verdict {
			case baseline.Regression:
				cur.Regressions = append(cur.Regressions, r.Model)
			case baseline.Improvement:
				cur.Improvements = append(cur.Improvements, r.Model)
			}
		}
	}
	cur.Problems = len(benchcsv.Errors(m.Problems))
	d := report.TrackingData{Current: cur, Page: l.Link(path.Base(p.pagePath), p.pagePath), Verdicts: p.verdictRows(l),
		History: report.MergeNights(nights, cur), PR: l.PR, Trend: p.trendLink(l)}
	body, err := renderLinked(report.Tracking, d, p.files, l.Root)
	return body, notes, err
}

// stepSummary is the job step summary: the pull request's body, or the errors.
func (p *BaselinePlan) stepSummary(a *Applied) (string, error) {
	var md string
	if p.n != nil && a.Git.Pushed {
		md, _ = report.Render(report.BaselinePR, p.prData(a.Links))
	}
	if md == "" {
		md = "## ROCm nightly baseline: publishing failed\n\n"
		for _, e := range a.ErrorTexts() {
			md += "- " + report.Text(e) + "\n"
		}
	}
	return md, nil
}

// BaselineFiles say which harness files `perfbot report --baseline` renders.
type BaselineFiles struct {
	// CSVs are one or two harness CSVs: mlxcel's (a rocm_ file) and the mlx-lm
	// baseline's (a pylm_ file), told apart by their names.
	CSVs []string
	// GuardLog is the guard's evidence of the sweeps; "" when there is none.
	GuardLog     string
	MaxSpreadPct float64
	// PageDir is where the page will be read from: links to the files are relative to
	// it. "" is the current directory.
	PageDir string
}

// BaselinePageOf renders the baseline page from harness CSVs and a guard log, without
// a nightly manifest: no host facts beyond the rows, no verdicts against the history.
func BaselinePageOf(o BaselineFiles) (string, error) {
	in := report.BaselineInput{MaxSpreadPct: o.MaxSpreadPct, Issues: map[string]report.Link{}}
	if len(o.CSVs) == 0 || len(o.CSVs) > 2 {
		return "", fmt.Errorf("give mlxcel's CSV and, optionally, the mlx-lm baseline's: %d given", len(o.CSVs))
	}
	paths := map[string]string{} // base name -> path
	for _, p := range o.CSVs {
		f, err := benchcsv.ReadFile(p)
		if err != nil {
			return "", err
		}
		name := filepath.Base(p)
		if _, dup := paths[name]; dup {
			return "", fmt.Errorf("%s is given twice", name)
		}
		paths[name] = p
		switch {
		case f.Name.Backend == "pylm" && in.MlxLM == nil:
			in.MlxLM, in.MlxLMCSV = f, name
		case f.Name.Backend != "pylm" && in.Mlxcel == nil:
			in.Mlxcel, in.MlxcelCSV = f, name
		default:
			return "", fmt.Errorf("%s and the other CSV are both %s files: give mlxcel's (rocm_...) and the mlx-lm baseline's (pylm_...)", name, f.Name.Backend)
		}
	}
	if o.GuardLog != "" {
		b, err := infile.ReadFile(o.GuardLog, gitpub.DefaultMaxFileSize)
		if err != nil {
			return "", fmt.Errorf("reading the guard log: %w", err)
		}
		if in.Guard, err = results.ParseGuardLog(strings.NewReader(string(b))); err != nil {
			return "", fmt.Errorf("reading the guard log %s: %w", o.GuardLog, err)
		}
		in.GuardLog = filepath.Base(o.GuardLog)
		paths[in.GuardLog] = o.GuardLog
	}
	var files []string
	for _, p := range paths {
		files = append(files, p)
	}
	pagePath, repoPath, err := localLayout(o.PageDir, files)
	if err != nil {
		return "", err
	}
	// Each file is linked relative to the page, and checked as a repository's files are.
	links := map[string]string{}
	committed := map[string]bool{pagePath: true}
	for name, p := range paths {
		links[name] = relPath(path.Dir(pagePath), repoPath[p])
		committed[repoPath[p]] = true
	}
	in.RowLink = func(file string, line int) string {
		l := links[file]
		if line > 0 {
			l += fmt.Sprintf("#L%d", line)
		}
		return l
	}
	page, err := report.Render(report.BaselinePage, report.NewBaselinePageData(in))
	if err != nil {
		return "", err
	}
	if err := report.Validate(page, committed, pagePath); err != nil {
		return "", fmt.Errorf("checking the baseline page: %w", err)
	}
	return page, nil
}
