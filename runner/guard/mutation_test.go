package guard

import (
	"os"
	"testing"
)

// Guards of different users share the lock file: taking the lock leaves it writable by
// all, whatever the umask or an earlier creator left.
func TestLockFileIsSharedWritable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.WriteFile(w.lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(w.lock, 0o644); err != nil {
		t.Fatal(err)
	}
	l, busy, err := tryLock(w.lock)
	if err != nil || busy {
		t.Fatalf("tryLock: busy %v, %v", busy, err)
	}
	defer l.release()
	fi, err := os.Stat(w.lock)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o666 {
		t.Errorf("lock file mode %v, want -rw-rw-rw-", fi.Mode())
	}
}
