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
