package job

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// DefaultTestTimeout bounds one numeric test: a hung kernel must not hold the GPU (and
// the host lock) until the workflow's own timeout.
const DefaultTestTimeout = 30 * time.Minute

// TestCommand is the command of one numeric test (docs/formats.md §7): one test alone,
// never the whole suite, since an abort in an earlier test would kill the binary.
func TestCommand(name string) []string {
	return []string{"cargo", "test", "--release", "--features", "rocm", "-p", "mlxcel-core", "--lib",
		results.TestModule + "::" + name, "--", "--exact", "--test-threads=1", "--nocapture"}
}

// TestBuildCommand compiles the test binary once, before the guarded runs, so that a
// test's timeout and its guarded window hold the test and not the compiler.
var TestBuildCommand = []string{"cargo", "test", "--release", "--features", "rocm", "-p", "mlxcel-core", "--lib", "--no-run"}

// timeoutKillAfter is how long a timed-out test gets between SIGTERM and SIGKILL.
const timeoutKillAfter = 10 * time.Second

// GemmOptions configure the numeric test job.
type GemmOptions struct {
	Host    host.Host // nil means host.Local()
	RepoDir string    // the mlxcel checkout
	// Guard is the base of every guarded test; with a LogPath, each test gets a
	// `== <module>::<test>` section in that log.
	Guard   guard.Options
	Timeout time.Duration // per test; 0 means DefaultTestTimeout
	// LogDir, when set, keeps the build's and each test's full output
	// (gemm-build.log, <test>.log).
	LogDir string
	// Sandbox are the host's sandbox settings for the build and the tests; nil means
	// the host's, read from perfbot's environment (sandbox.FromEnv).
	Sandbox  *sandbox.Settings
	Progress io.Writer
	Now      func() time.Time // nil means time.Now
}

// GemmTests runs the three grouped_gemm numeric tests, each alone under the guard,
// and tells their outcomes apart for the patcher. A test that could not run (the build
// failed, the guard gave up) is an outcome, not an error; the error is for a job that
// could not go on (no overlay commit, a guard that cannot work, an interrupt), and the
// outcome then holds what was learned so far.
func GemmTests(ctx context.Context, o GemmOptions) (patch.Outcome, error) {
	jobDefaults(&o.Host, &o.Guard, &o.Now)
	if o.Timeout <= 0 {
		o.Timeout = DefaultTestTimeout
	}
	prog := &progress{w: o.Progress, now: o.Now}
	var err error
	if o.RepoDir, err = filepath.Abs(o.RepoDir); err != nil || !isDir(o.RepoDir) {
		return patch.Outcome{}, fmt.Errorf("the checkout %s is not a folder: give the mlxcel checkout to test", o.RepoDir)
	}
	overlay, err := overlayCommit(o.RepoDir)
	if err != nil {
		return patch.Outcome{}, err
	}
	sb, err := jobSandbox(o.Sandbox, prog, o.RepoDir, filepath.Join(o.RepoDir, "target"))
	if err != nil {
		return patch.Outcome{}, err
	}
	out := patch.Outcome{OverlayCommit: overlay}
	for _, n := range patch.TestNames {
		out.Tests = append(out.Tests, patch.TestResult{Name: n, Outcome: patch.NotRun, Detail: "not run: the job stopped before it"})
	}
	scrub := newScrubber(pathSub{o.RepoDir, "<checkout>"})
	logPath := func(name string) string {
		if o.LogDir == "" {
			return ""
		}
		return filepath.Join(o.LogDir, name)
	}
	if o.LogDir != "" {
		if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
			return out, fmt.Errorf("creating the test log folder: %w", err)
		}
	}

	prog.printf("building the tests: %s", strings.Join(TestBuildCommand, " "))
	code, output, err := runLogged(ctx, sb.Host(o.Host), o.RepoDir, logPath("gemm-build.log"), TestBuildCommand)
	if ctx.Err() != nil {
		return out, fmt.Errorf("building the numeric tests: %w", context.Cause(ctx))
	}
	if err != nil || code != 0 {
		why := firstError(output)
		if err != nil {
			why = err.Error()
		}
		detail := scrub.text(why)
		for i := range out.Tests {
			out.Tests[i] = patch.TestResult{Name: out.Tests[i].Name, Outcome: patch.BuildFailed, Detail: detail}
		}
		prog.printf("the tests did not build: %s", detail)
		return out, nil
	}

	for i, name := range patch.TestNames {
		label := results.TestModule + "::" + name
		if o.Guard.LogPath != "" {
			if err := guard.Section(o.Guard.LogPath, label); err != nil {
				return out, err
			}
		}
		argv := append([]string{"timeout", "--kill-after=" + secs(timeoutKillAfter), secs(o.Timeout)}, TestCommand(name)...)
		g := o.Guard
		g.Host = sb.Host(g.Host)
		g.Dir = o.RepoDir
		r := runGuarded(ctx, g, label, argv, nil, logPath(name+".log"), prog,
			fmt.Sprintf("[%d/%d] %s", i+1, len(patch.TestNames), name))
		res := patch.TestResult{Name: name}
		switch {
		case r.interrupted():
			res.Outcome, res.Detail = patch.NotRun, "not run: the job was interrupted"
			out.Tests[i] = res
			return out, r.interruptedDuring(ctx, label)
		case r.err != nil && r.out.Verdict == guard.NotStarted:
			res.Outcome, res.Detail = patch.NotRun, scrub.text("not run: the test could not start: "+r.err.Error())
			out.Tests[i] = res
			return out, fmt.Errorf("running %s: %w", label, r.err)
		case r.err != nil:
			res.Outcome, res.Detail = patch.NotRun, scrub.text("not run: the GPU guard failed: "+r.err.Error())
			out.Tests[i] = res
			return out, fmt.Errorf("guarding %s: %w", label, r.err)
		case r.gaveUp():
			res.Outcome, res.Detail = patch.NotRun, scrub.text("not run: "+r.gaveUpReason(o.Guard))
		default:
			var ranFor time.Duration
			if n := len(r.out.Attempts); n > 0 {
				ranFor = r.out.Attempts[n-1].End.Sub(r.out.Attempts[n-1].Start)
			}
			res.Outcome, res.Detail = ClassifyTest(label, r.out.ExitCode, r.output, ranFor, o.Timeout)
			res.Detail = scrub.text(res.Detail)
		}
		out.Tests[i] = res
		prog.printf("[%d/%d] %s: %s: %s", i+1, len(patch.TestNames), name, res.Outcome, res.Detail)
	}
	if err := out.Validate(); err != nil {
		return out, fmt.Errorf("checking the outcome: %w", err)
	}
	return out, nil
}

// secs prints a duration for timeout(1): seconds with an "s".
func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// overlayCommit reads the MLX ROCm overlay commit from the checkout's UPSTREAM file;
// the patcher records failures against it.
func overlayCommit(repo string) (string, error) {
	b, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(hostinfo.UpstreamPath)))
	if err != nil {
		return "", fmt.Errorf("reading the overlay commit from %s: %w (is the checkout an mlxcel one with the ROCm overlay?)", hostinfo.UpstreamPath, err)
	}
	c := strings.ToLower(hostinfo.ParseUpstream(b)["commit"])
	if !regexp.MustCompile(`^[0-9a-f]{7,40}$`).MatchString(c) {
		return "", fmt.Errorf("%s has no commit: line with a commit SHA (got %q): fix the file", hostinfo.UpstreamPath, c)
	}
	return strs.ShortSHA(c), nil
}

var (
	// Rust 1.73+: `thread 'name' panicked at src/x.rs:12:5:` then the message lines.
	panicNewRE = regexp.MustCompile(`^thread '[^']*' panicked at (\S+:\d+:\d+):$`)
	// Older: `thread 'name' panicked at 'message', src/x.rs:12:5`.
	panicOldRE  = regexp.MustCompile(`^thread '[^']*' panicked at '(.*)', (\S+:\d+:\d+)$`)
	signalRE    = regexp.MustCompile(`process didn't exit successfully: .*\(signal: (\d+), (SIG[A-Z0-9]+)(?:: ([^)]*))?\)`)
	passedRE    = regexp.MustCompile(`^test result: ok\. (\d+) passed;.*finished in ([0-9.]+s)`)
	zeroTestsRE = regexp.MustCompile(`^running 0 tests$`)
	filteredRE  = regexp.MustCompile(`(\d+) filtered out`)
	failedRE    = regexp.MustCompile(`^test result: FAILED\.`)
)

// ClassifyTest tells the outcome of one `cargo test` run of a single test (wrapped in
// timeout(1)) from its exit status and output: passed, failed (the panic's message and
// location), aborted (the signal and the last lines before it), build_failed,
// timed_out, or not_run when the filter matched no test.
func ClassifyTest(filter string, exit int, output []byte, ranFor, timeout time.Duration) (patch.TestOutcome, string) {
	var lines []string
	for _, ln := range strings.Split(string(output), "\n") {
		ln = strings.TrimRight(ln, "\r")
		if !strings.HasPrefix(ln, guard.EchoPrefix) {
			lines = append(lines, ln)
		}
	}
	switch {
	case exit == 124, exit == 128+9 && ranFor >= timeout:
		return patch.TimedOut, fmt.Sprintf("no result within %s: stopped by the timeout", dur(timeout))
	case hasCompileError(lines):
		return patch.BuildFailed, firstError([]byte(strings.Join(lines, "\n")))
	}
	for _, ln := range lines {
		if m := signalRE.FindStringSubmatch(ln); m != nil {
			detail := fmt.Sprintf("signal %s (%s)", m[1], m[2])
			if tail := lastTestLines(lines, 3); len(tail) > 0 {
				detail += ": " + strings.Join(tail, " | ")
			} else if m[3] != "" {
				detail += ": " + m[3]
			}
			return patch.Aborted, detail
		}
	}
	for i, ln := range lines {
		t := strings.TrimSpace(ln)
		if m := panicNewRE.FindStringSubmatch(t); m != nil {
			var msg []string
			for _, next := range lines[i+1:] {
				n := strings.TrimSpace(next)
				if n == "" || strings.HasPrefix(n, "note: run with `RUST_BACKTRACE") || strings.HasPrefix(n, "test ") ||
					strings.HasPrefix(n, "stack backtrace:") {
					break
				}
				msg = append(msg, n)
			}
			return patch.Failed, strings.TrimSpace("panicked at " + m[1] + ": " + strings.Join(msg, " "))
		}
		if m := panicOldRE.FindStringSubmatch(t); m != nil {
			return patch.Failed, "panicked at " + m[2] + ": " + m[1]
		}
	}
	if exit == 0 {
		for _, ln := range lines {
			t := strings.TrimSpace(ln)
			if m := passedRE.FindStringSubmatch(t); m != nil && m[1] != "0" {
				return patch.Passed, "ok (" + m[2] + ")"
			}
		}
		for _, ln := range lines {
			if zeroTestsRE.MatchString(strings.TrimSpace(ln)) {
				detail := "the filter " + filter + " matched no test (running 0 tests"
				for _, l2 := range lines {
					if m := filteredRE.FindStringSubmatch(l2); m != nil {
						detail += "; " + m[1] + " filtered out"
						break
					}
				}
				return patch.NotRun, detail + ")"
			}
		}
		return patch.NotRun, "cargo test exited 0 but reported no passed test"
	}
	if exit > 128 {
		return patch.Aborted, fmt.Sprintf("cargo test ended with %s", exitText(exit))
	}
	for _, ln := range lines {
		if t := strings.TrimSpace(ln); failedRE.MatchString(t) {
			return patch.Failed, t
		}
	}
	detail := fmt.Sprintf("cargo test exited with %s", exitText(exit))
	if tail := tailLines([]byte(strings.Join(lines, "\n")), 1); len(tail) > 0 {
		detail += ": " + tail[0]
	}
	return patch.Failed, detail
}

func hasCompileError(lines []string) bool {
	for _, ln := range lines {
		t := strings.TrimSpace(ln)
		if strings.HasPrefix(t, "error: could not compile") || strings.HasPrefix(t, "error[E") {
			return true
		}
	}
	return false
}

// lastTestLines are the last n lines the test printed before cargo's failure report,
// leaving out cargo's and libtest's own progress lines.
func lastTestLines(lines []string, n int) []string {
	end := len(lines)
	for i, ln := range lines {
		if strings.HasPrefix(strings.TrimSpace(ln), "error: test failed") {
			end = i
			break
		}
	}
	var out []string
	for i := end - 1; i >= 0 && len(out) < n; i-- {
		t := strings.TrimSpace(lines[i])
		if t == "" || isCargoLine(t) {
			continue
		}
		out = append(out, t)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func isCargoLine(t string) bool {
	for _, p := range []string{"Finished ", "Running ", "Compiling ", "running ", "test ", "Executable ", "Blocking "} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// WriteOutcome writes the numeric tests' outcome (docs/formats.md §7) where the
// publisher reads it, e.g. <results folder>/gemm_tests.json.
func WriteOutcome(path string, o patch.Outcome) error {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the outcome: %w", err)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("writing the outcome: %w", err)
		}
	}
	if err := results.WriteFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("writing the outcome: %w", err)
	}
	return nil
}
