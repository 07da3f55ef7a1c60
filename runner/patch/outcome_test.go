package patch

import (
	"fmt"
	"strings"
	"testing"
)

func outcomeJSON(commit string, tests ...string) string {
	return fmt.Sprintf(`{"overlay_commit": %q, "tests": [%s]}`, commit, strings.Join(tests, ", "))
}

func testJSON(name, outcome string) string {
	return fmt.Sprintf(`{"name": %q, "outcome": %q, "detail": "one line"}`, name, outcome)
}

func TestParseOutcome(t *testing.T) {
	t.Parallel()
	three := []string{testJSON(TestNames[0], "passed"), testJSON(TestNames[1], "failed"), testJSON(TestNames[2], "not_run")}
	cases := []struct {
		name    string
		in      string
		wantErr string // empty: valid
	}{
		{"valid", outcomeJSON("75915908", three...), ""},
		{"full sha", outcomeJSON("75915908dfe5028335d318b10340313744fd3a8d", three...), ""},
		{"bad json", `{"overlay_commit": "75915908", "tests": [`, "decoding the outcome JSON"},
		{"not an object", `[]`, "decoding the outcome JSON"},
		{"trailing data", outcomeJSON("75915908", three...) + ` {}`, "trailing data"},
		{"unknown key", `{"overlay_commit": "75915908", "test": []}`, `unknown field "test"`},
		{"unknown outcome", outcomeJSON("75915908", testJSON(TestNames[0], "passed"), testJSON(TestNames[1], "flaky"), testJSON(TestNames[2], "passed")), `has outcome "flaky": use one of passed, failed, aborted, build_failed, timed_out, not_run`},
		{"missing name", outcomeJSON("75915908", testJSON(TestNames[0], "passed"), `{"outcome": "passed"}`, testJSON(TestNames[2], "passed")), "tests[1] has no name"},
		{"unknown name", outcomeJSON("75915908", testJSON(TestNames[0], "passed"), testJSON("gather_mm_other", "passed"), testJSON(TestNames[2], "passed")), `names "gather_mm_other", which is not a grouped_gemm numeric test`},
		{"repeated name", outcomeJSON("75915908", testJSON(TestNames[0], "passed"), testJSON(TestNames[0], "passed"), testJSON(TestNames[2], "passed")), "repeats"},
		{"two tests", outcomeJSON("75915908", three[:2]...), "the outcome has 2 tests; it needs exactly 3"},
		{"four tests", outcomeJSON("75915908", append(three, testJSON(TestNames[0], "passed"))...), "the outcome has 4 tests"},
		{"no tests", `{"overlay_commit": "75915908"}`, "the outcome has 0 tests"},
		{"short commit", outcomeJSON("7591", three...), `overlay_commit "7591" is not a commit SHA`},
		{"upper-case commit", outcomeJSON("75915908DFE", three...), "is not a commit SHA"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := ParseOutcome([]byte(tc.in))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseOutcome: %v", err)
				}
				if len(o.Tests) != 3 || o.Tests[1].Outcome != Failed {
					t.Errorf("parsed %+v", o)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	cases := []struct {
		outcomes [3]TestOutcome
		want     Decision
	}{
		{[3]TestOutcome{Passed, Passed, Passed}, Switch},
		{[3]TestOutcome{Passed, Failed, Passed}, Record},
		{[3]TestOutcome{Aborted, Passed, Passed}, Record},
		{[3]TestOutcome{Passed, Passed, TimedOut}, Record},
		{[3]TestOutcome{BuildFailed, BuildFailed, BuildFailed}, Hold},
		{[3]TestOutcome{Passed, NotRun, Passed}, Hold},
		{[3]TestOutcome{NotRun, Failed, BuildFailed}, Record},
	}
	for _, tc := range cases {
		o := Outcome{OverlayCommit: "75915908"}
		for i, oc := range tc.outcomes {
			o.Tests = append(o.Tests, TestResult{Name: TestNames[i], Outcome: oc})
		}
		if got := o.Decide(); got != tc.want {
			t.Errorf("Decide(%v) = %q, want %q", tc.outcomes, got, tc.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"  a\r\n\tb  c\n", 50, "a b c"},
		{"bell\x07 and\u2028sep", 50, "bell and sep"},
		{"", 50, ""},
		{"abcdefghij", 8, "abcde..."},
		{"héllo wörld", 8, "héllo..."},
	}
	for _, tc := range cases {
		if got := oneLine(tc.in, tc.max); got != tc.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// A detail is cut to max runes only when it is longer.
func TestOneLineCut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{{"abcdef", 6, "abcdef"}, {"abcdefg", 6, "abc..."}, {"a\n b\tc", 10, "a b c"}} {
		if got := oneLine(c.s, c.max); got != c.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}
