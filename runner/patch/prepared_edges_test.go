package patch

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/sampletree"
)

// The prepared patch is written by a job that ran the pinned commit's code, so
// ParsePrepared, Matches and Check read it as an attacker's file. These tests build
// one from the sample checkout's own two files with Plan (which runs nothing) and hold
// each bound at its edge: the last value taken and the first refused.

const preparedCommit = "0123456789abcdef0123456789abcdef01234567"

// samplePrepared is a good prepared patch of outcome o on the sample checkout's files,
// with a checker verdict and one verification command, and those files.
func samplePrepared(t *testing.T, o Outcome) (p Prepared, rust, checker string) {
	t.Helper()
	rb, err := sampletree.ReadFile(RustPath)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := sampletree.ReadFile(CheckerPath)
	if err != nil {
		t.Fatal(err)
	}
	rust, checker = string(rb), string(cb)
	r, out, err := Plan(o, rust, checker)
	if err != nil {
		t.Fatal(err)
	}
	ok := VerifyResult{Command: []string{"cargo", "check"}, Output: "Finished", OutputBytes: 8, Duration: 1}
	r.Checker = &CheckerResult{VerifyResult: VerifyResult{Command: []string{"python3", CheckerPath}, Output: "ok", OutputBytes: 2}, Verdict: "passed", Awaiting: -1}
	p = Prepared{Commit: preparedCommit, Decision: r.Decision, Report: &r, Verify: []VerifyResult{ok}}
	for i, f := range r.Files {
		if f.Changed {
			p.Files = append(p.Files, PatchedFile{Path: f.Path, Content: out[i]})
		}
	}
	return p, rust, checker
}

// parse encodes p and reads it back as the publisher does.
func parse(t *testing.T, p Prepared) error {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParsePrepared(b)
	return err
}

// TestParsePreparedBoundsAtTheirEdges: every bound of the prepared patch takes its
// last value and refuses the next.
func TestParsePreparedBoundsAtTheirEdges(t *testing.T) {
	base, _, _ := samplePrepared(t, outcomeFor(Switch))
	if len(base.Files) != 2 {
		t.Fatalf("the sample patch changes %d files, want both", len(base.Files))
	}
	if err := parse(t, base); err != nil {
		t.Fatalf("the good patch: %v", err)
	}
	// edit returns a deep copy of base changed by f.
	edit := func(f func(p *Prepared)) Prepared {
		b, _ := json.Marshal(base)
		var p Prepared
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		f(&p)
		return p
	}
	items := func(n int) []string { return strings.Split(strings.Repeat("x,", n-1)+"x", ",") }
	cases := []struct {
		name string
		ok   func(p *Prepared) // the last value taken
		bad  func(p *Prepared) // the first refused
		want string
	}{
		{"error text", func(p *Prepared) { p.Error = strings.Repeat("e", maxPreparedOutput) },
			func(p *Prepared) { p.Error = strings.Repeat("e", maxPreparedOutput+1) }, "error is 65537 bytes"},
		{"verify results", func(p *Prepared) {
			for len(p.Verify) < MaxPreparedCommands {
				p.Verify = append(p.Verify, p.Verify[0])
			}
		}, func(p *Prepared) {
			for len(p.Verify) <= MaxPreparedCommands {
				p.Verify = append(p.Verify, p.Verify[0])
			}
		}, "33 verification results, more than 32"},
		{"exit code 255", func(p *Prepared) { p.Verify[0].ExitCode = 255 }, func(p *Prepared) { p.Verify[0].ExitCode = 256 }, "exit code 256"},
		{"exit code -1", func(p *Prepared) { p.Verify[0].ExitCode = -1 }, func(p *Prepared) { p.Verify[0].ExitCode = -2 }, "exit code -2"},
		{"command items", func(p *Prepared) { p.Verify[0].Command = items(maxPreparedArgs) },
			func(p *Prepared) { p.Verify[0].Command = items(maxPreparedArgs + 1) }, "command has 65 items"},
		{"command argument", func(p *Prepared) { p.Verify[0].Command = []string{strings.Repeat("a", maxPreparedText)} },
			func(p *Prepared) { p.Verify[0].Command = []string{strings.Repeat("a", maxPreparedText+1)} }, "command is 4097 bytes"},
		{"verify error", func(p *Prepared) { p.Verify[0].Err = strings.Repeat("e", maxPreparedText) },
			func(p *Prepared) { p.Verify[0].Err = strings.Repeat("e", maxPreparedText+1) }, "error is 4097 bytes"},
		{"output", func(p *Prepared) {
			p.Verify[0].Output, p.Verify[0].OutputBytes = strings.Repeat("o", maxPreparedOutput), maxPreparedOutput
		}, func(p *Prepared) {
			p.Verify[0].Output, p.Verify[0].OutputBytes = strings.Repeat("o", maxPreparedOutput+1), maxPreparedOutput+1
		}, "output is 65537 bytes"},
		{"output size", func(p *Prepared) { p.Verify[0].OutputBytes = int64(len(p.Verify[0].Output)) },
			func(p *Prepared) { p.Verify[0].OutputBytes = int64(len(p.Verify[0].Output)) - 1 }, "output size or the duration"},
		{"duration", func(p *Prepared) { p.Verify[0].Duration = 0 }, func(p *Prepared) { p.Verify[0].Duration = -1 }, "output size or the duration"},
		{"left running", func(p *Prepared) { p.Verify[0].LeftRunning = items(maxPreparedArgs) },
			func(p *Prepared) { p.Verify[0].LeftRunning = items(maxPreparedArgs + 1) }, "left_running has 65 items"},
		{"NUL", func(p *Prepared) { p.Verify[0].Output, p.Verify[0].OutputBytes = "a\x01b", 3 },
			func(p *Prepared) { p.Verify[0].Output, p.Verify[0].OutputBytes = "a\x00b", 3 }, "output holds a NUL byte"},
		{"content", func(p *Prepared) { p.Files[0].Content = strings.Repeat("r", MaxSourceSize) },
			func(p *Prepared) { p.Files[0].Content = strings.Repeat("r", MaxSourceSize+1) }, "more than the 1048576 the patcher reads"},
		{"empty content", func(p *Prepared) { p.Files[0].Content = "x" }, func(p *Prepared) { p.Files[0].Content = "" }, "is empty"},
		{"gates replaced", func(p *Prepared) { p.Report.GatesReplaced = len(TestNames) },
			func(p *Prepared) { p.Report.GatesReplaced = len(TestNames) + 1 }, "a count is out of range"},
		{"gates replaced at 0", func(p *Prepared) { p.Report.GatesReplaced = 0 },
			func(p *Prepared) { p.Report.GatesReplaced = -1 }, "a count is out of range"},
		{"entries before", func(p *Prepared) { p.Report.EntriesBefore = 1 << 20 },
			func(p *Prepared) { p.Report.EntriesBefore = 1<<20 + 1 }, "a count is out of range"},
		{"entries after", func(p *Prepared) { p.Report.EntriesAfter = 1 << 20 },
			func(p *Prepared) { p.Report.EntriesAfter = 1<<20 + 1 }, "a count is out of range"},
		{"entries before at 0", func(p *Prepared) { p.Report.EntriesBefore = 0 },
			func(p *Prepared) { p.Report.EntriesBefore = -1 }, "a count is out of range"},
		{"entries after at 0", func(p *Prepared) { p.Report.EntriesAfter = 0 },
			func(p *Prepared) { p.Report.EntriesAfter = -1 }, "a count is out of range"},
		{"notes", func(p *Prepared) { p.Report.Notes = items(maxPreparedArgs) },
			func(p *Prepared) { p.Report.Notes = items(maxPreparedArgs + 1) }, "notes has 65 items"},
		{"changes", func(p *Prepared) { p.Report.Files[1].Changes = items(maxPreparedArgs) },
			func(p *Prepared) { p.Report.Files[1].Changes = items(maxPreparedArgs + 1) }, "changes of " + CheckerPath + " has 65 items"},
		{"test detail", func(p *Prepared) { p.Report.Tests[0].Detail = strings.Repeat("d", maxPreparedText) },
			func(p *Prepared) { p.Report.Tests[0].Detail = strings.Repeat("d", maxPreparedText+1) }, "tests detail is 4097 bytes"},
		{"checker awaiting", func(p *Prepared) { p.Report.Checker.Awaiting = -1 },
			func(p *Prepared) { p.Report.Checker.Awaiting = -2 }, "awaiting count is negative"},
		{"checker failures", func(p *Prepared) { p.Report.Checker.Failures = items(maxPreparedArgs) },
			func(p *Prepared) { p.Report.Checker.Failures = items(maxPreparedArgs + 1) }, "checker failures has 65 items"},
		{"checker verdict", func(p *Prepared) { p.Report.Checker.Verdict = "failed" },
			func(p *Prepared) { p.Report.Checker.Verdict = "maybe" }, `verdict "maybe"`},
		{"checker command", func(p *Prepared) { p.Report.Checker.ExitCode = 1 },
			func(p *Prepared) { p.Report.Checker.Command = nil }, "checker: empty command"},
		{"gates before", func(p *Prepared) { p.Report.GatesBefore = string(statePredicate) },
			func(p *Prepared) { p.Report.GatesBefore = "cuda" }, `gates_before "cuda"`},
		{"entry", func(p *Prepared) { p.Report.Entry = EntryAbsent }, func(p *Prepared) { p.Report.Entry = "dropped" }, `entry "dropped"`},
		{"overlay", func(p *Prepared) {}, func(p *Prepared) { p.Report.OverlayCommit = "xyz" }, `overlay_commit "xyz"`},
		{"files order", func(p *Prepared) {}, func(p *Prepared) {
			p.Report.Files[0], p.Report.Files[1] = p.Report.Files[1], p.Report.Files[0]
		}, "files must be " + RustPath + " then " + CheckerPath},
		{"report files", func(p *Prepared) {}, func(p *Prepared) { p.Report.Files = p.Report.Files[:1] }, "files must be"},
		{"test outcome", func(p *Prepared) {}, func(p *Prepared) { p.Report.Tests = p.Report.Tests[:2] }, "report:"},
		{"an error without files", func(p *Prepared) { p.Error, p.Report, p.Files = "the checker file is not there", nil, nil },
			func(p *Prepared) { p.Error, p.Report = "the checker file is not there", nil }, "carries files but no report"},
		{"an error with a report", func(p *Prepared) { p.Error, p.Files = "reading the patched file failed", p.Files[:1] },
			func(p *Prepared) { p.Files = p.Files[:1] }, "content is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := parse(t, edit(c.ok)); err != nil {
				t.Errorf("the last value taken is refused: %v", err)
			}
			if err := parse(t, edit(c.bad)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("the first value refused: %v, want an error saying %q", err, c.want)
			}
		})
	}

	// The file's own size: padded with white space to exactly MaxPreparedSize it is
	// read, one byte more is not.
	b, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	full := append(b, bytes.Repeat([]byte(" "), MaxPreparedSize-len(b))...)
	if _, err := ParsePrepared(full); err != nil {
		t.Errorf("a file of exactly %d bytes: %v", MaxPreparedSize, err)
	}
	if _, err := ParsePrepared(append(full, ' ')); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a file of %d bytes: %v, want it refused", MaxPreparedSize+1, err)
	}
}

// TestPreparedWriteIsReadBack: Write writes what ParsePrepared reads back, refuses a
// patch larger than a publisher reads and leaves no file then, and VerifyPassed holds
// with no command or with every command passed only.
func TestPreparedWriteIsReadBack(t *testing.T) {
	p, _, _ := samplePrepared(t, outcomeFor(Record))
	path := filepath.Join(t.TempDir(), PreparedFile)
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("}\n")) {
		t.Errorf("the file does not end with the object and a newline")
	}
	got, err := ParsePrepared(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Commit != p.Commit || got.Decision != Record || len(got.Files) != len(p.Files) || got.Files[0].Content != p.Files[0].Content {
		t.Errorf("read back %+v, want what was written", got)
	}

	big := p
	big.Error = strings.Repeat("e", MaxPreparedSize)
	other := filepath.Join(t.TempDir(), PreparedFile)
	if err := big.Write(other); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("writing a patch over the limit: %v, want it refused", err)
	}
	if _, err := os.ReadFile(other); err == nil {
		t.Error("a refused patch left a file")
	}

	if !(Prepared{}).VerifyPassed() {
		t.Error("no verification command configured is not a pass")
	}
	if !p.VerifyPassed() {
		t.Error("every command exited 0, but verification did not pass")
	}
	p.Verify = append(p.Verify, VerifyResult{Command: []string{"cargo", "test"}, ExitCode: 101})
	if p.VerifyPassed() {
		t.Error("a command exited 101, but verification passed")
	}
}

// TestPreparedMatchesAndCheck: a prepared patch is taken only for the profiled commit
// and outcome, and only when it is the patch Plan makes of the pinned commit's files:
// one note more than Plan's (the checker's) is allowed, two are not, nor a changed
// note, count, change list or content.
func TestPreparedMatchesAndCheck(t *testing.T) {
	o := outcomeFor(Switch)
	p, rust, checker := samplePrepared(t, o)
	if err := p.Matches(o, preparedCommit); err != nil {
		t.Errorf("the patch's own commit and outcome: %v", err)
	}
	if err := p.Check(o, rust, checker); err != nil {
		t.Errorf("the patch of the commit's own files: %v", err)
	}
	if err := p.Matches(o, strings.Repeat("f", 40)); err == nil || !strings.Contains(err.Error(), "not on the profiled commit") {
		t.Errorf("another commit: %v", err)
	}
	if err := p.Matches(outcomeFor(Record), preparedCommit); err == nil || !strings.Contains(err.Error(), "gives record") {
		t.Errorf("another decision: %v", err)
	}
	other := o
	other.OverlayCommit = "badc0ffee"
	if err := p.Matches(other, preparedCommit); err == nil || !strings.Contains(err.Error(), "another outcome") {
		t.Errorf("another overlay commit: %v", err)
	}
	details := outcomeFor(Switch)
	details.Tests[0].Detail = "ok (2.00s)"
	if err := p.Matches(details, preparedCommit); err == nil || !strings.Contains(err.Error(), "another outcome") {
		t.Errorf("other test details: %v", err)
	}
	noReport := Prepared{Commit: preparedCommit, Decision: Switch, Error: "no checkout"}
	if err := noReport.Matches(o, preparedCommit); err != nil {
		t.Errorf("a patch that was not applied, of the same commit and decision: %v", err)
	}
	if err := noReport.Check(o, "", ""); err != nil {
		t.Errorf("a patch that was not applied carries nothing to check: %v", err)
	}

	copyOf := func() Prepared {
		q := p
		r := *p.Report
		r.Notes = append([]string(nil), r.Notes...)
		r.Files = append([]FileReport(nil), r.Files...)
		q.Report = &r
		q.Files = append([]PatchedFile(nil), p.Files...)
		return q
	}
	oneMore := copyOf()
	oneMore.Report.Notes = append(oneMore.Report.Notes, "the checker noted something")
	if err := oneMore.Check(o, rust, checker); err != nil {
		t.Errorf("one note more than Plan's: %v", err)
	}
	twoMore := copyOf()
	twoMore.Report.Notes = append(twoMore.Report.Notes, "one", "two")
	if err := twoMore.Check(o, rust, checker); err == nil || !strings.Contains(err.Error(), "another patch") {
		t.Errorf("two notes more than Plan's: %v", err)
	}
	for name, change := range map[string]func(q *Prepared){
		"decision":       func(q *Prepared) { q.Report.Decision = Hold },
		"gates replaced": func(q *Prepared) { q.Report.GatesReplaced-- },
		"gates before":   func(q *Prepared) { q.Report.GatesBefore = "other" },
		"entry":          func(q *Prepared) { q.Report.Entry = EntryUnchanged },
		"entries before": func(q *Prepared) { q.Report.EntriesBefore++ },
		"entries after":  func(q *Prepared) { q.Report.EntriesAfter++ },
		"overlay":        func(q *Prepared) { q.Report.OverlayCommit = "badc0ffee" },
		"tests":          func(q *Prepared) { q.Report.Tests = q.Report.Tests[:2] },
		"file changed":   func(q *Prepared) { q.Report.Files[0].Changed = false },
		"file path":      func(q *Prepared) { q.Report.Files[0].Path = "src/other.rs" },
		"file changes": func(q *Prepared) {
			q.Report.Files[1].Changes = append([]string{"added a line"}, q.Report.Files[1].Changes...)
		},
		"content":      func(q *Prepared) { q.Files[0].Content += "\n// one more line\n" },
		"missing file": func(q *Prepared) { q.Files = q.Files[1:] },
	} {
		q := copyOf()
		change(&q)
		if err := q.Check(o, rust, checker); err == nil {
			t.Errorf("%s changed: the patch was taken", name)
		}
	}
	if err := p.Check(o, rust, "not the checker"); err == nil || !strings.Contains(err.Error(), "cannot be patched") {
		t.Errorf("a checker file the patcher refuses: %v", err)
	}
}
