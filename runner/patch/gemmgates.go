package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/internal/infile"
)

// FileReport says what happened to one of the two files.
type FileReport struct {
	Path    string   `json:"path"`
	Changed bool     `json:"changed"`
	Changes []string `json:"changes,omitempty"`
}

// CheckerResult is the verdict of the repo's own dispatch checker on the patched tree.
type CheckerResult struct {
	VerifyResult
	// Verdict is "passed" or "failed"; a run that exited 0 without the success line
	// counts as failed.
	Verdict string `json:"verdict"`
	// Awaiting is the "N awaiting a predicate" figure, -1 when the output had none.
	Awaiting int `json:"awaiting"`
	// Failures are the checker's `<path>:<line>: <reason>` lines.
	Failures []string `json:"failures,omitempty"`
}

// Report says what Apply (and patchrun.GemmGates, which adds the checker's verdict)
// did, for the PR body (Markdown) and the publisher (JSON).
type Report struct {
	OverlayCommit string       `json:"overlay_commit"`
	Tests         []TestResult `json:"tests"`
	Decision      Decision     `json:"decision"`
	DryRun        bool         `json:"dry_run"`
	// GatesBefore is how the gates looked: "metal-cuda" or "predicate".
	GatesBefore   string         `json:"gates_before,omitempty"`
	GatesReplaced int            `json:"gates_replaced"`
	Entry         EntryChange    `json:"entry"`
	EntriesBefore int            `json:"entries_before"`
	EntriesAfter  int            `json:"entries_after"`
	Files         []FileReport   `json:"files"`
	Checker       *CheckerResult `json:"checker,omitempty"`
	Notes         []string       `json:"notes,omitempty"`
}

// Changed reports whether any file was (or, on a dry run, would be) changed.
func (r Report) Changed() bool {
	for _, f := range r.Files {
		if f.Changed {
			return true
		}
	}
	return false
}

// Apply applies the outcome of the three grouped_gemm numeric tests to the repo at
// repoDir: three passes switch the gates and drop the checker entry, a failure on the
// GPU is recorded in the entry's comment, anything else changes nothing. It checks
// both files before writing either and writes each atomically; with dryRun it writes
// nothing. It runs nothing: the repo's checker is run by runner/patch/patchrun's
// GemmGates, which calls Apply. A *RefusedError means a file was not as expected and
// nothing was written.
func Apply(ctx context.Context, repoDir string, outcome Outcome, dryRun bool) (Report, error) {
	if err := outcome.Validate(); err != nil {
		return Report{}, fmt.Errorf("checking the test outcome: %w", err)
	}
	r := Report{
		OverlayCommit: outcome.OverlayCommit,
		Tests:         outcome.inFileOrder(),
		Decision:      outcome.Decide(),
		DryRun:        dryRun,
	}
	var (
		srcs    [2]string
		modes   [2]fs.FileMode
		targets [2]string
		refused []Problem
	)
	for i, rel := range []string{RustPath, CheckerPath} {
		read, write, err := repoPath(repoDir, rel)
		if err == nil {
			srcs[i], modes[i], err = readSource(read)
		}
		targets[i] = write
		switch {
		case errors.Is(err, fs.ErrNotExist):
			refused = append(refused, Problem{Path: rel, Msg: "file not found; is --repo the root of an mlxcel checkout?"})
		case errors.Is(err, errOutside):
			refused = append(refused, Problem{Path: rel, Msg: "reached through a symbolic link that leaves the repo (" + err.Error() + "); refusing to read or write outside --repo"})
		case errors.As(err, new(*infile.TooLargeError)):
			refused = append(refused, Problem{Path: rel, Msg: "more than " + infile.Size(maxSource) + ", where the real file has a few thousand bytes: refusing to scan it"})
		case err != nil:
			return r, fmt.Errorf("reading %s: %w", rel, err)
		}
	}
	if len(refused) > 0 {
		return r, &RefusedError{Problems: refused}
	}
	rustSrc, checkerSrc := srcs[0], srcs[1]
	rustFile, checkerFile := targets[0], targets[1]
	rustMode, checkerMode := modes[0], modes[1]

	r, out, err := plan(r, rustSrc, checkerSrc, outcome)
	if err != nil {
		return r, err
	}
	if dryRun {
		return r, nil
	}
	if err := ctx.Err(); err != nil {
		return r, fmt.Errorf("patching the grouped_gemm gates: %w", err)
	}
	var writes []pendingWrite
	if out[0] != rustSrc {
		writes = append(writes, pendingWrite{rustFile, RustPath, out[0], rustMode})
	}
	if out[1] != checkerSrc {
		writes = append(writes, pendingWrite{checkerFile, CheckerPath, out[1], checkerMode})
	}
	if err := writeAll(writes); err != nil {
		return r, err
	}
	return r, nil
}

// SetChecker records the checker's verdict on the patched tree in the report, with a
// note when the checker's count of entries disagrees with the patched set.
func (r *Report) SetChecker(c *CheckerResult) {
	r.Checker = c
	if c != nil && c.Verdict == "passed" && c.Awaiting >= 0 && c.Awaiting != r.EntriesAfter {
		r.Notes = append(r.Notes, fmt.Sprintf("the checker counts %d awaiting a predicate but %s has %d entries", c.Awaiting, setName, r.EntriesAfter))
	}
}

// Plan computes what Apply does to the two files for outcome from their contents,
// touching no disk and running nothing: the report (without the checker's verdict) and
// the patched texts of RustPath and CheckerPath. A *RefusedError means a file is not
// as expected. A publisher uses it to check a prepared patch against the pinned
// commit's own files.
func Plan(outcome Outcome, rustSrc, checkerSrc string) (Report, [2]string, error) {
	if err := outcome.Validate(); err != nil {
		return Report{}, [2]string{}, fmt.Errorf("checking the test outcome: %w", err)
	}
	r := Report{OverlayCommit: outcome.OverlayCommit, Tests: outcome.inFileOrder(), Decision: outcome.Decide()}
	return plan(r, rustSrc, checkerSrc, outcome)
}

func plan(r Report, rustSrc, checkerSrc string, outcome Outcome) (Report, [2]string, error) {
	rp, probs := planRust(rustSrc, r.Decision)
	needEntry := rp.state != statePredicate || r.Decision == Record
	cp, cprobs := planChecker(checkerSrc, r.Decision, outcome, needEntry)
	if probs = append(probs, cprobs...); len(probs) > 0 {
		return r, [2]string{}, &RefusedError{Problems: probs}
	}
	r.GatesBefore = string(rp.state)
	r.GatesReplaced = rp.gatesReplaced
	r.Entry, r.EntriesBefore, r.EntriesAfter = cp.entry, cp.entriesBefore, cp.entriesAfter
	r.Files = []FileReport{
		{Path: RustPath, Changed: rp.out != rustSrc, Changes: rp.changes()},
		{Path: CheckerPath, Changed: cp.out != checkerSrc, Changes: cp.changes()},
	}
	r.Notes = notes(r)
	return r, [2]string{rp.out, cp.out}, nil
}

// notes explains the outcomes that leave the files alone or partly alone.
func notes(r Report) []string {
	var n []string
	for _, t := range r.Tests {
		switch t.Outcome {
		case BuildFailed:
			n = append(n, fmt.Sprintf("%s did not build: no verdict on ROCm, so nothing is recorded for it; fix the build and profile again", t.Name))
		case NotRun:
			n = append(n, fmt.Sprintf("%s matched no test (`running 0 tests`): the test was renamed or removed, or perfbot's list of tests is stale", t.Name))
		}
	}
	return n
}

// MaxSourceSize bounds what the patcher reads of either file, and of a patched file
// it carries: the real ones are a few KB.
const MaxSourceSize = 1 << 20

const maxSource = MaxSourceSize

func readSource(path string) (string, fs.FileMode, error) {
	b, err := infile.ReadFile(path, maxSource)
	if err != nil {
		return "", 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	return string(b), st.Mode().Perm(), nil
}

type pendingWrite struct {
	path, rel, data string
	mode            fs.FileMode
}

// writeAll stages every file in a temp file beside it before renaming any, so a full
// disk or a permission problem leaves both files as they were.
func writeAll(ws []pendingWrite) error {
	tmps := make([]string, len(ws))
	cleanup := func() {
		for _, t := range tmps {
			if t != "" {
				os.Remove(t)
			}
		}
	}
	for k, w := range ws {
		f, err := os.CreateTemp(filepath.Dir(w.path), "."+filepath.Base(w.path)+".perfbot*")
		if err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", w.rel, err)
		}
		tmps[k] = f.Name()
		_, err = f.WriteString(w.data)
		if err == nil {
			err = f.Chmod(w.mode)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", w.rel, err)
		}
	}
	for k, w := range ws {
		if err := os.Rename(tmps[k], w.path); err != nil {
			cleanup()
			return fmt.Errorf("replacing %s (files before it in this list were already written: %s): %w", w.rel, writtenBefore(ws, k), err)
		}
		tmps[k] = ""
	}
	return nil
}

func writtenBefore(ws []pendingWrite, k int) string {
	var names []string
	for _, w := range ws[:k] {
		names = append(names, w.rel)
	}
	return listOrNone(names)
}

var (
	awaitingRe = regexp.MustCompile(`Kernel port dispatch check passed:.*?(\d+) awaiting a predicate`)
	failureRe  = regexp.MustCompile(`^  (\S+:\d+: .*)$`)
)

// ParseChecker reads the verdict of the repo's checker from its run: "passed" only for
// a clean exit with the success line, the "awaiting a predicate" figure, and the
// failure lines.
func ParseChecker(run VerifyResult) *CheckerResult {
	return parseChecker(&CheckerResult{VerifyResult: run, Verdict: "failed", Awaiting: -1})
}

func parseChecker(res *CheckerResult) *CheckerResult {
	if m := awaitingRe.FindStringSubmatch(res.Output); m != nil {
		res.Awaiting, _ = strconv.Atoi(m[1])
		if res.Passed() {
			res.Verdict = "passed"
		}
	}
	failed := false
	for _, l := range strings.Split(res.Output, "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.HasPrefix(l, "Kernel port dispatch check failed:") {
			failed = true
			continue
		}
		if m := failureRe.FindStringSubmatch(l); failed && m != nil {
			res.Failures = append(res.Failures, m[1])
		}
	}
	return res
}
