package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/results"
)

// TestOutcome is what happened to one grouped_gemm numeric test on the ROCm host
// (results.TestOutcome: the results folder's format owns it).
type TestOutcome = results.TestOutcome

// The outcomes of docs/formats.md §7.
const (
	Passed      = results.TestPassed
	Failed      = results.TestFailed
	Aborted     = results.TestAborted
	BuildFailed = results.TestBuildFailed
	TimedOut    = results.TestTimedOut
	NotRun      = results.TestNotRun
)

var knownOutcomes = []TestOutcome{Passed, Failed, Aborted, BuildFailed, TimedOut, NotRun}

// TestNames are the three numeric tests, in the order of the file.
var TestNames = results.GemmTestNames

// TestResult is one test's entry in the outcome file (results.TestResult).
type TestResult = results.TestResult

// Outcome is the runner's hand-over to the patcher: the overlay commit the tests ran
// on and the result of each of the three tests.
type Outcome struct {
	OverlayCommit string       `json:"overlay_commit"`
	Tests         []TestResult `json:"tests"`
}

// Decision is what an Outcome allows the patcher to do.
type Decision string

const (
	// Switch: all three passed, so the gates move to gpu_backend_available() and the
	// checker entry goes.
	Switch Decision = "switch"
	// Record: a test failed, aborted or timed out on ROCm: the gates stay and the
	// checker entry's comment records the evidence.
	Record Decision = "record"
	// Hold: no test failed on the GPU but not all three passed (the binary did not
	// build, or a test name matched nothing): there is no evidence either way, so both
	// files stay as they are and the report says why.
	Hold Decision = "hold"
)

var hexCommit = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

// ParseOutcome decodes and validates the outcome JSON. Unknown keys are errors, so a
// typo never silently turns a failure into a pass.
func ParseOutcome(data []byte) (Outcome, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var o Outcome
	if err := dec.Decode(&o); err != nil {
		return Outcome{}, fmt.Errorf("decoding the outcome JSON: %w", err)
	}
	if dec.More() {
		return Outcome{}, errors.New("decoding the outcome JSON: trailing data after the object")
	}
	if err := o.Validate(); err != nil {
		return Outcome{}, err
	}
	return o, nil
}

// Validate checks that the outcome names each of the three tests exactly once with a
// known outcome, and a hex overlay commit.
func (o Outcome) Validate() error {
	if !hexCommit.MatchString(o.OverlayCommit) {
		return fmt.Errorf("overlay_commit %q is not a commit SHA: give 7 to 40 lowercase hex digits", o.OverlayCommit)
	}
	if len(o.Tests) != len(TestNames) {
		return fmt.Errorf("the outcome has %d tests; it needs exactly %d, one per grouped_gemm numeric test (%s)",
			len(o.Tests), len(TestNames), strings.Join(TestNames[:], ", "))
	}
	seen := map[string]bool{}
	for i, t := range o.Tests {
		if t.Name == "" {
			return fmt.Errorf("tests[%d] has no name: name it one of %s", i, strings.Join(TestNames[:], ", "))
		}
		if !isTestName(t.Name) {
			return fmt.Errorf("tests[%d] names %q, which is not a grouped_gemm numeric test: use one of %s",
				i, t.Name, strings.Join(TestNames[:], ", "))
		}
		if seen[t.Name] {
			return fmt.Errorf("tests[%d] repeats %q: give each test once", i, t.Name)
		}
		seen[t.Name] = true
		if !isOutcome(t.Outcome) {
			words := make([]string, len(knownOutcomes))
			for j, k := range knownOutcomes {
				words[j] = string(k)
			}
			return fmt.Errorf("tests[%d] (%s) has outcome %q: use one of %s", i, t.Name, t.Outcome, strings.Join(words, ", "))
		}
	}
	return nil
}

func isTestName(s string) bool {
	for _, n := range TestNames {
		if n == s {
			return true
		}
	}
	return false
}

func isOutcome(o TestOutcome) bool {
	for _, k := range knownOutcomes {
		if k == o {
			return true
		}
	}
	return false
}

// recorded says whether an outcome is evidence against the gates on ROCm, worth
// recording in the checker entry. A build failure or a test that did not run says
// nothing about gather_mm on the GPU.
func recorded(t TestOutcome) bool {
	return t == Failed || t == Aborted || t == TimedOut
}

// words is the outcome as prose ("timed out").
func words(t TestOutcome) string {
	switch t {
	case BuildFailed:
		return "did not build"
	case TimedOut:
		return "timed out"
	case NotRun:
		return "did not run (no test matched)"
	}
	return string(t)
}

// Decide says what the outcome allows: only three clean passes switch the gates.
func (o Outcome) Decide() Decision {
	passed := 0
	for _, t := range o.Tests {
		if recorded(t.Outcome) {
			return Record
		}
		if t.Outcome == Passed {
			passed++
		}
	}
	if passed == len(TestNames) && len(o.Tests) == len(TestNames) {
		return Switch
	}
	return Hold
}

// inFileOrder returns the tests in the order of TestNames, which is the order of the
// file, so the recorded comment does not depend on the JSON's order.
func (o Outcome) inFileOrder() []TestResult {
	var out []TestResult
	for _, n := range TestNames {
		for _, t := range o.Tests {
			if t.Name == n {
				out = append(out, t)
			}
		}
	}
	return out
}

// oneLine flattens a detail to one trimmed line of printable text, at most max runes,
// so it fits a Python comment and a table cell.
func oneLine(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' || r == ' ' || r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	if utf8.RuneCountInString(out) > max {
		out = strings.TrimRight(strs.ClipRunes(out, max-3, ""), " ") + "..."
	}
	return out
}
