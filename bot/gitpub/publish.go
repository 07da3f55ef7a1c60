package gitpub

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Identity is the bot identity commits are made with (author and committer).
type Identity struct{ Name, Email string }

// Change is one publication: the files to lay on top of a pinned base commit, as a
// single commit on the bot branch.
type Change struct {
	Base    string            // pinned base commit SHA (full 40 hex) the branch is built from
	Branch  string            // bot branch, e.g. perfbot/rocm-profile-pr-1900 (BranchName); never the default branch
	Files   map[string][]byte // repo-relative path -> content, written byte for byte
	Remove  []string          // repo-relative files or directories to delete, applied before Files
	Message string            // commit message (subject + body) saying what was measured
	Author  Identity
	Date    time.Time // author and committer date: the same change gives the same commit
}

// Result says what Publish did.
type Result struct {
	Commit   string // the commit the bot branch holds (or should hold, after a failed push)
	Tree     string // its tree
	Previous string // what the remote branch held when we last looked ("" when absent)
	LocalRef string // local ref keeping Commit reachable, e.g. refs/perfbot/perfbot/rocm-profile
	Pushed   bool
	Action   string // ActionCreated, ActionUpdated or ActionUnchanged
	Retries  int    // pushes lost to a concurrent pusher and retried
}

// Actions reported in Result.Action.
const (
	ActionCreated   = "created"
	ActionUpdated   = "updated"
	ActionUnchanged = "unchanged"
)

// maxRetries bounds the re-looks after losing a push race; past it the error says so.
const maxRetries = 3

// localRefPrefix holds the bot's commits in the local repository, outside refs/heads so
// no checkout is ever moved, and outside refs/remotes so a fetch never prunes them.
const localRefPrefix = "refs/perfbot/"

// fetchedRefPrefix mirrors the remote's branches when a server refuses to send a commit
// by SHA; kept apart from the remote-tracking refs a checkout's user relies on.
const fetchedRefPrefix = "refs/perfbot-fetched/"

// Publisher publishes changes from a local repository to one remote.
type Publisher struct {
	Dir           string   // a local clone, bare or not (or created with Clone); its checkout is never touched
	Remote        string   // remote name or URL; "" means "origin"
	DefaultBranch string   // the remote's default branch; "" asks the remote
	Token         string   // optional token for https remotes, sent as an HTTP header through the environment only
	Branches      []string // the bot branches the configuration names; Publish and DeleteBranch refuse any other than these and the per-request branches under them (BranchName)
	MaxFileSize   int64    // bound of one committed file in bytes; 0 means DefaultMaxFileSize

	// beforePush runs before every push attempt (a test seam to inject a race).
	beforePush func(attempt int)
	// trace sees every git argv (a test seam to check no secret reaches argv).
	trace func(argv []string)
}

// CloneOptions configures Clone.
type CloneOptions struct {
	Token         string   // optional token for an https URL; never stored in the clone
	Branches      []string // the configured bot branches (see Publisher.Branches)
	DefaultBranch string   // "" takes the remote's HEAD
	MaxFileSize   int64    // see Publisher.MaxFileSize
	// Filter makes a partial clone, e.g. "blob:none": publishing needs the base's trees,
	// not its file contents, so a large repository clones quickly.
	Filter string

	trace func(argv []string)
}

// Clone makes a bare clone of url in dir (which must not exist or be empty) to publish
// from, and returns a Publisher for it with Remote "origin".
func Clone(ctx context.Context, url, dir string, o CloneOptions) (*Publisher, error) {
	if err := checkURL(url); err != nil {
		return nil, fmt.Errorf("cloning: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cloning: resolving %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("cloning: making the parent of %s: %w", abs, err)
	}
	g := &gitRunner{dir: filepath.Dir(abs), token: o.Token, trace: o.trace}
	if isHTTP(url) {
		g.authURLs = []string{url}
	}
	args := []string{"clone", "--bare", "--no-tags", "--quiet"}
	if o.Filter != "" {
		args = append(args, "--filter="+o.Filter)
	}
	args = append(args, "--", url, abs)
	if _, err := g.run(ctx, gitOpts{}, args...); err != nil {
		return nil, fmt.Errorf("cloning the repository into %s: %w", abs, err)
	}
	p := &Publisher{
		Dir: abs, Remote: "origin", DefaultBranch: o.DefaultBranch, Token: o.Token,
		Branches: o.Branches, MaxFileSize: o.MaxFileSize, trace: o.trace,
	}
	if p.DefaultBranch == "" {
		g.dir = abs
		head, err := g.run(ctx, gitOpts{}, "symbolic-ref", "--quiet", "HEAD")
		if err != nil || !strings.HasPrefix(head, "refs/heads/") {
			return nil, errors.New("cloning: the remote names no default branch (HEAD): set CloneOptions.DefaultBranch")
		}
		p.DefaultBranch = strings.TrimPrefix(head, "refs/heads/")
	}
	return p, nil
}

// publication is one Publish call's view of the repository and remote.
type publication struct {
	g      *gitRunner
	remote string
}

func (p *Publisher) open(ctx context.Context) (*publication, error) {
	if p.Dir == "" {
		return nil, errors.New("no repository directory is set: clone one first (gitpub.Clone)")
	}
	remote := p.Remote
	if remote == "" {
		remote = "origin"
	}
	g := &gitRunner{dir: p.Dir, token: p.Token, trace: p.trace}
	if _, err := g.run(ctx, gitOpts{}, "rev-parse", "--git-dir"); err != nil {
		return nil, fmt.Errorf("opening %s: not a git repository, clone it first (gitpub.Clone): %w", p.Dir, err)
	}
	// The token is scoped to the URLs git will talk to for this remote. A remote that
	// is not configured by name is taken as a URL, as git itself does.
	var urls []string
	for _, args := range [][]string{{"remote", "get-url", remote}, {"remote", "get-url", "--push", remote}} {
		u, err := g.run(ctx, gitOpts{}, args...)
		if err != nil {
			if !strings.ContainsAny(remote, ":/") {
				return nil, fmt.Errorf("opening %s: it has no remote named %q: add it or give the remote's URL: %w", p.Dir, remote, err)
			}
			u = remote
		}
		urls = append(urls, u)
	}
	for _, u := range urls {
		if err := checkURL(u); err != nil {
			return nil, fmt.Errorf("opening %s: remote %q: %w", p.Dir, remote, err)
		}
		if isHTTP(u) && (len(g.authURLs) == 0 || g.authURLs[0] != u) {
			g.authURLs = append(g.authURLs, u)
		}
	}
	return &publication{g: g, remote: remote}, nil
}

// Publish makes the bot branch on the remote hold exactly one commit on top of c.Base
// with c's files, and reports whether it was created, updated or already so. Nothing
// is written when the change is refused; when the push fails the commit stays reachable
// at Result.LocalRef and Result.Commit names it, so a rerun can push it.
func (p *Publisher) Publish(ctx context.Context, c Change) (Result, error) {
	s, err := p.open(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("publishing: %w", err)
	}
	def := p.DefaultBranch
	if def == "" {
		if def, err = s.remoteDefault(ctx); err != nil {
			return Result{}, fmt.Errorf("publishing: %w", err)
		}
	}
	maxSize := p.MaxFileSize
	if maxSize <= 0 {
		maxSize = DefaultMaxFileSize
	}
	if err := validateChange(c, p.Branches, def, maxSize); err != nil {
		return Result{}, err
	}

	if err := s.ensureCommit(ctx, c.Base); err != nil {
		return Result{}, fmt.Errorf("publishing %s: %w", c.Branch, err)
	}
	tree, err := s.buildTree(ctx, c)
	if err != nil {
		return Result{}, fmt.Errorf("publishing %s: %w", c.Branch, err)
	}
	commit, err := s.commit(ctx, c, tree)
	if err != nil {
		return Result{}, fmt.Errorf("publishing %s: %w", c.Branch, err)
	}
	res := Result{Commit: commit, Tree: tree, LocalRef: localRefPrefix + c.Branch}
	if _, err := s.g.run(ctx, gitOpts{}, "update-ref", "-m", "perfbot publish", res.LocalRef, commit); err != nil {
		return res, fmt.Errorf("publishing %s: keeping commit %s at %s: %w", c.Branch, commit, res.LocalRef, err)
	}

	// The commit depends only on the change and its base, so after a lost race there is
	// nothing to rebuild but our view of the remote: look again and retry the lease.
	for attempt := 0; ; attempt++ {
		remoteSHA, err := s.remoteBranch(ctx, c.Branch)
		if err != nil {
			return res, fmt.Errorf("publishing %s (commit %s kept at %s): %w", c.Branch, commit, res.LocalRef, err)
		}
		res.Previous = remoteSHA
		if remoteSHA != "" {
			same, err := s.sameContent(ctx, c.Branch, remoteSHA, commit, tree, c.Base)
			if err != nil {
				return res, fmt.Errorf("publishing %s (commit %s kept at %s): %w", c.Branch, commit, res.LocalRef, err)
			}
			if same {
				// The branch already holds this content, perhaps under an earlier date:
				// keep that commit, which is what the pull request shows.
				if remoteSHA != commit {
					if _, err := s.g.run(ctx, gitOpts{}, "update-ref", "-m", "perfbot publish", res.LocalRef, remoteSHA); err != nil {
						return res, fmt.Errorf("publishing %s: keeping commit %s at %s: %w", c.Branch, remoteSHA, res.LocalRef, err)
					}
				}
				res.Commit, res.Action = remoteSHA, ActionUnchanged
				return res, nil
			}
		}
		if p.beforePush != nil {
			p.beforePush(attempt)
		}
		outcome, err := s.push(ctx, c.Branch, commit, remoteSHA)
		switch {
		case err == nil && outcome == pushUpToDate:
			res.Action = ActionUnchanged
			return res, nil
		case err == nil:
			res.Pushed = true
			res.Action = ActionCreated
			if remoteSHA != "" {
				res.Action = ActionUpdated
			}
			return res, nil
		case outcome == pushRace && attempt < maxRetries:
			res.Retries++
			continue
		case outcome == pushRace:
			return res, &PushError{Branch: c.Branch, Commit: commit, LocalRef: res.LocalRef,
				Reason: fmt.Sprintf("the remote branch moved under us on each of %d attempts (someone else keeps pushing to it); stop the other pusher and rerun", attempt+1),
				err:    err}
		default:
			return res, &PushError{Branch: c.Branch, Commit: commit, LocalRef: res.LocalRef, err: err}
		}
	}
}

// PushError is a push that did not land. The commit is kept at LocalRef, so rerunning
// the same publication (or `git push <remote> <LocalRef>:refs/heads/<Branch>`) pushes it.
type PushError struct {
	Branch   string
	Commit   string
	LocalRef string
	Reason   string
	err      error
}

func (e *PushError) Error() string {
	s := fmt.Sprintf("pushing commit %s to branch %s", e.Commit, e.Branch)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	return s + fmt.Sprintf(" (the commit is kept at %s in the local repository: rerun to push it)", e.LocalRef)
}

func (e *PushError) Unwrap() error { return e.err }

// remoteDefault asks the remote which branch HEAD names.
func (s *publication) remoteDefault(ctx context.Context) (string, error) {
	out, err := s.g.run(ctx, gitOpts{}, "ls-remote", "--symref", s.remote, "HEAD")
	if err != nil {
		return "", fmt.Errorf("asking %s for its default branch: %w", s.remote, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if ref, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			name, _, _ := strings.Cut(ref, "\t")
			return name, nil
		}
	}
	return "", fmt.Errorf("asking %s for its default branch: it names none: set Publisher.DefaultBranch", s.remote)
}

// ensureCommit makes sure sha is a commit in the local repository, fetching it when
// missing: by SHA first (GitHub and protocol v2 serve reachable SHAs), then with the
// remote's branches for servers that refuse SHA wants.
func (s *publication) ensureCommit(ctx context.Context, sha string) error {
	if s.hasCommit(ctx, sha) {
		return nil
	}
	_, errSHA := s.g.run(ctx, gitOpts{}, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", s.remote, sha)
	if s.hasCommit(ctx, sha) {
		return nil
	}
	_, errHeads := s.g.run(ctx, gitOpts{}, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--prune", s.remote, "+refs/heads/*:"+fetchedRefPrefix+"*")
	if s.hasCommit(ctx, sha) {
		return nil
	}
	err := errHeads
	if err == nil {
		err = errSHA
	}
	if err != nil {
		return fmt.Errorf("fetching base commit %s from %s: it is not on the remote (push it, or pin a commit that is): %w", sha, s.remote, err)
	}
	return fmt.Errorf("fetching base commit %s from %s: it is not on the remote: push it, or pin a commit that is", sha, s.remote)
}

func (s *publication) hasCommit(ctx context.Context, sha string) bool {
	t, err := s.g.run(ctx, gitOpts{}, "cat-file", "-t", sha)
	return err == nil && t == "commit"
}

// buildTree lays the change on the base tree in a private index and writes the tree.
// Neither the repository's own index nor any checkout is touched.
func (s *publication) buildTree(ctx context.Context, c Change) (string, error) {
	tmp, err := os.MkdirTemp("", "gitpub-index-")
	if err != nil {
		return "", fmt.Errorf("making a temporary index: %w", err)
	}
	defer os.RemoveAll(tmp)
	idx := gitOpts{env: []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}}

	if _, err := s.g.run(ctx, idx, "read-tree", c.Base+"^{tree}"); err != nil {
		return "", fmt.Errorf("reading the base tree of %s: %w", c.Base, err)
	}
	out, err := s.g.run(ctx, idx, "ls-files", "--stage", "-z")
	if err != nil {
		return "", fmt.Errorf("listing the base tree of %s: %w", c.Base, err)
	}
	base := map[string]string{} // path -> mode
	for _, rec := range strings.Split(out, "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		mode, _, _ := strings.Cut(meta, " ")
		base[p] = mode
	}

	var lines []string
	removed := map[string]bool{}
	for _, r := range c.Remove {
		for p := range base {
			if p == r || strings.HasPrefix(p, r+"/") {
				removed[p] = true
			}
		}
	}
	rm := make([]string, 0, len(removed))
	for p := range removed {
		rm = append(rm, p)
	}
	sort.Strings(rm)
	for _, p := range rm {
		lines = append(lines, "0 0000000000000000000000000000000000000000\t"+p)
	}

	paths := make([]string, 0, len(c.Files))
	for p := range c.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if err := checkShape(paths, base, removed); err != nil {
		return "", err
	}
	blobs, err := s.hashBlobs(ctx, tmp, paths, c.Files)
	if err != nil {
		return "", err
	}
	for i, p := range paths {
		mode := "100644"
		// Keep an executable bit the base had (a patched script stays runnable); a
		// symlink or submodule entry is replaced by a regular file.
		if base[p] == "100755" && !removed[p] {
			mode = "100755"
		}
		lines = append(lines, mode+" "+blobs[i]+"\t"+p)
	}
	in := strings.Join(lines, "\x00") + "\x00"
	if _, err := s.g.run(ctx, gitOpts{env: idx.env, stdin: strings.NewReader(in)}, "update-index", "-z", "--index-info"); err != nil {
		return "", fmt.Errorf("updating the temporary index: %w", err)
	}
	tree, err := s.g.run(ctx, idx, "write-tree")
	if err != nil {
		return "", fmt.Errorf("writing the tree: %w", err)
	}
	baseTree, err := s.g.run(ctx, gitOpts{}, "rev-parse", c.Base+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("reading the base tree of %s: %w", c.Base, err)
	}
	if tree == baseTree {
		return "", fmt.Errorf("%w: base %s already holds exactly these files", ErrNoChange, c.Base)
	}
	return tree, nil
}

// checkShape refuses files that would collide with the base tree's shape: a file where
// the base has a directory, or inside what the base has as a file.
func checkShape(paths []string, base map[string]string, removed map[string]bool) error {
	var bad []string
	dirs := map[string]bool{}
	for p := range base {
		if removed[p] {
			continue
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, p := range paths {
		if dirs[p] {
			bad = append(bad, fmt.Sprintf("%s is a directory in the base commit: remove it first (Change.Remove) or pick another path", p))
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, isFile := base[d]; isFile && !removed[d] {
				bad = append(bad, fmt.Sprintf("%s: %s is a file in the base commit: remove it first (Change.Remove) or pick another path", p, d))
			}
		}
	}
	if len(bad) > 0 {
		return &RefusedError{Reasons: bad}
	}
	return nil
}

// hashBlobs writes the file contents as blobs, byte for byte (no line-end or attribute
// filters), with one git process for all files.
func (s *publication) hashBlobs(ctx context.Context, tmp string, paths []string, files map[string][]byte) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	dir := filepath.Join(tmp, "blobs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("staging file contents: %w", err)
	}
	var list strings.Builder
	for i, p := range paths {
		f := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(f, files[p], 0o600); err != nil {
			return nil, fmt.Errorf("staging %s: %w", p, err)
		}
		list.WriteString(f + "\n")
	}
	out, err := s.g.run(ctx, gitOpts{stdin: strings.NewReader(list.String())}, "hash-object", "-w", "--no-filters", "--stdin-paths")
	if err != nil {
		return nil, fmt.Errorf("writing file contents: %w", err)
	}
	shas := strings.Fields(out)
	if len(shas) != len(paths) {
		return nil, fmt.Errorf("writing file contents: git gave %d object ids for %d files", len(shas), len(paths))
	}
	return shas, nil
}

// commit writes the commit object. Author and committer are the bot at c.Date, so the
// same change on the same base always gives the same commit id.
func (s *publication) commit(ctx context.Context, c Change, tree string) (string, error) {
	date := gitDate(c.Date)
	env := []string{
		"GIT_AUTHOR_NAME=" + c.Author.Name, "GIT_AUTHOR_EMAIL=" + c.Author.Email, "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=" + c.Author.Name, "GIT_COMMITTER_EMAIL=" + c.Author.Email, "GIT_COMMITTER_DATE=" + date,
	}
	msg := strings.TrimRight(c.Message, " \t\r\n") + "\n"
	sha, err := s.g.run(ctx, gitOpts{env: env, stdin: strings.NewReader(msg)}, "commit-tree", "--no-gpg-sign", tree, "-p", c.Base)
	if err != nil {
		return "", fmt.Errorf("writing the commit: %w", err)
	}
	return sha, nil
}

// gitDate is git's internal date format, keeping the zone offset of t.
func gitDate(t time.Time) string {
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%d %c%02d%02d", t.Unix(), sign, off/3600, off%3600/60)
}

// remoteBranch returns the SHA the remote branch points at, or "" when it is absent.
func (s *publication) remoteBranch(ctx context.Context, branch string) (string, error) {
	ref := "refs/heads/" + branch
	out, err := s.g.run(ctx, gitOpts{maxOut: 1 << 20}, "ls-remote", s.remote, ref)
	if err != nil {
		return "", fmt.Errorf("looking up %s on %s: %w", ref, s.remote, err)
	}
	for _, line := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(line, "\t")
		if ok && name == ref {
			return sha, nil
		}
	}
	return "", nil
}

// sameContent reports whether the remote branch already holds what we would push: our
// very commit, or any commit with our tree whose only parent is the same base.
func (s *publication) sameContent(ctx context.Context, branch, remoteSHA, commit, tree, base string) (bool, error) {
	if remoteSHA == commit {
		return true, nil
	}
	if !s.hasCommit(ctx, remoteSHA) {
		// Fetched only to compare; when the branch moved meanwhile the lease catches it.
		_, err := s.g.run(ctx, gitOpts{}, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", s.remote, "refs/heads/"+branch)
		if !s.hasCommit(ctx, remoteSHA) {
			if err != nil {
				return false, fmt.Errorf("fetching the remote branch %s: %w", branch, err)
			}
			return false, nil
		}
	}
	raw, err := s.g.run(ctx, gitOpts{}, "cat-file", "commit", remoteSHA)
	if err != nil {
		return false, fmt.Errorf("reading the remote branch's commit %s: %w", remoteSHA, err)
	}
	var gotTree string
	var parents []string
	sc := bufio.NewScanner(strings.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "tree "); ok {
			gotTree = v
		} else if v, ok := strings.CutPrefix(line, "parent "); ok {
			parents = append(parents, v)
		}
	}
	return gotTree == tree && len(parents) == 1 && parents[0] == base, nil
}

type pushOutcome int

const (
	pushFailed pushOutcome = iota
	pushDone
	pushUpToDate
	pushRace
)

// push force-pushes commit to the branch with a lease on what we saw there, so a
// concurrent pusher's commit is never overwritten unseen.
func (s *publication) push(ctx context.Context, branch, commit, expect string) (pushOutcome, error) {
	ref := "refs/heads/" + branch
	args := []string{"push", "--porcelain", "--no-verify",
		"--force-with-lease=" + ref + ":" + expect, s.remote, commit + ":" + ref}
	stdout, stderr, err := s.g.exec(ctx, gitOpts{}, args...)
	status, summary := pushStatus(stdout, ref)
	switch {
	case err == nil && status == "=":
		return pushUpToDate, nil
	case err == nil:
		return pushDone, nil
	case ctx.Err() != nil:
		return pushFailed, s.g.wrap(args, err, stderr)
	case status == "!" && isRace(summary):
		return pushRace, fmt.Errorf("push rejected: %s", summary)
	case status == "!":
		return pushFailed, s.g.wrap(args, fmt.Errorf("rejected %s", summary), stderr)
	default:
		return pushFailed, s.g.wrap(args, err, stderr)
	}
}

// pushStatus finds ref's line in `git push --porcelain` output: flag TAB from:to TAB
// summary.
func pushStatus(out, ref string) (flag, summary string) {
	for _, line := range strings.Split(out, "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) == 3 && strings.HasSuffix(parts[1], ":"+ref) {
			return parts[0], parts[2]
		}
	}
	return "", ""
}

// isRace tells a lost lease (the branch moved between our look and our push, seen by
// the client or by the server's locked compare) from a rejection that would repeat.
func isRace(summary string) bool {
	for _, s := range []string{"stale info", "fetch first", "cannot lock ref", "failed to update ref", "incorrect old value"} {
		if strings.Contains(summary, s) {
			return true
		}
	}
	return false
}
