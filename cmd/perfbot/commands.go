package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
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

// newFlags returns a flag set that reports errors instead of exiting. usage is the
// synopsis after "usage: perfbot NAME ", one line per form; after a blank line it may go
// on with notes and must end with an "examples:" block. --help prints the synopsis, every
// flag (with the placeholder the synopsis gives it), then the rest; a bad flag prints one
// line and the synopsis only (parseFlags).
func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	synopsis, rest, _ := strings.Cut(usage, "\n\n")
	fs.SetOutput(&flagOutput{Writer: stderr, synopsis: strings.TrimRight("usage: perfbot "+name+" "+synopsis, " ")})
	fs.Usage = func() {
		fmt.Fprintln(stderr, strings.TrimRight("usage: perfbot "+name+" "+synopsis, " "))
		printFlags(stderr, fs, synopsis)
		if rest = strings.TrimRight(rest, "\n"); rest != "" {
			fmt.Fprintf(stderr, "\n%s\n", rest)
		}
	}
	if rec, ok := stderr.(*helpRecorder); ok {
		rec.name, rec.usage, rec.flags = name, usage, fs
	}
	return fs
}

// flagOutput is a flag set's output: stderr, and the synopsis a flag error is followed by.
type flagOutput struct {
	io.Writer
	synopsis string
}

// parseFlags parses args. --help (-h) prints the help and gives exit 0; a bad flag prints
// one line that names it (with the nearest flag when one is close) and the synopsis,
// and gives exit 2.
func parseFlags(fs *flag.FlagSet, args []string) error {
	help, out := fs.Usage, fs.Output()
	// The flag package prints its error and the whole help on a bad flag: keep it quiet
	// and say it once, shorter, below.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = help
	fs.SetOutput(out)
	if err == nil {
		return nil
	}
	if errors.Is(err, flag.ErrHelp) {
		help()
		return &exitError{code: 0}
	}
	fmt.Fprintf(out, "perfbot %s: %s\n", fs.Name(), flagErrorLine(fs, err))
	if fo, ok := out.(*flagOutput); ok {
		fmt.Fprintln(out, fo.synopsis)
	}
	return &exitError{code: 2}
}

// flagErrorLine rewords the flag package's error with the two dashes the help uses, and
// suggests the nearest flag for an unknown one.
func flagErrorLine(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		line := "unknown flag --" + name
		if near := nearest(name, names); near != "" {
			line += "; did you mean --" + near + "?"
		}
		return line
	}
	// "invalid value \"x\" for flag -window: ...", "flag needs an argument: -out",
	// "invalid boolean value \"x\" for -json: ..."
	return flagNameRE.ReplaceAllString(msg, "$1--$2")
}

var flagNameRE = regexp.MustCompile(`(flag |argument: |for )-([a-z0-9])`)

// nearest is the name closest to s by edit distance (a swap of two neighbours counts
// as one edit), when it is close: one edit for a name of up to four letters, two for
// a longer one, and less than half of s. "" when none is.
func nearest(s string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		d := editDistance(s, n)
		limit := 2
		if len(n) <= 4 {
			limit = 1
		}
		if d == 0 || d > limit || 2*d >= len(s) {
			continue
		}
		if best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b: insertions,
// deletions, substitutions and swaps of two adjacent bytes.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
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
		synopsis, rest, _ := strings.Cut(usage, "\n\n")
		fmt.Fprintf(stderr, "usage: perfbot %s %s\n\nrun `perfbot %s %s --help` for the flags of each\n",
			group, synopsis, group, strings.Join(names, "|"))
		if rest = strings.TrimRight(rest, "\n"); rest != "" {
			fmt.Fprintf(stderr, "\n%s\n", rest)
		}
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
	if near := nearest(args[0], names); near != "" {
		return usageError("unknown %s %q; did you mean %q? (use %s)", what, args[0], near, strings.Join(names, " or "))
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
		if near := nearest(args[0], commandNames()); near != "" {
			fmt.Fprintf(stderr, "perfbot: unknown command %q; did you mean %q? (run `perfbot help`)\n", args[0], near)
		} else {
			fmt.Fprintf(stderr, "perfbot: unknown command %q (run `perfbot help`)\n", args[0])
		}
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
