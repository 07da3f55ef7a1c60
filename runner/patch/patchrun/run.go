package patchrun

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/proc"
)

// stopGrace is how long a command (and what it started) gets between SIGTERM and
// SIGKILL when it times out, is cancelled, or leaves processes behind.
const stopGrace = 2 * time.Second

// runCommand runs argv in dir with a timeout, keeping the last limit bytes of its
// output. It goes through runner/proc: whatever the command starts, a child that calls
// setsid included, is stopped when the command exits, times out or is cancelled, so a
// `make` that started a python3 does not outlive it.
func runCommand(ctx context.Context, dir string, argv []string, timeout time.Duration, limit int, wrap func(*exec.Cmd) error) patch.VerifyResult {
	res := patch.VerifyResult{Command: append([]string(nil), argv...), ExitCode: -1}
	if len(argv) == 0 {
		res.Err = "empty command"
		return res
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out := &tailBuffer{limit: limit}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = 5 * time.Second
	if wrap != nil {
		if err := wrap(cmd); err != nil {
			res.Err = "could not start: " + err.Error()
			return res
		}
	}
	start := time.Now()
	run, err := proc.Run(cctx, cmd, stopGrace)
	res.Duration = time.Since(start)
	res.Output, res.OutputBytes, res.Truncated = out.result()
	if err != nil && run.Status.Code == -1 && run.Status.Signal == 0 {
		res.Err = "could not start: " + err.Error()
		return res
	}
	if !run.Stopped {
		res.ExitCode = run.Status.Code // -1 when a signal ended it
	}
	for _, m := range run.Left {
		res.LeftRunning = append(res.LeftRunning, fmt.Sprintf("%d:%s", m.PID, m.Comm))
	}
	switch {
	case ctx.Err() != nil:
		res.Err = "stopped: " + ctx.Err().Error()
	case run.Stopped && errors.Is(cctx.Err(), context.DeadlineExceeded):
		res.TimedOut = true
		res.Err = "timed out after " + timeout.String()
	case run.Status.Signal != 0:
		res.Err = "killed by signal " + strconv.Itoa(int(run.Status.Signal)) + " (" + run.Status.Signal.String() + ")"
	case err != nil:
		res.Err = err.Error()
	}
	return res
}

// tailBuffer keeps the last limit bytes written to it. exec serializes writes when
// Stdout and Stderr are the same writer.
type tailBuffer struct {
	limit int
	buf   []byte
	total int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.limit {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-t.limit:]...)
	}
	return len(p), nil
}

// result returns the tail starting at a line (or at least a rune) boundary.
func (t *tailBuffer) result() (string, int64, bool) {
	b := t.buf
	truncated := int64(len(b)) < t.total
	if len(b) > t.limit {
		b = b[len(b)-t.limit:]
		truncated = true
	}
	if truncated {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)/2 {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), t.total, truncated
}
