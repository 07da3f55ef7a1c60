package gitpub

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// DefaultMaxFileSize is the size bound of one committed file when Publisher.MaxFileSize
// is not set. The results folder holds small CSVs, JSON and logs; anything near this
// size is almost certainly a trace.
const DefaultMaxFileSize = 10 << 20

// ErrRefused marks a change that was refused before anything was written: a protected
// or unconfigured branch, a bad path, a trace or an oversized file. Callers map it to a
// user error rather than a failure of the machinery.
var ErrRefused = errors.New("publish refused")

// ErrNoChange reports that the files are already exactly what the base commit holds,
// so there is nothing to propose on the bot branch.
var ErrNoChange = errors.New("nothing to publish")

// RefusedError lists every reason a change was refused, so one run shows them all.
type RefusedError struct {
	Reasons []string
}

func (e *RefusedError) Error() string {
	if len(e.Reasons) == 1 {
		return "publish refused: " + e.Reasons[0]
	}
	return "publish refused:\n  - " + strings.Join(e.Reasons, "\n  - ")
}

// Is makes errors.Is(err, ErrRefused) true for every refusal.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// alwaysProtected are refused even when the remote's default branch is something else:
// a misconfigured default must not let the bot overwrite them.
var alwaysProtected = []string{"main", "master"}

// validateChange checks everything that can be checked without git. It runs before any
// object or ref is written, so a refusal leaves the repository and the remote untouched.
func validateChange(c Change, allowed []string, defaultBranch string, maxSize int64) error {
	var bad []string
	add := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }

	if !fullSHA.MatchString(c.Base) {
		add("base %q is not a full 40-hex commit SHA: pin the base commit when the command is accepted", c.Base)
	}
	if err := checkBranch(c.Branch, allowed, defaultBranch); err != nil {
		add("%v", err)
	}
	if strings.TrimSpace(c.Message) == "" {
		add("the commit message is empty: say what was measured")
	}
	if err := checkIdentity(c.Author); err != nil {
		add("%v", err)
	}
	if c.Date.IsZero() {
		add("the commit date is not set: pass the run's finish time so reruns give the same commit")
	}
	if len(c.Files) == 0 && len(c.Remove) == 0 {
		add("the change has no files to write or remove")
	}

	paths := make([]string, 0, len(c.Files))
	for p := range c.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	valid := paths[:0:0]
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			add("%v", err)
			continue
		}
		valid = append(valid, p)
		if isTrace(p) {
			add("%s is a profiler trace: traces are not committed, upload them as workflow artifacts", p)
			continue
		}
		if n := int64(len(c.Files[p])); n > maxSize {
			add("%s is %s, over the %s bound for committed files: traces and other large outputs go to the workflow artifacts", p, size(n, false), size(maxSize, true))
		}
	}
	// A file and a directory cannot share a path within one change.
	for _, p := range valid {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := c.Files[dir]; ok {
				add("%s is written both as a file and as the directory holding %s", dir, p)
			}
		}
	}
	for _, p := range c.Remove {
		if err := checkPath(p); err != nil {
			add("remove: %v", err)
			continue
		}
		if _, ok := c.Files[p]; ok {
			add("%s is both written and removed: keep it in one list", p)
		}
	}
	if len(bad) > 0 {
		return &RefusedError{Reasons: bad}
	}
	return nil
}

// checkPath accepts only clean, relative, slash-separated paths outside .git, the only
// kind that maps to exactly one tree entry.
func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("an empty path was given: use repo-relative paths like docs/report.md")
	case strings.ContainsAny(p, "\x00\\") || strings.ContainsFunc(p, isControl):
		return fmt.Errorf("path %q has a NUL, backslash or control character: use plain slash-separated paths", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute: use a path relative to the repository root", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("path %q leaves the repository: use a path inside it", p)
		}
		if strings.EqualFold(part, ".git") {
			return fmt.Errorf("path %q is inside .git: only tracked files can be published", p)
		}
	}
	if path.Clean(p) != p || p == "." {
		return fmt.Errorf("path %q is not clean (a . component, // or a trailing slash): write it as %q", p, path.Clean(p))
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// isTrace spots profiler traces by their rocprofv3 names: every trace domain ends in
// _trace.csv, and the rocpd database holds the same records.
func isTrace(p string) bool {
	base := strings.ToLower(path.Base(p))
	return strings.HasSuffix(base, "_trace.csv") || strings.HasSuffix(base, "_results.db")
}

// checkBranch refuses the default branch and anything the configuration did not name
// (a configured branch, or the branch of a request under one: see BranchName), plus
// names git itself would refuse.
func checkBranch(b string, allowed []string, defaultBranch string) error {
	if err := checkRefName(b); err != nil {
		return err
	}
	for _, p := range alwaysProtected {
		if b == p {
			return fmt.Errorf("branch %q is a default branch name: the bot publishes only to its own branch (e.g. perfbot/rocm-profile)", b)
		}
	}
	if defaultBranch != "" && b == defaultBranch {
		return fmt.Errorf("branch %q is the repository's default branch: the bot publishes only to its own branch", b)
	}
	if len(allowed) == 0 {
		return fmt.Errorf("no bot branches are configured: name the bot branch in the configuration before publishing to %q", b)
	}
	// A configured branch, or the branch of a trigger under one (BranchName).
	if isBotBranch(b, allowed) {
		return nil
	}
	return fmt.Errorf("branch %q is not one of the configured bot branches (%s) nor the branch of a request under one (%s): add it to the configuration or use one of them", b, strings.Join(allowed, ", "), describeBotBranches(allowed))
}

// checkRefName applies git's rules for a branch name (git check-ref-format) so a bad
// name is refused before git is asked to do anything.
func checkRefName(b string) error {
	bad := func(why string) error {
		return fmt.Errorf("branch name %q is not valid (%s): use a name like perfbot/rocm-profile", b, why)
	}
	switch {
	case b == "":
		return errors.New("no branch was given: name the bot branch, e.g. perfbot/rocm-profile")
	case strings.HasPrefix(b, "refs/"):
		return bad("give the branch name without refs/heads/")
	case b == "HEAD" || b == "@":
		return bad("reserved name")
	case strings.ContainsFunc(b, func(r rune) bool { return isControl(r) || strings.ContainsRune(" ~^:?*[\\", r) }):
		return bad("space, control character or one of ~^:?*[\\")
	case strings.Contains(b, "..") || strings.Contains(b, "@{") || strings.Contains(b, "//"):
		return bad(`contains "..", "@{" or "//"`)
	case strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") || strings.HasSuffix(b, "."):
		return bad("starts or ends with a slash, or ends with a dot")
	case strings.HasPrefix(b, "-"):
		return bad("starts with a dash")
	}
	for _, part := range strings.Split(b, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return bad("a component starts with a dot or ends with .lock")
		}
	}
	return nil
}

// checkIdentity keeps the commit header well formed: git would silently strip <, > and
// newlines, giving a commit that does not name the configured bot.
func checkIdentity(id Identity) error {
	if strings.TrimSpace(id.Name) == "" || strings.TrimSpace(id.Email) == "" {
		return errors.New("the commit identity needs a name and an email: set the bot identity, e.g. perfbot[bot]")
	}
	if strings.ContainsAny(id.Name+id.Email, "<>\n\r\x00") {
		return fmt.Errorf("the commit identity %q <%s> contains <, > or a line break: use a plain name and email", id.Name, id.Email)
	}
	return nil
}

// size prints a byte count for people; exact below a MiB, where a bound is usually set
// by hand. adj gives the adjective form ("10-byte bound").
func size(n int64, adj bool) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	if adj {
		return fmt.Sprintf("%d-byte", n)
	}
	return fmt.Sprintf("%d bytes", n)
}
