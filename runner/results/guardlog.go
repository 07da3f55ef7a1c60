package results

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/safetext"
)

// The guard's evidence in a results folder (docs/formats.md §4): guard.log (or a
// nightly's <stem>.guard.log), one line per event, and its JSON lines, one GuardAttempt
// per attempt. runner/guard writes them; the publisher and the artifact intake read them
// here.

// GuardTimeLayout is the evidence log's timestamp, `date +%Y-%m-%dT%H:%M:%S%z`.
const GuardTimeLayout = "2006-01-02T15:04:05-0700"

// GuardVerdict is how an attempt ended.
type GuardVerdict string

// Verdicts of an attempt.
const (
	GuardClean       GuardVerdict = "clean"       // no foreign sample: the result stands
	GuardContended   GuardVerdict = "contended"   // some sample saw a foreign holder, compiler or CPU hog
	GuardGaveUp      GuardVerdict = "gave_up"     // the wait budget ran out before it started
	GuardInterrupted GuardVerdict = "interrupted" // SIGINT/SIGTERM (or a cancelled context)
	GuardNotStarted  GuardVerdict = "not_started" // the command could not be started
)

// GuardAttempt is one record of `<log>.jsonl`: what one attempt saw, for the report to
// cite.
type GuardAttempt struct {
	Label            string        `json:"label,omitempty"`
	Attempt          int           `json:"attempt"`
	MaxAttempts      int           `json:"max_attempts"`
	Start            time.Time     `json:"start"`
	End              time.Time     `json:"end"`
	Command          []string      `json:"command"`
	ExitCode         int           `json:"exit_code"`
	Verdict          GuardVerdict  `json:"verdict"`
	SampleHz         float64       `json:"sample_hz"`
	Samples          int           `json:"samples"`
	ContendedSamples int           `json:"contended_samples"`
	ForeignGPU       []GuardHolder `json:"foreign_gpu"`
	Compilers        []GuardHolder `json:"compilers"`
	ForeignCPU       []GuardCPUUse `json:"foreign_cpu,omitempty"`
	IdleWaitSecs     float64       `json:"idle_wait_secs"`
	IdleResets       int           `json:"idle_resets"`
	LockWaitSecs     float64       `json:"lock_wait_secs"`
	Nested           bool          `json:"nested,omitempty"`
}

// GuardHolder is a process a sample saw: its pid and kernel comm name ("?" when
// unreadable).
type GuardHolder struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
}

// String is `pid:comm`, as in the log.
func (h GuardHolder) String() string { return strconv.Itoa(h.PID) + ":" + h.Comm }

// GuardCPUUse is a foreign process above the CPU limit, in percent of one core.
type GuardCPUUse struct {
	PID     int     `json:"pid"`
	Comm    string  `json:"comm"`
	Percent float64 `json:"percent"`
}

// String is `pid:comm:NN%`, as in the log.
func (c GuardCPUUse) String() string {
	return fmt.Sprintf("%d:%s:%.0f%%", c.PID, c.Comm, c.Percent)
}

// GuardEventKind names one kind of evidence line.
type GuardEventKind string

// Kinds of evidence lines, shared by the shell guard's log and perfbot's.
const (
	EvSection      GuardEventKind = "section"       // == <run> plain|profiled
	EvNote         GuardEventKind = "note"          // any other == line
	EvWaiting      GuardEventKind = "waiting"       // waiting for 90s of idle GPU and no compiler
	EvLockWait     GuardEventKind = "lock_wait"     // waiting for the host lock ...
	EvIdleReset    GuardEventKind = "idle_reset"    // idle streak reset after 11s: gpu=[...] compilers=[...]
	EvIdle         GuardEventKind = "idle"          // idle for 90s: ... in every 10 Hz sample
	EvAttemptStart GuardEventKind = "attempt_start" // attempt 1/5: start: <argv>
	EvSample       GuardEventKind = "sample"        // sample 5: clean|CONTENDED ...
	EvMonitor      GuardEventKind = "monitor"       // monitor: 6 samples
	EvAttemptEnd   GuardEventKind = "attempt_end"   // attempt 1: CLEAN|REJECTED (contended)|INTERRUPTED, exit 0
	EvAllContended GuardEventKind = "all_contended" // every attempt (5) was contended
	EvGaveUp       GuardEventKind = "gave_up"       // gave up after <N>s ...
	EvCaught       GuardEventKind = "caught"        // caught SIGTERM: stopping command and monitor
	EvOther        GuardEventKind = "other"         // a message this parser does not know
)

// GuardEvent is one parsed evidence line. Fields that a kind does not have stay zero.
type GuardEvent struct {
	Line int
	Time time.Time // zero for == lines
	Kind GuardEventKind
	Text string // the message after the timestamp (or after "== ")

	Run, Phase  string       // EvSection: run name and "plain" / "profiled"
	Seconds     int          // EvWaiting, EvIdleReset, EvIdle, EvGaveUp
	Hz          float64      // EvIdle
	Attempt     int          // EvAttemptStart, EvAttemptEnd
	MaxAttempts int          // EvAttemptStart, EvAllContended
	Command     string       // EvAttemptStart
	Sample      int          // EvSample: its number
	Samples     int          // EvMonitor
	Contended   bool         // EvSample
	Verdict     GuardVerdict // EvAttemptEnd
	ExitCode    int          // EvAttemptEnd
	Signal      string       // EvCaught, e.g. "SIGTERM"
	// GPU is the holder list: all holders of a clean sample, the foreign ones of a
	// contended sample or an idle reset.
	GPU       []GuardHolder
	Compilers []GuardHolder
	CPU       []string // perfbot's optional cpu=[pid:comm:NN%] entries
}

var (
	guardReWaiting   = regexp.MustCompile(`^waiting for (\d+)s of idle GPU`)
	guardReLockWait  = regexp.MustCompile(`^waiting for the host lock `)
	guardReReset     = regexp.MustCompile(`^idle streak reset after (\d+)s: gpu=\[(.*?)\] compilers=\[(.*?)\](?: cpu=\[(.*)\])?$`)
	guardReIdle      = regexp.MustCompile(`^idle for (\d+)s: .* in every ([0-9.]+) Hz sample$`)
	guardReStart     = regexp.MustCompile(`^attempt (\d+)/(\d+): start: (.*)$`)
	guardReClean     = regexp.MustCompile(`^sample (\d+): clean gpu=\[(.*)\]$`)
	guardReContended = regexp.MustCompile(`^sample (\d+): CONTENDED foreign_gpu=\[(.*?)\] compilers=\[(.*?)\](?: cpu=\[(.*)\])?$`)
	guardReMonitor   = regexp.MustCompile(`^monitor: (\d+) samples$`)
	guardReEnd       = regexp.MustCompile(`^attempt (\d+): (CLEAN|REJECTED \(contended\)|INTERRUPTED), exit (\d+)`)
	guardReAll       = regexp.MustCompile(`^every attempt \((\d+)\) was contended$`)
	guardReGaveUp    = regexp.MustCompile(`^gave up after (\d+)s `)
	guardReCaught    = regexp.MustCompile(`^caught (\S+): `)
)

// ParseGuardLog reads an evidence log, the shell guard's or perfbot's. Unknown messages are
// kept as EvOther; a line that is neither `== ...` nor `<timestamp> <message>` is an
// error naming its line.
func ParseGuardLog(r io.Reader) ([]GuardEvent, error) {
	var out []GuardEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "== "); ok {
			ev := GuardEvent{Line: n, Kind: EvNote, Text: rest}
			if i := strings.LastIndexByte(rest, ' '); i > 0 && !strings.Contains(rest[:i], " ") {
				if ph := rest[i+1:]; ph == "plain" || ph == "profiled" {
					ev.Kind, ev.Run, ev.Phase = EvSection, rest[:i], ph
				}
			}
			out = append(out, ev)
			continue
		}
		ts, msg, ok := strings.Cut(line, " ")
		if !ok {
			return out, fmt.Errorf("guard log line %d: want `<time> <message>` or `== <section>`, got %s", n, safetext.Quote(line))
		}
		// time.Parse also takes fractional seconds the format never writes; its error
		// would quote the whole token.
		t, err := time.Parse(GuardTimeLayout, ts)
		if err != nil || t.Format(GuardTimeLayout) != ts {
			return out, fmt.Errorf("guard log line %d: timestamp %s is not %%Y-%%m-%%dT%%H:%%M:%%S%%z", n, safetext.Quote(ts))
		}
		ev, err := parseGuardMessage(msg)
		if err != nil {
			return out, fmt.Errorf("guard log line %d: %w", n, err)
		}
		ev.Line, ev.Time, ev.Text = n, t, msg
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("reading guard log: %w", err)
	}
	return out, nil
}

func parseGuardMessage(msg string) (GuardEvent, error) {
	var ev GuardEvent
	var err error
	atoi := func(s string) int {
		v, e := strconv.Atoi(s)
		if e != nil && err == nil {
			err = fmt.Errorf("number %q: %w", s, e)
		}
		return v
	}
	switch {
	case guardReLockWait.MatchString(msg):
		ev.Kind = EvLockWait
	case guardReWaiting.MatchString(msg):
		m := guardReWaiting.FindStringSubmatch(msg)
		ev.Kind, ev.Seconds = EvWaiting, atoi(m[1])
	case guardReReset.MatchString(msg):
		m := guardReReset.FindStringSubmatch(msg)
		ev.Kind, ev.Seconds = EvIdleReset, atoi(m[1])
		ev.GPU, ev.Compilers, ev.CPU = parseGuardHolders(m[2]), parseGuardHolders(m[3]), splitExact(m[4], ",")
	case guardReIdle.MatchString(msg):
		m := guardReIdle.FindStringSubmatch(msg)
		ev.Kind, ev.Seconds = EvIdle, atoi(m[1])
		ev.Hz, _ = strconv.ParseFloat(m[2], 64)
	case guardReStart.MatchString(msg):
		m := guardReStart.FindStringSubmatch(msg)
		ev.Kind, ev.Attempt, ev.MaxAttempts, ev.Command = EvAttemptStart, atoi(m[1]), atoi(m[2]), m[3]
	case guardReClean.MatchString(msg):
		m := guardReClean.FindStringSubmatch(msg)
		ev.Kind, ev.Sample, ev.GPU = EvSample, atoi(m[1]), parseGuardHolders(m[2])
	case guardReContended.MatchString(msg):
		m := guardReContended.FindStringSubmatch(msg)
		ev.Kind, ev.Sample, ev.Contended = EvSample, atoi(m[1]), true
		ev.GPU, ev.Compilers, ev.CPU = parseGuardHolders(m[2]), parseGuardHolders(m[3]), splitExact(m[4], ",")
	case guardReMonitor.MatchString(msg):
		ev.Kind, ev.Samples = EvMonitor, atoi(guardReMonitor.FindStringSubmatch(msg)[1])
	case guardReEnd.MatchString(msg):
		m := guardReEnd.FindStringSubmatch(msg)
		ev.Kind, ev.Attempt, ev.ExitCode = EvAttemptEnd, atoi(m[1]), atoi(m[3])
		switch m[2] {
		case "CLEAN":
			ev.Verdict = GuardClean
		case "INTERRUPTED":
			ev.Verdict = GuardInterrupted
		default:
			ev.Verdict = GuardContended
		}
	case guardReAll.MatchString(msg):
		ev.Kind, ev.MaxAttempts = EvAllContended, atoi(guardReAll.FindStringSubmatch(msg)[1])
	case guardReGaveUp.MatchString(msg):
		ev.Kind, ev.Seconds = EvGaveUp, atoi(guardReGaveUp.FindStringSubmatch(msg)[1])
	case guardReCaught.MatchString(msg):
		ev.Kind, ev.Signal = EvCaught, guardReCaught.FindStringSubmatch(msg)[1]
	default:
		ev.Kind = EvOther
	}
	return ev, err
}

// parseGuardHolders reads `pid:comm,pid:comm`. A comm may itself hold ':' (kernel names are
// free text), so only the first ':' splits.
func parseGuardHolders(s string) []GuardHolder {
	var out []GuardHolder
	for _, part := range splitExact(s, ",") {
		pid, comm, _ := strings.Cut(part, ":")
		p, err := strconv.Atoi(pid)
		if err != nil {
			continue
		}
		out = append(out, GuardHolder{PID: p, Comm: comm})
	}
	return out
}
