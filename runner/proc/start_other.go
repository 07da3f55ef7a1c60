//go:build !linux

package proc

import (
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is a started command. Without Linux's /proc and subreapers, the command runs
// in its own process group (where there are groups) and only that group is signalled.
type Process struct {
	Pid    int // the command's pid, also its process group id where there are groups
	Reaper int // always 0 here

	cmd    *exec.Cmd
	exited chan struct{}
	once   sync.Once
	status Status
	err    error
}

// Start starts cmd in its own process group.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil {
		return nil, errors.New("proc: command already started")
	}
	setGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Pid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		p.status = Status{Code: -1}
		if ps := cmd.ProcessState; ps != nil {
			p.status.Code = ps.ExitCode()
			if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.status.Signal = ws.Signal()
			}
		}
		var ee *exec.ExitError
		if errors.As(p.err, &ee) {
			p.err = nil
		}
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed once the command has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Members is always empty here: there is no /proc to find them in.
func (p *Process) Members() []Member { return nil }

// Signal sends sig to the command's process group.
func (p *Process) Signal(sig syscall.Signal) { signalGroup(p.cmd, sig) }

// Stop ends the command: SIGTERM, then SIGKILL after grace.
func (p *Process) Stop(grace time.Duration) {
	p.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.Signal(syscall.SIGKILL)
		<-p.exited
	}
}

// Cleanup signals the command's group once it exited; it cannot name what it stopped.
func (p *Process) Cleanup(grace time.Duration) []Member {
	p.Signal(syscall.SIGKILL)
	return nil
}

// Wait waits for the command and returns its status.
func (p *Process) Wait() (Status, error) {
	<-p.exited
	return p.status, p.err
}

// Kill sends sig to m.
func Kill(m Member, sig syscall.Signal) error {
	return errors.ErrUnsupported
}

// WaitExit is not available without pidfds.
func WaitExit(pid int, timeout time.Duration) error { return errors.ErrUnsupported }
