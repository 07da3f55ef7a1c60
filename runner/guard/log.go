package guard

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// TimeLayout is the evidence log's timestamp, `date +%Y-%m-%dT%H:%M:%S%z`.
const TimeLayout = "2006-01-02T15:04:05-0700"

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

// Verdict is how an attempt ended.
type Verdict string

// Verdicts of an attempt.
const (
	Clean       Verdict = "clean"       // no foreign sample: the result stands
	Contended   Verdict = "contended"   // some sample saw a foreign holder, compiler or CPU hog
	GaveUp      Verdict = "gave_up"     // the wait budget ran out before it started
	Interrupted Verdict = "interrupted" // SIGINT/SIGTERM (or a cancelled context)
	NotStarted  Verdict = "not_started" // the command could not be started
)

// Attempt is one record of `<log>.jsonl`: what one attempt saw, for the report to cite.
type Attempt struct {
	Label            string    `json:"label,omitempty"`
	Attempt          int       `json:"attempt"`
	MaxAttempts      int       `json:"max_attempts"`
	Start            time.Time `json:"start"`
	End              time.Time `json:"end"`
	Command          []string  `json:"command"`
	ExitCode         int       `json:"exit_code"`
	Verdict          Verdict   `json:"verdict"`
	SampleHz         float64   `json:"sample_hz"`
	Samples          int       `json:"samples"`
	ContendedSamples int       `json:"contended_samples"`
	ForeignGPU       []Holder  `json:"foreign_gpu"`
	Compilers        []Holder  `json:"compilers"`
	ForeignCPU       []CPUUse  `json:"foreign_cpu,omitempty"`
	IdleWaitSecs     float64   `json:"idle_wait_secs"`
	IdleResets       int       `json:"idle_resets"`
	LockWaitSecs     float64   `json:"lock_wait_secs"`
	Nested           bool      `json:"nested,omitempty"`
}
