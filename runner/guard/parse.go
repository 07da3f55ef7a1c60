package guard

import (
	"io"

	"github.com/lablup/perfbot/runner/results"
)

// The evidence's format is the results folder's (runner/results owns it); the guard
// writes it and names its types here.

// TimeLayout is the evidence log's timestamp, `date +%Y-%m-%dT%H:%M:%S%z`.
const TimeLayout = results.GuardTimeLayout

// Verdict is how an attempt ended.
type Verdict = results.GuardVerdict

// Verdicts of an attempt.
const (
	Clean       = results.GuardClean
	Contended   = results.GuardContended
	GaveUp      = results.GuardGaveUp
	Interrupted = results.GuardInterrupted
	NotStarted  = results.GuardNotStarted
)

// Attempt is one record of `<log>.jsonl`.
type Attempt = results.GuardAttempt

// Holder is a process a sample saw.
type Holder = results.GuardHolder

// CPUUse is a foreign process above the CPU limit.
type CPUUse = results.GuardCPUUse

// EventKind names one kind of evidence line.
type EventKind = results.GuardEventKind

// Kinds of evidence lines, shared by the shell guard's log and perfbot's.
const (
	EvSection      = results.EvSection
	EvNote         = results.EvNote
	EvWaiting      = results.EvWaiting
	EvLockWait     = results.EvLockWait
	EvIdleReset    = results.EvIdleReset
	EvIdle         = results.EvIdle
	EvAttemptStart = results.EvAttemptStart
	EvSample       = results.EvSample
	EvMonitor      = results.EvMonitor
	EvAttemptEnd   = results.EvAttemptEnd
	EvAllContended = results.EvAllContended
	EvGaveUp       = results.EvGaveUp
	EvCaught       = results.EvCaught
	EvOther        = results.EvOther
)

// Event is one parsed evidence line.
type Event = results.GuardEvent

// ParseLog reads an evidence log, the shell guard's or perfbot's (results.ParseGuardLog).
func ParseLog(r io.Reader) ([]Event, error) { return results.ParseGuardLog(r) }
