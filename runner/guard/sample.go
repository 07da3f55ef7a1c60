package guard

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/proc"
)

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
	kfdDir     string // real path of the KFD proc dir
	kfdHost    string // its host path, for messages
	h          host.Host
	compilerRE *regexp.Regexp
	maxCPU     float64
	cpuWindow  time.Duration

	self  int
	chain map[int]bool // the guard's ancestors up to the guard that holds the lock
	// root is the running command's reaper, 0 when none: every process of the command
	// descends from it (runner/proc), whatever its group or session.
	root int

	ps        *procScanner
	isCompile map[string]bool
	hist      []cpuSnap
	spare     [][]cpuEntry
	dents     []byte
	kfd       []int
	cand      []int
	cur       []cpuEntry
}

type cpuEntry struct {
	pid   int
	start uint64
	ticks uint64
	comm  string
}

type cpuSnap struct {
	t time.Time
	e []cpuEntry
}

func newSampler(h host.Host, kfdDir string, re *regexp.Regexp, maxCPU float64, interval time.Duration) (*sampler, error) {
	ps, err := newProcScanner(h, maxCPU > 0)
	if err != nil {
		return nil, err
	}
	real, err := host.Real(h, kfdDir)
	if err != nil {
		return nil, err
	}
	w := time.Second
	if interval > w {
		w = interval
	}
	return &sampler{
		kfdDir: real, kfdHost: kfdDir, h: h, compilerRE: re, maxCPU: maxCPU, cpuWindow: w,
		self: syscall.Getpid(), chain: map[int]bool{}, ps: ps, isCompile: map[string]bool{},
		dents: make([]byte, 8<<10),
	}, nil
}

// close releases the process scanner's descriptors.
func (s *sampler) close() { s.ps.close() }

// setCommand switches to monitoring the command whose reaper is root; 0 goes back to
// the idle wait.
func (s *sampler) setCommand(root int) { s.root = root }

// ancestorChain returns the processes from this one's parent up to pid when pid is an
// ancestor of this process (pid last), nil when it is not.
func (s *sampler) ancestorChain(pid int) []int {
	clear(s.ps.stats)
	var path []int
	cur := s.self
	for range 4096 {
		p, ok := s.ps.stat(cur)
		if !ok || p.PPID <= 0 {
			return nil
		}
		path = append(path, p.PPID)
		if p.PPID == pid {
			return path
		}
		if p.PPID == 1 {
			return nil
		}
		cur = p.PPID
	}
	return nil
}

// adoptChain makes the processes between this guard and the guard holding the lock
// its own: they are never foreign.
func (s *sampler) adoptChain(path []int) {
	for _, q := range path {
		s.chain[q] = true
	}
}

// kfdPIDs lists the KFD proc dir. A dir that vanished mid-run holds nobody. The dir is
// opened afresh at every sample: a driver reload replaces it.
func (s *sampler) kfdPIDs() ([]int, error) {
	s.kfd = s.kfd[:0]
	fd, err := rawOpen(s.kfdDir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err == syscall.ENOENT {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading KFD proc dir %s: %w", s.kfdHost, err)
	}
	defer rawClose(fd)
	for {
		n, err := rawGetdents(fd, s.dents)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading KFD proc dir %s: %w", s.kfdHost, err)
		}
		if n <= 0 {
			break
		}
		for pid := range direntPIDs(s.dents[:n]) {
			s.kfd = append(s.kfd, pid)
		}
	}
	slices.Sort(s.kfd)
	return s.kfd, nil
}

// checkKFDDir fails early when the KFD dir is missing, so a typo in the override or a
// host without the driver is not mistaken for an idle GPU.
func (s *sampler) checkKFDDir() error {
	if _, err := s.h.ReadDir(s.kfdHost); err != nil {
		return fmt.Errorf("reading KFD proc dir %s: %w (is the amdgpu driver loaded? %s points the guard elsewhere)", s.kfdHost, err, EnvKFDDir)
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
	for _, pid := range kfd {
		p, ok := s.ps.stat(pid)
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
		if p.Gone() {
			continue
		}
		hd := Holder{PID: pid, Comm: p.Comm}
		out.GPU = append(out.GPU, hd)
		if !s.own(pid) {
			out.ForeignGPU = append(out.ForeignGPU, hd)
		}
	}

	s.cand = s.cand[:0]
	for pid, e := range s.ps.procs {
		if !e.kthread && s.compiler(e.comm) {
			s.cand = append(s.cand, pid)
		}
	}
	slices.Sort(s.cand)
	for _, pid := range s.cand {
		p, ok := s.ps.stat(pid)
		if !ok || p.Gone() || p.KThread || !s.compiler(p.Comm) {
			continue
		}
		if !s.own(pid) {
			out.Compilers = append(out.Compilers, Holder{PID: pid, Comm: p.Comm})
		}
	}

	if s.maxCPU > 0 {
		s.cur = s.cur[:0]
		for pid, e := range s.ps.procs {
			if !e.kthread {
				s.cur = append(s.cur, cpuEntry{pid: pid, start: e.start, ticks: e.ticks, comm: e.comm})
			}
		}
		out.CPU = s.cpu(now, s.cur)
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

// own reports whether pid is the guard's: the guard itself, its ancestors up to the
// lock holder when nested, or part of the command (below its reaper).
func (s *sampler) own(pid int) bool {
	if pid == s.self || s.chain[pid] {
		return true
	}
	if s.root == 0 {
		return false
	}
	cur := pid
	for range 4096 {
		if cur == s.root {
			return true
		}
		p, ok := s.ps.stat(cur)
		if !ok || p.PPID <= 1 {
			return false
		}
		cur = p.PPID
	}
	return false
}

// cpu compares the CPU times in cur with the snapshot about one window old.
func (s *sampler) cpu(now time.Time, cur []cpuEntry) []CPUUse {
	var e []cpuEntry
	if n := len(s.spare); n > 0 {
		e, s.spare = s.spare[n-1][:0], s.spare[:n-1]
	}
	snap := cpuSnap{t: now, e: append(e, cur...)}
	slices.SortFunc(snap.e, func(a, b cpuEntry) int { return a.pid - b.pid })
	for len(s.hist) >= 2 && now.Sub(s.hist[1].t) >= s.cpuWindow {
		s.spare = append(s.spare, s.hist[0].e)
		s.hist = s.hist[1:]
	}
	var out []CPUUse
	if len(s.hist) > 0 && now.Sub(s.hist[0].t) >= s.cpuWindow {
		base := s.hist[0]
		dt := now.Sub(base.t).Seconds()
		j := 0
		for _, e := range snap.e {
			for j < len(base.e) && base.e[j].pid < e.pid {
				j++
			}
			if j == len(base.e) || base.e[j].pid != e.pid || base.e[j].start != e.start || e.ticks < base.e[j].ticks {
				continue
			}
			pct := float64(e.ticks-base.e[j].ticks) / proc.ClockTicks / dt * 100
			if pct <= s.maxCPU || s.own(e.pid) {
				continue
			}
			out = append(out, CPUUse{PID: e.pid, Comm: e.comm, Percent: pct})
		}
	}
	s.hist = append(s.hist, snap)
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
