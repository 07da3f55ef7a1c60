package patch

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// errOutside marks a path that leaves the repo through a symbolic link.
var errOutside = errors.New("outside the repo")

// repoPath resolves rel (slash-separated, relative to the repo root) for reading and
// writing: the folders on the way are resolved with every symbolic link followed, and
// must stay inside the repo, so a symlinked folder (scripts -> /elsewhere) cannot make
// the patcher read or write elsewhere. The file itself may be a symbolic link to
// another file inside the repo: it is read through the link, and a write replaces the
// link with the file (rename), never the link's target. It returns the path to read
// and the path to write (the same unless the file is a link).
func repoPath(repoDir, rel string) (read, write string, err error) {
	root, err := filepath.Abs(repoDir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return "", "", fmt.Errorf("resolving the repo %s: %w", repoDir, err)
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", "", err
	}
	if !within(root, dir) {
		return "", "", fmt.Errorf("%s: its folder resolves to %s: %w", rel, dir, errOutside)
	}
	write = filepath.Join(dir, filepath.Base(p))
	read, err = filepath.EvalSymlinks(write)
	if err != nil {
		return "", "", err
	}
	if !within(root, read) {
		return "", "", fmt.Errorf("%s: a symbolic link to %s: %w", rel, read, errOutside)
	}
	return read, write, nil
}

// within reports whether path is root or below it (both clean and absolute).
func within(root, path string) bool {
	r, err := filepath.Rel(root, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}
