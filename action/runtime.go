package action

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/report"
	githubactions "github.com/sethvargo/go-githubactions"
)

// Runtime is the Actions runtime contract of one step (docs/action.md): inputs, the
// workflow commands on the log (masks, annotations, groups), outputs and the step
// summary. Workflow commands go through go-githubactions, which escapes them; outputs
// and the summary are written here, because the library writes multi-line values with
// a fixed public delimiter and panics when a file is unset or unwritable.
type Runtime struct {
	gha     *githubactions.Action
	log     *logWriter
	getenv  func(string) string
	outPath string
	sumPath string

	mu      sync.Mutex
	outputs map[string]string
}

// NewRuntime checks the runtime files and returns the step's runtime. The log is w
// (the step's stdout: the runner reads workflow commands there).
func NewRuntime(w io.Writer, getenv func(string) string) (*Runtime, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	lw := &logWriter{w: w, last: '\n'}
	r := &Runtime{
		gha:     githubactions.New(githubactions.WithWriter(lw), githubactions.WithGetenv(getenv)),
		log:     lw,
		getenv:  getenv,
		outputs: map[string]string{},
	}
	r.outPath = getenv("GITHUB_OUTPUT")
	if r.outPath == "" {
		return nil, errors.New("GITHUB_OUTPUT is not set: `perfbot action` runs as a step of a GitHub Actions job (outside Actions, use perfbot run, publish and rank)")
	}
	f, err := os.OpenFile(r.outPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the step's output file (GITHUB_OUTPUT): %w", err)
	}
	f.Close()
	r.sumPath = getenv("GITHUB_STEP_SUMMARY")
	return r, nil
}

// Input is the trimmed value of a step input (INPUT_<NAME>, hyphens kept).
func (r *Runtime) Input(name string) string { return r.gha.GetInput(name) }

// Getenv reads the step's environment.
func (r *Runtime) Getenv(key string) string { return r.getenv(key) }

// Log is where the step's own lines go.
func (r *Runtime) Log() io.Writer { return r.log }

// Mask asks the runner to hide a secret in every later log line: the whole value and,
// for a multi-line one (a PEM key), each line, since the runner matches lines.
func (r *Runtime) Mask(secret string) {
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return
	}
	r.log.lineStart()
	r.gha.AddMask(secret)
	if !strings.ContainsAny(secret, "\r\n") {
		return
	}
	for _, l := range strings.FieldsFunc(secret, func(c rune) bool { return c == '\n' || c == '\r' }) {
		if l = strings.TrimSpace(l); l != "" {
			r.gha.AddMask(l)
		}
	}
}

// Level is an annotation's level.
type Level string

// Annotation levels.
const (
	Notice  Level = "notice"
	Warning Level = "warning"
	Error   Level = "error"
)

// Annotation is one `::warning`/`::error` line; the library escapes the message (% CR
// LF) and the properties (also : and ,).
type Annotation struct {
	Level   Level
	Title   string
	File    string
	Message string
}

// Annotate writes an annotation.
func (r *Runtime) Annotate(a Annotation) {
	props := map[string]string{}
	if a.Title != "" {
		props["title"] = a.Title
	}
	if a.File != "" {
		props["file"] = a.File
	}
	g := r.gha.WithFieldsMap(props)
	r.log.lineStart()
	// The message is an argument, never the format: it may hold '%'.
	switch a.Level {
	case Error:
		g.Errorf("%s", a.Message)
	case Warning:
		g.Warningf("%s", a.Message)
	default:
		g.Noticef("%s", a.Message)
	}
}

// Quiet runs fn in a collapsed group of the log with workflow commands switched off
// (`::stop-commands::` with a random token): whatever fn writes (bench logs, kernel
// names, error output, command text) is shown as text and never read as a command.
func (r *Runtime) Quiet(title string, fn func(w io.Writer) error) error {
	r.log.lineStart()
	r.gha.Group(title)
	token := "perfbot-" + randomHex()
	r.gha.IssueCommand(&githubactions.Command{Name: "stop-commands", Message: token})
	err := fn(r.log)
	r.log.lineStart()
	fmt.Fprintf(r.log, "::%s::\n", token)
	r.gha.EndGroup()
	return err
}

var outputName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,99}$`)

// SetOutput writes one output to GITHUB_OUTPUT as `name<<delimiter`, value, delimiter,
// with a delimiter drawn at random for this value, so no value can end it early and
// write an output of its own; a value holding the delimiter is refused. CRLF and lone
// CR line ends become LF, as the runner reads them.
func (r *Runtime) SetOutput(name, value string) error {
	value = strings.ReplaceAll(strings.ReplaceAll(value, "\r\n", "\n"), "\r", "\n")
	if !outputName.MatchString(name) {
		return fmt.Errorf("setting output %q: not an output name", name)
	}
	delim := "ghadelimiter_" + randomHex()
	if strings.Contains(value, delim) {
		return fmt.Errorf("setting output %s: the value holds its delimiter", name)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", name, delim, value, delim)
	if err := appendFile(r.outPath, b.Bytes()); err != nil {
		return fmt.Errorf("setting output %s: %w", name, err)
	}
	r.mu.Lock()
	r.outputs[name] = value
	r.mu.Unlock()
	return nil
}

// Outputs returns the outputs set so far.
func (r *Runtime) Outputs() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.outputs))
	for k, v := range r.outputs {
		out[k] = v
	}
	return out
}

// Summary appends Markdown to the step summary, cut to GitHub's 1 MiB. Without a
// summary file (GITHUB_STEP_SUMMARY unset) it leaves a notice instead of failing.
func (r *Runtime) Summary(md string) error {
	if r.sumPath == "" {
		r.Annotate(Annotation{Level: Notice, Title: "perfbot", Message: "no step summary: GITHUB_STEP_SUMMARY is not set"})
		return nil
	}
	md = gh.Truncate(md, report.MaxStepSummary)
	if err := appendFile(r.sumPath, []byte(md)); err != nil {
		return fmt.Errorf("writing the step summary: %w", err)
	}
	return nil
}

func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func randomHex() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on Linux; a fixed delimiter would be unsafe.
		panic(fmt.Sprintf("perfbot: reading random bytes: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// logWriter serialises the step's log and remembers whether the last line ended, so
// a command written after free text starts on a line of its own. A failed write is
// dropped: losing a log line must not stop the job (the library panics on one).
type logWriter struct {
	mu   sync.Mutex
	w    io.Writer
	last byte
}

func (l *logWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(p)
	l.last = p[len(p)-1]
	return len(p), nil
}

func (l *logWriter) lineStart() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last != '\n' {
		_, _ = l.w.Write([]byte{'\n'})
		l.last = '\n'
	}
}
