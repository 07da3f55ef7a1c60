package job

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/results"
)

// progress writes the job's progress lines, each stamped with the wall-clock time so a
// reader sees since when a wait has lasted.
type progress struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

func (p *progress) printf(format string, a ...any) {
	if p == nil || p.w == nil {
		return
	}
	msg := fmt.Sprintf(format, a...)
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s %s\n", p.now().Format("15:04:05"), msg)
	if sw, ok := p.w.(StepWriter); ok {
		if st, ok := stepOf(msg); ok {
			sw.Step(st)
		}
	}
}

// step tells a StepWriter a step the session knows without a progress line of its
// own (a bench compare's runs and verdicts).
func (p *progress) step(st Step) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if sw, ok := p.w.(StepWriter); ok {
		sw.Step(st)
	}
}

// Step is where a session stands, for a progress file (results.Progress): the
// phase, the models (profile runs, or a sweep's models) done of those planned, and the
// one being run.
type Step struct {
	Phase   string // results.PhaseBuild, PhaseProfile or PhaseBench
	Done    int
	Planned int // 0 while not known
	Model   string
	ETA     time.Duration // a sweep's own estimate of the time left; -1 when it has none
	// Verdicts are a bench compare's current verdicts, one line per model measured so
	// far (at most results.ProgressVerdictsMax); nil for other sessions.
	Verdicts []string
}

// StepWriter is a Progress writer that is also told each step the session's progress
// lines show (action writes the progress file from them).
type StepWriter interface {
	io.Writer
	Step(Step)
}

var (
	// "[2/6] qwen3-8b_greedy: ..." (a profile run) and "[rocm 3/8] llama: ..." (a
	// sweep's model).
	stepLineRE = regexp.MustCompile(`^\[(?:(\S+) )?(\d{1,5})/(\d{1,5})\] (\S+): (.*)$`)
	stepETARE  = regexp.MustCompile(`; ETA \S+ \(about (\S+) left`)
)

// stepOf reads a step from one of the session's own progress lines.
func stepOf(msg string) (Step, bool) {
	if strings.HasPrefix(msg, "building ") {
		return Step{Phase: results.PhaseBuild, ETA: -1}, true
	}
	m := stepLineRE.FindStringSubmatch(msg)
	if m == nil {
		return Step{}, false
	}
	var i, n int
	fmt.Sscan(m[2], &i)
	fmt.Sscan(m[3], &n)
	if i < 1 || n < i {
		return Step{}, false
	}
	st := Step{Phase: results.PhaseProfile, Done: i - 1, Planned: n, Model: m[4], ETA: -1}
	if m[1] != "" {
		st.Phase = results.PhaseBench
		if e := stepETARE.FindStringSubmatch(m[5]); e != nil {
			if d, err := time.ParseDuration(e[1]); err == nil {
				st.ETA = d
			}
		}
	}
	if strings.HasPrefix(m[5], "done (") { // a profile run's last line
		st.Done, st.Model = i, ""
	}
	return st, true
}

var (
	attemptStartRE = regexp.MustCompile(`^attempt (\d+)/(\d+): start: `)
	waitingRE      = regexp.MustCompile(`^waiting for \d+s of `)
	contendedRE    = regexp.MustCompile(`^sample \d+: CONTENDED`)
)

// phaseLog receives one guarded command's stdout and stderr and the guard's echoed
// lines. It keeps everything in the raw log (for the artifacts), keeps the output of
// the last attempt apart (a rejected attempt's output must not reach the analysis), and
// turns the guard's lines into progress lines.
type phaseLog struct {
	mu       sync.Mutex
	raw      io.Writer
	rawErr   error
	partial  []byte
	last     bytes.Buffer // since the last "attempt k/N: start:" line
	attempts int
	prog     *progress
	label    string // "[2/8] Meta-Llama-3.1-8B-Instruct-4bit_greedy plain"
	since    time.Time
	noisy    bool // a contended sample of this attempt was already reported
	// lastReset is what broke the last idle streak: "gpu=[123:x] compilers=[]".
	lastReset string
	// observe, when set, sees every line, the guard's with their prefix.
	observe func(line string)
}

func newPhaseLog(raw io.Writer, prog *progress, label string) *phaseLog {
	return &phaseLog{raw: raw, prog: prog, label: label}
}

func (l *phaseLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.raw != nil && l.rawErr == nil {
		_, l.rawErr = l.raw.Write(p)
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.line(l.partial[:i+1])
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

// close takes in a last line without a line end.
func (l *phaseLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.line(l.partial)
		l.partial = nil
	}
}

func (l *phaseLog) line(b []byte) {
	if l.observe != nil {
		l.observe(string(b))
	}
	msg, isGuard := strings.CutPrefix(string(b), guard.EchoPrefix)
	if !isGuard {
		l.last.Write(b)
		return
	}
	msg = strings.TrimRight(msg, "\r\n")
	if m := attemptStartRE.FindStringSubmatch(msg); m != nil {
		l.last.Reset()
		l.attempts++
		l.noisy = false
		l.prog.printf("%s: attempt %s/%s started", l.label, m[1], m[2])
		return
	}
	l.last.Write(b)
	switch {
	case waitingRE.MatchString(msg):
		l.since = l.prog.now()
		l.prog.printf("%s: %s", l.label, msg)
	case strings.HasPrefix(msg, "idle streak reset"):
		if _, what, ok := strings.Cut(msg, ": "); ok {
			l.lastReset = what
		}
		l.prog.printf("%s: still waiting (since %s): %s", l.label, l.since.Format("15:04:05"), msg)
	case contendedRE.MatchString(msg):
		// The monitor reports every contended sample; one line per attempt says enough.
		if !l.noisy {
			l.noisy = true
			l.prog.printf("%s: %s", l.label, msg)
		}
	default:
		l.prog.printf("%s: %s", l.label, msg)
	}
}

// lastAttempt returns the output of the last attempt (all of it when the guard never
// started one).
func (l *phaseLog) lastAttempt() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.last.Bytes())
}

// tailLines returns up to n last non-empty lines of b, trimmed.
func tailLines(b []byte, n int) []string {
	var out []string
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" {
			// A command's own output, quoted in a reason: cut and escaped.
			out = append(out, safetext.Clean(t))
		}
	}
	slices.Reverse(out)
	return out
}

// pathSub replaces a local folder by a placeholder in committed text.
type pathSub struct{ path, with string }

// scrubber replaces local folders, longest first, where they start a path: the guard
// log and the test details are committed, the runner's folders are nobody's business.
type scrubber []pathSub

func newScrubber(subs ...pathSub) scrubber {
	var s scrubber
	for _, p := range subs {
		p.path = strings.TrimRight(p.path, "/")
		if p.path == "" {
			continue
		}
		s = append(s, p)
		// The same folder through a symlink (macOS /tmp, a symlinked home) shows up too.
		if real, err := filepath.EvalSymlinks(p.path); err == nil && real != p.path {
			s = append(s, pathSub{real, p.with})
		}
	}
	slices.SortStableFunc(s, func(a, b pathSub) int { return len(b.path) - len(a.path) })
	return s
}

func (s scrubber) paths() []string {
	out := make([]string, len(s))
	for i, p := range s {
		out[i] = p.path
	}
	return out
}

func (s scrubber) text(t string) string {
	if len(s) == 0 {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); {
		matched := false
		if i == 0 || !isPathChar(t[i-1]) {
			for _, p := range s {
				end := i + len(p.path)
				if strings.HasPrefix(t[i:], p.path) && (end == len(t) || t[end] == '/' || !isPathChar(t[end])) {
					b.WriteString(p.with)
					i = end
					matched = true
					break
				}
			}
		}
		if !matched {
			b.WriteByte(t[i])
			i++
		}
	}
	return b.String()
}

// file rewrites a file with its local folders replaced; a missing file is fine.
func (s scrubber) file(path string) error {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	out := s.text(string(b))
	if out == string(b) {
		return nil
	}
	return results.WriteFileAtomic(path, []byte(out))
}

func isPathChar(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c == '~' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
