package guard

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/lablup/perfbot/runner/host"
)

// pfKthread is PF_KTHREAD in the flags field of /proc/<pid>/stat.
const pfKthread = 0x00200000

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat; it is 100 on
// every Linux architecture perfbot runs on.
const clockTicks = 100

// proc is what one line of /proc/<pid>/stat tells the guard.
type proc struct {
	pid, ppid, pgrp, sid int
	state                byte
	kthread              bool
	ticks                uint64 // utime + stime
	start                uint64 // starttime: tells a reused pid from the original
	comm                 string
}

func (p proc) gone() bool { return p.state == 'Z' || p.state == 'X' || p.state == 'x' }

// procScanner reads every /proc/<pid>/stat once per sample. It runs ten times a second
// on the machine being measured, so it keeps one open descriptor per process and
// re-reads it with pread (a third of the cost of open+read+close, measured by
// BenchmarkMonitorSample), lists /proc with raw getdents into a reused buffer, and
// interns comm strings: a steady process table costs no allocations. A descriptor is
// bound to its process, not to the pid number, so a reused pid reads ESRCH and is
// reopened rather than misread.
type procScanner struct {
	dir   string // real path of the host's /proc
	dirFD int    // open /proc, rewound for every listing; -1 until first use
	dents []byte
	buf   []byte
	fds   map[int]int // pid -> open stat descriptor
	seen  map[int]bool
	maxFD int
	procs []proc
	index map[int]int
	// comms interns comm strings so a steady process table allocates nothing.
	comms map[string]string
}

func newProcScanner(h host.Host) (*procScanner, error) {
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
	return &procScanner{
		dir: dir, dirFD: -1, dents: make([]byte, 16<<10), buf: make([]byte, 1024),
		fds: map[int]int{}, seen: map[int]bool{}, maxFD: maxFD,
		index: map[int]int{}, comms: map[string]string{},
	}, nil
}

// close releases every descriptor the scanner holds.
func (s *procScanner) close() {
	for pid, fd := range s.fds {
		syscall.Close(fd)
		delete(s.fds, pid)
	}
	if s.dirFD >= 0 {
		syscall.Close(s.dirFD)
		s.dirFD = -1
	}
}

// scan refreshes the process table. Processes that vanish between the listing and the
// read are simply left out: they are not holders any more.
func (s *procScanner) scan() error {
	if s.dirFD < 0 {
		fd, err := syscall.Open(s.dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("listing processes: %w", &os.PathError{Op: "open", Path: s.dir, Err: err})
		}
		s.dirFD = fd
	} else if _, err := syscall.Seek(s.dirFD, 0, 0); err != nil {
		return fmt.Errorf("listing processes: %w", &os.PathError{Op: "seek", Path: s.dir, Err: err})
	}
	s.procs = s.procs[:0]
	clear(s.index)
	clear(s.seen)
	for {
		n, err := syscall.ReadDirent(s.dirFD, s.dents)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("listing processes: %w", &os.PathError{Op: "getdents", Path: s.dir, Err: err})
		}
		if n <= 0 {
			break
		}
		for b := s.dents[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				break
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			pid, ok := atoiBytes(name)
			if !ok || pid <= 0 {
				continue
			}
			s.seen[pid] = true
			if p, ok := s.read(pid); ok {
				s.index[pid] = len(s.procs)
				s.procs = append(s.procs, p)
			}
		}
	}
	for pid, fd := range s.fds {
		if !s.seen[pid] {
			syscall.Close(fd)
			delete(s.fds, pid)
		}
	}
	if len(s.comms) > 4096 {
		clear(s.comms)
	}
	return nil
}

// lookup returns the scanned process, reading it on its own when it was not in the
// listing (it may have started since).
func (s *procScanner) lookup(pid int) (proc, bool) {
	if i, ok := s.index[pid]; ok {
		return s.procs[i], true
	}
	return s.read(pid)
}

func (s *procScanner) read(pid int) (proc, bool) {
	if fd, ok := s.fds[pid]; ok {
		if p, ok := s.readFD(fd, pid); ok {
			return p, true
		}
		// Gone, or the pid now names another process: start over from the path.
		syscall.Close(fd)
		delete(s.fds, pid)
	}
	fd, err := syscall.Open(s.dir+"/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return proc{}, false
	}
	p, ok := s.readFD(fd, pid)
	if ok && len(s.fds) < s.maxFD {
		s.fds[pid] = fd
	} else {
		syscall.Close(fd)
	}
	return p, ok
}

func (s *procScanner) readFD(fd, pid int) (proc, bool) {
	n := 0
	for {
		m, err := syscall.Pread(fd, s.buf[n:], int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return proc{}, false
		}
		if m <= 0 {
			break
		}
		n += m
		if n < len(s.buf) {
			break
		}
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	p, err := parseStat(s.buf[:n], s.comms)
	if err != nil || p.pid != pid {
		return proc{}, false
	}
	return p, true
}

var errStat = errors.New("malformed /proc/<pid>/stat")

// parseStat reads the fields the guard needs. comm may hold spaces and parentheses, so
// it ends at the LAST ')'.
func parseStat(b []byte, intern map[string]string) (proc, error) {
	open := bytes.IndexByte(b, '(')
	cl := bytes.LastIndexByte(b, ')')
	if open < 1 || cl < open || cl+2 >= len(b) {
		return proc{}, errStat
	}
	var p proc
	pid, ok := atoiBytes(bytes.TrimSpace(b[:open]))
	if !ok {
		return proc{}, errStat
	}
	p.pid = pid
	comm := b[open+1 : cl]
	if c, ok := intern[string(comm)]; ok {
		p.comm = c
	} else {
		c := string(comm)
		if intern != nil {
			intern[c] = c
		}
		p.comm = c
	}
	rest := b[cl+2:]
	// Fields after "comm": 0 state, 1 ppid, 2 pgrp, 3 session, 6 flags, 11 utime,
	// 12 stime, 19 starttime (proc(5) numbers them from 3).
	field := 0
	var utime, stime uint64
	for len(rest) > 0 && field <= 19 {
		i := bytes.IndexByte(rest, ' ')
		var tok []byte
		if i < 0 {
			tok, rest = rest, nil
		} else {
			tok, rest = rest[:i], rest[i+1:]
		}
		switch field {
		case 0:
			if len(tok) != 1 {
				return proc{}, errStat
			}
			p.state = tok[0]
		case 1:
			p.ppid, ok = atoiBytes(tok)
		case 2:
			p.pgrp, ok = atoiBytes(tok)
		case 3:
			p.sid, ok = atoiBytes(tok)
		case 6:
			var fl uint64
			fl, ok = atouBytes(tok)
			p.kthread = fl&pfKthread != 0
		case 11:
			utime, ok = atouBytes(tok)
		case 12:
			stime, ok = atouBytes(tok)
		case 19:
			p.start, ok = atouBytes(bytes.TrimSpace(tok))
		}
		if !ok {
			return proc{}, errStat
		}
		field++
	}
	if field <= 19 {
		return proc{}, errStat
	}
	p.ticks = utime + stime
	return p, nil
}

func atoiBytes(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	if b[0] == '-' {
		neg, b = true, b[1:]
	}
	u, ok := atouBytes(b)
	if !ok {
		return 0, false
	}
	if neg {
		return -int(u), true
	}
	return int(u), true
}

func atouBytes(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}
