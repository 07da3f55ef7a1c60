// Package infile opens the files perfbot reads as input (traces, bench logs, summaries,
// configs, rules) the way a service reading other people's files must: only regular
// files (a FIFO, /dev/zero or a directory is refused without blocking on it), small
// files read whole only up to a size limit, and long reads that stop when their context
// is cancelled. It must not parse anything or decide what a file means.
package infile

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError says a path names something other than a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: give the file itself", e.Path, Kind(e.Mode))
}

// TooLargeError says a file is larger than its reader accepts.
type TooLargeError struct {
	Path  string
	Size  int64 // at least; -1 when unknown
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %s, more than the %s such a file can be: is it the right file?", e.Path, Size(e.Size), Size(e.Limit))
}

// Open opens path for reading if it is a regular file. The open itself cannot block (a
// FIFO without a writer would), and a symlink to a regular file is followed as usual.
// Errors wrap fs.ErrNotExist for a missing file.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}

// ReadFile reads a whole regular file of at most limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	// The file may grow while it is read: never take more than limit+1 bytes.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Size: -1, Limit: limit}
	}
	return data, nil
}

// Reader returns r, made to fail with the context's error at the next Read once ctx is
// done, so that a reader of a large file stops within one read of a cancellation.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	if ctx == nil || ctx.Done() == nil {
		return r
	}
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Size prints a byte count for a person: 512 bytes, 64 KiB, 1.5 GiB.
func Size(n int64) string {
	switch {
	case n < 0:
		return "more than that"
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return trim(float64(n)/(1<<10)) + " KiB"
	case n < 1<<30:
		return trim(float64(n)/(1<<20)) + " MiB"
	}
	return trim(float64(n)/(1<<30)) + " GiB"
}

func trim(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// Kind names what a file of mode m is, for a message: "a named pipe (FIFO)", "a
// directory", "of mode ...".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "of mode " + m.String()
}
