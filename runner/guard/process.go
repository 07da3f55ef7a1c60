package guard

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
)

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
