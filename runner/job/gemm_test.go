package job

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

var (
	t0, t1, t2 = patch.TestNames[0], patch.TestNames[1], patch.TestNames[2]
)

// gemmRun runs the numeric tests on a fake checkout defining the tests in defined,
// with the fake cargo's scripted outcomes.
func gemmRun(t *testing.T, scripted string, defined []string, timeout time.Duration) (patch.Outcome, string, error) {
	t.Helper()
	fh := newFakeHost(t, "FAKE_CARGO_TESTS="+scripted)
	repo := fakeRepo(t, defined...)
	g := fh.guardOptions()
	g.LogPath = filepath.Join(fh.tmp, "guard.log")
	logs := filepath.Join(fh.tmp, "logs")
	o, err := GemmTests(context.Background(), GemmOptions{Host: fh.h, RepoDir: repo, Guard: g, Timeout: timeout, LogDir: logs})
	// The JSON goes to the patcher: it must read what the job wrote.
	b, jerr := json.Marshal(o)
	if jerr != nil {
		t.Fatal(jerr)
	}
	if err == nil {
		back, perr := patch.ParseOutcome(b)
		if perr != nil {
			t.Fatalf("the patcher refuses the outcome: %v\n%s", perr, b)
		}
		if back.Decide() == "" {
			t.Fatalf("no decision for %s", b)
		}
	}
	for _, s := range []string{repo, fh.tmp} {
		if strings.Contains(string(b), s) {
			t.Errorf("outcome names a local folder %s:\n%s", s, b)
		}
	}
	return o, fh.tmp, err
}

// Passed, failed with the panic's message and location, aborted by SIGABRT with the
// last lines the test printed: each told apart, each test alone under the guard.
func TestGemmTestsPassFailAbort(t *testing.T) {
	t.Parallel()
	o, tmp, err := gemmRun(t, t0+"=pass,"+t1+"=panic,"+t2+"=abort", patch.TestNames[:], time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if o.OverlayCommit != "75915908" {
		t.Errorf("overlay commit %q", o.OverlayCommit)
	}
	for _, tc := range []struct {
		name    string
		outcome patch.TestOutcome
		detail  string
	}{
		{t0, patch.Passed, "ok (0.52s)"},
		{t1, patch.Failed, "panicked at src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs:88:9: assertion `left == right` failed: expert 3 rows differ from the dense reference left: 0.0 right: 1.5"},
		{t2, patch.Aborted, "signal 6 (SIGABRT): HIP error: invalid device function (hipErrorInvalidDeviceFunction) at gather_mm.hip:211 | :0:rocdevice.cpp            :2982: 1234567890 us: Callback: Queue 0x7f00 aborting with error : HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid. code: 0x100f"},
	} {
		got := testOutcome(t, o, tc.name)
		if got.Outcome != tc.outcome || got.Detail != tc.detail {
			t.Errorf("%s: %s %q\nwant %s %q", tc.name, got.Outcome, got.Detail, tc.outcome, tc.detail)
		}
	}
	if d := patch.Outcome(o).Decide(); d != patch.Record {
		t.Errorf("decision %s, want record", d)
	}
	// One guarded run per test, each with its own section and the §7 command.
	evs, err := guard.ParseLog(strings.NewReader(readFile(t, filepath.Join(tmp, "guard.log"))))
	if err != nil {
		t.Fatal(err)
	}
	var notes, starts []string
	for _, e := range evs {
		switch e.Kind {
		case guard.EvNote, guard.EvSection:
			notes = append(notes, e.Text)
		case guard.EvAttemptStart:
			starts = append(starts, e.Command)
		}
	}
	if len(notes) != 3 || notes[1] != results.TestModule+"::"+t1 || len(starts) != 3 ||
		!strings.HasSuffix(starts[1], "timeout --kill-after=10s 60s cargo test --release --features rocm -p mlxcel-core --lib "+
			results.TestModule+"::"+t1+" -- --exact --test-threads=1 --nocapture") {
		t.Errorf("guard sections %q, commands:\n%s", notes, strings.Join(starts, "\n"))
	}
	if lg := readFile(t, filepath.Join(tmp, "logs", t2+".log")); !strings.Contains(lg, "SIGABRT") {
		t.Errorf("the aborted test's log:\n%s", lg)
	}
}

// SIGSEGV, a hang stopped by the timeout, and a filter that matches no test (cargo
// says "running 0 tests" and exits 0: not a pass).
func TestGemmTestsSegvTimeoutNotRun(t *testing.T) {
	t.Parallel()
	o, _, err := gemmRun(t, t1+"=segv,"+t2+"=hang", []string{t1, t2}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		outcome patch.TestOutcome
		detail  string
	}{
		{t0, patch.NotRun, "the filter " + results.TestModule + "::" + t0 + " matched no test (running 0 tests; 214 filtered out)"},
		{t1, patch.Aborted, "signal 11 (SIGSEGV): [mlx-rocm] gather_mm: expert index 131 out of range for 128 experts"},
		{t2, patch.TimedOut, "no result within 1s: stopped by the timeout"},
	} {
		got := testOutcome(t, o, tc.name)
		if got.Outcome != tc.outcome || got.Detail != tc.detail {
			t.Errorf("%s: %s %q\nwant %s %q", tc.name, got.Outcome, got.Detail, tc.outcome, tc.detail)
		}
	}
}

// A crate that does not compile: no test ran, every test says build_failed with the
// compiler's first error, and the patcher holds.
func TestGemmTestsBuildFails(t *testing.T) {
	t.Parallel()
	o, _, err := gemmRun(t, t0+"=build", patch.TestNames[:], time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	want := "error[E0425]: cannot find function `gpu_backend_available` in the crate root at src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs:40:17"
	for _, r := range o.Tests {
		if r.Outcome != patch.BuildFailed || r.Detail != want {
			t.Errorf("%s: %s %q", r.Name, r.Outcome, r.Detail)
		}
	}
	if d := o.Decide(); d != patch.Hold {
		t.Errorf("decision %s, want hold", d)
	}
}

// All three pass: the patcher may switch the gates.
func TestGemmTestsAllPass(t *testing.T) {
	t.Parallel()
	o, _, err := gemmRun(t, "", patch.TestNames[:], time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if d := o.Decide(); d != patch.Switch {
		t.Errorf("decision %s for %+v, want switch", d, o)
	}
}

// Without the overlay's UPSTREAM there is nothing to record failures against.
func TestGemmTestsNeedTheOverlayCommit(t *testing.T) {
	t.Parallel()
	fh := newFakeHost(t)
	repo := fakeRepo(t, patch.TestNames[:]...)
	if err := os.Remove(filepath.Join(repo, "src/lib/mlx-cpp/patches-rocm/UPSTREAM")); err != nil {
		t.Fatal(err)
	}
	_, err := GemmTests(context.Background(), GemmOptions{Host: fh.h, RepoDir: repo, Guard: fh.guardOptions()})
	if err == nil || !strings.Contains(err.Error(), "overlay commit") {
		t.Errorf("error %v, want one about the overlay commit", err)
	}
}

// Real cargo output shapes, including ones the fake does not print.
func TestClassifyTest(t *testing.T) {
	t.Parallel()
	const filter = results.TestModule + "::gather_mm_selects_the_indexed_expert"
	for _, tc := range []struct {
		name    string
		exit    int
		output  string
		ranFor  time.Duration
		outcome patch.TestOutcome
		detail  string
	}{
		{"pass", 0, "\nrunning 1 test\ntest x ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 9 filtered out; finished in 1.20s\n", 0,
			patch.Passed, "ok (1.20s)"},
		{"no test", 0, "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n", 0,
			patch.NotRun, "the filter " + filter + " matched no test (running 0 tests; 3 filtered out)"},
		{"timeout", 124, "running 1 test\n", time.Second, patch.TimedOut, "no result within 1s: stopped by the timeout"},
		{"old panic format", 101, "thread 'x' panicked at 'expert 3 was not selected', src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs:72:9\ntest result: FAILED. 0 passed; 1 failed\n", 0,
			patch.Failed, "panicked at src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs:72:9: expert 3 was not selected"},
		{"new panic, CRLF", 101, "thread 'x' panicked at src/a.rs:12:5:\r\nindex out of bounds\r\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\r\n", 0,
			patch.Failed, "panicked at src/a.rs:12:5: index out of bounds"},
		{"killed after the timeout", 137, "running 1 test\n", 2 * time.Second, patch.TimedOut, "no result within 1s: stopped by the timeout"},
		{"signal without output", 101, "error: test failed, to rerun pass `-p mlxcel-core --lib`\n\nCaused by:\n  process didn't exit successfully: `/r/target/release/deps/mlxcel_core-1 x` (signal: 7, SIGBUS: access to undefined memory)\n", 0,
			patch.Aborted, "signal 7 (SIGBUS): access to undefined memory"},
		{"guard lines are not the test's", 101, guard.EchoPrefix + "attempt 1/5: start: cargo\nHIP out of memory\nerror: test failed, to rerun pass `-p mlxcel-core --lib`\nCaused by:\n  process didn't exit successfully: `t` (signal: 6, SIGABRT: process abort signal)\n", 0,
			patch.Aborted, "signal 6 (SIGABRT): HIP out of memory"},
		{"killed before the timeout", 137, "running 1 test\n", 0, patch.Aborted, "cargo test ended with status 137 (SIGKILL)"},
		{"failed without a panic line", 101, "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s\n", 0,
			patch.Failed, "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s"},
		{"compile error", 101, "   Compiling mlxcel-core v0.7.0\nerror[E0308]: mismatched types\n  --> src/lib/mlxcel-core/src/lib.rs:3:9\nerror: could not compile `mlxcel-core` (lib test) due to 1 previous error\n", 0,
			patch.BuildFailed, "error[E0308]: mismatched types at src/lib/mlxcel-core/src/lib.rs:3:9"},
		{"cargo itself failed", 101, "error: package ID specification `mlxcel-core` did not match any packages\n", 0,
			patch.Failed, "cargo test exited with status 101: error: package ID specification `mlxcel-core` did not match any packages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oc, detail := ClassifyTest(filter, tc.exit, []byte(tc.output), tc.ranFor, time.Second)
			if oc != tc.outcome || detail != tc.detail {
				t.Errorf("got %s %q\nwant %s %q", oc, detail, tc.outcome, tc.detail)
			}
		})
	}
}
