package guard

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

// EventKind names one kind of evidence line.
type EventKind string

// Kinds of evidence lines, shared by the shell guard's log and perfbot's.
const (
	EvSection      EventKind = "section"       // == <run> plain|profiled
	EvNote         EventKind = "note"          // any other == line
	EvWaiting      EventKind = "waiting"       // waiting for 90s of idle GPU and no compiler
	EvLockWait     EventKind = "lock_wait"     // waiting for the host lock ...
	EvIdleReset    EventKind = "idle_reset"    // idle streak reset after 11s: gpu=[...] compilers=[...]
	EvIdle         EventKind = "idle"          // idle for 90s: ... in every 10 Hz sample
	EvAttemptStart EventKind = "attempt_start" // attempt 1/5: start: <argv>
	EvSample       EventKind = "sample"        // sample 5: clean|CONTENDED ...
	EvMonitor      EventKind = "monitor"       // monitor: 6 samples
	EvAttemptEnd   EventKind = "attempt_end"   // attempt 1: CLEAN|REJECTED (contended)|INTERRUPTED, exit 0
	EvAllContended EventKind = "all_contended" // every attempt (5) was contended
	EvGaveUp       EventKind = "gave_up"       // gave up after <N>s ...
	EvCaught       EventKind = "caught"        // caught SIGTERM: stopping command and monitor
	EvOther        EventKind = "other"         // a message this parser does not know
)

// Event is one parsed evidence line. Fields that a kind does not have stay zero.
type Event struct {
	Line int
	Time time.Time // zero for == lines
	Kind EventKind
	Text string // the message after the timestamp (or after "== ")

	Run, Phase  string  // EvSection: run name and "plain" / "profiled"
	Seconds     int     // EvWaiting, EvIdleReset, EvIdle, EvGaveUp
	Hz          float64 // EvIdle
	Attempt     int     // EvAttemptStart, EvAttemptEnd
	MaxAttempts int     // EvAttemptStart, EvAllContended
	Command     string  // EvAttemptStart
	Sample      int     // EvSample: its number
	Samples     int     // EvMonitor
	Contended   bool    // EvSample
	Verdict     Verdict // EvAttemptEnd
	ExitCode    int     // EvAttemptEnd
	Signal      string  // EvCaught, e.g. "SIGTERM"
	// GPU is the holder list: all holders of a clean sample, the foreign ones of a
	// contended sample or an idle reset.
	GPU       []Holder
	Compilers []Holder
	CPU       []string // perfbot's optional cpu=[pid:comm:NN%] entries
}

var (
	reWaiting   = regexp.MustCompile(`^waiting for (\d+)s of idle GPU`)
	reLockWait  = regexp.MustCompile(`^waiting for the host lock `)
	reReset     = regexp.MustCompile(`^idle streak reset after (\d+)s: gpu=\[(.*?)\] compilers=\[(.*?)\](?: cpu=\[(.*)\])?$`)
	reIdle      = regexp.MustCompile(`^idle for (\d+)s: .* in every ([0-9.]+) Hz sample$`)
	reStart     = regexp.MustCompile(`^attempt (\d+)/(\d+): start: (.*)$`)
	reClean     = regexp.MustCompile(`^sample (\d+): clean gpu=\[(.*)\]$`)
	reContended = regexp.MustCompile(`^sample (\d+): CONTENDED foreign_gpu=\[(.*?)\] compilers=\[(.*?)\](?: cpu=\[(.*)\])?$`)
	reMonitor   = regexp.MustCompile(`^monitor: (\d+) samples$`)
	reEnd       = regexp.MustCompile(`^attempt (\d+): (CLEAN|REJECTED \(contended\)|INTERRUPTED), exit (\d+)`)
	reAll       = regexp.MustCompile(`^every attempt \((\d+)\) was contended$`)
	reGaveUp    = regexp.MustCompile(`^gave up after (\d+)s `)
	reCaught    = regexp.MustCompile(`^caught (\S+): `)
)

// ParseLog reads an evidence log, the shell guard's or perfbot's. Unknown messages are
// kept as EvOther; a line that is neither `== ...` nor `<timestamp> <message>` is an
// error naming its line.
func ParseLog(r io.Reader) ([]Event, error) {
	var out []Event
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
			ev := Event{Line: n, Kind: EvNote, Text: rest}
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
		t, err := time.Parse(TimeLayout, ts)
		if err != nil || t.Format(TimeLayout) != ts {
			return out, fmt.Errorf("guard log line %d: timestamp %s is not %%Y-%%m-%%dT%%H:%%M:%%S%%z", n, safetext.Quote(ts))
		}
		ev, err := parseMessage(msg)
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

func parseMessage(msg string) (Event, error) {
	var ev Event
	var err error
	atoi := func(s string) int {
		v, e := strconv.Atoi(s)
		if e != nil && err == nil {
			err = fmt.Errorf("number %q: %w", s, e)
		}
		return v
	}
	switch {
	case reLockWait.MatchString(msg):
		ev.Kind = EvLockWait
	case reWaiting.MatchString(msg):
		m := reWaiting.FindStringSubmatch(msg)
		ev.Kind, ev.Seconds = EvWaiting, atoi(m[1])
	case reReset.MatchString(msg):
		m := reReset.FindStringSubmatch(msg)
		ev.Kind, ev.Seconds = EvIdleReset, atoi(m[1])
		ev.GPU, ev.Compilers, ev.CPU = parseHolders(m[2]), parseHolders(m[3]), splitList(m[4])
	case reIdle.MatchString(msg):
		m := reIdle.FindStringSubmatch(msg)
		ev.Kind, ev.Seconds = EvIdle, atoi(m[1])
		ev.Hz, _ = strconv.ParseFloat(m[2], 64)
	case reStart.MatchString(msg):
		m := reStart.FindStringSubmatch(msg)
		ev.Kind, ev.Attempt, ev.MaxAttempts, ev.Command = EvAttemptStart, atoi(m[1]), atoi(m[2]), m[3]
	case reClean.MatchString(msg):
		m := reClean.FindStringSubmatch(msg)
		ev.Kind, ev.Sample, ev.GPU = EvSample, atoi(m[1]), parseHolders(m[2])
	case reContended.MatchString(msg):
		m := reContended.FindStringSubmatch(msg)
		ev.Kind, ev.Sample, ev.Contended = EvSample, atoi(m[1]), true
		ev.GPU, ev.Compilers, ev.CPU = parseHolders(m[2]), parseHolders(m[3]), splitList(m[4])
	case reMonitor.MatchString(msg):
		ev.Kind, ev.Samples = EvMonitor, atoi(reMonitor.FindStringSubmatch(msg)[1])
	case reEnd.MatchString(msg):
		m := reEnd.FindStringSubmatch(msg)
		ev.Kind, ev.Attempt, ev.ExitCode = EvAttemptEnd, atoi(m[1]), atoi(m[3])
		switch m[2] {
		case "CLEAN":
			ev.Verdict = Clean
		case "INTERRUPTED":
			ev.Verdict = Interrupted
		default:
			ev.Verdict = Contended
		}
	case reAll.MatchString(msg):
		ev.Kind, ev.MaxAttempts = EvAllContended, atoi(reAll.FindStringSubmatch(msg)[1])
	case reGaveUp.MatchString(msg):
		ev.Kind, ev.Seconds = EvGaveUp, atoi(reGaveUp.FindStringSubmatch(msg)[1])
	case reCaught.MatchString(msg):
		ev.Kind, ev.Signal = EvCaught, reCaught.FindStringSubmatch(msg)[1]
	default:
		ev.Kind = EvOther
	}
	return ev, err
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// parseHolders reads `pid:comm,pid:comm`. A comm may itself hold ':' (kernel names are
// free text), so only the first ':' splits.
func parseHolders(s string) []Holder {
	var out []Holder
	for _, part := range splitList(s) {
		pid, comm, _ := strings.Cut(part, ":")
		p, err := strconv.Atoi(pid)
		if err != nil {
			continue
		}
		out = append(out, Holder{PID: p, Comm: comm})
	}
	return out
}
