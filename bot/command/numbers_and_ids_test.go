package command_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lablup/perfbot/bot/command"
)

// TestEpicRange: epic= takes an issue number from 1 to MaxIssue, with or without #.
func TestEpicRange(t *testing.T) {
	t.Parallel()
	cfg := cfgOf(t, threeModels)
	for v, want := range map[string]int{"1": 1, "#1": 1, strconv.Itoa(command.MaxIssue): command.MaxIssue, "12": 12} {
		if cmd, _, err := command.Parse("/profile rocm epic="+v, cfg); err != nil || cmd.Epic != want {
			t.Errorf("epic=%s: %d %v, want %d", v, cmd.Epic, err, want)
		}
	}
	for _, v := range []string{"0", "#0", "-1", strconv.Itoa(command.MaxIssue + 1), "012", "+3", "1e3", ""} {
		if _, _, err := command.Parse("/profile rocm epic="+v, cfg); err == nil || !strings.Contains(err.Error(), "is not an issue number") {
			t.Errorf("epic=%s: %v, want refused", v, err)
		}
	}
}

// TestRequestIDs: a request id is letters, digits, -, _ and ., at most MaxIDLen; the
// characters just outside each range are refused.
func TestRequestIDs(t *testing.T) {
	t.Parallel()
	cfg := cfgOf(t, threeModels)
	for _, id := range []string{"azAZ09-_.", "a", "z", "A", "Z", "0", "9", strings.Repeat("x", command.MaxIDLen)} {
		for _, verb := range []string{"status", "cancel"} {
			if cmd, _, err := command.Parse("/perfbot "+verb+" "+id, cfg); err != nil || cmd.ID != id {
				t.Errorf("%s %s: %q %v", verb, id, cmd.ID, err)
			}
		}
	}
	for _, id := range []string{"`", "{", "@", "[", "/", ":", "a,b", strings.Repeat("x", command.MaxIDLen+1)} {
		if _, _, err := command.Parse("/perfbot status "+id, cfg); err == nil || !strings.Contains(err.Error(), "is not a request id") {
			t.Errorf("status %.20s: %v, want refused", id, err)
		}
	}
}

// TestErrorReplyParts: a reply lists the valid values and the usage only when it has
// some, and quotes the command line whole up to 200 bytes, cut and marked beyond.
func TestErrorReplyParts(t *testing.T) {
	t.Parallel()
	bare := &command.Error{Line: 3, Text: "/profile rocm", Problem: "it went wrong"}
	if got := bare.Error(); got != "command on line 3: it went wrong" {
		t.Errorf("Error() = %q", got)
	}
	if r := bare.Reply(); strings.Contains(r, "Valid:") || strings.Contains(r, "Usage:") || !strings.Contains(r, "it went wrong") {
		t.Errorf("reply without valid values or usage:\n%s", r)
	}
	full := &command.Error{Line: 1, Text: "/profile rocm", Problem: "p", Valid: []string{"a", "b"}, Usage: []string{"/perfbot help"}}
	if got := full.Error(); got != "command on line 1: p (valid: a, b)" {
		t.Errorf("Error() = %q", got)
	}
	if r := full.Reply(); !strings.Contains(r, "\nValid: `a`, `b`\n") || !strings.Contains(r, "\nUsage:\n\n- `/perfbot help`\n") {
		t.Errorf("reply with valid values and usage:\n%s", r)
	}
	line := "/profile rocm " + strings.Repeat("x", 200-len("/profile rocm "))
	if r := (&command.Error{Line: 1, Text: line, Problem: "p"}).Reply(); !strings.Contains(r, "`"+line+"`") || strings.Contains(r, "…") {
		t.Errorf("a line of exactly 200 bytes is not quoted whole:\n%s", r)
	}
	if r := (&command.Error{Line: 1, Text: line + "y", Problem: "p"}).Reply(); !strings.Contains(r, "`"+line+"…`") {
		t.Errorf("a line of 201 bytes is not cut at 200:\n%s", r)
	}
	// The cut never splits a character, and bytes that start no character are dropped
	// rather than read before the text's start.
	accented := line[:199] + "é" + "tail"
	if r := (&command.Error{Line: 1, Text: accented, Problem: "p"}).Reply(); !utf8.ValidString(r) || !strings.Contains(r, "`"+line[:199]+"…`") {
		t.Errorf("a 2-byte character across the 200th byte:\n%s", r)
	}
	if r := (&command.Error{Line: 1, Text: strings.Repeat("\x80", 300), Problem: "p"}).Reply(); !strings.Contains(r, "line 1: `…`") {
		t.Errorf("a line of continuation bytes:\n%q", r)
	}
}
