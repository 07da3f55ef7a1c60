package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a started command.
type Process struct {
	// Pid is the command's pid, also its process group id.
	Pid int
	// Reaper is the pid of the command's reaper: every process of the command descends
	// from it. 0 where there is no reaper.
	Reaper int

	cmd     *exec.Cmd // the reaper's
	ctl     *os.File  // write end of the reaper's control pipe
	exited  chan struct{}
	mu      sync.Mutex
	status  Status
	lost    error // the reaper ended without reporting the command's exit
	waitErr error
	waited  bool
	cleaned bool
}

// Start starts cmd under a reaper of its own, in its own process group, with SIGKILL as
// its parent-death signal. cmd is as exec.Command or host.Command prepared it (Path,
// Args, Env, Dir, standard streams, WaitDelay; a failed lookup in cmd.Err); Start takes
// it over: use the Process, never cmd.Wait.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil {
		return nil, errors.New("proc: command already started")
	}
	path := cmd.Path
	if !filepath.IsAbs(path) {
		// The reaper runs in cmd.Dir: a path relative to our own folder would miss.
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", path, err)
		}
		path = abs
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Args[0], err)
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		return nil, fmt.Errorf("starting %s: %w", cmd.Args[0], err)
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	r := &exec.Cmd{
		Path:   "/proc/self/exe",
		Args:   append([]string{reaperArg0, path}, cmd.Args...),
		Env:    append(append([]string(nil), env...), envReaper+"="+reaperConfig{parent: os.Getpid(), grace: DefaultGrace}.String()),
		Dir:    cmd.Dir,
		Stdin:  cmd.Stdin,
		Stdout: cmd.Stdout,
		Stderr: cmd.Stderr,
		// The reaper is in a group of its own: a terminal's ^C reaches perfbot, which
		// decides, not the reaper. SIGTERM when perfbot dies makes it stop the command.
		ExtraFiles:  []*os.File{statusW, ctlR},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM},
		WaitDelay:   cmd.WaitDelay,
	}
	if r.WaitDelay <= 0 {
		r.WaitDelay = 2 * time.Second
	}
	// The parent-death signal follows the thread that forks, not the process: fork from
	// a new goroutine, which never runs on a thread locked to another goroutine (such a
	// thread ends with its goroutine, and the reaper would take it for perfbot's death).
	started := make(chan error, 1)
	go func() { started <- r.Start() }()
	err = <-started
	statusW.Close()
	ctlR.Close()
	if err != nil {
		statusR.Close()
		ctlW.Close()
		return nil, fmt.Errorf("starting the reaper for %s: %w", cmd.Args[0], err)
	}
	p := &Process{Reaper: r.Process.Pid, cmd: r, ctl: ctlW, exited: make(chan struct{})}
	rd := bufio.NewReader(statusR)
	first, err := rd.ReadString('\n')
	kind, arg, _ := strings.Cut(strings.TrimSpace(first), " ")
	n, convErr := strconv.Atoi(arg)
	switch {
	case err == nil && kind == "started" && convErr == nil && n > 0:
		p.Pid = n
	case err == nil && kind == "failed" && convErr == nil:
		statusR.Close()
		ctlW.Close()
		r.Wait()
		return nil, &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: syscall.Errno(n)}
	default:
		statusR.Close()
		ctlW.Close()
		werr := r.Wait()
		return nil, fmt.Errorf("starting %s: the reaper said %q (%v, %v)", cmd.Args[0], first, err, werr)
	}
	go p.watch(rd, statusR)
	return p, nil
}

// watch reads the reaper's report of the command's exit.
func (p *Process) watch(rd *bufio.Reader, f *os.File) {
	defer f.Close()
	defer close(p.exited)
	line, err := rd.ReadString('\n')
	var code, sig int
	if _, serr := fmt.Sscanf(strings.TrimSpace(line), "exited %d %d", &code, &sig); err != nil || serr != nil {
		p.mu.Lock()
		p.status = Status{Code: -1, Signal: syscall.SIGKILL}
		p.lost = fmt.Errorf("the reaper of pid %d ended before the command did", p.Pid)
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	p.status = Status{Code: code, Signal: syscall.Signal(sig)}
	p.mu.Unlock()
}

// Exited is closed once the command's own process (the group leader) has exited. Its
// group and leftovers may still be running.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Members lists the live processes of the command: the leader while it runs, and
// everything below the reaper, whatever its group or session.
func (p *Process) Members() []Member {
	all, err := Scan()
	if err != nil {
		return nil
	}
	var out []Member
	for _, s := range Descendants(all, p.Reaper) {
		if !s.Gone() {
			out = append(out, Member{PID: s.PID, Comm: s.Comm, Start: s.Start})
		}
	}
	return out
}

// Signal sends sig to the command's process group and to every member, wherever it is.
// The leader is not reaped before Wait, so the group id cannot have been reused.
func (p *Process) Signal(sig syscall.Signal) {
	syscall.Kill(-p.Pid, sig)
	for _, m := range p.Members() {
		Kill(m, sig)
	}
}

// Stop ends the command: SIGTERM to all of it, SIGKILL to what is left after grace.
func (p *Process) Stop(grace time.Duration) {
	p.Signal(syscall.SIGTERM)
	if !p.waitQuiet(grace) {
		p.Signal(syscall.SIGKILL)
		p.waitQuiet(killWait)
	}
}

// killWait bounds the wait after SIGKILL: only a process stuck in the kernel outlasts it.
const killWait = 5 * time.Second

// Cleanup stops what the command left running after its leader exited and returns what
// it found (nil when nothing was left).
func (p *Process) Cleanup(grace time.Duration) []Member {
	p.mu.Lock()
	p.cleaned = true
	p.mu.Unlock()
	left := p.Members()
	if len(left) == 0 {
		return nil
	}
	p.Stop(grace)
	return left
}

// waitQuiet polls until the leader has exited and no member is left; signals give no
// completion event for processes that are not our children.
func (p *Process) waitQuiet(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-p.exited:
			if len(p.Members()) == 0 {
				return true
			}
		default:
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Wait waits for the command to exit, stops what it left running (Cleanup, unless
// done already), lets its reaper go, and waits for the reaper and the copying of the
// command's output. It returns the command's status; the error says the reaper failed.
func (p *Process) Wait() (Status, error) {
	<-p.exited
	p.mu.Lock()
	cleaned := p.cleaned
	p.mu.Unlock()
	if !cleaned {
		p.Cleanup(DefaultGrace)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.waited {
		p.waited = true
		fmt.Fprintln(p.ctl, "release")
		p.ctl.Close()
		if err := p.cmd.Wait(); err != nil && p.lost == nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				// The output copy failed or timed out; the status still stands.
				p.waitErr = fmt.Errorf("waiting for the output of pid %d: %w", p.Pid, err)
			}
		}
	}
	if p.lost != nil {
		return p.status, p.lost
	}
	return p.status, p.waitErr
}

// Kill sends sig to m unless its pid now names another process: it opens a pidfd,
// then checks the start time, so a reused pid is never signalled.
func Kill(m Member, sig syscall.Signal) error {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(m.PID), 0, 0)
	if errno == syscall.ENOSYS {
		return syscall.Kill(m.PID, sig)
	}
	if errno != 0 {
		return errno
	}
	defer syscall.Close(int(fd))
	if m.Start != 0 {
		s, err := ReadStat(m.PID)
		if err != nil {
			return err
		}
		if s.Start != m.Start {
			return syscall.ESRCH
		}
	}
	if _, _, errno := syscall.Syscall6(sysPidfdSendSignal, fd, uintptr(sig), 0, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

const (
	sysPidfdSendSignal = 424
	sysPidfdOpen       = 434
)

// WaitExit waits until pid has exited (a zombie counts as exited), at most timeout. It
// works for any process, not only a child: a pidfd turns readable when it exits.
func WaitExit(pid int, timeout time.Duration) error {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno == syscall.ESRCH {
		return nil
	}
	if errno != 0 {
		return fmt.Errorf("pidfd_open %d: %w", pid, errno)
	}
	defer syscall.Close(int(fd))
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("waiting for pid %d: %w", pid, err)
	}
	defer syscall.Close(ep)
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, int(fd), &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}); err != nil {
		return fmt.Errorf("waiting for pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	ev := make([]syscall.EpollEvent, 1)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		n, err := syscall.EpollWait(ep, ev, int(left.Milliseconds())+1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for pid %d: %w", pid, err)
		}
		if n > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d still running after %s", pid, timeout)
		}
	}
}
