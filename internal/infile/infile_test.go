//go:build unix

package infile

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/streamtest"
)

// Neither a FIFO without a writer nor /dev/zero may be read: the open returns at once
// with an error naming what the path is.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := streamtest.Fifo(t, "trace.csv")
	regular := filepath.Join(dir, "ok.csv")
	if err := os.WriteFile(regular, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path, want string
	}{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "/dev/zero is a character device, not a regular file"},
		{dir, "is a directory, not a regular file"},
	}
	for _, c := range cases {
		streamtest.Refused(t, "Open", c.path, c.want, func(p string) error {
			f, err := Open(p)
			if err == nil {
				f.Close()
			} else if !errors.As(err, new(*NotRegularError)) {
				return nil // the wrong kind of error fails the check
			}
			return err
		})
	}
	for _, p := range []string{regular, link} {
		f, err := Open(p)
		if err != nil {
			t.Errorf("Open(%s): %v", p, err)
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != "a\n" {
			t.Errorf("Open(%s) read %q", p, b)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestReadFileLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("12345"), 0o644)
	if b, err := ReadFile(small, 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadFile at the limit = %q, %v", b, err)
	}
	_, err := ReadFile(small, 4)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "is 5 bytes, more than the 4 bytes") {
		t.Errorf("ReadFile over the limit: %v", err)
	}
	// A sparse 10 GiB file is refused from its size, without reading it.
	sparse := filepath.Join(dir, "sparse")
	f, _ := os.Create(sparse)
	if err := f.Truncate(10 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(sparse, 1<<20); err == nil || !strings.Contains(err.Error(), "is 10 GiB, more than the 1 MiB") {
		t.Errorf("sparse file: %v", err)
	}
	if _, err := ReadFile("/dev/zero", 1<<20); err == nil || !strings.Contains(err.Error(), "character device") {
		t.Errorf("/dev/zero: %v", err)
	}
}

func TestReaderStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, strings.NewReader(strings.Repeat("x", 100)))
	buf := make([]byte, 10)
	if n, err := r.Read(buf); n != 10 || err != nil {
		t.Fatalf("read before cancel: %d, %v", n, err)
	}
	cancel()
	if _, err := r.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v, want context.Canceled", err)
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{512: "512 bytes", 64 << 10: "64 KiB", 3 << 19: "1.5 MiB", 10 << 30: "10 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
