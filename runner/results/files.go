package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to a temp file beside path and renames it over path, so
// a crash never leaves a half-written result.
func WriteFileAtomic(path string, data []byte) error {
	_, err := ReplaceFile(path, data)
	return err
}

// ReplaceFile is WriteFileAtomic that also says whether a file was at path before
// (and so was replaced), for callers that tell the user. The temp file is removed on
// every error path. A directory at path is an error naming it, not a rename failure.
func ReplaceFile(path string, data []byte) (replaced bool, err error) {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.IsDir():
		return false, fmt.Errorf("%s is a directory: move it away or write the results elsewhere", path)
	case err == nil:
		replaced = true
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return false, err
	}
	if err = f.Close(); err != nil {
		return false, err
	}
	if err = os.Chmod(tmp, 0o644); err != nil {
		return false, err
	}
	if err = os.Rename(tmp, path); err != nil {
		return false, err
	}
	return replaced, nil
}
