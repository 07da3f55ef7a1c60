package guard

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
	"unsafe"
)

const pPID = 1 // idtype P_PID of waitid(2)

// exitWatch closes the returned channel when process pid (our child) has exited,
// WITHOUT reaping it: while the leader is an unreaped zombie its pid, and so its process
// group id, cannot be reused, which makes killing the group afterwards safe.
func exitWatch(pid int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var info [128]byte // siginfo_t
		for {
			_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
				uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
			if errno != syscall.EINTR {
				return
			}
		}
	}()
	return done
}

// signalGroup signals the command's process group and every process remembered as part
// of the command that left the group (setsid).
func (r *runner) signalGroup(pid int, sig syscall.Signal) {
	syscall.Kill(-pid, sig)
	for _, p := range r.strays(pid) {
		syscall.Kill(p.pid, sig)
	}
}

// strays lists live processes of the command other than its leader: members of its
// process group and the remembered ones that left it, checked by start time so that a
// reused pid is never signalled.
func (r *runner) strays(pid int) []proc {
	s := r.s
	if err := s.ps.scan(); err != nil {
		return nil
	}
	var out []proc
	for _, p := range s.ps.procs {
		if p.pid == pid || p.gone() {
			continue
		}
		if p.pgrp == pid || (s.sticky[p.pid] == p.start && p.start != 0) {
			out = append(out, p)
		}
	}
	return out
}

// stop ends the command: SIGTERM to its group, SIGKILL after the grace period.
func (r *runner) stop(pid int, exited <-chan struct{}) {
	r.signalGroup(pid, syscall.SIGTERM)
	t := time.NewTimer(r.o.KillGrace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		r.signalGroup(pid, syscall.SIGKILL)
		<-exited
	}
}

// cleanup stops whatever the command left running after its leader exited, so that
// nothing outlives the guarded run (a leftover would be a foreign holder for the next
// one). It returns what it found.
func (r *runner) cleanup(pid int) []Holder {
	left := r.strays(pid)
	if len(left) == 0 {
		return nil
	}
	found := make([]Holder, len(left))
	for i, p := range left {
		found[i] = Holder{PID: p.pid, Comm: p.comm}
	}
	r.signalGroup(pid, syscall.SIGTERM)
	if !r.waitGone(pid, r.o.KillGrace) {
		r.signalGroup(pid, syscall.SIGKILL)
		r.waitGone(pid, 2*time.Second)
	}
	return found
}

// waitGone polls until no stray is left; signals give no completion event for processes
// that are not our children.
func (r *runner) waitGone(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if len(r.strays(pid)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exitCode turns a finished command into a shell-style exit code.
func exitCode(cmd *exec.Cmd, waitErr error) int {
	ps := cmd.ProcessState
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if c := ps.ExitCode(); c >= 0 {
		return c
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		return 1
	}
	return 1
}

// startCode is the shell's code for a command that could not start.
func startCode(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}

// SignalCause is a context cause naming the signal that stops a guarded run; Run maps
// it to exit code 128+signal. Causes set by signal.NotifyContext are recognised too.
type SignalCause struct{ Signal syscall.Signal }

// Error reads like signal.NotifyContext's cause, e.g. "terminated signal received".
func (c SignalCause) Error() string { return c.Signal.String() + " signal received" }

func signalOf(err error) (syscall.Signal, bool) {
	var sc SignalCause
	if errors.As(err, &sc) {
		return sc.Signal, true
	}
	if err == nil {
		return 0, false
	}
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		if err.Error() == s.String()+" signal received" {
			return s, true
		}
	}
	return 0, false
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return fmt.Sprintf("signal %d", int(s))
}
