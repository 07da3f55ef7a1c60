package patch

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/infile"
)

// MakeTarget is the repo's own verification target, run when its Makefile has it.
const MakeTarget = "verify-kernel-port-dispatch"

// VerifyOptions tunes VerifyWith.
type VerifyOptions struct {
	// Timeout bounds each command; default 10 minutes.
	Timeout time.Duration
	// OutputLimit is how many bytes of each command's output are kept; default 16 KiB.
	OutputLimit int
	// Wrap, when set, turns each command into the same command in a sandbox
	// (runner/sandbox's Wrap) before it starts.
	Wrap func(*exec.Cmd) error
}

// Verify runs the verification commands on the patched tree with the default
// timeout and output bound; nil cmds means DefaultVerifyCommands.
func Verify(ctx context.Context, repoDir string, cmds [][]string) []VerifyResult {
	return VerifyWith(ctx, repoDir, cmds, VerifyOptions{})
}

// VerifyWith runs each command from repoDir in turn, all of them even after a failure
// so the report shows every verdict. Commands left when ctx ends are reported as
// not run.
func VerifyWith(ctx context.Context, repoDir string, cmds [][]string, opts VerifyOptions) []VerifyResult {
	if len(cmds) == 0 {
		cmds = DefaultVerifyCommands(repoDir)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Minute
	}
	if opts.OutputLimit <= 0 {
		opts.OutputLimit = 16 << 10
	}
	out := make([]VerifyResult, 0, len(cmds))
	for _, c := range cmds {
		if err := ctx.Err(); err != nil {
			out = append(out, VerifyResult{Command: c, ExitCode: -1, Err: "not run: " + err.Error()})
			continue
		}
		out = append(out, runCommand(ctx, repoDir, c, opts.Timeout, opts.OutputLimit, opts.Wrap))
	}
	return out
}

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
