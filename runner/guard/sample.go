package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/perfbot/runner/host"
)

// Holder is a process a sample saw: its pid and kernel comm name ("?" when unreadable).
type Holder struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
}

// String is `pid:comm`, as in the log.
func (h Holder) String() string { return strconv.Itoa(h.PID) + ":" + h.Comm }

// CPUUse is a foreign process above the CPU limit, in percent of one core.
type CPUUse struct {
	PID     int     `json:"pid"`
	Comm    string  `json:"comm"`
	Percent float64 `json:"percent"`
}

// String is `pid:comm:NN%`, as in the log.
func (c CPUUse) String() string {
	return fmt.Sprintf("%d:%s:%.0f%%", c.PID, c.Comm, c.Percent)
}

// Sample is one look at the host.
type Sample struct {
	Time       time.Time
	GPU        []Holder // every live KFD holder, the command's own included
	ForeignGPU []Holder // holders that are not the command's, nor the guard's
	Compilers  []Holder // foreign processes whose comm matches the compiler pattern
	CPU        []CPUUse // foreign processes above MaxForeignCPU
}

// Contended reports whether anything foreign was seen.
func (s Sample) Contended() bool {
	return len(s.ForeignGPU) > 0 || len(s.Compilers) > 0 || len(s.CPU) > 0
}

// sampler takes samples. It is used from one goroutine at a time.
type sampler struct {
	h          host.Host
	kfdDir     string
	compilerRE *regexp.Regexp
	maxCPU     float64
	cpuWindow  time.Duration

	self  int
	chain map[int]bool // the guard's ancestors up to the guard that holds the lock
	cmd   int          // pid (and process group) of the running command; 0 when none
	// sticky remembers processes once seen in the command's tree (pid -> start time),
	// so a child that later leaves the tree (setsid, then its parent exits) stays ours.
	sticky map[int]uint64

	ps        *procScanner
	memo      []int8
	isCompile map[string]bool
	hist      []cpuSnap
}

type cpuEntry struct {
	pid   int
	start uint64
	ticks uint64
}

type cpuSnap struct {
	t time.Time
	e []cpuEntry
}

func newSampler(h host.Host, kfdDir string, re *regexp.Regexp, maxCPU float64, interval time.Duration) (*sampler, error) {
	ps, err := newProcScanner(h)
	if err != nil {
		return nil, err
	}
	w := time.Second
	if interval > w {
		w = interval
	}
	return &sampler{
		h: h, kfdDir: kfdDir, compilerRE: re, maxCPU: maxCPU, cpuWindow: w,
		self: syscall.Getpid(), chain: map[int]bool{}, sticky: map[int]uint64{},
		ps: ps, isCompile: map[string]bool{},
	}, nil
}

// close releases the process scanner's descriptors.
func (s *sampler) close() { s.ps.close() }

// setCommand switches to monitoring the command whose pid (and process group) is pid;
// 0 goes back to the idle wait.
func (s *sampler) setCommand(pid int) {
	s.cmd = pid
	clear(s.sticky)
}

// ancestorChain reports whether pid is an ancestor of this process and, if so,
// remembers the processes in between as the guard's own.
func (s *sampler) ancestorChain(pid int) bool {
	if err := s.ps.scan(); err != nil {
		return false
	}
	var path []int
	cur := s.self
	for range 4096 {
		p, ok := s.ps.lookup(cur)
		if !ok || p.ppid <= 0 {
			return false
		}
		path = append(path, p.ppid)
		if p.ppid == pid {
			for _, q := range path {
				s.chain[q] = true
			}
			return true
		}
		if p.ppid == 1 {
			return false
		}
		cur = p.ppid
	}
	return false
}

// kfdPIDs lists the KFD proc dir. A dir that vanished mid-run holds nobody.
func (s *sampler) kfdPIDs() ([]int, error) {
	ents, err := s.h.ReadDir(s.kfdDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading KFD proc dir %s: %w", s.kfdDir, err)
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// checkKFDDir fails early when the KFD dir is missing, so a typo in the override or a
// host without the driver is not mistaken for an idle GPU.
func (s *sampler) checkKFDDir() error {
	if _, err := s.h.ReadDir(s.kfdDir); err != nil {
		return fmt.Errorf("reading KFD proc dir %s: %w (is the amdgpu driver loaded? %s points the guard elsewhere)", s.kfdDir, err, EnvKFDDir)
	}
	return nil
}

// sample looks at the host once.
func (s *sampler) sample(now time.Time) (Sample, error) {
	out := Sample{Time: now}
	if err := s.ps.scan(); err != nil {
		return out, err
	}
	kfd, err := s.kfdPIDs()
	if err != nil {
		return out, err
	}
	procs := s.ps.procs
	if cap(s.memo) < len(procs) {
		s.memo = make([]int8, len(procs), 2*len(procs))
	}
	s.memo = s.memo[:len(procs)]
	clear(s.memo)

	if s.cmd != 0 {
		for pid, start := range s.sticky {
			if i, ok := s.ps.index[pid]; !ok || procs[i].start != start {
				delete(s.sticky, pid)
			}
		}
		for i := range procs {
			if s.inCommand(i, 0) && !procs[i].gone() {
				s.sticky[procs[i].pid] = procs[i].start
			}
		}
	}

	for _, pid := range kfd {
		p, ok := s.ps.lookup(pid)
		if !ok {
			// Not readable: gone, or hidden by hidepid. Only a signal probe tells.
			if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
				continue
			}
			hd := Holder{PID: pid, Comm: "?"}
			out.GPU = append(out.GPU, hd)
			out.ForeignGPU = append(out.ForeignGPU, hd)
			continue
		}
		if p.gone() {
			continue
		}
		hd := Holder{PID: pid, Comm: p.comm}
		out.GPU = append(out.GPU, hd)
		if !s.ownProc(p) {
			out.ForeignGPU = append(out.ForeignGPU, hd)
		}
	}

	for i := range procs {
		p := &procs[i]
		if p.kthread || p.gone() || !s.compiler(p.comm) {
			continue
		}
		if !s.own(i) {
			out.Compilers = append(out.Compilers, Holder{PID: p.pid, Comm: p.comm})
		}
	}

	if s.maxCPU > 0 {
		out.CPU = s.cpu(now)
	}
	return out, nil
}

func (s *sampler) compiler(comm string) bool {
	m, ok := s.isCompile[comm]
	if !ok {
		m = s.compilerRE.MatchString(comm)
		if len(s.isCompile) > 4096 {
			clear(s.isCompile)
		}
		s.isCompile[comm] = m
	}
	return m
}

// own reports whether scanned process i is the guard's: the guard itself, its
// ancestors up to the lock holder when nested, or part of the command.
func (s *sampler) own(i int) bool {
	p := s.ps.procs[i]
	if p.pid == s.self || s.chain[p.pid] {
		return true
	}
	return s.cmd != 0 && s.inCommand(i, 0)
}

// ownProc is own for a process that may not be in the scan.
func (s *sampler) ownProc(p proc) bool {
	if i, ok := s.ps.index[p.pid]; ok {
		return s.own(i)
	}
	if p.pid == s.self || s.chain[p.pid] {
		return true
	}
	if s.cmd == 0 {
		return false
	}
	if p.pgrp == s.cmd || (s.sticky[p.pid] == p.start && p.start != 0) {
		return true
	}
	if j, ok := s.ps.index[p.ppid]; ok {
		return s.inCommand(j, 0)
	}
	return false
}

// inCommand reports whether process i belongs to the command: its process group, a
// descendant by parent links, or remembered from an earlier sample. Memoized per sample.
func (s *sampler) inCommand(i, depth int) bool {
	switch s.memo[i] {
	case 1:
		return true
	case 2:
		return false
	}
	p := s.ps.procs[i]
	res := false
	switch {
	case p.pid == s.cmd || p.pgrp == s.cmd:
		res = true
	case s.sticky[p.pid] == p.start && p.start != 0:
		res = true
	case p.ppid > 1 && depth < 4096:
		if j, ok := s.ps.index[p.ppid]; ok && j != i {
			res = s.inCommand(j, depth+1)
		}
	}
	if res {
		s.memo[i] = 1
	} else {
		s.memo[i] = 2
	}
	return res
}

// cpu compares CPU times with the snapshot about one window old.
func (s *sampler) cpu(now time.Time) []CPUUse {
	procs := s.ps.procs
	cur := cpuSnap{t: now, e: make([]cpuEntry, 0, len(procs))}
	for _, p := range procs {
		if !p.kthread && !p.gone() {
			cur.e = append(cur.e, cpuEntry{pid: p.pid, start: p.start, ticks: p.ticks})
		}
	}
	slices.SortFunc(cur.e, func(a, b cpuEntry) int { return a.pid - b.pid })
	for len(s.hist) >= 2 && now.Sub(s.hist[1].t) >= s.cpuWindow {
		s.hist = s.hist[1:]
	}
	var out []CPUUse
	if len(s.hist) > 0 && now.Sub(s.hist[0].t) >= s.cpuWindow {
		base := s.hist[0]
		dt := now.Sub(base.t).Seconds()
		j := 0
		for _, e := range cur.e {
			for j < len(base.e) && base.e[j].pid < e.pid {
				j++
			}
			if j == len(base.e) || base.e[j].pid != e.pid || base.e[j].start != e.start || e.ticks < base.e[j].ticks {
				continue
			}
			pct := float64(e.ticks-base.e[j].ticks) / clockTicks / dt * 100
			if pct <= s.maxCPU {
				continue
			}
			i := s.ps.index[e.pid]
			if s.own(i) {
				continue
			}
			out = append(out, CPUUse{PID: e.pid, Comm: procs[i].comm, Percent: pct})
		}
	}
	s.hist = append(s.hist, cur)
	return out
}

// holderList prints holders the way the shell guard does: [pid:comm,pid:comm].
func holderList(hs []Holder) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, h := range hs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(h.String())
	}
	b.WriteByte(']')
	return b.String()
}

func cpuList(cs []CPUUse) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return "[" + strings.Join(parts, ",") + "]"
}
