package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"unicode/utf8"

	"github.com/lablup/perfbot/runner/results"
)

// PreparedFile is the name of the prepared patch in a results folder, beside
// gemm_tests.json (docs/formats.md, the results folder).
const PreparedFile = "gemm_patch.json"

// Bounds of a prepared patch: the publisher reads it from a job that ran the pinned
// commit's code, so every part has a limit.
const (
	// MaxPreparedSize bounds the whole file: two sources of at most 1 MiB each, the
	// outputs and the report.
	MaxPreparedSize = 3 << 20
	// maxPreparedOutput bounds one command's kept output (the default keeps 16 KiB).
	maxPreparedOutput = 64 << 10
	// MaxPreparedCommands bounds the verification results.
	MaxPreparedCommands = 32
	// maxPreparedArgs bounds one command's argv and one list of the report.
	maxPreparedArgs = 64
	// maxPreparedText bounds every other string (a detail, a note, an argument).
	maxPreparedText = 4 << 10
)

// Prepared is what the patch job hands the publisher: the grouped_gemm gate patch
// applied to a scratch worktree of the pinned commit and the verification of that
// tree, as data. The publisher commits Files and renders the pull request's sections
// from Report and Verify; it runs nothing.
type Prepared struct {
	// Commit is the pinned commit the patch was applied to, 40 hex digits.
	Commit string `json:"commit"`
	// Decision is what the numeric tests' outcome allows (switch, record or hold).
	Decision Decision `json:"decision"`
	// Error says why the patch was not applied (Report is then absent), or what went
	// wrong after it was (reading a patched file); the pull request is then a draft.
	Error string `json:"error,omitempty"`
	// Report is what GemmGates did, the checker's verdict and output tail included;
	// the patch section of the pull request is rendered from it.
	Report *Report `json:"report,omitempty"`
	// Files are the full contents of the files the patch changed, by repo-relative
	// path; unchanged files are absent.
	Files []PatchedFile `json:"files,omitempty"`
	// Verify are the verification commands' results on the patched tree; empty when
	// no command is configured.
	Verify []VerifyResult `json:"verify"`
}

// PatchedFile is one changed file's full content.
type PatchedFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// VerifyPassed reports whether verification passed: every command exited 0, or none
// is configured.
func (p Prepared) VerifyPassed() bool {
	return len(p.Verify) == 0 || VerifyPassed(p.Verify)
}

// Write writes the prepared patch as JSON to path atomically.
func (p Prepared) Write(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the prepared patch: %w", err)
	}
	b = append(b, '\n')
	if len(b) > MaxPreparedSize {
		return fmt.Errorf("the prepared patch is %d bytes, more than the %d a publisher reads", len(b), MaxPreparedSize)
	}
	if err := results.WriteFileAtomic(path, b); err != nil {
		return fmt.Errorf("writing the prepared patch: %w", err)
	}
	return nil
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// IsFullCommit reports whether s is a full lowercase commit SHA, as Prepared.Commit must be.
func IsFullCommit(s string) bool { return fullCommit.MatchString(s) }

// ParsePrepared decodes and checks a prepared patch. It is strict, as it reads what a
// job running the pinned commit's code wrote: the size is bounded, the text must be
// valid UTF-8, unknown keys are refused, every string and list is bounded, a file
// must be one of the two the patcher edits and be listed as changed by the report.
func ParsePrepared(data []byte) (Prepared, error) {
	if len(data) > MaxPreparedSize {
		return Prepared{}, fmt.Errorf("the prepared patch is %d bytes, more than %d", len(data), MaxPreparedSize)
	}
	if !utf8.Valid(data) {
		return Prepared{}, errors.New("the prepared patch is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Prepared
	if err := dec.Decode(&p); err != nil {
		return Prepared{}, fmt.Errorf("decoding the prepared patch: %w", err)
	}
	if dec.More() {
		return Prepared{}, errors.New("decoding the prepared patch: trailing data after the object")
	}
	if err := p.validate(); err != nil {
		return Prepared{}, fmt.Errorf("the prepared patch: %w", err)
	}
	return p, nil
}

func (p Prepared) validate() error {
	if !fullCommit.MatchString(p.Commit) {
		return fmt.Errorf("commit %q is not a full commit SHA (40 lowercase hex digits)", clipText(p.Commit))
	}
	if !slices.Contains([]Decision{Switch, Record, Hold}, p.Decision) {
		return fmt.Errorf("decision %q is not switch, record or hold", clipText(string(p.Decision)))
	}
	if err := textOK("error", p.Error, maxPreparedOutput); err != nil {
		return err
	}
	if p.Report == nil && p.Error == "" {
		return errors.New("it has neither a report nor an error")
	}
	changed := map[string]bool{}
	if r := p.Report; r != nil {
		if err := r.validate(); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if r.Decision != p.Decision {
			return fmt.Errorf("the report's decision %q is not the patch's %q", r.Decision, p.Decision)
		}
		for _, f := range r.Files {
			if f.Changed {
				changed[f.Path] = true
			}
		}
	} else if len(p.Files) > 0 {
		return errors.New("it carries files but no report of the patch that made them")
	}
	seen := map[string]bool{}
	for i, f := range p.Files {
		if f.Path != RustPath && f.Path != CheckerPath {
			return fmt.Errorf("files[%d]: %q is not a file the patch edits (%s or %s)", i, clipText(f.Path), RustPath, CheckerPath)
		}
		if seen[f.Path] {
			return fmt.Errorf("files[%d]: %s is given twice", i, f.Path)
		}
		seen[f.Path] = true
		if !changed[f.Path] {
			return fmt.Errorf("files[%d]: the report does not list %s as changed", i, f.Path)
		}
		if len(f.Content) > maxSource {
			return fmt.Errorf("files[%d]: %s is %d bytes, more than the %d the patcher reads", i, f.Path, len(f.Content), maxSource)
		}
		if f.Content == "" {
			return fmt.Errorf("files[%d]: %s is empty", i, f.Path)
		}
	}
	if p.Error == "" {
		for path := range changed {
			if !seen[path] {
				return fmt.Errorf("the report lists %s as changed but its content is missing", path)
			}
		}
	}
	if len(p.Verify) > MaxPreparedCommands {
		return fmt.Errorf("%d verification results, more than %d", len(p.Verify), MaxPreparedCommands)
	}
	for i, v := range p.Verify {
		if err := v.validate(); err != nil {
			return fmt.Errorf("verify[%d]: %w", i, err)
		}
	}
	return nil
}

func (r *Report) validate() error {
	if !hexCommit.MatchString(r.OverlayCommit) {
		return fmt.Errorf("overlay_commit %q is not a commit SHA", clipText(r.OverlayCommit))
	}
	if err := (Outcome{OverlayCommit: r.OverlayCommit, Tests: r.Tests}).Validate(); err != nil {
		return err
	}
	for _, t := range r.Tests {
		if err := textOK("tests detail", t.Detail, maxPreparedText); err != nil {
			return err
		}
	}
	if r.Decision != (Outcome{Tests: r.Tests}).Decide() {
		return fmt.Errorf("decision %q does not follow from the tests (%s)", clipText(string(r.Decision)), (Outcome{Tests: r.Tests}).Decide())
	}
	if r.DryRun {
		return errors.New("it is a dry run's report: nothing was applied")
	}
	switch r.GatesBefore {
	case "", string(stateEnumerate), string(statePredicate):
	default:
		return fmt.Errorf("gates_before %q is not %s or %s", clipText(r.GatesBefore), stateEnumerate, statePredicate)
	}
	if !slices.Contains([]EntryChange{"", EntryRemoved, EntryRecorded, EntryUnchanged, EntryAbsent}, r.Entry) {
		return fmt.Errorf("entry %q is not a known change", clipText(string(r.Entry)))
	}
	if r.GatesReplaced < 0 || r.GatesReplaced > len(TestNames) || r.EntriesBefore < 0 || r.EntriesAfter < 0 || r.EntriesBefore > 1<<20 || r.EntriesAfter > 1<<20 {
		return errors.New("a count is out of range")
	}
	if len(r.Files) != 2 || r.Files[0].Path != RustPath || r.Files[1].Path != CheckerPath {
		return fmt.Errorf("files must be %s then %s", RustPath, CheckerPath)
	}
	for _, f := range r.Files {
		if err := listOK("changes of "+f.Path, f.Changes); err != nil {
			return err
		}
	}
	if err := listOK("notes", r.Notes); err != nil {
		return err
	}
	if c := r.Checker; c != nil {
		if c.Verdict != "passed" && c.Verdict != "failed" {
			return fmt.Errorf("the checker's verdict %q is not passed or failed", clipText(c.Verdict))
		}
		if c.Awaiting < -1 {
			return errors.New("the checker's awaiting count is negative")
		}
		if err := listOK("checker failures", c.Failures); err != nil {
			return err
		}
		if err := c.VerifyResult.validate(); err != nil {
			return fmt.Errorf("checker: %w", err)
		}
	}
	return nil
}

func (v VerifyResult) validate() error {
	if len(v.Command) == 0 {
		return errors.New("empty command")
	}
	if err := listOK("command", v.Command); err != nil {
		return err
	}
	if v.ExitCode < -1 || v.ExitCode > 255 {
		return fmt.Errorf("exit code %d is not one a process gives", v.ExitCode)
	}
	if err := textOK("error", v.Err, maxPreparedText); err != nil {
		return err
	}
	if err := textOK("output", v.Output, maxPreparedOutput); err != nil {
		return err
	}
	if v.OutputBytes < int64(len(v.Output)) || v.Duration < 0 {
		return errors.New("the output size or the duration is out of range")
	}
	return listOK("left_running", v.LeftRunning)
}

// textOK bounds one string; NUL bytes are refused as no tool output the report shows
// has them.
func textOK(what, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes, more than %d", what, len(s), max)
	}
	if bytes.IndexByte([]byte(s), 0) >= 0 {
		return fmt.Errorf("%s holds a NUL byte", what)
	}
	return nil
}

func listOK(what string, xs []string) error {
	if len(xs) > maxPreparedArgs {
		return fmt.Errorf("%s has %d items, more than %d", what, len(xs), maxPreparedArgs)
	}
	for _, x := range xs {
		if err := textOK(what, x, maxPreparedText); err != nil {
			return err
		}
	}
	return nil
}

// clipText shortens a value quoted in an error.
func clipText(s string) string { return oneLine(s, 80) }

// Matches checks that the prepared patch is of these results: prepared on commit (a
// full SHA) from the same outcome of the numeric tests.
func (p Prepared) Matches(o Outcome, commit string) error {
	if p.Commit != commit {
		return fmt.Errorf("%s was prepared on commit %s, not on the profiled commit %s", PreparedFile, p.Commit, commit)
	}
	if d := o.Decide(); p.Decision != d {
		return fmt.Errorf("%s holds the decision %s, but the numeric tests' outcome gives %s", PreparedFile, p.Decision, d)
	}
	if r := p.Report; r != nil && (r.OverlayCommit != o.OverlayCommit || !slices.Equal(r.Tests, o.inFileOrder())) {
		return fmt.Errorf("%s was prepared from another outcome of the numeric tests than %s", PreparedFile, "gemm_tests.json")
	}
	return nil
}

// Check recomputes the patch from the pinned commit's own two files (Plan, which runs
// nothing) and checks that the prepared patch is that patch: the same report, but for
// the checker's verdict and the note it may add, and exactly the patched contents. The
// publisher commits the prepared files only when it holds, so the job that ran the
// pinned commit's code cannot slip other content into them. A patch the runner could
// not apply (no report) carries no files and passes.
func (p Prepared) Check(o Outcome, rustSrc, checkerSrc string) error {
	if p.Report == nil {
		return nil
	}
	want, out, err := Plan(o, rustSrc, checkerSrc)
	if err != nil {
		return fmt.Errorf("%s carries a patch, but the pinned commit's files cannot be patched: %w", PreparedFile, err)
	}
	got := p.Report
	same := got.OverlayCommit == want.OverlayCommit && slices.Equal(got.Tests, want.Tests) && got.Decision == want.Decision &&
		got.GatesBefore == want.GatesBefore && got.GatesReplaced == want.GatesReplaced && got.Entry == want.Entry &&
		got.EntriesBefore == want.EntriesBefore && got.EntriesAfter == want.EntriesAfter &&
		slices.EqualFunc(got.Files, want.Files, func(a, b FileReport) bool {
			return a.Path == b.Path && a.Changed == b.Changed && slices.Equal(a.Changes, b.Changes)
		}) &&
		len(got.Notes) >= len(want.Notes) && len(got.Notes) <= len(want.Notes)+1 && slices.Equal(got.Notes[:len(want.Notes)], want.Notes)
	if !same {
		return fmt.Errorf("%s reports another patch than the one the pinned commit's files give", PreparedFile)
	}
	content := map[string]string{}
	for _, f := range p.Files {
		content[f.Path] = f.Content
	}
	for i, f := range want.Files {
		if c, ok := content[f.Path]; f.Changed && (!ok || c != out[i]) {
			return fmt.Errorf("%s: the patched %s is not what the patch makes of the pinned commit's file", PreparedFile, f.Path)
		}
	}
	return nil
}
