package guard

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// EchoPrefix starts every guard line echoed to stderr, as the shell guard's do; bench
// log readers skip lines with it.
const EchoPrefix = "rocm_gpu_guard: "

// evidence writes the log file and the stderr echo.
type evidence struct {
	mu    sync.Mutex
	clock Clock
	file  *os.File // nil without --log
	jsonl *os.File
	echo  io.Writer
}

func openEvidence(path string, clock Clock, echo io.Writer) (*evidence, error) {
	e := &evidence{clock: clock, echo: echo}
	if path == "" {
		return e, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening guard log: %w", err)
	}
	j, err := os.OpenFile(path+".jsonl", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening guard attempt summary: %w", err)
	}
	e.file, e.jsonl = f, j
	return e, nil
}

func (e *evidence) close() {
	if e.file != nil {
		e.file.Close()
		e.jsonl.Close()
	}
}

// event writes one log line and echoes it to stderr.
func (e *evidence) event(format string, a ...any) { e.write(true, format, a...) }

// quiet writes one log line only (clean samples).
func (e *evidence) quiet(format string, a ...any) { e.write(false, format, a...) }

func (e *evidence) write(echo bool, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.file != nil {
		// One write per line so that lines from guards sharing the log never interleave.
		e.file.WriteString(e.clock.Now().Format(TimeLayout) + " " + msg + "\n")
	}
	if echo {
		io.WriteString(e.echo, EchoPrefix+msg+"\n")
	}
}

func (e *evidence) record(a Attempt) error {
	if e.jsonl == nil {
		return nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encoding attempt summary: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.jsonl.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing attempt summary: %w", err)
	}
	return nil
}

// Section appends a `== <title>` header to the log at path, e.g. "Qwen3-30B-A3B-4bit_greedy
// plain", separating runs the way the shell guard's callers do.
func Section(path, title string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("opening guard log: %w", err)
	}
	if _, err := f.WriteString("== " + title + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("writing guard log section: %w", err)
	}
	return f.Close()
}
