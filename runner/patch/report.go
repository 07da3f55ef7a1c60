package patch

import (
	"fmt"
	"strings"
)

// Markdown renders the report as a section of the PR body.
func (r Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### grouped_gemm numeric tests on ROCm (overlay %s)\n\n", codeSpan(r.OverlayCommit))
	b.WriteString("| test | outcome | detail |\n| --- | --- | --- |\n")
	for _, t := range r.Tests {
		detail := ""
		if d := oneLine(t.Detail, 300); d != "" {
			detail = cellCode(d)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cellCode(t.Name), words(t.Outcome), detail)
	}
	b.WriteString("\n")
	switch r.Decision {
	case Switch:
		b.WriteString("All three passed: the gates ask `gpu_backend_available()`, so the tests now run on every GPU backend, ROCm included.\n")
	case Record:
		b.WriteString("A test failed on the GPU: the Metal/CUDA gates stay and the checker entry records the failure.\n")
	case Hold:
		b.WriteString("Not every test reached a verdict, and none failed on the GPU: both files stay as they are.\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n> %s\n", escapeText(n))
	}
	b.WriteString("\n")
	verb := "Changed"
	if r.DryRun {
		verb = "Would change (dry run, nothing written)"
	}
	if !r.Changed() {
		b.WriteString("No file changed: the tree already matches this outcome.\n")
	} else {
		fmt.Fprintf(&b, "%s:\n\n", verb)
		for _, f := range r.Files {
			if !f.Changed {
				continue
			}
			fmt.Fprintf(&b, "* %s\n", codeSpan(f.Path))
			for _, c := range f.Changes {
				fmt.Fprintf(&b, "  * %s\n", c)
			}
		}
	}
	b.WriteString("\n")
	c := r.Checker
	switch {
	case c == nil:
		b.WriteString("The checker did not run (dry run).\n")
	case c.Verdict == "passed":
		fmt.Fprintf(&b, "Checker %s: **passed**, %d awaiting a predicate.\n", codeSpan(strings.Join(c.Command, " ")), c.Awaiting)
	default:
		fmt.Fprintf(&b, "Checker %s: **failed** (%s).\n", codeSpan(strings.Join(c.Command, " ")), exitWords(c.VerifyResult))
		body := strings.Join(c.Failures, "\n")
		if body == "" {
			body = strings.TrimRight(c.Output, "\n")
		}
		if body != "" {
			b.WriteString("\n" + fenced(body))
		}
	}
	if c != nil {
		b.WriteString(leftNote(c.VerifyResult))
	}
	return b.String()
}

// leftNote says which processes a command left running (they were stopped).
func leftNote(r VerifyResult) string {
	if len(r.LeftRunning) == 0 {
		return ""
	}
	return fmt.Sprintf("\n%s left processes running when it exited; they were stopped: %s.\n",
		codeSpan(strings.Join(r.Command, " ")), codeSpan(strings.Join(r.LeftRunning, " ")))
}

// VerifyMarkdown renders verification results as a section of the PR body.
func VerifyMarkdown(rs []VerifyResult) string {
	var b strings.Builder
	b.WriteString("### Verification of the patched tree\n\n")
	if len(rs) == 0 {
		b.WriteString("No verification command ran.\n")
		return b.String()
	}
	b.WriteString("| command | result |\n| --- | --- |\n")
	for _, r := range rs {
		result := "passed"
		if !r.Passed() {
			result = "**failed** (" + exitWords(r) + ")"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", cellCode(strings.Join(r.Command, " ")), strings.ReplaceAll(result, "|", `\|`))
	}
	for _, r := range rs {
		if r.Passed() {
			continue
		}
		fmt.Fprintf(&b, "\n%s", codeSpan(strings.Join(r.Command, " ")))
		if r.Truncated {
			fmt.Fprintf(&b, " (last %d of %d bytes of output)", len(r.Output), r.OutputBytes)
		}
		b.WriteString(":\n\n")
		out := strings.TrimRight(r.Output, "\n")
		if out == "" {
			out = "(no output)"
		}
		b.WriteString(fenced(out))
	}
	for _, r := range rs {
		b.WriteString(leftNote(r))
	}
	if !VerifyPassed(rs) {
		b.WriteString("\nVerification failed: this pull request stays a draft until it passes.\n")
	}
	return b.String()
}

func exitWords(r VerifyResult) string {
	if r.Err != "" {
		return r.Err
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

// codeSpan wraps s in a code span that survives backticks in s.
func codeSpan(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// cellCode is a code span for a GFM table cell, where a bare | would end the cell.
func cellCode(s string) string {
	return strings.ReplaceAll(codeSpan(s), "|", `\|`)
}

// fenced wraps text in a code block whose fence is longer than any backtick run in it.
func fenced(text string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + "text\n" + text + "\n" + fence + "\n"
}

// escapeText keeps a note from being read as HTML or a table.
func escapeText(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", `\|`).Replace(s)
}
