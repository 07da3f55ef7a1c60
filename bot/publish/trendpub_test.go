package publish

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/benchcsv"
)

const trendDate = "2026-10-20"

// historyCommit pushes a commit over tg.base holding the nightly history of
// historyFiles in the benchmarks folder (extra adds to the folder first) to the branch
// "history" of the remote, fetches it into the checkout and returns it: the measured
// commit of a night whose publish reads its history from the git objects.
func historyCommit(t *testing.T, tg *target, extra func(folder string)) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "work")
	gitT(t, filepath.Dir(work), "clone", "--quiet", tg.bare, work)
	folder := filepath.Join(work, filepath.FromSlash(testConfig().Results.Benchmarks))
	for _, f := range historyFiles(t, trendDate).Files {
		writeFile(t, filepath.Join(folder, f.Name.String()), string(benchcsv.Format(benchcsv.ROCmHeader, f.Rows)))
	}
	if extra != nil {
		extra(folder)
	}
	gitT(t, work, "add", "-A")
	gitT(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "history")
	gitT(t, work, "push", "--quiet", "origin", "HEAD:refs/heads/history")
	gitT(t, tg.checkout, "fetch", "--quiet", "origin", "history")
	return gitT(t, work, "rev-parse", "HEAD")
}

func trendConfig(mode string) config.Config {
	c := testConfig()
	c.Trend.Publish = mode
	return c
}

// dryTrend publishes tonight's night on a new target with a nightly history, as a dry
// run into out with trend.publish set to mode and the options as with changes them;
// commit is the history's commit, the night's base.
func dryTrend(t *testing.T, mode string, with func(*BaselineOptions)) (tg *target, commit string, sum BaselineSummary, out string) {
	t.Helper()
	tg = newTarget(t)
	commit = historyCommit(t, tg, nil)
	out = t.TempDir()
	o := BaselineOptions{Target: Target{ResultsDir: layNight(t, commit, night{date: trendDate, llama: "35.41"}), RepoDir: tg.checkout, Config: trendConfig(mode), Sink: ToDir(out)}}
	if with != nil {
		with(&o)
	}
	sum, err := PublishBaseline(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return tg, commit, sum, out
}

// trend.publish: commit. The baseline commit holds the trend page (Markdown) and its
// host's SVG beside it; the page shows the SVG and links each model's last night to
// CSV rows the commit holds (the history's and tonight's); the baseline page and the
// pull request body link the trend page.
func TestTrendPageCommittedInTheBaselineCommit(t *testing.T) {
	t.Parallel()
	tg, commit, sum, out := dryTrend(t, config.TrendCommit, nil)
	const dir = "docs/benchmark_results/trend"
	page, svg := dir+"/README.md", dir+"/strixhalo-gfx1151.svg"
	if sum.Trend.Publish != config.TrendCommit || sum.Trend.Page != page || strings.Join(sum.Trend.Files, ",") != page+","+svg {
		t.Fatalf("trend outcome %+v", sum.Trend)
	}
	committed := gitT(t, tg.bare, "diff", "--name-only", commit, sum.Git.Commit)
	for _, f := range []string{page, svg, sum.Page} {
		if !strings.Contains(committed, f) {
			t.Errorf("the baseline commit lacks %s:\n%s", f, committed)
		}
	}
	md := tg.file(t, sum.Git.Commit, page)
	var html bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(md), &html); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `<img src="strixhalo-gfx1151.svg"`) {
		t.Errorf("the trend page does not show its SVG:\n%s", md)
	}
	if s := tg.file(t, sum.Git.Commit, svg); !strings.Contains(s, ">"+llama+"<") {
		t.Error("the trend SVG has no panel of Llama")
	}
	links := regexp.MustCompile(`<a href="([^"]+)"`).FindAllStringSubmatch(html.String(), -1)
	if len(links) < 2 {
		t.Fatalf("the trend page links %d CSV rows:\n%s", len(links), md)
	}
	tonight := false
	for _, l := range links {
		file, _, _ := strings.Cut(l[1], "#L")
		target := path.Clean(path.Join(dir, file))
		if gitT(t, tg.bare, "cat-file", "-t", sum.Git.Commit+":"+target) != "blob" {
			t.Errorf("the trend page links %s, which the commit does not hold", target)
		}
		tonight = tonight || strings.HasSuffix(target, "_"+trendDate+".csv")
	}
	if !tonight {
		t.Errorf("the trend page does not link tonight's CSVs:\n%s", md)
	}
	if base := tg.file(t, sum.Git.Commit, sum.Page); !strings.Contains(base, "the trend page, [docs/benchmark\\_results/trend/README.md](trend/README.md)") {
		t.Errorf("the baseline page does not link the trend page")
	}
	if pr := readFile(t, filepath.Join(out, DryBaselinePR)); !strings.Contains(pr, "the trend page, [docs/benchmark\\_results/trend/README.md](docs/benchmark_results/trend/README.md)") {
		t.Errorf("the pull request body does not link the trend page:\n%s", pr)
	}
	if c := readFile(t, filepath.Join(out, DryTracking)); !strings.Contains(c, "the trend page, [docs/benchmark\\_results/trend/README.md](docs/benchmark_results/trend/README.md)") {
		t.Errorf("the tracking comment does not link the trend page:\n%s", c)
	}
}

// trend.publish: off. Nothing of the trend page is committed or linked.
func TestTrendPageOff(t *testing.T) {
	t.Parallel()
	tg, commit, sum, out := dryTrend(t, config.TrendOff, nil)
	if sum.Trend.Skipped == "" || sum.Trend.Page != "" {
		t.Errorf("trend outcome %+v", sum.Trend)
	}
	if committed := gitT(t, tg.bare, "diff", "--name-only", commit, sum.Git.Commit); strings.Contains(committed, "trend") {
		t.Errorf("the baseline commit holds a trend page:\n%s", committed)
	}
	for name, doc := range map[string]string{"page": tg.file(t, sum.Git.Commit, sum.Page), "pull request": readFile(t, filepath.Join(out, DryBaselinePR)),
		"tracking comment": readFile(t, filepath.Join(out, DryTracking))} {
		if strings.Contains(doc, "trend page") {
			t.Errorf("the %s links a trend page", name)
		}
	}
	if _, err := os.Stat(filepath.Join(out, DryTrendPage)); err == nil {
		t.Error("a dry run wrote a Pages page with trend.publish off")
	}
}

// trend.publish: pages, on GitHub: the HTML page goes to the Pages branch as one
// commit over its head (a maintainer's files there stay), linking the CSVs of the
// baseline commit on GitHub; the baseline commit holds no trend page; the baseline
// page and the pull request body link the Pages URL. A second night adds one more
// commit; the same night again adds none.
func TestTrendPageOnThePagesBranch(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	commit := historyCommit(t, tg, nil)
	// The Pages branch as a maintainer started it.
	site := filepath.Join(t.TempDir(), "site")
	gitT(t, filepath.Dir(site), "init", "--quiet", "--initial-branch=gh-pages", site)
	writeFile(t, filepath.Join(site, "index.html"), "<p>mlxcel</p>\n")
	gitT(t, site, "add", "-A")
	gitT(t, site, "-c", "user.name=m", "-c", "user.email=m@example.com", "commit", "--quiet", "-m", "site")
	gitT(t, site, "push", "--quiet", tg.bare, "HEAD:refs/heads/gh-pages")
	theirs := gitT(t, site, "rev-parse", "HEAD")

	h := newHub(t)
	cfg := trendConfig(config.TrendPages)
	cfg.Epic = 0
	o := BaselineOptions{Target: Target{RepoDir: tg.checkout, Config: cfg, Sink: ToGitHub(client(t, h.s, &sleeps{}), testRepo), Repo: testRepo, BaseBranch: "main", Remote: "origin"}}
	h.s.Expect("GET", pullsPath, h.listPRs())
	h.s.Expect("POST", pullsPath, h.createPR())
	o.ResultsDir = layNight(t, commit, night{date: trendDate, llama: "35.41", noComparison: true})
	sum, err := PublishBaseline(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://lablup.github.io/mlxcel/docs/benchmark_results/trend/"
	head := gitT(t, tg.bare, "rev-parse", "refs/heads/gh-pages")
	if sum.Trend.URL != url || sum.Trend.Branch != "gh-pages" || sum.Trend.Commit != head || sum.Trend.Action != gitpub.ActionUpdated {
		t.Fatalf("trend outcome %+v (branch at %s)", sum.Trend, head)
	}
	if parent := gitT(t, tg.bare, "rev-parse", head+"^"); parent != theirs {
		t.Errorf("the Pages commit's parent is %s, want the maintainer's %s", parent, theirs)
	}
	if changed := gitT(t, tg.bare, "diff", "--name-only", theirs, head); changed != "docs/benchmark_results/trend/index.html" {
		t.Errorf("the Pages commit changed:\n%s", changed)
	}
	page := tg.file(t, head, "docs/benchmark_results/trend/index.html")
	if !strings.Contains(page, `href="https://github.com/lablup/mlxcel/blob/`+sum.Git.Commit+`/benchmarks/rocm_strixhalo-gfx1151_`+trendDate+`.csv#L`) {
		t.Errorf("the page's points do not link tonight's CSV in the baseline commit")
	}
	if committed := gitT(t, tg.bare, "diff", "--name-only", commit, sum.Git.Commit); strings.Contains(committed, "trend") {
		t.Errorf("the baseline commit holds a trend page:\n%s", committed)
	}
	linked := regexp.MustCompile(`the trend page, \[[^]]+\]\(` + regexp.QuoteMeta(url) + `\)`)
	if !linked.MatchString(tg.file(t, sum.Git.Commit, sum.Page)) {
		t.Error("the baseline page does not link the Pages URL")
	}
	if body, _ := h.pr["body"].(string); !linked.MatchString(body) {
		t.Errorf("the pull request body does not link the Pages URL:\n%s", body)
	}

	// The same night again changes nothing on the Pages branch (nor the pull request).
	h.s.Expect("GET", pullsPath, h.listPRs())
	again, err := PublishBaseline(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if again.Trend.Action != gitpub.ActionUnchanged || gitT(t, tg.bare, "rev-parse", "refs/heads/gh-pages") != head {
		t.Errorf("the same night again: %+v", again.Trend)
	}
}

// trend.publish: pages in a dry run: the page is written to the dry-run folder and
// the Pages branch is not created.
func TestTrendPageOnPagesDryRun(t *testing.T) {
	t.Parallel()
	tg, _, sum, out := dryTrend(t, config.TrendPages, func(o *BaselineOptions) { o.Repo = testRepo })
	if sum.Trend.Action != "dry-run" {
		t.Errorf("trend outcome %+v", sum.Trend)
	}
	if page := readFile(t, filepath.Join(out, DryTrendPage)); !strings.Contains(page, "<svg") {
		t.Error("the dry run's trend page has no chart")
	}
	if exec.Command("git", "-C", tg.bare, "rev-parse", "--verify", "--quiet", "refs/heads/gh-pages").Run() == nil {
		t.Error("a dry run created the Pages branch")
	}
}

// A hostile history folder in the measured commit: a symbolic link to a CSV outside it
// and a CSV over the size bound. The link is not followed (the trend page never shows
// its night), the oversized file is refused with a note, and the night is still
// published with the trend page of what could be read.
func TestTrendPageOfAHostileHistory(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	outside := t.TempDir()
	hist := historyFiles(t, trendDate)
	first := hist.Files[0].Name
	linked := benchcsv.Name{Backend: first.Backend, Host: first.Host, Date: "2026-09-01"}
	huge := benchcsv.Name{Backend: first.Backend, Host: first.Host, Date: "2026-09-02"}
	commit := historyCommit(t, tg, func(folder string) {
		body := benchcsv.Format(benchcsv.ROCmHeader, hist.Files[0].Rows)
		writeFile(t, filepath.Join(outside, linked.String()), string(body))
		if err := os.Symlink(filepath.Join(outside, linked.String()), filepath.Join(folder, linked.String())); err != nil {
			t.Fatal(err)
		}
		rows := body[bytes.IndexByte(body, '\n')+1:]
		big := bytes.Clone(body)
		for len(big) <= gitpub.DefaultMaxFileSize {
			big = append(big, rows...)
		}
		writeFile(t, filepath.Join(folder, huge.String()), string(big))
	})
	out := t.TempDir()
	sum, err := PublishBaseline(context.Background(), BaselineOptions{Target: Target{ResultsDir: layNight(t, commit, night{date: trendDate, llama: "35.41"}),
		RepoDir: tg.checkout, Config: trendConfig(config.TrendCommit), Sink: ToDir(out)}})
	if err != nil {
		t.Fatal(err)
	}
	noted := false
	for _, n := range sum.Notes {
		noted = noted || strings.Contains(n, "left out benchmarks/"+huge.String())
	}
	if !noted {
		t.Errorf("no note on the oversized history file: %q", sum.Notes)
	}
	md := tg.file(t, sum.Git.Commit, sum.Trend.Page)
	for _, n := range []benchcsv.Name{linked, huge} {
		if strings.Contains(md, n.String()) || strings.Contains(md, n.Date) {
			t.Errorf("the trend page shows %s", n)
		}
	}
	if !strings.Contains(md, "rocm_strixhalo-gfx1151_"+trendDate+".csv") {
		t.Errorf("the trend page lost tonight's night:\n%s", md)
	}
	// The twelve readable nights and tonight's: the refused file did not cost the rest.
	if !regexp.MustCompile(`\| ` + regexp.QuoteMeta(llama) + ` \| [^|]+ \| 13 \|`).MatchString(md) {
		t.Errorf("the trend page does not count Llama's 13 nights:\n%s", md)
	}
}

// The Pages address: a project site under the repository's name, a user or
// organisation site (OWNER.github.io, any case) at the root, none without the
// repository.
func TestPagesURL(t *testing.T) {
	for _, c := range []struct{ owner, name, dir, want string }{
		{"lablup", "mlxcel", "docs/trend", "https://lablup.github.io/mlxcel/docs/trend/"},
		{"Lablup", "mlxcel", "trend", "https://lablup.github.io/mlxcel/trend/"},
		{"Lablup", "lablup.GitHub.io", "trend", "https://lablup.github.io/trend/"},
		{"", "mlxcel", "trend", ""},
		{"lablup", "", "trend", ""},
	} {
		if got := pagesURL(c.owner, c.name, c.dir); got != c.want {
			t.Errorf("pagesURL(%q, %q, %q) = %q, want %q", c.owner, c.name, c.dir, got, c.want)
		}
	}
}
