package publish

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/bot/trend"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/strs"
)

// DryTrendPage is the file a dry run writes instead of pushing the trend page to the
// Pages branch (trend.publish: pages).
const DryTrendPage = "trend-page.html"

// TrendOutcome says where the trend page of a nightly went.
type TrendOutcome struct {
	Publish string `json:"publish"` // config.TrendCommit, TrendPages or TrendOff
	// Page is the page's repo path: in the baseline commit (commit) or on the Pages
	// branch (pages).
	Page string `json:"page,omitempty"`
	// Files are the files committed beside the baseline page (commit).
	Files  []string `json:"files,omitempty"`
	URL    string   `json:"url,omitempty"`    // the page on GitHub Pages (pages)
	Branch string   `json:"branch,omitempty"` // the Pages branch (pages)
	Commit string   `json:"commit,omitempty"` // the Pages branch's commit (pages)
	Action string   `json:"action,omitempty"` // created, updated, unchanged, dry-run or failed (pages)
	Error  string   `json:"error,omitempty"`
	// Skipped says why there is no page ("" when there is one).
	Skipped string `json:"skipped,omitempty"`
}

// trendPub is the trend page's part of a baseline publication: the page of the nightly
// history (the measured commit's benchmark CSVs and tonight's), committed beside the
// baseline page or pushed to the Pages branch, and the link the baseline page and the
// pull request give to it.
type trendPub struct {
	cfg config.Trend
	out TrendOutcome
	// link is the page's link from the baseline page (a repo path relative to it, or
	// the Pages URL); "" when there is no page.
	link string
}

// planTrend plans the trend page once the history is loaded and before the baseline
// page is rendered: for commit its files join the baseline commit; for pages the page
// is rendered when it is pushed, after the baseline commit, whose files it links to.
// A page that cannot be made is a note, never a failed nightly.
func (p *BaselinePlan) planTrend() {
	t := &p.trend
	t.cfg = p.o.Config.Trend
	t.out = TrendOutcome{Publish: t.cfg.Publish}
	switch t.cfg.Publish {
	case config.TrendOff:
		t.out.Skipped = "trend.publish is off"
	case config.TrendCommit:
		files, page, err := p.trendFiles()
		if err != nil {
			t.out.Skipped = err.Error()
			p.sum.Notes = append(p.sum.Notes, "no trend page: "+err.Error())
			return
		}
		for k, v := range files {
			p.files[k] = v
		}
		t.out.Files = fileNames(files)
		t.out.Page = page
		t.link = relPath(path.Dir(p.pagePath), page)
	case config.TrendPages:
		t.out.Branch, t.out.Page = t.cfg.PagesBranch, path.Join(t.cfg.Path, "index.html")
		t.out.URL = pagesURL(p.o.Repo.Owner, p.o.Repo.Name, t.cfg.Path)
		if t.out.URL == "" {
			t.out.Skipped = "the repository is not known, so neither is its Pages address: give the GitHub repository"
			p.sum.Notes = append(p.sum.Notes, "no trend page: "+t.out.Skipped)
			return
		}
		if _, err := trend.Page(p.history, p.trendOptions("")); err != nil {
			t.out.Skipped = err.Error()
			p.sum.Notes = append(p.sum.Notes, "no trend page: "+err.Error())
			return
		}
		t.link = t.out.URL
	default:
		t.out.Skipped = fmt.Sprintf("trend.publish %q is not a mode", t.cfg.Publish)
		p.sum.Notes = append(p.sum.Notes, "no trend page: "+t.out.Skipped)
	}
}

// trendOptions are the trend page's: the comparison's rules, links to the CSVs under
// linkBase.
func (p *BaselinePlan) trendOptions(linkBase string) trend.Options {
	o := trend.Options{LinkBase: linkBase}
	if c := p.n.man.Comparison; c != nil {
		o.Rules = c.Rules
	}
	return o
}

// trendFiles are the committed form of the trend page: <trend.path>/README.md and the
// SVG of each host beside it, its links to the CSVs relative to it and checked against
// the CSVs the commit holds (the history's and tonight's).
func (p *BaselinePlan) trendFiles() (map[string][]byte, string, error) {
	dir := p.trend.cfg.Path
	bench := p.o.Config.Results.Benchmarks
	g, err := trend.Markdown(p.history, p.trendOptions(relPath(dir, bench)+"/"))
	if err != nil {
		return nil, "", err
	}
	page := path.Join(dir, "README.md")
	files := map[string][]byte{page: g.Markdown}
	for name, svg := range g.SVGs {
		files[path.Join(dir, name)] = svg
	}
	committed := map[string]bool{}
	for k := range p.files {
		committed[k] = true
	}
	for k := range files {
		committed[k] = true
	}
	for _, f := range p.history.Files {
		committed[path.Join(bench, f.Name.String())] = true
	}
	if err := report.Validate(string(g.Markdown), committed, page); err != nil {
		return nil, "", fmt.Errorf("checking the trend page: %w", err)
	}
	return files, page, nil
}

// pagesURL is where GitHub Pages serves dir of owner/name's site: a project site under
// /<name>/, a user or organisation site (owner.github.io) at the root.
func pagesURL(owner, name, dir string) string {
	if owner == "" || name == "" {
		return ""
	}
	host := strings.ToLower(owner) + ".github.io"
	if strings.EqualFold(name, host) {
		return "https://" + host + "/" + dir + "/"
	}
	return "https://" + host + "/" + name + "/" + dir + "/"
}

// trendLink is the trend page's link in a document for GitHub (the pull request body):
// the committed page under the links' root, or the Pages URL. nil for none.
func (p *BaselinePlan) trendLink(l Links) *report.Link {
	t := p.trend
	switch {
	case t.link == "":
		return nil
	case t.cfg.Publish == config.TrendCommit:
		lk := l.Link(t.out.Page, t.out.Page)
		return &lk
	}
	return &report.Link{Text: t.out.URL, URL: t.out.URL}
}

// pageTrendLink is the trend page's link from the baseline page, nil for none.
func (p *BaselinePlan) pageTrendLink() *report.Link {
	t := p.trend
	if t.link == "" {
		return nil
	}
	text := t.out.Page
	if t.cfg.Publish == config.TrendPages {
		text = t.out.URL
	}
	return &report.Link{Text: text, URL: t.link}
}

// PagesStep pushes the trend page to the Pages branch as one commit over its head
// (gitpub.Publisher.Append: only <trend.path>/index.html changes, and a commit pushed
// there meanwhile is built on, never replaced). The page is rendered now, its points
// linking to the CSVs of the baseline commit just pushed; a dry run writes it as
// DryTrendPage instead.
type PagesStep struct {
	plan *BaselinePlan
}

func (st PagesStep) apply(ctx context.Context, s Sink, a *Applied) {
	p := st.plan
	t := &p.trend
	bench := p.o.Config.Results.Benchmarks
	// From the page on the Pages site, a relative link could not reach the
	// repository: links go to the pushed commit's files on GitHub.
	linkBase := ""
	if a.Links.Root != "" {
		linkBase = a.Links.Root + bench + "/"
	}
	page, err := trend.Page(p.history, p.trendOptions(linkBase))
	if err != nil {
		t.out.Action, t.out.Error = "failed", err.Error()
		a.fail(fmt.Errorf("rendering the trend page: %w", err))
		return
	}
	if s.DryRun() {
		t.out.Action = "dry-run"
		if err := s.Record(DryTrendPage, page); err != nil {
			a.fail(err)
		}
		a.note(fmt.Sprintf("dry run: the trend page would be pushed to %s as %s", t.out.Branch, t.out.Page))
		return
	}
	m := p.n.man
	pub := &gitpub.Publisher{Dir: p.o.RepoDir, Remote: p.o.Remote, Token: p.o.GitToken, Branches: []string{t.cfg.PagesBranch}}
	res, err := pub.Append(ctx, gitpub.Change{Branch: t.cfg.PagesBranch, Files: map[string][]byte{t.out.Page: page},
		Message: fmt.Sprintf("perfbot: nightly trend page, %s at %s (%s)\n\nPage: %s\n", m.GFX, strs.ShortSHA(p.base), m.Date, t.out.Page),
		Author:  p.o.Author, Date: p.when})
	t.out.Commit, t.out.Action = res.Commit, res.Action
	if err != nil {
		t.out.Action, t.out.Error = "failed", err.Error()
		a.fail(fmt.Errorf("publishing the trend page to %s: %w", t.cfg.PagesBranch, err))
	}
}
