package patch

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/infile"
)

// MakeTarget is the repo's own verification target, run when its Makefile has it.
const MakeTarget = "verify-kernel-port-dispatch"

// VerifyResult is one command run on the patched tree.
type VerifyResult struct {
	Command []string `json:"command"`
	// ExitCode is the process's exit code, -1 when it did not exit by itself
	// (timed out, killed by a signal, or never started).
	ExitCode int  `json:"exit_code"`
	TimedOut bool `json:"timed_out,omitempty"`
	// Err says why the command could not run or was stopped, empty otherwise.
	Err string `json:"error,omitempty"`
	// Output is the tail of stdout and stderr, interleaved as written.
	Output string `json:"output"`
	// OutputBytes is the full output size; Truncated says Output is only its tail.
	OutputBytes int64         `json:"output_bytes"`
	Truncated   bool          `json:"truncated,omitempty"`
	Duration    time.Duration `json:"duration_ns"`
	// LeftRunning names (`pid:comm`) the processes the command left running when it
	// exited; they were stopped.
	LeftRunning []string `json:"left_running,omitempty"`
}

// Passed reports a clean exit 0.
func (v VerifyResult) Passed() bool { return v.Err == "" && !v.TimedOut && v.ExitCode == 0 }

// VerifyPassed reports whether every verification passed; a PR whose verification
// failed is opened as a draft.
func VerifyPassed(rs []VerifyResult) bool {
	for _, r := range rs {
		if !r.Passed() {
			return false
		}
	}
	return len(rs) > 0
}

// DefaultVerifyCommands is the repo's checker, plus `make verify-kernel-port-dispatch`
// when the Makefile has that target.
func DefaultVerifyCommands(repoDir string) [][]string {
	cmds := [][]string{{"python3", CheckerPath}}
	if hasMakeTarget(repoDir, MakeTarget) {
		cmds = append(cmds, []string{"make", MakeTarget})
	}
	return cmds
}

var ruleLine = regexp.MustCompile(`^([^\t#:=][^#:=]*?)[ \t]*::?([^=]|$)`)

// hasMakeTarget looks for an explicit rule for target in the makefile make would read
// (GNUmakefile, makefile, Makefile). It reads the text instead of asking make, since
// even `make -n` runs $(shell ...) and `+` lines.
func hasMakeTarget(repoDir, target string) bool {
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		// A makefile reached through a link that leaves the repo is not read.
		read, _, err := repoPath(repoDir, name)
		if err != nil {
			continue
		}
		f, err := infile.Open(read)
		if err != nil {
			continue
		}
		defer f.Close()
		// A real makefile is a few KB; a huge one is read no further than this.
		sc := bufio.NewScanner(io.LimitReader(f, 4<<20))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			m := ruleLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			for _, t := range strings.Fields(m[1]) {
				if t == target {
					return true
				}
			}
		}
		return false
	}
	return false
}
