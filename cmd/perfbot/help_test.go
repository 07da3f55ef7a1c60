package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
)

// Every command and every member of a command group, found by walking the registry, so
// a command added later is covered with no edit here.
func TestEveryCommandHasCompleteHelp(t *testing.T) {
	t.Parallel()
	pages := helpPages(context.Background())
	if len(pages) < len(commands)+4 {
		t.Fatalf("walked %d help pages for %d commands: the walk does not reach the groups' members", len(pages), len(commands))
	}
	_, list, _ := runCLI(t, "help")
	for _, p := range pages {
		path := strings.Join(p.path, " ")
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			for _, problem := range checkHelpPage(p, pages, list) {
				t.Error(problem)
			}

			code, stdout, stderr := runCLI(t, append([]string{"help"}, p.path...)...)
			if code != 0 || stdout != p.text || stderr != "" {
				t.Errorf("perfbot help %s: exit %d, stderr %q, and its stdout differs from perfbot %s --help (%v)",
					path, code, stderr, path, stdout != p.text)
			}
			code, _, short := runCLI(t, append(slices.Clone(p.path), "-h")...)
			if code != 0 || short != p.text {
				t.Errorf("perfbot %s -h: exit %d, and it prints other text than --help:\n%s", path, code, short)
			}

			code, stdout, stderr = runCLI(t, append(slices.Clone(p.path), "--no-such-flag")...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, "no-such-flag") {
				t.Errorf("perfbot %s --no-such-flag: exit %d, stdout %q, stderr %q; want exit 2 and the flag named on stderr", path, code, stdout, stderr)
			}
			if p.flags != nil && !strings.Contains(stderr, "usage: perfbot "+path) {
				t.Errorf("perfbot %s --no-such-flag: stderr %q lacks the usage line", path, stderr)
			}
		})
	}
}

// synopsisFlagRE finds a flag in a usage synopsis: --name after a space, [, ( or |.
var synopsisFlagRE = regexp.MustCompile(`(?:^|[\s\[(|])--([a-z0-9][a-z0-9-]*)`)

// checkHelpPage returns what is wrong with one page of help. list is the output of
// `perfbot help`.
func checkHelpPage(p helpPage, pages []helpPage, list string) []string {
	var problems []string
	bad := func(format string, a ...any) {
		problems = append(problems, fmt.Sprintf("perfbot %s --help: ", strings.Join(p.path, " "))+fmt.Sprintf(format, a...))
	}
	path := strings.Join(p.path, " ")
	if p.code != 0 {
		bad("exit %d, want 0", p.code)
	}
	first, _, _ := strings.Cut(p.text, "\n")
	if first != "usage: perfbot "+path && !strings.HasPrefix(first, "usage: perfbot "+path+" ") {
		bad("first line %q, want %q", first, "usage: perfbot "+path+" ...")
	}
	if p.name != path {
		bad("the usage is recorded for %q: give newFlags or runGroup the full name %q", p.name, path)
	}
	if len(p.path) == 1 {
		c := commands[p.path[0]]
		if strings.TrimSpace(c.summary) == "" || strings.Contains(c.summary, "\n") {
			bad("the registered summary %q must be one line", c.summary)
		}
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.name) + ` +` + regexp.QuoteMeta(c.summary) + `$`).MatchString(list) {
			bad("`perfbot help` does not list it with its summary %q", c.summary)
		}
	}

	synopsis, _, _ := strings.Cut(p.usage, "\n\n")
	examples := checkExamples(bad, p)

	if len(p.subs) > 0 {
		// A group: its synopsis has a line for each member, and names only their flags.
		byName := map[string]helpPage{}
		for _, q := range pages {
			if len(q.path) == len(p.path)+1 && slices.Equal(q.path[:len(p.path)], p.path) {
				byName[q.path[len(q.path)-1]] = q
			}
		}
		lines := map[string]string{}
		current := ""
		for l := range strings.SplitSeq("perfbot "+path+" "+synopsis, "\n") {
			l = strings.TrimSpace(l)
			if rest, ok := strings.CutPrefix(l, "perfbot "+path+" "); ok {
				current, _, _ = strings.Cut(rest, " ")
				if !slices.Contains(p.subs, current) {
					bad("the synopsis names %q, which is not one of %v", current, p.subs)
				}
			}
			lines[current] += " " + l
		}
		for _, s := range p.subs {
			if lines[s] == "" {
				bad("the synopsis has no line for `perfbot %s %s`", path, s)
				continue
			}
			checkSynopsisFlags(bad, "`perfbot "+path+" "+s+"` in the group's synopsis", lines[s], byName[s].flags)
		}
		if !strings.Contains(p.text, strings.Join(p.subs, "|")) {
			bad("does not say how to get the members' flags")
		}
		for _, e := range examples {
			member, _, _ := strings.Cut(strings.TrimPrefix(e, "perfbot "+path+" "), " ")
			if !slices.Contains(p.subs, member) {
				bad("the example %q runs no member of the group", e)
				continue
			}
			checkSynopsisFlags(bad, "the example `"+e+"`", e, byName[member].flags)
		}
		return problems
	}

	if p.flags == nil {
		bad("no flags recorded: build them with newFlags(name, usage, stderr), so --help is uniform and listed")
		return problems
	}
	checkSynopsisFlags(bad, "the synopsis", synopsis, p.flags)
	for _, e := range examples {
		checkSynopsisFlags(bad, "the example `"+e+"`", e, p.flags)
	}
	named := map[string]string{}
	for _, m := range synopsisValueRE.FindAllStringSubmatch(synopsis, -1) {
		if named[m[1]] == "" || placeholderRE.MatchString(m[2]) {
			named[m[1]] = "--" + m[1] + " " + m[2]
		}
	}
	p.flags.VisitAll(func(f *flag.Flag) {
		placeholder, usage := flag.UnquoteUsage(f)
		if named[f.Name] == "" {
			bad("the synopsis does not name --%s", f.Name)
		} else if ph := synopsisPlaceholders(synopsis)[f.Name]; placeholder != "" && (ph == "" || ph == "F" || ph == "D") {
			bad("the synopsis shows --%s's value as %q: write a placeholder in capitals (--repo DIR, --trace FILE, --window N) or the choices (--format md|json)", f.Name, named[f.Name])
		}
		if !regexp.MustCompile(`(?m)^  --` + regexp.QuoteMeta(f.Name) + `( |$)`).MatchString(p.text) {
			bad("flag --%s is not listed", f.Name)
		}
		if strings.TrimSpace(usage) == "" {
			bad("flag --%s has no description", f.Name)
		}
		if strings.ContainsAny(placeholder, " \t") {
			bad("flag --%s shows %q as its value: a `quoted` phrase in its description became the placeholder", f.Name, placeholder)
		}
	})
	return problems
}

// checkExamples checks that the help ends with an "examples:" block of one or two
// command lines of this command, and returns them (continuation lines joined).
func checkExamples(bad func(string, ...any), p helpPage) []string {
	path := strings.Join(p.path, " ")
	text := strings.TrimRight(p.text, "\n")
	i := strings.LastIndex(text, "\n\nexamples:\n")
	if i < 0 {
		bad("does not end with an \"examples:\" block of one or two command lines")
		return nil
	}
	var examples []string
	for l := range strings.SplitSeq(text[i+len("\n\nexamples:\n"):], "\n") {
		switch {
		case strings.HasPrefix(l, "  perfbot "+path+" ") || l == "  perfbot "+path:
			examples = append(examples, strings.TrimSpace(l))
		case strings.HasPrefix(l, "      ") && len(examples) > 0:
			examples[len(examples)-1] += " " + strings.TrimSpace(l)
		default:
			bad("the examples block has %q, which is not `  perfbot %s ...` nor its continuation", l, path)
		}
	}
	if len(examples) == 0 || len(examples) > 2 {
		bad("has %d examples, want one or two", len(examples))
	}
	for i, e := range examples {
		// What follows -- is the guarded command's, not perfbot's.
		examples[i], _, _ = strings.Cut(e, " -- ")
	}
	return examples
}

// checkSynopsisFlags reports a flag a synopsis names but fs does not define: the
// synopsis went stale.
func checkSynopsisFlags(bad func(string, ...any), what, synopsis string, fs *flag.FlagSet) {
	for _, m := range synopsisFlagRE.FindAllStringSubmatch(synopsis, -1) {
		if fs == nil || fs.Lookup(m[1]) == nil {
			bad("%s names --%s, which is not a flag of it", what, m[1])
		}
	}
}

// The checks must be able to fail: each page below has one mistake of the kind they
// exist to catch.
func TestHelpChecksCatchMistakes(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("repo", "", "the checkout")
	fs.String("out", "", "written by `perfbot run profile` (a phrase)")
	fs.Bool("quiet", false, "")
	good := helpPage{path: []string{"run", "x"}, code: 0, name: "run x", usage: "--repo DIR [--out F]\n\nexamples:\n  perfbot run x --repo . --nope",
		text: "usage: perfbot run x --repo DIR\n  --repo string\n        the checkout\n\nexamples:\n  perfbot run x --repo . --nope\n", flags: fs}
	group := helpPage{path: []string{"run"}, code: 0, name: "run", subs: []string{"x", "y"},
		usage: "x --repo DIR --gone\n       perfbot run z --out DIR", text: "usage: perfbot run x ...\n"}
	for _, c := range []struct {
		name string
		page helpPage
		want []string
	}{
		{"a leaf", good, []string{"--out is not listed", "--quiet is not listed", "--quiet has no description",
			`--out shows "perfbot run profile" as its value`, "the synopsis does not name --quiet",
			`the synopsis shows --out's value as "--out F"`, "the example `perfbot run x --repo . --nope` names --nope"}},
		{"no examples", func() helpPage {
			p := good
			p.text = "usage: perfbot run x --repo DIR\n  --repo string\n        the checkout\n"
			return p
		}(), []string{`does not end with an "examples:" block`}},
		{"three examples and a stray line", func() helpPage {
			p := good
			p.text += "  perfbot run x\n  perfbot run x --repo a\nsee also\n"
			return p
		}(), []string{"has 3 examples", `the examples block has "see also"`}},
		{"a wrong exit code and name", func() helpPage {
			p := good
			p.code, p.name, p.text = 2, "x", "usage: perfbot x --repo DIR\n"
			return p
		}(), []string{"exit 2", `first line "usage: perfbot x --repo DIR"`, `recorded for "x"`}},
		{"a stale synopsis", func() helpPage {
			p := good
			p.usage = "--repo DIR [--dry-run]"
			return p
		}(), []string{"the synopsis names --dry-run"}},
		{"no flag set", func() helpPage {
			p := good
			p.flags = nil
			return p
		}(), []string{"no flags recorded"}},
		{"a group", group, []string{`names "z", which is not one of`, "no line for `perfbot run y`",
			"`perfbot run x` in the group's synopsis names --gone", "how to get the members' flags"}},
	} {
		got := strings.Join(checkHelpPage(c.page, []helpPage{group, good}, ""), "\n")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: problems\n%s\nwant one with %q", c.name, got, w)
			}
		}
	}
}

func TestHelpListsAndRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{nil, 2, "", "commands:\n"},
		{[]string{"help"}, 0, "commands:\n", ""},
		{[]string{"--help"}, 0, "commands:\n", ""},
		{[]string{"help", "nosuch"}, 2, "", `unknown command "nosuch"`},
		{[]string{"help", "run", "nosuch"}, 2, "", `unknown job "nosuch"`},
		{[]string{"help", "--markdown", "run"}, 2, "", "--markdown takes no command"},
		{[]string{"nosuch"}, 2, "", "run `perfbot help`"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.errs) || (c.stdout == "") != (stdout == "") {
			t.Errorf("perfbot %q: exit %d, stdout %q, stderr %q; want %d, %q, %q", c.args, code, stdout, stderr, c.code, c.stdout, c.errs)
		}
	}
}

// The systemd unit runs a command line perfbot accepts: the command exists and every
// flag it passes is one of that command's flags.
func TestServeUnitCommandLineIsAccepted(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "examples", "systemd", "perfbot-serve.service"))
	if err != nil {
		t.Fatal(err)
	}
	var argv []string
	for l := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "ExecStart="); ok {
			argv = strings.Fields(rest)
		}
	}
	if len(argv) < 2 || filepath.Base(argv[0]) != "perfbot" {
		t.Fatalf("ExecStart %q does not run perfbot", argv)
	}
	var page *helpPage
	pages := helpPages(t.Context())
	for i, p := range pages {
		if len(p.path) == 1 && p.path[0] == argv[1] {
			page = &pages[i]
		}
	}
	if page == nil || page.flags == nil {
		t.Fatalf("ExecStart runs `perfbot %s`, which is not a command with flags", argv[1])
	}
	for _, a := range argv[2:] {
		if name, ok := strings.CutPrefix(a, "--"); ok && page.flags.Lookup(strings.SplitN(name, "=", 2)[0]) == nil {
			t.Errorf("ExecStart passes %s, which `perfbot %s` does not define", a, argv[1])
		}
	}
}
