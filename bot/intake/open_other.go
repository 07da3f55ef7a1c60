//go:build !linux

package intake

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// folder is an open source folder. Outside Linux entries are opened by path: each is
// checked with Lstat first and the opened file must be the same file, which refuses a
// symbolic link at the last element; the results artifacts are only read on Linux.
type folder struct {
	path string
	f    *os.File
}

func openRoot(path string) (*folder, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errIsLink}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if got, err := f.Stat(); err != nil || !os.SameFile(fi, got) {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: errIsLink}
	}
	return &folder{path: path, f: f}, nil
}

func (d *folder) sub(name string) (*folder, error) { return openRoot(filepath.Join(d.path, name)) }

func (d *folder) open(name string) (*os.File, error) {
	p := filepath.Join(d.path, name)
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errIsLink}
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegularOpen}
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	if got, err := f.Stat(); err != nil || !os.SameFile(fi, got) {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: errIsLink}
	}
	return f, nil
}

func isLinkError(err error) bool {
	e, ok := err.(*fs.PathError)
	return ok && e.Err == errIsLink
}

func (d *folder) list(n int) ([]fs.DirEntry, error) { return d.f.ReadDir(n) }

func (d *folder) close() { d.f.Close() }

var (
	errIsLink         = errors.New("is a symbolic link")
	errNotRegularOpen = errors.New("is not a regular file")
)
