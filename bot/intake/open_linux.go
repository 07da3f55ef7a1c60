//go:build linux

package intake

import (
	"io/fs"
	"os"
	"syscall"
)

// folder is an open source folder. On Linux every entry is opened relative to the
// folder's own descriptor with O_NOFOLLOW (openat), so no path is resolved twice: a
// name that is a symbolic link fails to open, whatever it points to, and a folder
// swapped for a link after it was listed is not followed either.
type folder struct {
	f *os.File
}

// openRoot opens the folder at path itself, refusing a symbolic link.
func openRoot(path string) (*folder, error) {
	fd, err := openFD(-1, path, syscall.O_DIRECTORY)
	if err == syscall.ENOTDIR {
		// O_DIRECTORY|O_NOFOLLOW says ENOTDIR, not ELOOP, for a link to a folder.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			err = syscall.ELOOP
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &folder{f: os.NewFile(uintptr(fd), path)}, nil
}

// sub opens the entry name of d as a folder.
func (d *folder) sub(name string) (*folder, error) {
	fd, err := openFD(int(d.f.Fd()), name, syscall.O_DIRECTORY)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &folder{f: os.NewFile(uintptr(fd), name)}, nil
}

// open opens the entry name of d for reading; a FIFO opens without waiting for a
// writer (O_NONBLOCK) so that the caller can see what it is and refuse it.
func (d *folder) open(name string) (*os.File, error) {
	fd, err := openFD(int(d.f.Fd()), name, syscall.O_NONBLOCK)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openFD opens name below the folder dirfd, or as a path when dirfd is -1, never
// following a link at its last element.
func openFD(dirfd int, name string, flags int) (int, error) {
	flags |= syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	for {
		var fd int
		var err error
		if dirfd == -1 {
			fd, err = syscall.Open(name, flags, 0)
		} else {
			fd, err = syscall.Openat(dirfd, name, flags, 0)
		}
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// isLinkError says err is what opening a symbolic link with O_NOFOLLOW gives.
func isLinkError(err error) bool {
	pe, ok := err.(*fs.PathError)
	return ok && pe.Err == syscall.ELOOP
}

// list reads up to n entries of d (fewer at the end); io.EOF when there are none left.
func (d *folder) list(n int) ([]fs.DirEntry, error) { return d.f.ReadDir(n) }

func (d *folder) close() { d.f.Close() }
