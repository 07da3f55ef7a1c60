package guard

import (
	"bytes"
	"fmt"
	"iter"
	"os"
	"strconv"
	"syscall"

	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/proc"
)

// entry is one process the scanner follows.
type entry struct {
	fd      int // open /proc/<pid>/comm, or stat when CPU is watched; -1: read by path
	start   uint64
	kthread bool
	comm    string
	ticks   uint64 // utime + stime at the last read (CPU watch only)
}

// procScanner follows every process on the host. It runs ten times a second on the
// machine being measured, so a sample does as little as it can (BenchmarkMonitorSample
// and bench/guard.sh measure it):
//
//   - Each process has an open descriptor on /proc/<pid>/comm, re-read with pread: a
//     comm read costs a fifth of a stat read, and an exec (the way a shell turns into
//     cargo) shows as a new comm. Reading a descriptor whose process exited fails with
//     ESRCH, also when the pid was reused since, so a reused pid is never misread.
//     Kernel threads never exec: they are not read between listings.
//   - /proc is listed (getdents into a reused buffer) only when a pid was allocated
//     since the last listing (the last field of /proc/loadavg) or a process went away.
//   - The fields that decide who a process is (state, parent, start time) are read
//     from /proc/<pid>/stat only for the few processes that matter: GPU holders,
//     compilers and CPU hogs, and their ancestors.
//   - Comm strings are interned: a steady process table allocates nothing.
//
// With a CPU limit (--max-foreign-cpu) the descriptors are on /proc/<pid>/stat instead,
// since every process's CPU time is needed at every sample.
type procScanner struct {
	dir      string // real path of the host's /proc
	dirFD    int    // open /proc, rewound for every listing; -1 until first use
	loadFD   int    // open /proc/loadavg; -1 when unreadable (list at every sample)
	lastPID  int    // the pid counter at the last listing; -1 before the first
	withStat bool
	dents    []byte
	buf      []byte
	procs    map[int]*entry
	listed   map[int]bool
	free     []*entry
	maxFD    int
	nfd      int
	comms    map[string]string
	// stats memoizes fresh /proc/<pid>/stat reads within one sample.
	stats map[int]proc.Stat
}

func newProcScanner(h host.Host, withStat bool) (*procScanner, error) {
	dir, err := host.Real(h, "/proc")
	if err != nil {
		return nil, err
	}
	maxFD := 4096
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur/4 < uint64(maxFD) {
		// Leave most descriptors to the rest of the process.
		maxFD = int(lim.Cur / 4)
	}
	s := &procScanner{
		dir: dir, dirFD: -1, loadFD: -1, lastPID: -1, withStat: withStat,
		dents: make([]byte, 16<<10), buf: make([]byte, 1024),
		procs: map[int]*entry{}, listed: map[int]bool{}, maxFD: maxFD,
		comms: map[string]string{}, stats: map[int]proc.Stat{},
	}
	if fd, err := rawOpen(dir+"/loadavg", syscall.O_RDONLY|syscall.O_CLOEXEC); err == nil {
		s.loadFD = fd
	}
	return s, nil
}

// close releases every descriptor the scanner holds.
func (s *procScanner) close() {
	for pid, e := range s.procs {
		s.drop(pid, e)
	}
	for _, fd := range []*int{&s.dirFD, &s.loadFD} {
		if *fd >= 0 {
			rawClose(*fd)
			*fd = -1
		}
	}
}

func (s *procScanner) drop(pid int, e *entry) {
	if e.fd >= 0 {
		rawClose(e.fd)
		s.nfd--
	}
	delete(s.procs, pid)
	*e = entry{}
	s.free = append(s.free, e)
}

// scan brings the process table up to date. Processes that vanish between the listing
// and the read are simply left out: they are not holders any more.
func (s *procScanner) scan() error {
	clear(s.stats)
	for pid, e := range s.procs {
		if !e.kthread && !s.refresh(pid, e) {
			s.drop(pid, e)
		}
	}
	last, ok := s.pidCounter()
	switch {
	case !ok || s.lastPID < 0 || last < s.lastPID || last-s.lastPID > maxProbe:
		// First look, no counter, the counter wrapped, or many new pids: list.
		return s.list(last, ok)
	case last == s.lastPID:
		return nil
	}
	// Every process started since the last look has a pid in (lastPID, last]; most
	// of those are threads or already gone, which one signal-0 probe tells.
	for pid := s.lastPID + 1; pid <= last; pid++ {
		if e, ok := s.procs[pid]; ok {
			s.drop(pid, e) // allocated again since it was added: another process
		}
		if isProcess(pid) {
			s.addNew(pid)
		}
	}
	s.lastPID = last
	return nil
}

// direntPIDs yields the names in a getdents64 buffer that are pids.
func direntPIDs(b []byte) iter.Seq[int] {
	return func(yield func(int) bool) {
		for len(b) >= 19 {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if pid, ok := proc.Atoi(name); ok && pid > 0 && !yield(pid) {
				return
			}
		}
	}
}

// maxProbe bounds the new pids looked at one by one; more than that and a listing of
// /proc is cheaper.
const maxProbe = 32

// pidCounter reads the last pid allocated on the host (the 5th field of /proc/loadavg).
func (s *procScanner) pidCounter() (int, bool) {
	if s.loadFD < 0 {
		return 0, false
	}
	n, err := rawPread(s.loadFD, s.buf, 0)
	if err != nil || n <= 0 {
		return 0, false
	}
	b := bytes.TrimSpace(s.buf[:n])
	i := bytes.LastIndexByte(b, ' ')
	if i < 0 {
		return 0, false
	}
	return proc.Atoi(b[i+1:])
}

// list re-reads the /proc listing: new processes are added, missing ones dropped, and
// known pids allocated again since the last look (counter says which) re-read.
func (s *procScanner) list(counter int, haveCounter bool) error {
	if s.dirFD < 0 {
		fd, err := rawOpen(s.dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
		if err != nil {
			return fmt.Errorf("listing processes: %w", &os.PathError{Op: "open", Path: s.dir, Err: err})
		}
		s.dirFD = fd
	} else if err := rawRewind(s.dirFD); err != nil {
		return fmt.Errorf("listing processes: %w", &os.PathError{Op: "seek", Path: s.dir, Err: err})
	}
	prev := s.lastPID
	recent := func(pid int) bool {
		switch {
		case !haveCounter || prev < 0:
			return false
		case counter >= prev:
			return pid > prev && pid <= counter
		default: // wrapped
			return pid > prev || pid <= counter
		}
	}
	clear(s.listed)
	for {
		n, err := rawGetdents(s.dirFD, s.dents)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("listing processes: %w", &os.PathError{Op: "getdents", Path: s.dir, Err: err})
		}
		if n <= 0 {
			break
		}
		for pid := range direntPIDs(s.dents[:n]) {
			s.listed[pid] = true
			e, known := s.procs[pid]
			if known && recent(pid) {
				s.drop(pid, e)
				known = false
			}
			if !known {
				s.add(pid)
			}
		}
	}
	for pid, e := range s.procs {
		if !s.listed[pid] {
			s.drop(pid, e)
		}
	}
	if len(s.comms) > 4096 {
		clear(s.comms)
	}
	if haveCounter {
		s.lastPID = counter
	} else {
		s.lastPID = -1
	}
	return nil
}

// add starts following pid: one stat read for what never changes, then a descriptor.
func (s *procScanner) add(pid int) {
	fd, err := rawOpen(s.path(pid, "stat"), syscall.O_RDONLY|syscall.O_CLOEXEC)
	if err != nil {
		return
	}
	st, ok := s.readStat(fd, pid)
	if !ok || st.Thread {
		rawClose(fd)
		return
	}
	s.stats[pid] = st
	var e *entry
	if n := len(s.free); n > 0 {
		e, s.free = s.free[n-1], s.free[:n-1]
	} else {
		e = new(entry)
	}
	*e = entry{fd: -1, start: st.Start, kthread: st.KThread, comm: st.Comm, ticks: st.Ticks}
	switch {
	case s.nfd >= s.maxFD:
		rawClose(fd)
	case s.withStat:
		e.fd = fd
		s.nfd++
	default:
		rawClose(fd)
		if cfd, err := rawOpen(s.path(pid, "comm"), syscall.O_RDONLY|syscall.O_CLOEXEC); err == nil {
			e.fd = cfd
			s.nfd++
		}
	}
	s.procs[pid] = e
}

// addNew starts following a process started since the last look with its comm only:
// a new process is rarely a kernel thread, and its comm is read at every sample anyway.
func (s *procScanner) addNew(pid int) {
	if s.withStat || s.nfd >= s.maxFD {
		s.add(pid)
		return
	}
	fd, err := rawOpen(s.path(pid, "comm"), syscall.O_RDONLY|syscall.O_CLOEXEC)
	if err != nil {
		return
	}
	n, ok := s.read(fd)
	if !ok {
		rawClose(fd)
		return
	}
	var e *entry
	if k := len(s.free); k > 0 {
		e, s.free = s.free[k-1], s.free[:k-1]
	} else {
		e = new(entry)
	}
	*e = entry{fd: fd, comm: proc.Intern(bytes.TrimSuffix(s.buf[:n], []byte{'\n'}), s.comms)}
	s.nfd++
	s.procs[pid] = e
}

// refresh re-reads a followed process; false means it is gone.
func (s *procScanner) refresh(pid int, e *entry) bool {
	fd := e.fd
	if fd < 0 {
		name := "comm"
		if s.withStat {
			name = "stat"
		}
		var err error
		if fd, err = rawOpen(s.path(pid, name), syscall.O_RDONLY|syscall.O_CLOEXEC); err != nil {
			return false
		}
		defer rawClose(fd)
	}
	if s.withStat {
		st, ok := s.readStat(fd, pid)
		if !ok || (e.start != 0 && st.Start != e.start) {
			return false
		}
		s.stats[pid] = st
		e.comm, e.ticks = st.Comm, st.Ticks
		return true
	}
	n, ok := s.read(fd)
	if !ok {
		return false
	}
	c := bytes.TrimSuffix(s.buf[:n], []byte{'\n'})
	if string(c) != e.comm {
		e.comm = proc.Intern(c, s.comms)
	}
	if e.fd < 0 {
		// Read by path: the pid may name another process than the one added.
		st, ok := s.stat(pid)
		return ok && st.Start == e.start
	}
	return true
}

// stat reads /proc/<pid>/stat afresh, once per sample.
func (s *procScanner) stat(pid int) (proc.Stat, bool) {
	if st, ok := s.stats[pid]; ok {
		return st, true
	}
	fd, err := rawOpen(s.path(pid, "stat"), syscall.O_RDONLY|syscall.O_CLOEXEC)
	if err != nil {
		return proc.Stat{}, false
	}
	st, ok := s.readStat(fd, pid)
	rawClose(fd)
	if ok {
		s.stats[pid] = st
	}
	return st, ok
}

func (s *procScanner) readStat(fd, pid int) (proc.Stat, bool) {
	n, ok := s.read(fd)
	if !ok {
		return proc.Stat{}, false
	}
	st, err := proc.ParseStat(s.buf[:n], s.comms)
	if err != nil || st.PID != pid {
		return proc.Stat{}, false
	}
	return st, true
}

// read preads the whole of fd into s.buf.
func (s *procScanner) read(fd int) (int, bool) {
	n := 0
	for {
		m, err := rawPread(fd, s.buf[n:], int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, false
		}
		if m <= 0 {
			break
		}
		n += m
		if n < len(s.buf) {
			break
		}
		if len(s.buf) >= 64<<10 {
			return 0, false // no stat or comm line is that long
		}
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	return n, true
}

func (s *procScanner) path(pid int, name string) string {
	return s.dir + "/" + strconv.Itoa(pid) + "/" + name
}
