package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one subcommand. Each lives in its own file and registers itself from init,
// so adding a command never touches a shared table.
type command struct {
	name    string
	summary string
	// run parses args itself (flag.NewFlagSet) and returns an error; an *exitError
	// carries a specific exit code.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("perfbot: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// exitError asks for a specific process exit code. A nil err means the code was
// already explained to the user (for example by the guard's own log lines).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad command-line input (exit code 2).
func usageError(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

// newFlags returns a flag set that reports errors instead of exiting, and prints its
// usage to stderr.
func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, strings.TrimRight("usage: perfbot "+name+" "+usage, " "))
		printFlags(stderr, fs)
	}
	if rec, ok := stderr.(*helpRecorder); ok {
		rec.name, rec.usage, rec.flags = name, usage, fs
	}
	return fs
}

// parseFlags parses args and turns a flag error into a usage error; -h gives exit 0.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &exitError{code: 0}
		}
		return &exitError{code: 2}
	}
	return nil
}

// subcommand is one member of a command group such as `perfbot run profile`.
type subcommand struct {
	name string
	run  func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// runGroup dispatches a command group: no argument or -h prints the usage, an unknown
// member is a usage error that names the known ones (`unknown job "x": use profile or
// gemm-tests`).
func runGroup(ctx context.Context, group, what, usage string, subs []subcommand, args []string, stdout, stderr io.Writer) error {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(stderr, "usage: perfbot %s %s\n\nrun `perfbot %s %s --help` for the flags of each\n",
			group, usage, group, strings.Join(names, "|"))
		if rec, ok := stderr.(*helpRecorder); ok {
			rec.name, rec.usage, rec.subs = group, usage, names
		}
		if len(args) == 0 {
			return &exitError{code: 2}
		}
		return nil
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, args[1:], stdout, stderr)
		}
	}
	return usageError("unknown %s %q: use %s", what, args[0], strings.Join(names, " or "))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printHelp(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" {
		printHelp(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "perfbot: unknown command %q (run `perfbot help`)\n", args[0])
		return 2
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "perfbot %s: %v\n", c.name, ee.err)
		}
		return ee.code
	}
	if ctx.Err() != nil {
		// A signal stopped the command (main cancels ctx on SIGINT/SIGTERM): the
		// shell's code, and the cause rather than the read that was cut short.
		fmt.Fprintf(stderr, "perfbot %s: stopped: %v\n", c.name, context.Cause(ctx))
		return interruptCode(ctx)
	}
	fmt.Fprintf(stderr, "perfbot %s: %v\n", c.name, err)
	return 1
}
