package guard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/perfbot/internal/safetext"
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

// String is the record on one line, for log messages. The record is a file anyone
// can write, so its text is escaped and cut (internal/safetext).
func (r HolderRecord) String() string {
	return fmt.Sprintf("pid=%d mode=%s cmd=%s", r.PID, safetext.Clean(r.Mode), safetext.Clean(r.Cmd))
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

// openLockFile opens (creating if needed) the lock file. The lock lives in a folder
// every user can write to (/tmp), so the path is hostile: a symbolic link there is
// never followed (O_NOFOLLOW), and anything but a regular file is refused (O_NONBLOCK
// keeps a FIFO from blocking the open). Guards of different users share the lock, so
// a lock file this call created is made world-writable, through its own descriptor;
// an existing one is never chmodded. A read-only open still takes an flock.
func openLockFile(path string, create bool) (*os.File, error) {
	const safe = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
	if create {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|safe, 0o666)
		if err == nil {
			// umask strips the group/other write bits; a shared lock needs them.
			if err := f.Chmod(0o666); err != nil {
				f.Close()
				return nil, fmt.Errorf("making the new host lock %s world-writable: %w", path, err)
			}
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, lockOpenError(path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|safe, 0)
	if errors.Is(err, fs.ErrPermission) {
		f, err = os.OpenFile(path, os.O_RDONLY|safe, 0)
	}
	if err != nil {
		return nil, lockOpenError(path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checking host lock %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("host lock %s is not a regular file (%s): refusing to lock it; remove it and let a guard create it", path, fi.Mode().Type())
	}
	return f, nil
}

// lockOpenError says what is wrong with the lock path; ELOOP is O_NOFOLLOW meeting a
// symbolic link.
func lockOpenError(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("host lock %s is a symbolic link: refusing to follow it; remove it and let a guard create the lock file", path)
	}
	return fmt.Errorf("opening host lock %s: %w", path, err)
}

// maxHolderRecord bounds the holder record read: a real one is a few hundred bytes.
const maxHolderRecord = 64 << 10

// readHolder reads the holder record beside lockPath the way the lock is opened: no
// symbolic link, a regular file only, and a bounded size. ok is false when there is
// no record to show.
func readHolder(lockPath string) (HolderRecord, bool) {
	f, err := os.OpenFile(HolderPath(lockPath), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return HolderRecord{}, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return HolderRecord{}, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxHolderRecord+1))
	if err != nil || len(b) > maxHolderRecord {
		return HolderRecord{}, false
	}
	r, err := ParseHolder(b)
	return r, err == nil
}

// tryLock takes the lock without blocking; busy is true when another holds it.
func tryLock(path string) (l *hostLock, busy bool, err error) {
	f, err := openLockFile(path, true)
	if err != nil {
		return nil, false, err
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
	if r, ok := readHolder(lockPath); ok {
		st.Holder = &r
	}
	f, err := openLockFile(lockPath, false)
	if errors.Is(err, fs.ErrNotExist) {
		st.Stale = st.Holder != nil
		return st, nil
	}
	if err != nil {
		return st, err
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

// checkNested checks the claim of ROCM_GPU_GUARD_LOCK_HELD=pid that the host lock is
// already held for this guard. Anyone can set the variable, so the claim must hold on
// the host: pid is a live ancestor of this guard (the processes in between become the
// guard's own), it has the lock file open (a /proc/<pid>/fd link to the same file), the
// lock is taken (a shared probe fails), and a holder record, when a live guard wrote
// one, names pid. The shell guard writes no record; its shell keeps the lock file open.
// checkNested returns why the claim does not hold, "" when it does.
func (r *runner) checkNested(pid int) string {
	chain := r.s.ancestorChain(pid)
	if chain == nil {
		return fmt.Sprintf("pid %d is not an ancestor of this guard", pid)
	}
	f, err := openLockFile(r.o.LockPath, false)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Sprintf("checking host lock %s: %v", r.o.LockPath, err)
	}
	if open, err := hasOpen(pid, uint64(st.Dev), uint64(st.Ino)); !open {
		if err != nil {
			return fmt.Sprintf("cannot tell whether pid %d has the host lock %s open: %v", pid, r.o.LockPath, err)
		}
		return fmt.Sprintf("pid %d does not have the host lock %s open", pid, r.o.LockPath)
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err {
	case syscall.EWOULDBLOCK:
	case nil:
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return fmt.Sprintf("the host lock %s is not held", r.o.LockPath)
	default:
		return fmt.Sprintf("probing host lock %s: %v", r.o.LockPath, err)
	}
	if rec, ok := readHolder(r.o.LockPath); ok && rec.PID != pid {
		if open, _ := hasOpen(rec.PID, uint64(st.Dev), uint64(st.Ino)); open {
			return fmt.Sprintf("the holder record names pid %d, not %d", rec.PID, pid)
		}
	}
	r.s.adoptChain(chain)
	return ""
}

// hasOpen reports whether process pid has the file (dev, ino) open.
func hasOpen(pid int, dev, ino uint64) (bool, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		var st syscall.Stat_t
		if syscall.Stat(dir+"/"+e.Name(), &st) == nil && uint64(st.Dev) == dev && uint64(st.Ino) == ino {
			return true, nil
		}
	}
	return false, nil
}
