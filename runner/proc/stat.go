package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// pfKthread is PF_KTHREAD in the flags field of /proc/<pid>/stat.
const pfKthread = 0x00200000

// ClockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat; it is 100 on
// every Linux architecture perfbot runs on.
const ClockTicks = 100

// Stat is what one line of /proc/<pid>/stat tells perfbot.
type Stat struct {
	PID, PPID, PGRP, SID int
	State                byte
	KThread              bool
	// Thread is true for a thread that is not its process's leader (exit_signal -1):
	// /proc/<tid>/stat can be read for any thread id, listed or not.
	Thread bool
	Ticks  uint64 // utime + stime, in ClockTicks
	Start  uint64 // starttime: tells a reused pid from the original
	Comm   string
}

// Gone reports a process that has exited (a zombie, or being torn down).
func (s Stat) Gone() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// ErrStat is returned for a line that is not a /proc/<pid>/stat line.
var ErrStat = errors.New("malformed /proc/<pid>/stat")

// ParseStat reads the fields perfbot needs. comm may hold spaces and parentheses, so it
// ends at the LAST ')'. intern, when not nil, deduplicates comm strings so that a
// steady process table allocates nothing.
func ParseStat(b []byte, intern map[string]string) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	cl := bytes.LastIndexByte(b, ')')
	if open < 1 || cl < open || cl+2 >= len(b) {
		return Stat{}, ErrStat
	}
	var p Stat
	pid, ok := atoi(bytes.TrimSpace(b[:open]))
	if !ok {
		return Stat{}, ErrStat
	}
	p.PID = pid
	p.Comm = Intern(b[open+1:cl], intern)
	rest := b[cl+2:]
	// Fields after "comm": 0 state, 1 ppid, 2 pgrp, 3 session, 6 flags, 11 utime,
	// 12 stime, 19 starttime, 35 exit_signal (proc(5) numbers them from 3).
	field := 0
	var utime, stime uint64
	for len(rest) > 0 && field <= 35 {
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
				return Stat{}, ErrStat
			}
			p.State = tok[0]
		case 1:
			p.PPID, ok = atoi(tok)
		case 2:
			p.PGRP, ok = atoi(tok)
		case 3:
			p.SID, ok = atoi(tok)
		case 6:
			var fl uint64
			fl, ok = atou(tok)
			p.KThread = fl&pfKthread != 0
		case 11:
			utime, ok = atou(tok)
		case 12:
			stime, ok = atou(tok)
		case 19:
			p.Start, ok = atou(bytes.TrimSpace(tok))
		case 35:
			var sig int
			sig, ok = atoi(bytes.TrimSpace(tok))
			p.Thread = sig == -1
		}
		if !ok {
			return Stat{}, ErrStat
		}
		field++
	}
	if field <= 19 {
		return Stat{}, ErrStat
	}
	p.Ticks = utime + stime
	return p, nil
}

// Intern returns b as a string, the same string for the same bytes while intern holds
// it (nil intern: a fresh string).
func Intern(b []byte, intern map[string]string) string {
	if c, ok := intern[string(b)]; ok {
		return c
	}
	c := string(b)
	if intern != nil {
		intern[c] = c
	}
	return c
}

// ReadStat reads /proc/<pid>/stat.
func ReadStat(pid int) (Stat, error) {
	var buf [1024]byte
	return readStat(pid, buf[:], nil)
}

func readStat(pid int, buf []byte, intern map[string]string) (Stat, error) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return Stat{}, err
	}
	defer syscall.Close(fd)
	n, err := syscall.Read(fd, buf)
	if err != nil {
		return Stat{}, err
	}
	if n == len(buf) {
		// Longer than any stat line perfbot reads (comm is at most 64 bytes).
		return Stat{}, ErrStat
	}
	s, err := ParseStat(buf[:n], intern)
	if err == nil && s.PID != pid {
		err = ErrStat
	}
	return s, err
}

// Scan reads every process in /proc. Processes that exit during the scan are left out.
func Scan() ([]Stat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]Stat, 0, len(names))
	buf := make([]byte, 1024)
	intern := map[string]string{}
	for _, n := range names {
		pid, ok := atoi([]byte(n))
		if !ok || pid <= 0 {
			continue
		}
		if s, err := readStat(pid, buf, intern); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// Descendants returns the processes of all that descend from root by parent links
// (root itself excluded), zombies included.
func Descendants(all []Stat, root int) []Stat {
	children := make(map[int][]int, len(all))
	for i, s := range all {
		children[s.PPID] = append(children[s.PPID], i)
	}
	var out []Stat
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, i := range children[p] {
			s := all[i]
			if seen[s.PID] {
				continue
			}
			seen[s.PID] = true
			out = append(out, s)
			queue = append(queue, s.PID)
		}
	}
	return out
}

func atoi(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	if b[0] == '-' {
		neg, b = true, b[1:]
	}
	u, ok := atou(b)
	if !ok || u > 1<<62 {
		return 0, false
	}
	if neg {
		return -int(u), true
	}
	return int(u), true
}

func atou(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// Atoi parses a decimal pid-like number without allocating.
func Atoi(b []byte) (int, bool) { return atoi(b) }
