package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/strs"
)

// writeGitHub writes what the local GitHub holds as files a person can read: every
// comment and pull request as Markdown, the check runs, and the pull request's diff.
// It returns the files written, by what they are.
func writeGitHub(ctx context.Context, home, out string, fake *fakegithub.Server, repo string, tg target, botBranch string) (map[string]string, error) {
	dir := filepath.Join(out, "github")
	paths := map[string]string{}
	for _, is := range fake.Issues(repo) {
		kind := "issue"
		if is.PR != nil {
			kind = "pull"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# %s #%d: %s\n\n", kind, is.Number, is.Title)
		if is.PR != nil {
			fmt.Fprintf(&b, "%s -> %s, opened by %s, labels: %s\n\n", is.PR.Head, is.PR.Base, is.User, strings.Join(is.Labels, ", "))
		}
		b.WriteString(is.Body)
		b.WriteString("\n")
		for _, c := range fake.Comments(is.Number) {
			fmt.Fprintf(&b, "\n---\n\n## comment %d by %s", c.ID, c.User)
			if len(c.Reactions) > 0 {
				fmt.Fprintf(&b, " (reactions: %s)", strings.Join(c.Reactions, ", "))
			}
			fmt.Fprintf(&b, "\n\n%s\n", c.Body)
		}
		p := filepath.Join(dir, fmt.Sprintf("%s-%d.md", kind, is.Number))
		if err := writeFile(p, []byte(b.String())); err != nil {
			return nil, err
		}
		paths[fmt.Sprintf("%s #%d", kind, is.Number)] = p
		if is.PR != nil && is.PR.Head == botBranch {
			// What merging the pull request would change, as GitHub shows it: the
			// three-dot diff against main, not the bot commit alone.
			diff, err := runGit(ctx, home, tg.bare, "diff", "--stat", "--patch", "main..."+botBranch)
			if err != nil {
				return nil, err
			}
			dp := filepath.Join(dir, fmt.Sprintf("pull-%d.diff", is.Number))
			if err := writeFile(dp, []byte(diff+"\n")); err != nil {
				return nil, err
			}
			paths["the pull request's diff"] = dp
		}
	}
	var b strings.Builder
	for _, cr := range fake.CheckRuns() {
		fmt.Fprintf(&b, "# check run %d: %s on %s\n\n%s / %s: %s\n\n%s\n\n%s\n\n", cr.ID, cr.Name, strs.ShortSHA(cr.HeadSHA), cr.Status, cr.Conclusion, cr.Title, cr.Summary, cr.Text)
	}
	p := filepath.Join(dir, "check-runs.md")
	if err := writeFile(p, []byte(b.String())); err != nil {
		return nil, err
	}
	paths["check runs"] = p
	if err := os.WriteFile(filepath.Join(dir, "api-writes.log"), []byte(strings.Join(fake.Log(), "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	paths["every API write"] = filepath.Join(dir, "api-writes.log")
	return paths, nil
}
