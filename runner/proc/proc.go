package proc

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Member is a live process of a started command.
type Member struct {
	PID   int
	Comm  string
	Start uint64 // start time in clock ticks since boot, 0 where unknown
}

// Status is how a command ended.
type Status struct {
	Code   int            // its exit code; -1 when a signal ended it
	Signal syscall.Signal // the signal that ended it, 0 when it exited
}

// ShellCode is the status as a shell reports it: the exit code, or 128+signal.
func (s Status) ShellCode() int {
	if s.Signal != 0 {
		return 128 + int(s.Signal)
	}
	return s.Code
}

// String reads "exit 3" or "signal 9 (killed)".
func (s Status) String() string {
	if s.Signal != 0 {
		return fmt.Sprintf("signal %d (%v)", int(s.Signal), s.Signal)
	}
	return fmt.Sprintf("exit %d", s.Code)
}

// Result is how Run ended.
type Result struct {
	Status Status
	// Stopped is true when the context ended first and the command was stopped.
	Stopped bool
	// Left are the processes the command left running after it exited by itself, all
	// stopped since.
	Left []Member
}

// DefaultGrace is the SIGTERM to SIGKILL delay Run uses when given none.
const DefaultGrace = 5 * time.Second

// Run starts cmd (prepared by exec.Command or host.Command, not started), waits for it,
// and stops whatever it left running. When ctx ends first, the whole command is stopped
// (SIGTERM, SIGKILL after grace) and Result.Stopped is set. The error is for a command
// that could not start or a reaper that failed; an exit status is in the Result.
func Run(ctx context.Context, cmd *exec.Cmd, grace time.Duration) (Result, error) {
	if grace <= 0 {
		grace = DefaultGrace
	}
	p, err := Start(cmd)
	if err != nil {
		return Result{Status: Status{Code: -1}}, err
	}
	var res Result
	select {
	case <-p.Exited():
	case <-ctx.Done():
		res.Stopped = true
		p.Stop(grace)
	}
	if left := p.Cleanup(grace); len(left) > 0 {
		res.Left = append(res.Left, left...)
	}
	res.Status, err = p.Wait()
	return res, err
}
