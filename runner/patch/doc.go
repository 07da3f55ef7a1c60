// Package patch owns the source patches perfbot makes in the target repo after a
// profile run, and the verification of the patched tree (docs/formats.md §7): the three
// grouped_gemm numeric-test gates in `grouped_gemm_numeric_tests.rs` and their entry in
// the `BACKEND_ENUMERATION_TODO` set of `scripts/ci/check_kernel_port_dispatch.py`.
//
// It edits those two files line by line and preserves everything it does not mean to
// change (indentation, CRLF or LF, a missing final newline). It checks both files before
// writing either and refuses a file that does not look as expected (Apply, Plan). It
// starts no process: running the repo's checker and verification commands, and git to
// make a scratch worktree of the pinned commit, is runner/patch/patchrun's job
// (patchrun.GemmGates, patchrun.Verify, patchrun.Prepare). What that produces is data
// here: a Prepared (gemm_patch.json) carries the report, the patched files and the
// verification to a publisher that runs nothing of the repository, through the strict
// ParsePrepared. The tests' entries of gemm_tests.json (TestOutcome, TestResult,
// TestNames) are the results folder's format, owned by runner/results and named here
// by alias.
package patch
