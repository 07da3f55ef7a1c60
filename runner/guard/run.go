package guard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/perfbot/runner/proc"
)

// Outcome is how a guarded run ended.
type Outcome struct {
	// ExitCode is the command's own on a clean attempt (or in hold mode), ExitContended
	// when every attempt was contended or the wait budget ran out, 128+signal when
	// interrupted, 127/126 when the command could not start.
	ExitCode int
	Verdict  Verdict        // of the last attempt
	Attempts []Attempt      // one per attempt, as written to `<log>.jsonl`
	GaveUp   bool           // the wait budget ran out
	Nested   bool           // the lock was already held by an ancestor guard
	Signal   syscall.Signal // the signal that ended the run, if one did
}

// runner is one guarded run in progress.
type runner struct {
	o      Options
	argv   []string
	ev     *evidence
	s      *sampler
	waited time.Duration // lock and idle waits so far, against MaxWait
	nested bool
	heldBy int // the pid the command sees in ROCM_GPU_GUARD_LOCK_HELD
}

// waitResult says how a wait ended.
type waitResult int

const (
	waitDone waitResult = iota
	waitGaveUp
	waitInterrupted
)

// Run runs argv under the guard: it takes the host lock (unless an ancestor guard holds
// it), waits for an idle window, runs the command while sampling, and reruns contended
// attempts. Errors are for a guard that could not work (bad options, no KFD dir,
// unwritable log), a command that could not start, and a cancellation that no signal
// caused; contention, give-ups and signals are in the Outcome and the evidence log.
func Run(ctx context.Context, opts Options, argv []string) (Outcome, error) {
	if err := opts.validate(argv); err != nil {
		return Outcome{ExitCode: 2}, err
	}
	opts.fill()
	if _, real := opts.Clock.(RealClock); real {
		if fc := newFDClock(); fc != nil {
			defer fc.close()
			opts.Clock = fc
		}
	}
	ev, err := openEvidence(opts.LogPath, opts.Clock, opts.Stderr)
	if err != nil {
		return Outcome{ExitCode: 1}, err
	}
	defer ev.close()
	s, err := newSampler(opts.Host, opts.KFDDir, opts.CompilerRE, opts.MaxForeignCPU, opts.interval())
	if err != nil {
		return Outcome{ExitCode: 1}, err
	}
	defer s.close()
	if !opts.Hold {
		if err := s.checkKFDDir(); err != nil {
			return Outcome{ExitCode: 1}, err
		}
	}
	r := &runner{o: opts, argv: argv, ev: ev, s: s, heldBy: os.Getpid()}
	return r.run(ctx)
}

func (r *runner) run(ctx context.Context) (Outcome, error) {
	var out Outcome
	if held := r.o.LockHeldBy; held > 0 {
		if why := r.checkNested(held); why == "" {
			r.nested, r.heldBy = true, held
			out.Nested = true
			r.ev.event("host lock held by ancestor guard pid %d: not taking it again", held)
		} else {
			r.ev.event("%s=%d ignored: %s; taking the host lock", EnvLockHeld, held, why)
		}
	}
	lockStart := r.o.Clock.Now()
	var lock *hostLock
	if !r.nested {
		var res waitResult
		var err error
		lock, res, err = r.acquire(ctx)
		if err != nil {
			return Outcome{ExitCode: 1}, err
		}
		if res != waitDone {
			return r.ended(ctx, out, res, 1, 0, lockStart, true)
		}
	}
	defer lock.release()
	lockWait := r.waited

	if r.o.Hold {
		return r.hold(ctx, out)
	}
	for k := 1; k <= r.o.MaxAttempts; k++ {
		waitStart := r.o.Clock.Now()
		before := r.waited
		res, resets, err := r.waitIdle(ctx)
		if err != nil {
			return Outcome{ExitCode: 1}, err
		}
		if res == waitDone && ctx.Err() != nil {
			// Cancelled while the last sample was being judged: start nothing.
			res = waitInterrupted
		}
		if res != waitDone {
			return r.ended(ctx, out, res, k, resets, waitStart, false)
		}
		a := Attempt{
			Label: r.o.Label, Attempt: k, MaxAttempts: r.o.MaxAttempts, Command: r.argv,
			SampleHz: r.o.SampleHz, IdleWaitSecs: round1(r.waited - before), IdleResets: resets,
			Nested: r.nested,
		}
		if k == 1 {
			a.LockWaitSecs = round1(lockWait)
		}
		if hook := r.o.BeforeAttempt; hook != nil {
			if err := hook(k); err != nil {
				r.ev.event("attempt %d/%d: not started: %v", k, r.o.MaxAttempts, err)
				return Outcome{ExitCode: 1, Attempts: out.Attempts}, fmt.Errorf("preparing attempt %d: %w", k, err)
			}
		}
		err = r.attempt(ctx, &a)
		out.Attempts = append(out.Attempts, a)
		out.Verdict = a.Verdict
		if rerr := r.ev.record(a); rerr != nil && err == nil {
			err = rerr
		}
		switch a.Verdict {
		case Clean, NotStarted:
			out.ExitCode = a.ExitCode
			return out, err
		case Interrupted:
			out.ExitCode = a.ExitCode
			out.Signal, _ = signalOf(context.Cause(ctx))
			if out.Signal == 0 {
				return out, fmt.Errorf("guarded run cancelled: %w", context.Cause(ctx))
			}
			return out, err
		}
		if err != nil {
			// The monitor could not look at the host: nothing more can be judged.
			out.ExitCode = 1
			return out, err
		}
		if k < r.o.MaxAttempts {
			r.ev.event("attempt %d: REJECTED (contended), exit %d; rerunning", k, a.ExitCode)
		} else {
			r.ev.event("attempt %d: REJECTED (contended), exit %d; no attempts left", k, a.ExitCode)
		}
	}
	r.ev.event("every attempt (%d) was contended", r.o.MaxAttempts)
	out.ExitCode = ExitContended
	return out, nil
}

// ended finishes a run whose wait (for the lock, or for idle) gave up or was
// interrupted before attempt k started.
func (r *runner) ended(ctx context.Context, out Outcome, res waitResult, k, resets int, since time.Time, inLock bool) (Outcome, error) {
	now := r.o.Clock.Now()
	a := Attempt{
		Label: r.o.Label, Attempt: k, MaxAttempts: r.o.MaxAttempts, Command: r.argv,
		Start: since, End: now, SampleHz: r.o.SampleHz, IdleResets: resets, Nested: r.nested,
		ForeignGPU: []Holder{}, Compilers: []Holder{},
	}
	if inLock {
		a.LockWaitSecs = round1(now.Sub(since))
	} else {
		a.IdleWaitSecs = round1(now.Sub(since))
	}
	var err error
	if res == waitGaveUp {
		a.Verdict, a.ExitCode = GaveUp, ExitContended
		out.GaveUp = true
	} else {
		a.Verdict, a.ExitCode, err = r.interrupted(ctx)
		out.Signal, _ = signalOf(context.Cause(ctx))
	}
	if !r.o.Hold {
		if rerr := r.ev.record(a); rerr != nil && err == nil {
			err = rerr
		}
	}
	out.Attempts = append(out.Attempts, a)
	out.Verdict, out.ExitCode = a.Verdict, a.ExitCode
	return out, err
}

// interrupted logs the shell guard's line for a signal and picks the exit code.
func (r *runner) interrupted(ctx context.Context) (Verdict, int, error) {
	cause := context.Cause(ctx)
	if sig, ok := signalOf(cause); ok {
		r.ev.event("caught %s: stopping command and monitor", signalName(sig))
		return Interrupted, 128 + int(sig), nil
	}
	r.ev.event("cancelled (%v): stopping command and monitor", cause)
	return Interrupted, 1, fmt.Errorf("guarded run cancelled: %w", cause)
}

func (r *runner) overBudget(since time.Time, now time.Time) bool {
	return r.o.MaxWait > 0 && r.waited+now.Sub(since) >= r.o.MaxWait
}

// acquire takes the host lock, waiting (and polling at the sample rate, since flock
// cannot be given a deadline) while another guard holds it.
func (r *runner) acquire(ctx context.Context) (*hostLock, waitResult, error) {
	start := r.o.Clock.Now()
	lastHolder := ""
	for {
		l, busy, err := tryLock(r.o.LockPath)
		if err != nil {
			return nil, waitDone, err
		}
		now := r.o.Clock.Now()
		if !busy {
			r.waited += now.Sub(start)
			mode := "guard"
			if r.o.Hold {
				mode = "hold"
			}
			rec := HolderRecord{PID: os.Getpid(), Start: time.Now().Unix(), Mode: mode, Cmd: commandLine(r.argv)}
			if err := l.writeHolder(rec); err != nil {
				l.release()
				return nil, waitDone, err
			}
			return l, waitDone, nil
		}
		who := "a process that wrote no holder record"
		if rec, ok := readHolder(r.o.LockPath); ok {
			who = rec.String()
		}
		if who != lastHolder {
			r.ev.event("waiting for the host lock %s: held by %s", r.o.LockPath, who)
			lastHolder = who
		}
		if r.overBudget(start, now) {
			r.waited += now.Sub(start)
			r.ev.event("gave up after %ds of waiting for the host lock %s (held by %s)", int(r.waited/time.Second), r.o.LockPath, who)
			return nil, waitGaveUp, nil
		}
		select {
		case <-ctx.Done():
			r.waited += r.o.Clock.Now().Sub(start)
			return nil, waitInterrupted, nil
		case <-r.o.Clock.After(r.o.interval()):
		}
	}
}

func (r *runner) idleWhat() string {
	if r.o.MaxForeignCPU > 0 {
		return fmt.Sprintf("idle GPU and no compiler (nor a process above %s%% CPU)", hzText(r.o.MaxForeignCPU))
	}
	return "idle GPU and no compiler"
}

// waitIdle waits until every sample of one idle window is clean. It returns how it
// ended and how many streaks were broken.
func (r *runner) waitIdle(ctx context.Context) (waitResult, int, error) {
	idleSecs := int(r.o.Idle / time.Second)
	r.ev.event("waiting for %ds of %s", idleSecs, r.idleWhat())
	interval := r.o.interval()
	start := r.o.Clock.Now()
	streak, inStreak := start, true
	var lastReset time.Time
	resets := 0
	next := start
	for {
		now := r.o.Clock.Now()
		smp, err := r.s.sample(now)
		if err != nil {
			return waitDone, resets, err
		}
		if smp.Contended() {
			if inStreak {
				resets++
				// At most one line a second: a holder flapping at the sample rate
				// would otherwise flood the log.
				if lastReset.IsZero() || now.Sub(lastReset) >= time.Second {
					r.ev.event("idle streak reset after %ds: gpu=%s compilers=%s%s",
						int(now.Sub(streak)/time.Second), holderList(smp.ForeignGPU), holderList(smp.Compilers), cpuSuffix(smp.CPU))
					lastReset = now
				}
				inStreak = false
			}
		} else {
			if !inStreak {
				streak, inStreak = now, true
			}
			if now.Sub(streak) >= r.o.Idle {
				r.waited += now.Sub(start)
				what := "kfd proc empty and no compiler"
				if r.o.MaxForeignCPU > 0 {
					what = fmt.Sprintf("kfd proc empty and no compiler (nor a process above %s%% CPU)", hzText(r.o.MaxForeignCPU))
				}
				r.ev.event("idle for %ds: %s in every %s Hz sample", idleSecs, what, hzText(r.o.SampleHz))
				return waitDone, resets, nil
			}
		}
		if r.overBudget(start, now) {
			r.waited += now.Sub(start)
			r.ev.event("gave up after %ds of waiting without %ds of idle", int(r.waited/time.Second), idleSecs)
			return waitGaveUp, resets, nil
		}
		next = next.Add(interval)
		if next.Before(now) {
			next = now
		}
		select {
		case <-ctx.Done():
			r.waited += r.o.Clock.Now().Sub(start)
			return waitInterrupted, resets, nil
		case <-r.o.Clock.After(next.Sub(r.o.Clock.Now())):
		}
	}
}

func cpuSuffix(cs []CPUUse) string {
	if len(cs) == 0 {
		return ""
	}
	return " cpu=" + cpuList(cs)
}

// start starts the command under its reaper (runner/proc), in its own process group.
func (r *runner) start() (*proc.Process, error) {
	name := r.argv[0]
	if r.o.Dir != "" && strings.Contains(name, "/") && !filepath.IsAbs(name) {
		name = filepath.Join(r.o.Dir, name)
	}
	cmd := r.o.Host.Command(context.Background(), name, r.argv[1:]...)
	cmd.Args[0] = r.argv[0]
	cmd.Dir = r.o.Dir
	cmd.Env = append(cmd.Env, r.o.Env...)
	cmd.Env = append(cmd.Env, EnvLockHeld+"="+strconv.Itoa(r.heldBy))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.o.Stdin, r.o.Stdout, r.o.Stderr
	// Pipes held open by a process that outlived every signal must not hang the guard.
	cmd.WaitDelay = 2 * time.Second
	return proc.Start(cmd)
}

// finish stops what the command left running, names it in the log under what, and
// returns the command's exit code.
func (r *runner) finish(p *proc.Process, what string) (int, error) {
	if left := p.Cleanup(r.o.KillGrace); len(left) > 0 {
		hs := make([]Holder, len(left))
		for i, m := range left {
			hs[i] = Holder{PID: m.PID, Comm: m.Comm}
		}
		r.ev.event("%s: stopped what the command left running: %s", what, holderList(hs))
	}
	st, err := p.Wait()
	return st.ShellCode(), err
}

// attempt runs the command once under the monitor and fills a.
func (r *runner) attempt(ctx context.Context, a *Attempt) error {
	k := a.Attempt
	r.ev.event("attempt %d/%d: start: %s", k, r.o.MaxAttempts, commandLine(r.argv))
	a.Start = r.o.Clock.Now()
	a.ForeignGPU, a.Compilers = []Holder{}, []Holder{}
	cr, err := r.start()
	if err != nil {
		a.End = r.o.Clock.Now()
		a.Verdict, a.ExitCode = NotStarted, startCode(err)
		r.ev.event("attempt %d: could not start: %v", k, err)
		return fmt.Errorf("starting %s: %w", r.argv[0], err)
	}
	r.s.setCommand(cr.Reaper)
	defer r.s.setCommand(0)

	seenGPU, seenComp, seenCPU := map[Holder]bool{}, map[Holder]bool{}, map[int]int{}
	interval := r.o.interval()
	next := a.Start
	var lastClean time.Time
	stopped := false
	var sampleErr error
monitor:
	for {
		now := r.o.Clock.Now()
		smp, err := r.s.sample(now)
		if err != nil {
			sampleErr = err
			r.ev.event("monitor failed: %v: stopping the command", err)
			cr.Stop(r.o.KillGrace)
			break
		}
		a.Samples++
		if smp.Contended() {
			a.ContendedSamples++
			r.ev.event("sample %d: CONTENDED foreign_gpu=%s compilers=%s%s", a.Samples,
				holderList(smp.ForeignGPU), holderList(smp.Compilers), cpuSuffix(smp.CPU))
			for _, h := range smp.ForeignGPU {
				if !seenGPU[h] {
					seenGPU[h] = true
					a.ForeignGPU = append(a.ForeignGPU, h)
				}
			}
			for _, h := range smp.Compilers {
				if !seenComp[h] {
					seenComp[h] = true
					a.Compilers = append(a.Compilers, h)
				}
			}
			for _, c := range smp.CPU {
				if i, ok := seenCPU[c.PID]; ok {
					a.ForeignCPU[i].Percent = max(a.ForeignCPU[i].Percent, c.Percent)
				} else {
					seenCPU[c.PID] = len(a.ForeignCPU)
					a.ForeignCPU = append(a.ForeignCPU, c)
				}
			}
		} else if lastClean.IsZero() || now.Sub(lastClean) >= time.Second {
			// Every sample counts, but a readable log keeps one clean line a second.
			r.ev.quiet("sample %d: clean gpu=%s", a.Samples, holderList(smp.GPU))
			lastClean = now
		}
		next = next.Add(interval)
		if next.Before(now) {
			next = now
		}
		select {
		case <-cr.Exited():
			break monitor
		case <-ctx.Done():
			stopped = true
			break monitor
		case <-r.o.Clock.After(next.Sub(r.o.Clock.Now())):
		}
	}
	var verdictErr error
	if stopped {
		a.Verdict, a.ExitCode, verdictErr = r.interrupted(ctx)
		cr.Stop(r.o.KillGrace)
	}
	code, werr := r.finish(cr, fmt.Sprintf("attempt %d", k))
	a.End = r.o.Clock.Now()
	r.ev.event("monitor: %d samples", a.Samples)
	if stopped {
		r.ev.event("attempt %d: INTERRUPTED, exit %d", k, a.ExitCode)
		return verdictErr
	}
	a.ExitCode = code
	if werr != nil {
		r.ev.event("attempt %d: %v", k, werr)
	}
	if sampleErr != nil {
		a.Verdict = Contended
		return fmt.Errorf("monitoring attempt %d: %w", k, sampleErr)
	}
	if a.ContendedSamples > 0 {
		a.Verdict = Contended
		return nil
	}
	a.Verdict = Clean
	r.ev.event("attempt %d: CLEAN, exit %d", k, a.ExitCode)
	return nil
}

// hold runs the command once under the lock, without idle wait or monitor.
func (r *runner) hold(ctx context.Context, out Outcome) (Outcome, error) {
	r.ev.event("hold: start: %s", commandLine(r.argv))
	cr, err := r.start()
	if err != nil {
		r.ev.event("hold: could not start: %v", err)
		out.ExitCode, out.Verdict = startCode(err), NotStarted
		return out, fmt.Errorf("starting %s: %w", r.argv[0], err)
	}
	var verr error
	stopped := false
	select {
	case <-cr.Exited():
	case <-ctx.Done():
		stopped = true
		out.Verdict, out.ExitCode, verr = r.interrupted(ctx)
		out.Signal, _ = signalOf(context.Cause(ctx))
		cr.Stop(r.o.KillGrace)
	}
	code, werr := r.finish(cr, "hold")
	if werr != nil {
		r.ev.event("hold: %v", werr)
	}
	if stopped {
		r.ev.event("hold: INTERRUPTED, exit %d", out.ExitCode)
		return out, verr
	}
	out.ExitCode = code
	out.Verdict = Clean
	r.ev.event("hold: exit %d", out.ExitCode)
	return out, nil
}

func round1(d time.Duration) float64 {
	return float64(d.Round(100*time.Millisecond)) / float64(time.Second)
}

// commandLine is argv joined by spaces, as the shell guard logs it, with line breaks and
// other control characters escaped so that one event stays one line.
func commandLine(argv []string) string { return escapeControl(strings.Join(argv, " ")) }

// isControl is a C0 or C1 control character, DEL included.
func isControl(r rune) bool { return r < ' ' || (r >= 0x7f && r <= 0x9f) }

// escapeControl escapes line breaks and other control characters (terminal escape
// sequences included), so that a command line prints as one harmless line, whole.
func escapeControl(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
