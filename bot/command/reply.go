package command

import (
	"fmt"
	"strings"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/mdtext"
	"github.com/lablup/perfbot/internal/strs"
)

// Error is a command perfbot found but cannot read: what is wrong, what is valid
// instead, and the usage of the commands concerned. Reply renders it for a comment.
type Error struct {
	// Line is the command's 1-based line in the comment; Text the line as written.
	Line int
	Text string
	// Problem says what is wrong, in plain text (it may quote the comment).
	Problem string
	// Valid lists what would be accepted in place of the bad part.
	Valid []string
	// Usage lists the synopses of the commands concerned.
	Usage []string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("command on line %d: %s", e.Line, e.Problem)
	if len(e.Valid) > 0 {
		msg += " (valid: " + strings.Join(e.Valid, ", ") + ")"
	}
	return msg
}

// Reply is the Markdown answer to the comment. Everything taken from the comment is
// escaped: the reply can never turn the commenter's text into markup or mentions.
func (e *Error) Reply() string {
	var b strings.Builder
	fmt.Fprintf(&b, "perfbot could not run the command on line %d: %s\n\n", e.Line, mdtext.Code(clip(e.Text, 200)))
	b.WriteString(noMention(mdtext.Text(e.Problem)))
	b.WriteString("\n")
	if len(e.Valid) > 0 {
		b.WriteString("\nValid: ")
		b.WriteString(codeList(e.Valid))
		b.WriteString("\n")
	}
	if len(e.Usage) > 0 {
		b.WriteString("\nUsage:\n\n")
		for _, u := range e.Usage {
			b.WriteString("- " + code(u) + "\n")
		}
	}
	b.WriteString("\n`/perfbot help` lists every command.\n")
	return b.String()
}

// noMention keeps quoted comment text from notifying anyone: GitHub links @name (and
// team mentions) in rendered text, escaped or not, but not when a zero-width space
// follows the @.
func noMention(s string) string { return strings.ReplaceAll(s, "@", "@\u200b") }

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string { return strs.Clip(s, n, "…") }

func code(s string) string { return mdtext.Code(s) }

// HelpText is the Markdown help, generated from Specs with the values of cfg (the
// configured models, the defaults, the limits).
func HelpText(cfg config.Config) string {
	var b strings.Builder
	b.WriteString("**perfbot commands**: one per comment, at the start of a line (not quoted, not in a code block).\n\n")
	for _, s := range Specs() {
		fmt.Fprintf(&b, "- %s: %s.", code(s.Usage()), s.Summary)
		if ex := Example(s, cfg); ex != strings.Join(s.Words, " ") {
			fmt.Fprintf(&b, " Example: %s", code(ex))
		}
		b.WriteString("\n")
		for _, a := range s.Args {
			fmt.Fprintf(&b, "  - %s: %s\n", code(a.Synopsis()), a.Help(cfg))
		}
	}
	fmt.Fprintf(&b, "\nEvery command but `/perfbot help` needs the %s permission on this repository or more. "+
		"A pull request from a fork runs only when someone with `maintain` or `admin` names its full 40-digit SHA with `ref=`.\n",
		code(minPermission(cfg)))
	return b.String()
}

// Example is a valid command line of s under cfg with every argument given.
func Example(s Spec, cfg config.Config) string {
	parts := append([]string(nil), s.Words...)
	for _, a := range s.Args {
		v := a.Example(cfg)
		if v == "" {
			continue
		}
		if a.Key == "" {
			parts = append(parts, v)
		} else {
			parts = append(parts, a.Key+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func minPermission(cfg config.Config) string {
	if cfg.Trigger.MinPermission != "" {
		return cfg.Trigger.MinPermission
	}
	return config.Default().Trigger.MinPermission
}
