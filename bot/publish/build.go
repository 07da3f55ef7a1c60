package publish

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/chart"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/attrib"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/rank"
	"github.com/lablup/perfbot/runner/results"
)

// pageInput is what the report page is made of: a results folder, the commit it
// measured and the ranking of its runs.
type pageInput struct {
	f                *folder
	commit           string // the pinned base, or (without a repository) what the folder says
	date             string
	models, sampling []string
	rules            *attrib.Rules
	rulesFile        []byte // the rules file's content, nil for perfbot's own rules
	rk               *rank.Ranking
	gemmPatch        *patch.Report
	patchProblem     string
	profilesDir      string                   // results.profiles, for the reproduce lines
	fileURL          func(name string) string // a results file's link from the page
	chartURL         string                   // the unit chart's link from the page, "" for none
}

// pageData fills the report page from the folder; publish and `perfbot report` share
// it.
func pageData(in pageInput) report.PageData {
	f := in.f
	build, rest := f.sessionMethod()
	var files []report.Link
	for _, name := range f.files {
		files = append(files, report.Link{Text: name, URL: in.fileURL(name)})
	}
	var peak *report.Peak
	if p, known := hostinfo.PeakBandwidthOf(f.gfx); known {
		peak = &report.Peak{GBps: p.GBps, Source: p.Source}
	}
	return report.NewPageData(report.PageInput{
		GFX: f.gfx, Folder: f.name, Commit: in.commit, Date: in.date, Models: in.models, Sampling: in.sampling,
		HostEnv: f.env, HasHost: f.hasHost, Method: append([]report.Row{build}, rest...),
		Guard: f.guard, Runs: f.runs, FailedRuns: f.failedRuns(),
		Rules: report.RulesData(in.rules, in.rulesFile), RankingMD: in.rk.Markdown(),
		Gemm: gemmData(f.gemm, in.gemmPatch, in.patchProblem), KernelSteps: kernelSteps(f), Peak: peak,
		ProfilesDir: in.profilesDir, Files: files, ChartURL: in.chartURL,
	})
}

// chartPath is where a page's SVG chart is committed: beside the page, same name.
func chartPath(pagePath string) string {
	return strings.TrimSuffix(pagePath, path.Ext(pagePath)) + ".svg"
}

// rawURL turns a blob link root (https://github.com/o/r/blob/<sha>/) into the raw one,
// which a pull request body or a comment can show as an image; "" stays "".
func rawURL(blobRoot string) string {
	if i := strings.LastIndex(blobRoot, "/blob/"); i >= 0 {
		return blobRoot[:i] + "/raw/" + blobRoot[i+len("/blob/"):]
	}
	return blobRoot
}

// prRanking gives the pull request body its short ranking table, the link to the full
// one on the report page, and the report's chart as an image (GitHub shows a committed
// SVG by its raw URL; without a link root there is no URL to show it by).
func prRanking(d *report.PRData, rk *rank.Ranking, page report.Link, linkRoot, chart string, files map[string][]byte) {
	d.Units, d.KernelTimeOnly = report.EpicUnits(rk), rk.KernelTimeOnlyRuns
	if strings.Contains(page.URL, "://") {
		page.URL += "#ranked-port-order"
	}
	d.RankingLink = page
	if _, ok := files[chart]; ok && linkRoot != "" {
		d.Chart = &report.Link{Text: report.ChartText, URL: rawURL(linkRoot) + chart}
	}
}

// unitChart draws the report page's chart: per run, its GPU ms/token as one bar split
// by the port units' reached share of it (the ranking's per-run figures), the rest
// grey.
func unitChart(f *folder, rk *rank.Ranking) ([]byte, error) {
	var bars []chart.Bar
	var keys []string
	for _, u := range rk.Units {
		keys = append(keys, "#"+u.ID)
	}
	for _, s := range f.runs {
		gpu := float64(s.GPUMsPerToken)
		br := chart.Bar{Label: s.Name, Total: gpu}
		for _, u := range rk.Units {
			for _, fig := range u.Runs {
				if fig.Run == s.Name && fig.ReachedSharePct > 0 {
					br.Segments = append(br.Segments, chart.Segment{Key: "#" + u.ID, Value: gpu * fig.ReachedSharePct / 100})
				}
			}
		}
		bars = append(bars, br)
	}
	if len(bars) == 0 {
		return nil, fmt.Errorf("no run to chart")
	}
	return chart.WriteBars(bars, chart.BarsOptions{
		Title: "Decode GPU ms/token by port unit (reached share, default reach)", Unit: "GPU ms/token",
		Keys: keys, Rest: "not reached by a port unit",
	})
}

// renderChecked renders the page and parses it back: every link must name a file of
// committed (paths relative to the same root as pagePath).
func renderChecked(d report.PageData, committed map[string]bool, pagePath string) (string, error) {
	page, err := report.Render(report.Page, d)
	if err != nil {
		return "", err
	}
	if err := report.Validate(page, committed, pagePath); err != nil {
		return "", fmt.Errorf("checking the report page: %w", err)
	}
	return page, nil
}

// PageOptions say which results folder `perfbot report` renders.
type PageOptions struct {
	// ResultsDir is the <gfx>_<commit> folder, or the folder holding exactly one.
	ResultsDir string
	// RulesFile is an attribution rules file; "" takes the shipped rules.
	RulesFile string
	// PageDir is the folder the page will be read from: links to the results files are
	// relative to it. "" is the current directory.
	PageDir string
}

// Page renders the report page of a results folder without a repository or a
// commit: the commit is the one the session (else the folder's name) records, the
// gates are not patched, and links to the results files are relative to PageDir.
// notes say what the folder lacked.
func Page(o PageOptions) (page string, notes []string, err error) {
	f, err := readFolder(o.ResultsDir)
	if err != nil {
		return "", nil, err
	}
	rules, rulesFile := attrib.Default(), []byte(nil)
	if o.RulesFile != "" {
		if rulesFile, err = infile.ReadFile(o.RulesFile, maxRulesBytes); err != nil {
			return "", nil, fmt.Errorf("loading the attribution rules: %w", err)
		}
		if rules, err = attrib.Parse(rulesFile, o.RulesFile); err != nil {
			return "", nil, fmt.Errorf("loading the attribution rules: %w", err)
		}
	}
	kernels, err := rank.ReadKernels(f.dir, f.runs)
	if err != nil {
		return "", nil, fmt.Errorf("ranking: %w", err)
	}
	rk, err := rank.RankWith(f.runs, rules, rank.Options{Kernels: kernels})
	if err != nil {
		return "", nil, fmt.Errorf("ranking: %w", err)
	}
	notes = append(notes, f.notes...)
	commit := f.session.Commit
	if commit == "" {
		commit = f.commit8
		notes = append(notes, "the commit is the folder name's "+f.commit8+": no session.json records the full one")
	}
	date := f.sessionDate()
	if date == "" {
		date = "date unknown"
		notes = append(notes, "the session has no date: the page says the date is unknown")
	}
	models, sampling := f.session.Models, f.session.Sampling
	if len(sampling) == 0 {
		sampling = distinct(f.runs, (*results.Summary).SamplingTag)
	}
	if len(models) == 0 {
		models = distinct(f.runs, (*results.Summary).ModelName)
	}
	paths := make([]string, len(f.files))
	for i, name := range f.files {
		paths[i] = filepath.Join(f.dir, name)
	}
	pagePath, repoPath, err := localLayout(o.PageDir, append(paths, filepath.Join(f.dir, "x")))
	if err != nil {
		return "", nil, err
	}
	fileOf := func(name string) string { return repoPath[filepath.Join(f.dir, name)] }
	committed := map[string]bool{pagePath: true}
	for _, name := range f.files {
		committed[fileOf(name)] = true
	}
	d := pageData(pageInput{
		f: f, commit: commit, date: date, models: models, sampling: sampling, rules: rules, rulesFile: rulesFile, rk: rk,
		profilesDir: relPath(path.Dir(pagePath), path.Dir(path.Dir(fileOf("x")))),
		fileURL:     func(name string) string { return relPath(path.Dir(pagePath), fileOf(name)) },
	})
	page, err = renderChecked(d, committed, pagePath)
	return page, notes, err
}

// localLayout places a page read from pageDir and the files (paths) under their common
// folder, as slash paths relative to it, so that the page's links can be checked as a
// repository's are: pagePath is the page's path, repoPath each file's.
func localLayout(pageDir string, files []string) (pagePath string, repoPath map[string]string, err error) {
	if pageDir == "" {
		pageDir = "."
	}
	pa, err := filepath.Abs(pageDir)
	if err != nil {
		return "", nil, err
	}
	abs := make([]string, len(files))
	for i, f := range files {
		if abs[i], err = filepath.Abs(f); err != nil {
			return "", nil, err
		}
	}
	inside := func(root, p string) bool {
		r, err := filepath.Rel(root, p)
		return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
	}
	root := pa
	for {
		all := true
		for _, a := range abs {
			all = all && inside(root, a)
		}
		parent := filepath.Dir(root)
		if all || parent == root {
			break
		}
		root = parent
	}
	rel := func(p string) string {
		r, _ := filepath.Rel(root, p)
		return filepath.ToSlash(r)
	}
	repoPath = map[string]string{}
	for i, f := range files {
		repoPath[f] = rel(abs[i])
	}
	return path.Join(rel(pa), "page.md"), repoPath, nil
}

// gemmData is the numeric test section of the page, from the test outcome and the
// prepared patch's report.
func gemmData(o *patch.Outcome, r *patch.Report, problem string) *report.Gemm {
	if o == nil {
		return nil
	}
	g := &report.Gemm{OverlayCommit: o.OverlayCommit, Tests: o.Tests, Decision: string(o.Decide()), Problem: problem}
	if r != nil {
		g.Tests, g.Decision = r.Tests, string(r.Decision)
		for _, fr := range r.Files {
			if fr.Changed {
				g.Changed = append(g.Changed, fr.Path)
			}
		}
	}
	return g
}
