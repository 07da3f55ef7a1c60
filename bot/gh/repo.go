package gh

import (
	"fmt"
	"strings"
)

// Repo names a repository on GitHub.
type Repo struct{ Owner, Name string }

// String returns "owner/name".
func (r Repo) String() string { return r.Owner + "/" + r.Name }

// ParseRepo parses "owner/name" strictly: one slash, an owner that GitHub would accept as
// a user or organisation login, and a repository name of letters, digits, '.', '-', '_'.
// Anything else is refused rather than guessed, because the parts end up in API paths.
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(name, "/") {
		return Repo{}, fmt.Errorf("repository %q: want owner/name, for example lablup/mlxcel", s)
	}
	r := Repo{Owner: owner, Name: name}
	if err := r.validate(); err != nil {
		return Repo{}, err
	}
	return r, nil
}

func (r Repo) validate() error {
	if !validLogin(r.Owner) {
		return fmt.Errorf("repository %q: owner %q is not a valid GitHub login (letters, digits and single inner hyphens, at most 39)", r.String(), r.Owner)
	}
	if !validRepoName(r.Name) {
		return fmt.Errorf("repository %q: name %q is not a valid repository name (letters, digits, '.', '-', '_', at most 100, not ending in .git)", r.String(), r.Name)
	}
	return nil
}

// validLogin follows GitHub's sign-up rule: 1-39 of [A-Za-z0-9-], no leading or trailing
// hyphen. Old accounts may hold double hyphens, so those are accepted.
func validLogin(s string) bool {
	if s == "" || len(s) > 39 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// validUser accepts a login, or an App bot account ("name[bot]"), which is how bots
// appear as comment authors.
func validUser(s string) bool {
	return validLogin(strings.TrimSuffix(s, "[bot]"))
}

func validRepoName(s string) bool {
	if s == "" || len(s) > 100 || s == "." || s == ".." || strings.HasSuffix(strings.ToLower(s), ".git") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// validBranch is a conservative subset of git check-ref-format for branch names.
func validBranch(s string) bool {
	if s == "" || len(s) > 255 || s[0] == '/' || s[0] == '-' || s[len(s)-1] == '/' || s[len(s)-1] == '.' ||
		strings.Contains(s, "..") || strings.Contains(s, "//") || strings.Contains(s, "@{") ||
		strings.HasSuffix(s, ".lock") || strings.ContainsAny(s, " ~^:?*[\\") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
