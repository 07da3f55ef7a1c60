package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

func init() {
	register(command{name: "help", summary: "list the commands, or print the usage and flags of one: help CMD [SUB]", run: runHelp})
}

func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("help", "[COMMAND [SUBCOMMAND]] | --markdown\n\nexamples:\n  perfbot help run profile\n  perfbot help --markdown", stderr)
	markdown := fs.Bool("markdown", false, "print the command reference of README.md (every command's name, summary and usage) as Markdown")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *markdown && fs.NArg() > 0:
		return usageError("--markdown takes no command: it prints them all")
	case *markdown:
		_, err := io.WriteString(stdout, helpMarkdown(ctx))
		return err
	case fs.NArg() == 0:
		printHelp(stdout)
		return nil
	}
	// `perfbot help CMD` is `perfbot CMD --help` by construction, on stdout.
	var buf bytes.Buffer
	if code := run(ctx, append(slices.Clone(fs.Args()), "--help"), io.Discard, &buf); code != 0 {
		stderr.Write(buf.Bytes())
		return &exitError{code: code}
	}
	_, err := stdout.Write(buf.Bytes())
	return err
}

// commandNames are the registered commands in name order.
func commandNames() []string {
	return slices.Sorted(maps.Keys(commands))
}

func printHelp(w io.Writer) {
	names := commandNames()
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	var b strings.Builder
	b.WriteString("perfbot: guarded GPU decode profiles, their analysis and their publication\n\nusage: perfbot <command> [flags]\n\ncommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	b.WriteString("\nrun `perfbot help <command>` (or `perfbot <command> --help`) for its usage and flags\n")
	io.WriteString(w, b.String())
}

// printFlags lists every flag of fs as flag.PrintDefaults does, but spelled with two
// dashes like the synopsis above it, and with the placeholder the synopsis gives the
// flag (`--repo DIR`), so the two never show one value under two names.
func printFlags(w io.Writer, fs *flag.FlagSet, synopsis string) {
	placeholders := synopsisPlaceholders(synopsis)
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if p := placeholders[f.Name]; p != "" && name != "" {
			name = p
		}
		b.WriteString("  --" + f.Name)
		if name != "" {
			b.WriteString(" " + name)
		}
		b.WriteString("\n        " + strings.ReplaceAll(usage, "\n", "\n        "))
		if !isZeroFlag(f) {
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				fmt.Fprintf(&b, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(&b, " (default %v)", f.DefValue)
			}
		}
		b.WriteString("\n")
	})
	io.WriteString(w, b.String())
}

// synopsisValueRE finds a flag and the word after it in a synopsis.
var synopsisValueRE = regexp.MustCompile(`(?:^|[\s\[(|])--([a-z0-9][a-z0-9-]*)(?:[ =]([^\s\[\]()]+))?`)

// placeholderRE is the one style of a flag's value in a synopsis: a name in capitals
// (DIR, FILE, N, OWNER/NAME, TAG,...) or a choice of literal values (md|json).
var placeholderRE = regexp.MustCompile(`^(?:[A-Z][A-Z0-9_]*(?:/[A-Z][A-Z0-9_]*)?(?:,\.\.\.)?|[a-z0-9][a-z0-9.-]*(?:\|[a-z0-9][a-z0-9.-]*)+)$`)

// synopsisPlaceholders maps each flag a synopsis names to the word after it when that
// word is a placeholder.
func synopsisPlaceholders(synopsis string) map[string]string {
	out := map[string]string{}
	for _, m := range synopsisValueRE.FindAllStringSubmatch(synopsis, -1) {
		if placeholderRE.MatchString(m[2]) && out[m[1]] == "" {
			out[m[1]] = m[2]
		}
	}
	return out
}

// isZeroFlag says whether a flag's default is its type's zero value, which the help
// leaves unsaid.
func isZeroFlag(f *flag.Flag) bool {
	t := reflect.TypeOf(f.Value)
	if t.Kind() != reflect.Pointer {
		return f.DefValue == ""
	}
	v, ok := reflect.New(t.Elem()).Interface().(flag.Value)
	return ok && f.DefValue == v.String()
}

// helpRecorder is the stderr a command runs with when its help is being collected:
// newFlags and runGroup see it and leave their flag set or members in it. So the help
// of every command and subcommand can be walked, and checked against the flags it
// really parses, without a second table of flags that could drift.
type helpRecorder struct {
	bytes.Buffer
	name  string // as given to newFlags or runGroup: "run profile"
	usage string // the synopsis after "usage: perfbot <name> "
	flags *flag.FlagSet
	subs  []string // a group's members
}

// helpPage is what `perfbot <path> --help` printed and recorded.
type helpPage struct {
	path    []string // "run", "profile"
	summary string   // the registry's one-liner; "" for a group's member
	code    int      // the exit code of --help
	text    string   // everything --help printed
	name    string
	usage   string
	flags   *flag.FlagSet // nil for a group, or a command that does not use newFlags
	subs    []string
}

// helpPages runs --help on every registered command and, for a group, on every member,
// in name order, members right after their group.
func helpPages(ctx context.Context) []helpPage {
	var pages []helpPage
	var visit func(path []string, summary string)
	visit = func(path []string, summary string) {
		rec := &helpRecorder{}
		code := run(ctx, append(slices.Clone(path), "--help"), io.Discard, rec)
		pages = append(pages, helpPage{path: path, summary: summary, code: code, text: rec.String(),
			name: rec.name, usage: rec.usage, flags: rec.flags, subs: rec.subs})
		for _, s := range rec.subs {
			visit(append(slices.Clone(path), s), "")
		}
	}
	for _, n := range commandNames() {
		visit([]string{n}, commands[n].summary)
	}
	return pages
}

// helpMarkdown is the command reference of README.md: a table of the commands and
// their summaries, then the usage of each as its --help prints it.
func helpMarkdown(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n| --- | --- |\n")
	var usages []string
	for _, p := range helpPages(ctx) {
		if len(p.path) > 1 {
			continue
		}
		fmt.Fprintf(&b, "| `perfbot %s` | %s |\n", p.path[0], strings.ReplaceAll(p.summary, "|", `\|`))
		synopsis, _, _ := strings.Cut(p.usage, "\n\n")
		usages = append(usages, indent(fmt.Sprintf("usage: perfbot %s %s", p.name, synopsis)))
	}
	b.WriteString("\nThe usage of each; `perfbot help CMD [SUB]` adds every flag with its default, and examples:\n\n")
	b.WriteString(strings.Join(usages, "\n"))
	return b.String()
}

// indent makes a Markdown code block of s.
func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("    " + strings.TrimRight(l, " ") + "\n")
	}
	return b.String()
}
