package guard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/perfbot/runner/results"
)

// HolderRecord is the `<lock>.holder` file: who holds the host lock.
type HolderRecord struct {
	PID   int
	Start int64 // unix seconds
	Mode  string
	Cmd   string
}

func (r HolderRecord) text() string {
	return fmt.Sprintf("pid=%d\nstart=%d\nmode=%s\ncmd=%s\n", r.PID, r.Start, r.Mode, r.Cmd)
}

// String is the record on one line, for log messages.
func (r HolderRecord) String() string {
	return fmt.Sprintf("pid=%d mode=%s cmd=%s", r.PID, r.Mode, r.Cmd)
}

// ParseHolder reads a holder record. Unknown keys are kept out; a record without a pid
// is an error.
func ParseHolder(b []byte) (HolderRecord, error) {
	var r HolderRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "pid":
			r.PID, _ = strconv.Atoi(strings.TrimSpace(v))
		case "start":
			r.Start, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		case "mode":
			r.Mode = strings.TrimSpace(v)
		case "cmd":
			r.Cmd = v
		}
	}
	if r.PID <= 0 {
		return r, errors.New("holder record has no pid= line")
	}
	return r, nil
}

// HolderPath is where the holder record of lockPath lives.
func HolderPath(lockPath string) string { return lockPath + ".holder" }

// hostLock is a held flock on the lock file.
type hostLock struct {
	f    *os.File
	path string
}

// openLockFile opens (creating if needed) the lock file. Guards of different users share
// it, so it is created world-writable; a read-only open still takes an flock.
func openLockFile(path string, create bool) (*os.File, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o666)
	if err == nil {
		if create {
			// umask strips the group/other write bits; a shared lock needs them.
			if fi, serr := f.Stat(); serr == nil && fi.Mode().Perm() != 0o666 && isOwner(fi) {
				f.Chmod(0o666)
			}
		}
		return f, nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return os.Open(path)
	}
	return nil, err
}

func isOwner(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// tryLock takes the lock without blocking; busy is true when another holds it.
func tryLock(path string) (l *hostLock, busy bool, err error) {
	f, err := openLockFile(path, true)
	if err != nil {
		return nil, false, fmt.Errorf("opening host lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.EWOULDBLOCK {
		f.Close()
		return nil, true, nil
	}
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("locking %s: %w", path, err)
	}
	return &hostLock{f: f, path: path}, false, nil
}

func (l *hostLock) writeHolder(r HolderRecord) error {
	if err := results.WriteFileAtomic(HolderPath(l.path), []byte(r.text())); err != nil {
		return fmt.Errorf("writing holder record: %w", err)
	}
	return nil
}

// release removes the holder record while the lock is still held, so a record on disk
// never names a guard that already let go.
func (l *hostLock) release() {
	if l == nil {
		return
	}
	os.Remove(HolderPath(l.path))
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// LockStatus is what `perfbot guard --status` prints.
type LockStatus struct {
	Held   bool
	Holder *HolderRecord // nil when there is no readable record
	// Stale is true for a record left behind by a guard that is gone (lock free).
	Stale bool
}

// Status reports whether the host lock is held, and by whom.
func Status(lockPath string) (LockStatus, error) {
	var st LockStatus
	if b, err := os.ReadFile(HolderPath(lockPath)); err == nil {
		if r, err := ParseHolder(b); err == nil {
			st.Holder = &r
		}
	}
	f, err := openLockFile(lockPath, false)
	if errors.Is(err, fs.ErrNotExist) {
		st.Stale = st.Holder != nil
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("opening host lock %s: %w", lockPath, err)
	}
	defer f.Close()
	// A shared probe conflicts with a guard's exclusive lock but never blocks.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	switch {
	case err == syscall.EWOULDBLOCK:
		st.Held = true
	case err != nil:
		return st, fmt.Errorf("probing host lock %s: %w", lockPath, err)
	default:
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		st.Stale = st.Holder != nil
	}
	return st, nil
}

// Text prints the status: `free` or `held`, then the holder record.
func (s LockStatus) Text() string {
	var b strings.Builder
	if s.Held {
		b.WriteString("held\n")
		if s.Holder == nil {
			b.WriteString("(no holder record: the lock was taken by something that does not write one)\n")
		}
	} else {
		b.WriteString("free\n")
	}
	if s.Holder != nil {
		if s.Stale {
			b.WriteString("stale holder record (its guard is gone):\n")
		}
		b.WriteString(s.Holder.text())
		if s.Holder.Start > 0 && !s.Stale {
			fmt.Fprintf(&b, "since=%s\n", time.Unix(s.Holder.Start, 0).Format(TimeLayout))
		}
	}
	return b.String()
}
