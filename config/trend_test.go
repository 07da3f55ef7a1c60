package config

import (
	"strings"
	"testing"
)

// The trend block: each mode parses, and a bad value is refused with the file's line
// and the key.
func TestTrendKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in string
		want     Trend
	}{
		{"defaults", base, Trend{Publish: TrendCommit, Path: "docs/benchmark_results/trend", PagesBranch: "gh-pages"}},
		{"pages", base + "trend:\n  publish: pages\n  path: nightly\n  pages_branch: site\n", Trend{Publish: TrendPages, Path: "nightly", PagesBranch: "site"}},
		{"off", base + "trend: {publish: off}\n", Trend{Publish: TrendOff, Path: "docs/benchmark_results/trend", PagesBranch: "gh-pages"}},
		// The Pages branch is only checked when the page goes there.
		{"commit ignores the pages branch", base + "trend: {publish: commit, pages_branch: main}\n", Trend{Publish: TrendCommit, Path: "docs/benchmark_results/trend", PagesBranch: "main"}},
	} {
		got, err := Parse([]byte(c.in), name)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Trend != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got.Trend, c.want)
		}
	}
	for _, c := range []struct{ name, in, want string }{
		{"unknown mode", base + "trend:\n  publish: wiki\n", name + `:8: trend.publish: unknown mode "wiki"; use one of commit, pages, off`},
		{"empty mode", base + "trend: {publish: \"\"}\n", name + `:7: trend.publish: unknown mode ""`},
		{"mode not text", base + "trend: {publish: [pages]}\n", name + ":7: trend.publish: want text, not a list"},
		{"unknown key", base + "trend: {branch: gh-pages}\n", name + ":7: trend.branch: unknown key; the keys of trend are publish, path, pages_branch"},
		{"absolute path", base + "trend: {path: /srv/www}\n", name + `:7: trend.path: "/srv/www" is absolute`},
		{"path leaves the repo", base + "trend: {path: docs/../../x}\n", name + `:7: trend.path: "docs/../../x" leaves the repository`},
		{"unclean path", base + "trend: {path: docs//trend/}\n", name + `:7: trend.path: "docs//trend/" is not a clean folder path`},
		{"dot folder", base + "trend: {path: .github/trend}\n", name + `:7: trend.path: ".github/trend" has a part starting with .`},
		{"the reports folder", base + "trend: {path: docs/benchmark_results}\n", name + `:7: trend.path: "docs/benchmark_results" overlaps results.reports`},
		{"above the results", base + "trend: {path: benchmarks}\n", name + `:7: trend.path: "benchmarks" overlaps results.profiles`},
		{"inside the CSVs", base + "trend: {path: benchmarks/trend}\n", name + `:7: trend.path: "benchmarks/trend" overlaps results.benchmarks`},
		{"too long", base + "trend: {path: " + strings.Repeat("a/", 150) + "b}\n", name + ":7: trend.path: is 301 bytes long"},
		{"pages on main", base + "trend: {publish: pages, pages_branch: main}\n", name + `:7: trend.pages_branch: "main" is a default branch name`},
		{"pages on the baseline branch", base + "trend: {publish: pages, pages_branch: perfbot/rocm-baseline}\n", name + ":7: trend.pages_branch: is the same branch as branches.baseline"},
		{"pages on a request branch", base + "trend: {publish: pages, pages_branch: perfbot/rocm-profile-pr-3}\n", name + `:7: trend.pages_branch: "perfbot/rocm-profile-pr-3" is taken by branches.profile`},
		{"pages branch not a ref", base + "trend: {publish: pages, pages_branch: \"gh pages\"}\n", name + `:7: trend.pages_branch: "gh pages" is not a valid branch name`},
	} {
		_, err := Parse([]byte(c.in), name)
		if err == nil || !hasLinePrefix(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant a line starting %q", c.name, err, c.want)
		}
	}
}

func hasLinePrefix(s, prefix string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
