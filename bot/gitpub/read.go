package gitpub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// Fetch makes sure commit (a full SHA) is in the local repository, fetching it from
// the remote when missing, as Publish does with its base.
func (p *Publisher) Fetch(ctx context.Context, commit string) error {
	if !fullSHA.MatchString(commit) {
		return fmt.Errorf("fetching %q: want a full commit SHA (40 hex digits)", commit)
	}
	s, err := p.open(ctx)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", commit, err)
	}
	return s.ensureCommit(ctx, commit)
}

// BlobError says why ReadBlob refused a path: it is missing (Is fs.ErrNotExist), not
// a regular file, or too large.
type BlobError struct {
	Path   string
	Commit string
	Reason string
	err    error
}

func (e *BlobError) Error() string {
	return fmt.Sprintf("%s at commit %s: %s", e.Path, e.Commit, e.Reason)
}

func (e *BlobError) Unwrap() error { return e.err }

// ReadBlob reads the file at path (repo-relative, slash-separated) in commit from the
// repository's objects, never from a working tree, so nothing the commit's code did to
// a checkout can change what is read. Only a regular file (mode 100644 or 100755) of at
// most max bytes is read: a symbolic link, a submodule, a folder or a larger file is
// refused with a *BlobError, as is a path the commit lacks (that one wraps
// fs.ErrNotExist). A commit or blob the repository lacks (a partial clone) is fetched
// from the remote.
func (p *Publisher) ReadBlob(ctx context.Context, commit, path string, max int64) ([]byte, error) {
	if !fullSHA.MatchString(commit) {
		return nil, fmt.Errorf("reading %s: %q is not a full commit SHA", path, commit)
	}
	if err := checkPath(path); err != nil {
		return nil, fmt.Errorf("reading a file of commit %s: %w", commit, err)
	}
	s, err := p.open(ctx)
	switch {
	case err != nil:
		// No usable remote (a maintainer's clone without origin): read what the
		// repository has.
		s = &publication{g: &gitRunner{dir: p.Dir, trace: p.trace}}
		if !s.hasCommit(ctx, commit) {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
	default:
		if err := s.ensureCommit(ctx, commit); err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	refuse := func(reason string, err error) error {
		return &BlobError{Path: path, Commit: commit, Reason: reason, err: err}
	}
	// -z: the path is printed raw, whatever bytes it holds. A path that goes through a
	// symbolic link or a submodule matches nothing: ls-tree walks trees only.
	out, err := s.g.run(ctx, gitOpts{}, "ls-tree", "-z", "--full-tree", commit, "--", path)
	if err != nil {
		return nil, fmt.Errorf("reading %s at commit %s: %w", path, commit, err)
	}
	entry, _, _ := strings.Cut(out, "\x00")
	if entry == "" {
		return nil, refuse("no such file in the commit", fs.ErrNotExist)
	}
	meta, name, ok := strings.Cut(entry, "\t")
	f := strings.Fields(meta)
	if !ok || name != path || len(f) != 3 {
		return nil, fmt.Errorf("reading %s at commit %s: unexpected ls-tree output %q", path, commit, entry)
	}
	mode, typ, oid := f[0], f[1], f[2]
	switch {
	case mode == "120000":
		return nil, refuse("a symbolic link, not a file: refusing to follow it", nil)
	case mode == "160000" || typ == "commit":
		return nil, refuse("a submodule, not a file", nil)
	case typ == "tree":
		return nil, refuse("a folder, not a file", nil)
	case typ != "blob" || (mode != "100644" && mode != "100755"):
		return nil, refuse("not a regular file (mode "+mode+")", nil)
	}
	sizeText, err := s.g.run(ctx, gitOpts{}, "cat-file", "-s", oid)
	if err != nil {
		return nil, fmt.Errorf("reading %s at commit %s: %w", path, commit, err)
	}
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("reading %s at commit %s: git gave the size %q", path, commit, sizeText)
	}
	if size > max {
		return nil, refuse(fmt.Sprintf("%d bytes, more than the %d it may have", size, max), nil)
	}
	// The object is addressed by its content, so the size just read is the size read.
	out, errOut, err := s.g.exec(ctx, gitOpts{}, "cat-file", "blob", oid)
	if err != nil {
		return nil, fmt.Errorf("reading %s at commit %s: %w", path, commit, s.g.wrap([]string{"cat-file"}, err, errOut))
	}
	if int64(len(out)) != size {
		return nil, errors.New("reading " + path + ": git gave " + strconv.Itoa(len(out)) + " bytes of a " + sizeText + "-byte blob")
	}
	return []byte(out), nil
}

// ListFiles names the regular files directly in folder dir of commit (not in its
// sub-folders), sorted, at most max of them: a symbolic link, a submodule or a folder
// is left out. A commit without the folder has no files. Each name can then be read with
// ReadBlob.
func (p *Publisher) ListFiles(ctx context.Context, commit, dir string, max int) ([]string, error) {
	if !fullSHA.MatchString(commit) {
		return nil, fmt.Errorf("listing %s: %q is not a full commit SHA", dir, commit)
	}
	if err := checkPath(dir); err != nil {
		return nil, fmt.Errorf("listing a folder of commit %s: %w", commit, err)
	}
	s, err := p.open(ctx)
	switch {
	case err != nil:
		s = &publication{g: &gitRunner{dir: p.Dir, trace: p.trace}}
		if !s.hasCommit(ctx, commit) {
			return nil, fmt.Errorf("listing %s: %w", dir, err)
		}
	default:
		if err := s.ensureCommit(ctx, commit); err != nil {
			return nil, fmt.Errorf("listing %s: %w", dir, err)
		}
	}
	out, err := s.g.run(ctx, gitOpts{}, "ls-tree", "-z", "--full-tree", commit, "--", dir+"/")
	if err != nil {
		return nil, fmt.Errorf("listing %s at commit %s: %w", dir, commit, err)
	}
	var names []string
	for _, entry := range strings.Split(out, "\x00") {
		meta, name, ok := strings.Cut(entry, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		base, found := strings.CutPrefix(name, dir+"/")
		if !found || base == "" || strings.Contains(base, "/") {
			continue
		}
		if len(names) == max {
			return nil, fmt.Errorf("listing %s at commit %s: more than %d files", dir, commit, max)
		}
		names = append(names, base)
	}
	sort.Strings(names)
	return names, nil
}
