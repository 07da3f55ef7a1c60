package command

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxReply bounds an error reply whatever the comment: the command is quoted clipped,
// bad values are quoted clipped, and the rest is perfbot's own text.
const maxReply = 4096

// FuzzParse feeds arbitrary comment bodies to the parser: it must not panic, its
// answers stay bounded, and what it returns holds only checked values.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"/profile rocm",
		"/profile rocm models=llama,qwen3 sampling=greedy,t0.7-p0.95 ref=main epic=12",
		"/profile rocm ref=ABCDEF0123 sampling=t2-p1",
		"hello\r\n/bench rocm\r\n",
		"> /profile rocm\n/profile rocm",
		"```\n/profile rocm\n```\n/perfbot help",
		"<!--\n/profile rocm\n-->",
		"<pre>\n/profile rocm\n</pre>\n/bench rocm",
		"<blockquote>\n\n/profile rocm\n\n</blockquote>",
		"<details><summary>x</summary>\n\n/profile rocm\n</details>",
		"`<code>` <!-- <q>\n/perfbot help\n--> </q> \\<pre>\n/perfbot status",
		"    /profile rocm\n\t/perfbot status",
		"/perfbot cancel r-1",
		"/perfbot status 1 2",
		"/profile rocm models=,\n/bench rocm",
		"/profile rocm sampling=t99999999999999999999999-p0.0000000001",
		"/profile rocm epic=#0 ref=..",
		"/profile rocm models=<img src=x>@octocat",
		"/profile\u00a0rocm",
		"/profile rocm \xff\xfe",
		"/bench rocm bisect good=9fceb02 bad=E83C516 models=qwen3",
		"/bench rocm bisect good=9fceb02 bad=9FCEB02",
	} {
		f.Add(seed)
	}
	cfg := testCfg(f)
	max := maxModels(cfg)
	f.Fuzz(func(t *testing.T, body string) {
		cmd, found, err := Parse(body, cfg)
		_, total := Lines(body)
		if found != (total > 0) {
			t.Fatalf("Parse found %v, Lines found %d", found, total)
		}
		if !found {
			if err != nil {
				t.Fatalf("no command but an error: %v", err)
			}
			return
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if r := ce.Reply(); len(r) > maxReply {
				t.Fatalf("reply of %d bytes", len(r))
			}
			if len(ce.Error()) > maxReply {
				t.Fatalf("error of %d bytes", len(ce.Error()))
			}
			return
		}
		if specOf(cmd.Kind, cmd.Compare).Kind != cmd.Kind || cmd.Kind == "" {
			t.Fatalf("kind %q is not in the table", cmd.Kind)
		}
		if len(cmd.Text) > MaxLineBytes || cmd.Line < 1 {
			t.Fatalf("line %d of %d bytes", cmd.Line, len(cmd.Text))
		}
		if len(cmd.Models) > max || len(cmd.Sampling) > MaxSampling {
			t.Fatalf("%d models, %d sampling settings", len(cmd.Models), len(cmd.Sampling))
		}
		for _, m := range cmd.Models {
			if _, ok := cfg.Model(m); !ok {
				t.Fatalf("model %q is not configured", m)
			}
		}
		for _, s := range cmd.Sampling {
			if !utf8.ValidString(s) || strings.ContainsAny(s, " \t\n/") {
				t.Fatalf("sampling tag %q", s)
			}
		}
		switch cmd.RefKind {
		case RefSHA:
			if !isHex(cmd.Ref) || len(cmd.Ref) < 7 || len(cmd.Ref) > FullSHALen || cmd.Ref != strings.ToLower(cmd.Ref) {
				t.Fatalf("SHA ref %q", cmd.Ref)
			}
		case RefBranch:
			if len(cmd.Ref) > 255 || strings.ContainsAny(cmd.Ref, " \t\r\n~^:?*[\\") || strings.Contains(cmd.Ref, "..") {
				t.Fatalf("branch ref %q", cmd.Ref)
			}
		case RefNone:
			if cmd.Ref != "" {
				t.Fatalf("ref %q without a kind", cmd.Ref)
			}
		}
		// A bisection has both ends, distinct lower-case SHAs, and one model; nothing
		// else has either end.
		if cmd.Kind == Bisect {
			for _, sha := range []string{cmd.Good, cmd.Bad} {
				if !isHex(sha) || len(sha) < 7 || len(sha) > FullSHALen || sha != strings.ToLower(sha) {
					t.Fatalf("bisect end %q", sha)
				}
			}
			if cmd.Good == cmd.Bad || len(cmd.Models) != 1 {
				t.Fatalf("bisect %s..%s of models %q", cmd.Good, cmd.Bad, cmd.Models)
			}
		} else if cmd.Good != "" || cmd.Bad != "" {
			t.Fatalf("a %s command with bisect ends %q..%q", cmd.Kind, cmd.Good, cmd.Bad)
		}
		if cmd.Epic < 0 || len(cmd.ID) > MaxIDLen {
			t.Fatalf("epic %d, id %q", cmd.Epic, cmd.ID)
		}

		// The same text quoted, or in a fence no line of it can close, is no command.
		quoted := "> " + strings.ReplaceAll(body, "\n", "\n> ")
		if _, n := Lines(quoted); n != 0 && len(quoted) <= MaxBodyBytes {
			t.Fatalf("quoted body holds %d commands", n)
		}
		fence := "```" + strings.Repeat("`", longestRun(body, '`'))
		if _, n := Lines(fence + "\n" + body); n != 0 && len(body) < MaxBodyBytes-len(fence)-1 {
			t.Fatalf("fenced body holds %d commands", n)
		}
	})
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			if n > best {
				best = n
			}
		} else {
			n = 0
		}
	}
	return best
}
