package results

// TestOutcome is what happened to one grouped_gemm numeric test on the ROCm host, as
// gemm_tests.json records it (docs/formats.md §7).
type TestOutcome string

// The outcomes of docs/formats.md §7.
const (
	TestPassed      TestOutcome = "passed"
	TestFailed      TestOutcome = "failed"       // a panic: message and file:line in the detail
	TestAborted     TestOutcome = "aborted"      // killed by a signal (SIGABRT, SIGSEGV, ...)
	TestBuildFailed TestOutcome = "build_failed" // the test binary did not build
	TestTimedOut    TestOutcome = "timed_out"
	TestNotRun      TestOutcome = "not_run" // the filter matched no test ("running 0 tests")
)

// GemmTestNames are the three numeric tests of TestModule, in the order of their file.
var GemmTestNames = [3]string{
	"gather_mm_matches_dense_per_expert_reference",
	"gather_mm_selects_the_indexed_expert",
	"gather_mm_half_precision_matches_reference",
}

// TestResult is one test's entry in gemm_tests.json.
type TestResult struct {
	Name    string      `json:"name"`
	Outcome TestOutcome `json:"outcome"`
	Detail  string      `json:"detail"`
}
