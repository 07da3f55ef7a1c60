package patch

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const gg = `"src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs"`

func recordOutcome() Outcome {
	return Outcome{OverlayCommit: "75915908", Tests: []TestResult{
		{Name: TestNames[0], Outcome: TimedOut, Detail: "no output for 600 s"},
		{Name: TestNames[1], Outcome: Passed},
		{Name: TestNames[2], Outcome: Passed},
	}}
}

// TestPlanChecker covers literal shapes the test copies do not: where comments sit,
// blank-line groups, orphan comments, counts in words, a trailing comment on `}`.
func TestPlanChecker(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		d    Decision
		in   string
		want string
	}{
		{
			name: "middle entry between blank-separated groups",
			d:    Switch,
			in:   "X = 1\n# Three files wait:\nBACKEND_ENUMERATION_TODO: set[str] = {\n    # a()\n    \"a.rs\",\n\n    # gpu_backend_available()\n    " + gg + ",\n\n    # c()\n    \"c.rs\",\n}\n",
			want: "X = 1\n# Two files wait:\nBACKEND_ENUMERATION_TODO: set[str] = {\n    # a()\n    \"a.rs\",\n\n    # c()\n    \"c.rs\",\n}\n",
		},
		{
			name: "first entry after a blank line",
			d:    Switch,
			in:   "BACKEND_ENUMERATION_TODO = {\n\n    # gpu_backend_available()\n    " + gg + ",\n\n    # c()\n    \"c.rs\",\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n\n    # c()\n    \"c.rs\",\n}\n",
		},
		{
			name: "emptied literal keeps an orphan comment and the closing comment",
			d:    Switch,
			in:   "# 1 entry is left and it has a predicate.\nBACKEND_ENUMERATION_TODO: set[str] = {  # sorted\n    # Keep this list short.\n\n    # gpu_backend_available()\n    " + gg + ",\n}  # noqa: E501\nY = 2\n",
			want: "# 0 entries are left and it has a predicate.\n# Keep this list short.\nBACKEND_ENUMERATION_TODO: set[str] = set()  # noqa: E501\nY = 2\n",
		},
		{
			name: "single-quoted entry, one entry has, counts",
			d:    Switch,
			in:   "# 2 files have a gate:\n#  - 'src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs'\n#  - 'b.rs'\nBACKEND_ENUMERATION_TODO = {\n    'src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs',  # gpu_backend_available()\n    'b.rs',  # b()\n}\n",
			want: "# 1 file has a gate:\n#  - 'b.rs'\nBACKEND_ENUMERATION_TODO = {\n    'b.rs',  # b()\n}\n",
		},
		{
			name: "a count that is not the entry count stays",
			d:    Switch,
			in:   "# Rule 4 of 5 rules; 7 files were fixed; 2 files remain.\nBACKEND_ENUMERATION_TODO = {\n    # gpu_backend_available()\n    " + gg + ",\n    # b()\n    \"b.rs\",\n}\n",
			want: "# Rule 4 of 5 rules; 7 files were fixed; 1 file remains.\nBACKEND_ENUMERATION_TODO = {\n    # b()\n    \"b.rs\",\n}\n",
		},
		{
			name: "record before an entry that had no comment",
			d:    Record,
			in:   "BACKEND_ENUMERATION_TODO = {\n    # b()\n    \"b.rs\",\n    " + gg + ",\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    # b()\n    \"b.rs\",\n    # waits for gpu_backend_available(); on ROCm at overlay 75915908:\n    #   gather_mm_matches_dense_per_expert_reference timed out: no output for 600 s\n    " + gg + ",\n}\n",
		},
		{
			name: "record after an entry that had no comment",
			d:    Record,
			in:   "BACKEND_ENUMERATION_TODO = {\n    \"b.rs\",\n    # b()\n    " + gg + ",\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    \"b.rs\",\n    # b()\n    " + gg + ",\n    # waits for gpu_backend_available(); on ROCm at overlay 75915908:\n    #   gather_mm_matches_dense_per_expert_reference timed out: no output for 600 s\n}\n",
		},
		{
			name: "record inline without a comment yet",
			d:    Record,
			in:   "BACKEND_ENUMERATION_TODO = {\n    \"b.rs\",  # b()\n    " + gg + ",\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    \"b.rs\",  # b()\n    " + gg + ",  # waits for gpu_backend_available(); on ROCm at overlay 75915908: gather_mm_matches_dense_per_expert_reference timed out: no output for 600 s\n}\n",
		},
		{
			name: "record inline keeps the gap before the old comment",
			d:    Record,
			in:   "BACKEND_ENUMERATION_TODO = {\n    \"b.rs\",  # b()\n    " + gg + ",    # waits for x(); old\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    \"b.rs\",  # b()\n    " + gg + ",    # waits for x(); on ROCm at overlay 75915908: gather_mm_matches_dense_per_expert_reference timed out: no output for 600 s\n}\n",
		},
		{
			name: "record takes the entry's own line ending",
			d:    Record,
			in:   "BACKEND_ENUMERATION_TODO = {\n    # b()\n    \"b.rs\",\n    " + gg + ",\r\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    # b()\n    \"b.rs\",\n    # waits for gpu_backend_available(); on ROCm at overlay 75915908:\r\n    #   gather_mm_matches_dense_per_expert_reference timed out: no output for 600 s\r\n    " + gg + ",\r\n}\n",
		},
		{
			name: "record keeps the predicate the old comment named",
			d:    Record,
			in:   "BACKEND_ENUMERATION_TODO = {\n    # waits for rocm_gemm_available(); on ROCm at overlay 1234567:\n    #   gather_mm_selects_the_indexed_expert failed: old\n    " + gg + ",\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    # waits for rocm_gemm_available(); on ROCm at overlay 75915908:\n    #   gather_mm_matches_dense_per_expert_reference timed out: no output for 600 s\n    " + gg + ",\n}\n",
		},
		{
			name: "emptied literal: a count in an orphan comment is fixed where it lands",
			d:    Switch,
			in:   "BACKEND_ENUMERATION_TODO = {\n    # 1 file waits:\n\n    # gpu_backend_available()\n    " + gg + ",\n}\n",
			want: "# 0 files wait:\nBACKEND_ENUMERATION_TODO = set()\n",
		},
		{
			name: "two comment lines above go with the entry",
			d:    Switch,
			in:   "BACKEND_ENUMERATION_TODO = {\n    # a()\n    \"a.rs\",\n    # gpu_backend_available()\n    # see the epic\n    " + gg + ",\n    # c()\n    \"c.rs\",\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    # a()\n    \"a.rs\",\n    # c()\n    \"c.rs\",\n}\n",
		},
		{
			name: "two comment lines below go with the entry",
			d:    Switch,
			in:   "BACKEND_ENUMERATION_TODO = {\n    \"a.rs\",\n    # a()\n    " + gg + ",\n    # gpu_backend_available()\n    # see the epic\n    \"c.rs\",\n    # c()\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    \"a.rs\",\n    # a()\n    \"c.rs\",\n    # c()\n}\n",
		},
		{
			name: "a bulleted list item's continuation line goes with it; a shallower line stays",
			d:    Switch,
			in:   "# Files that wait:\n# - src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs: its gates\n#   enumerate Metal and CUDA\n# Keep this list sorted.\nBACKEND_ENUMERATION_TODO = {\n    # gpu_backend_available()\n    " + gg + ",\n    # c()\n    \"c.rs\",\n}\n",
			want: "# Files that wait:\n# Keep this list sorted.\nBACKEND_ENUMERATION_TODO = {\n    # c()\n    \"c.rs\",\n}\n",
		},
		{
			name: "a plain list line's deeper continuation goes with it; one at its own column stays",
			d:    Switch,
			in:   "# src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs waits for\n#     gpu_backend_available()\n# c.rs waits too.\nBACKEND_ENUMERATION_TODO = {\n    # gpu_backend_available()\n    " + gg + ",\n    # c()\n    \"c.rs\",\n}\n",
			want: "# c.rs waits too.\nBACKEND_ENUMERATION_TODO = {\n    # c()\n    \"c.rs\",\n}\n",
		},
		{
			name: "record after: the next entry's inline predicate is not this entry's",
			d:    Record,
			in:   "BACKEND_ENUMERATION_TODO = {\n    \"b.rs\",\n    # b waits\n    " + gg + ",\n    # see the epic\n    \"c.rs\",  # c_available()\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    \"b.rs\",\n    # b waits\n    " + gg + ",\n    # waits for gpu_backend_available(); on ROCm at overlay 75915908:\n    #   gather_mm_matches_dense_per_expert_reference timed out: no output for 600 s\n    \"c.rs\",  # c_available()\n}\n",
		},
		{
			name: "hold changes nothing",
			d:    Hold,
			in:   "BACKEND_ENUMERATION_TODO = {\n    # x()\n    " + gg + ",\n}\n",
			want: "BACKEND_ENUMERATION_TODO = {\n    # x()\n    " + gg + ",\n}\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, probs := planChecker(tc.in, tc.d, recordOutcome(), true)
			if len(probs) > 0 {
				t.Fatalf("problems: %v", probs)
			}
			if d := cmp.Diff(strings.SplitAfter(tc.want, "\n"), strings.SplitAfter(p.out, "\n")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			again, probs := planChecker(p.out, tc.d, recordOutcome(), tc.d == Record)
			if len(probs) > 0 {
				t.Fatalf("second plan: %v", probs)
			}
			if again.out != p.out {
				t.Errorf("not idempotent: second plan gives\n%s", again.out)
			}
		})
	}
}

func TestPlanCheckerEntryAbsent(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"BACKEND_ENUMERATION_TODO: set[str] = set()\n",
		"BACKEND_ENUMERATION_TODO: set[str] = set()",
		"BACKEND_ENUMERATION_TODO = {\"a.rs\", \"b.rs\"}\n",
		"BACKEND_ENUMERATION_TODO = {\n    # a()\n    \"a.rs\",\n}\n",
	} {
		p, probs := planChecker(in, Switch, recordOutcome(), false)
		if len(probs) > 0 || p.out != in || p.entry != EntryAbsent {
			t.Errorf("%q: problems %v, entry %q, out %q", in, probs, p.entry, p.out)
		}
		if _, probs := planChecker(in, Switch, recordOutcome(), true); len(probs) != 1 || !strings.Contains(probs[0].Msg, "has no entry") || probs[0].Line != 1 {
			t.Errorf("%q with the gates unswitched: problems %v, want one about the missing entry, on line 1", in, probs)
		}
	}
	// Listed twice: refused, on the assignment's line.
	in := "X = 1\nBACKEND_ENUMERATION_TODO = {\n    " + gg + ",\n    " + gg + ",\n}\n"
	_, probs := planChecker(in, Switch, recordOutcome(), false)
	if len(probs) != 1 || probs[0].Line != 2 || probs[0].Msg != "BACKEND_ENUMERATION_TODO lists "+gg+" 2 times; expected once" {
		t.Errorf("an entry listed twice: %v", probs)
	}
}

func TestRecount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in            string
		before, after int
		want          string
	}{
		{"3 files still enumerate", 3, 2, "2 files still enumerate"},
		{"2 files still enumerate", 2, 1, "1 file still enumerates"},
		{"1 file still enumerates", 1, 0, "0 files still enumerate"},
		{"Two entries are", 2, 1, "One entry is"},
		{"one path waits", 1, 0, "zero paths wait"},
		{"Files: 4 files", 3, 2, "Files: 4 files"},
		{"12 Files have", 12, 11, "11 Files have"},
	}
	for _, tc := range cases {
		got := countPhrase.ReplaceAllStringFunc(tc.in, func(s string) string {
			r, _ := recount(s, tc.before, tc.after)
			return r
		})
		if got != tc.want {
			t.Errorf("recount(%q, %d -> %d) = %q, want %q", tc.in, tc.before, tc.after, got, tc.want)
		}
	}
}

func BenchmarkPlanChecker(b *testing.B) {
	src := "# 3 files still enumerate Metal and CUDA:\nBACKEND_ENUMERATION_TODO: set[str] = {\n" +
		strings.Repeat("    # x()\n    \"src/x.rs\",\n", 50) + "    # gpu_backend_available()\n    " + gg + ",\n}\n" +
		strings.Repeat("print('filler line of the checker')\n", 500)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, probs := planChecker(src, Switch, recordOutcome(), true); len(probs) > 0 {
			b.Fatal(probs)
		}
	}
}

// A count too large to be read is no count: it stays.
func TestRecountNotANumber(t *testing.T) {
	t.Parallel()
	const huge = "99999999999999999999 files wait"
	for _, before := range []int{0, 1, 2} {
		if got, ok := recount(huge, before, max(before-1, 0)); ok || got != huge {
			t.Errorf("recount(huge, %d) = %q, %v", before, got, ok)
		}
	}
	if got, ok := recount("One file waits", 1, 0); !ok || got != "Zero files wait" {
		t.Errorf("recount(One, 1, 0) = %q, %v", got, ok)
	}
}
