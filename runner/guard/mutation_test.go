package guard

import (
	"os"
	"testing"
)

// Guards of different users share the lock file: one the guard creates is writable by
// all, whatever the umask; one that exists is used as it is, never chmodded.
func TestLockFileMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		existing bool
		want     os.FileMode
	}{
		{"created", false, 0o666},
		{"existing", true, 0o644},
	}
	for _, c := range cases {
		w := newWorld(t)
		if c.existing {
			if err := os.WriteFile(w.lock, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(w.lock, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l, busy, err := tryLock(w.lock)
		if err != nil || busy {
			t.Fatalf("%s: tryLock: busy %v, %v", c.name, busy, err)
		}
		fi, err := os.Stat(w.lock)
		l.release()
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("%s: lock file mode %v, want %v", c.name, got, c.want)
		}
	}
}

// The holder record is read up to its size limit: a record of exactly the limit is
// shown, one byte more is refused rather than cut short and parsed.
func TestHolderRecordSizeLimit(t *testing.T) {
	t.Parallel()
	record := func(n int) []byte {
		b := []byte("pid=4242\nmode=excl\ncmd=")
		for len(b) < n-1 {
			b = append(b, 'x')
		}
		return append(b, '\n')
	}
	for _, c := range []struct {
		size int
		ok   bool
	}{{maxHolderRecord, true}, {maxHolderRecord + 1, false}} {
		w := newWorld(t)
		b := record(c.size)
		if len(b) != c.size {
			t.Fatalf("record of %d bytes, want %d", len(b), c.size)
		}
		if err := os.WriteFile(HolderPath(w.lock), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, ok := readHolder(w.lock)
		if ok != c.ok {
			t.Errorf("a %d-byte record: read %v, want %v", c.size, ok, c.ok)
		}
		if ok && (r.PID != 4242 || r.Mode != "excl" || len(r.Cmd) != c.size-len("pid=4242\nmode=excl\ncmd=\n")) {
			t.Errorf("a %d-byte record read as pid %d mode %q cmd of %d bytes", c.size, r.PID, r.Mode, len(r.Cmd))
		}
	}
}
