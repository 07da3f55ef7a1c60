package job

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/results"
)

// guarded is how one guarded command ended.
type guarded struct {
	out    guard.Outcome
	output []byte // stdout and stderr of the last attempt, guard lines included
	log    *phaseLog
	err    error // the guard could not work, or the run was cancelled
}

// runGuarded runs argv under the guard with extra environment env, writing
// everything it prints to the raw log at rawPath ("" for none).
func runGuarded(ctx context.Context, g guard.Options, label string, argv, env []string, rawPath string, prog *progress, progLabel string) guarded {
	return runGuardedObserved(ctx, g, label, argv, env, rawPath, prog, progLabel, nil)
}

// runGuardedObserved is runGuarded that also hands every line (the guard's echoed ones
// with their prefix) to observe, when set.
func runGuardedObserved(ctx context.Context, g guard.Options, label string, argv, env []string, rawPath string, prog *progress, progLabel string, observe func(string)) guarded {
	var raw io.Writer
	if rawPath != "" {
		f, err := os.OpenFile(rawPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return guarded{err: fmt.Errorf("opening the raw log: %w", err)}
		}
		defer f.Close()
		raw = f
	}
	pl := newPhaseLog(raw, prog, progLabel)
	pl.observe = observe
	g.Label = label
	g.Env = append(append([]string(nil), g.Env...), env...)
	g.Stdin = nil
	g.Stdout, g.Stderr = pl, pl
	out, err := guard.Run(ctx, g, argv)
	pl.close()
	return guarded{out: out, output: pl.lastAttempt(), log: pl, err: err}
}

// interrupted says the run was stopped by a signal or a cancelled context.
func (r guarded) interrupted() bool {
	return r.out.Verdict == guard.Interrupted
}

// gaveUp says the guard never got a clean attempt: the wait budget ran out or every
// attempt was contended.
func (r guarded) gaveUp() bool {
	return r.out.GaveUp || r.out.Verdict == guard.Contended || r.out.Verdict == guard.GaveUp
}

// gaveUpReason says why the guard gave up, with the last foreign processes it saw.
func (r guarded) gaveUpReason(g guard.Options) string {
	n := len(r.out.Attempts)
	if r.out.GaveUp || n > 0 && r.out.Attempts[n-1].Verdict == guard.GaveUp {
		why := fmt.Sprintf("the GPU guard gave up (exit %d): no %s idle window within its %s wait budget",
			guard.ExitContended, dur(g.Idle), dur(g.MaxWait))
		if r.log != nil && r.log.lastReset != "" {
			why += "; last seen: " + r.log.lastReset
		}
		return why
	}
	why := fmt.Sprintf("the GPU guard gave up (exit %d): every attempt (%d) was contended", guard.ExitContended, n)
	if n > 0 {
		a := r.out.Attempts[n-1]
		why += fmt.Sprintf("; last attempt saw foreign_gpu=%s compilers=%s", holders(a.ForeignGPU), holders(a.Compilers))
	}
	return why
}

func holders(hs []guard.Holder) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = h.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// dur prints a duration the short way: 1m30s, 4h, 300ms.
func dur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// exitText describes a shell-style exit status: "status 139 (SIGSEGV)".
func exitText(code int) string {
	if code > 128 && code < 128+65 {
		return fmt.Sprintf("status %d (%s)", code, signalName(syscall.Signal(code-128)))
	}
	return fmt.Sprintf("status %d", code)
}

func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGABRT: "SIGABRT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGKILL: "SIGKILL",
		syscall.SIGBUS: "SIGBUS", syscall.SIGILL: "SIGILL", syscall.SIGFPE: "SIGFPE",
		syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP",
		syscall.SIGPIPE: "SIGPIPE", syscall.SIGTRAP: "SIGTRAP",
	}
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

// phaseOf records a guarded phase for the session manifest.
func phaseOf(label, log string, r guarded) *results.Phase {
	p := &results.Phase{Label: label, ExitCode: r.out.ExitCode, Verdict: string(r.out.Verdict), Attempts: len(r.out.Attempts), Log: log}
	for _, a := range r.out.Attempts {
		p.WaitSecs += a.IdleWaitSecs + a.LockWaitSecs
	}
	p.WaitSecs = round1(p.WaitSecs)
	if n := len(r.out.Attempts); n > 0 {
		a := r.out.Attempts[n-1]
		if (a.Verdict == guard.Clean || a.Verdict == guard.Contended) && a.End.After(a.Start) {
			p.RunSecs = round1(a.End.Sub(a.Start).Seconds())
		}
	}
	return p
}

func round1(x float64) float64 {
	return float64(int64(x*10+0.5)) / 10
}
