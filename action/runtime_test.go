package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hostileValue holds everything that would forge an output or a workflow command if
// written raw: a delimiter-like line, the old set-output and add-mask commands, an
// output line of its own, and escapes.
const hostileValue = "llama\n" +
	"ghadelimiter_00000000000000000000000000000000\n" +
	"_GitHubActionsFileCommandDelimeter_\n" +
	"pr-url=https://evil.example/pr\n" +
	"sha<<EOF\nevil\nEOF\n" +
	"::set-output name=accepted::true\n" +
	"  ::add-mask::llama\n" +
	"::error title=x::forged %0A%25 line\r\n" +
	"::stop-commands::x"

func TestSetOutputUsesARandomDelimiter(t *testing.T) {
	t.Parallel()
	e := newStepEnv(t, nil)
	rt := e.runtime(t)
	want := map[string]string{"ranking": hostileValue, "verdict": "complete", "empty": "", "results-dir": "/tmp/a b"}
	for _, k := range []string{"ranking", "verdict", "empty", "results-dir"} {
		if err := rt.SetOutput(k, want[k]); err != nil {
			t.Fatal(err)
		}
	}
	want["ranking"] = strings.ReplaceAll(hostileValue, "\r\n", "\n")
	if diff := cmp.Diff(want, readOutputs(t, e.output)); diff != "" {
		t.Errorf("the outputs the runner reads (-want +got):\n%s", diff)
	}
	raw, _ := os.ReadFile(e.output)
	delims := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if name, d, ok := strings.Cut(line, "<<"); ok && !strings.ContainsAny(name, "=\n") && strings.HasPrefix(d, "ghadelimiter_") {
			if len(d) != len("ghadelimiter_")+32 || delims[d] {
				t.Errorf("delimiter %q is not a fresh random one", d)
			}
			delims[d] = true
		}
	}
	if len(delims) != 4 {
		t.Errorf("%d delimiters for 4 outputs:\n%s", len(delims), raw)
	}
	for _, name := range []string{"bad name", "a=b", "", "x\ny"} {
		if err := rt.SetOutput(name, "v"); err == nil {
			t.Errorf("output name %q accepted", name)
		}
	}
}

// The library's writer panics without GITHUB_OUTPUT; the runtime refuses to start
// instead, and a missing summary file is a notice, not a failure.
func TestRuntimeFiles(t *testing.T) {
	t.Parallel()
	e := newStepEnv(t, nil)
	delete(e.vars, "GITHUB_OUTPUT")
	if _, err := NewRuntime(io.Discard, e.getenv); err == nil || !strings.Contains(err.Error(), "GITHUB_OUTPUT is not set") {
		t.Errorf("without GITHUB_OUTPUT: %v", err)
	}
	e.vars["GITHUB_OUTPUT"] = filepath.Join(e.dir, "no", "such", "dir", "out")
	if _, err := NewRuntime(io.Discard, e.getenv); err == nil || !strings.Contains(err.Error(), "opening the step's output file") {
		t.Errorf("unwritable GITHUB_OUTPUT: %v", err)
	}
	e.vars["GITHUB_OUTPUT"] = e.output
	delete(e.vars, "GITHUB_STEP_SUMMARY")
	var log bytes.Buffer
	rt, err := NewRuntime(&log, e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Summary("# x\n"); err != nil {
		t.Fatal(err)
	}
	if cs := commands(t, log.String()); len(cs) != 1 || cs[0].Name != "notice" {
		t.Errorf("commands %s, want one notice", names(cs))
	}
	// Errors of Run before the runtime exists are plain errors, not ErrJobFailed.
	delete(e.vars, "GITHUB_OUTPUT")
	if err := Run(context.Background(), Options{Stdout: io.Discard, Getenv: e.getenv}); err == nil || errors.Is(err, ErrJobFailed) {
		t.Errorf("Run without GITHUB_OUTPUT: %v", err)
	}
}

// Annotations, masks and groups are escaped as the runner unescapes them, and what a
// job prints in a quiet group is never read as a command.
func TestWorkflowCommandsAreEscaped(t *testing.T) {
	t.Parallel()
	e := newStepEnv(t, nil)
	var log bytes.Buffer
	rt, err := NewRuntime(&log, e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	rt.Mask("-----BEGIN KEY-----\nc2VjcmV0\n-----END KEY-----\n")
	rt.Annotate(Annotation{Level: Error, Title: "run: a,b % c", File: "x,y.rs", Message: hostileValue})
	err = rt.Quiet("job output", func(w io.Writer) error {
		fmt.Fprint(w, hostileValue) // no final newline: the resume token must still start a line
		return errors.New("boom")
	})
	if err == nil || err.Error() != "boom" {
		t.Errorf("Quiet returned %v", err)
	}
	rt.Annotate(Annotation{Level: Warning, Message: "100% done"})
	got := commands(t, log.String())
	var kinds []string
	for _, c := range got {
		kinds = append(kinds, c.Name)
	}
	want := []string{"add-mask", "add-mask", "add-mask", "add-mask", "error", "group", "stop-commands", "endgroup", "warning"}
	if len(kinds) != len(want) {
		t.Fatalf("commands %v, want %v\nlog:\n%s", kinds, want, log.String())
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if got[0].Msg != "-----BEGIN KEY-----\nc2VjcmV0\n-----END KEY-----" {
		t.Errorf("the whole key is not masked: %q", got[0].Msg)
	}
	if got[2].Msg != "c2VjcmV0" {
		t.Errorf("the key's lines are not masked one by one: %q", got[2].Msg)
	}
	ann := got[4]
	if ann.Msg != hostileValue || ann.Props["title"] != "run: a,b % c" || ann.Props["file"] != "x,y.rs" {
		t.Errorf("the annotation does not read back as written: %+v", ann)
	}
	if got[8].Msg != "100% done" {
		t.Errorf("a %% in a message: %q", got[8].Msg)
	}
}

// An input holding a delimiter-like line and workflow command text creates no output
// and no command: the step fails with one escaped error annotation.
func TestInjectionThroughInputs(t *testing.T) {
	t.Parallel()
	for _, input := range []string{"models", "sampling", "request-id", "ref", "job", "config", "epic"} {
		t.Run(input, func(t *testing.T) {
			t.Parallel()
			in := map[string]string{"job": "profile", input: hostileValue}
			e := newStepEnv(t, in)
			e.vars["GITHUB_WORKSPACE"] = e.dir
			var log bytes.Buffer
			res, err := run(context.Background(), Options{Stdout: &log, Getenv: e.getenv})
			if !errors.Is(err, ErrJobFailed) {
				t.Fatalf("run: %v", err)
			}
			if outs := readOutputs(t, e.output); len(outs) != 0 || len(res.outputs) != 0 {
				t.Errorf("outputs %v / %v, want none", outs, res.outputs)
			}
			cs := commands(t, log.String())
			if len(cs) != 1 || cs[0].Name != "error" || !strings.Contains(cs[0].Msg, "input "+input) {
				t.Fatalf("commands %s, want one error naming the input\nlog:\n%s", names(cs), log.String())
			}
			for _, line := range strings.Split(log.String(), "\n") {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "::") && !strings.HasPrefix(l, "::error ") {
					t.Errorf("log line %q", line)
				}
			}
		})
	}
}

// Whatever a value holds, the output file yields exactly that one output with that
// value (line ends as LF).
func FuzzSetOutput(f *testing.F) {
	for _, v := range []string{"", "x", hostileValue, "a\rb\r\nc", "v<<EOF\nEOF\n", "\n\n"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, value string) {
		e := newStepEnv(t, nil)
		rt := e.runtime(t)
		if err := rt.SetOutput("ranking", value); err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll(strings.ReplaceAll(value, "\r\n", "\n"), "\r", "\n")
		if diff := cmp.Diff(map[string]string{"ranking": want}, readOutputs(t, e.output)); diff != "" {
			t.Errorf("outputs (-want +got):\n%s", diff)
		}
	})
}
