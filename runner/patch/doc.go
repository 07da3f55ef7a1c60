// Package patch owns the source patches perfbot makes in the target repo after a
// profile run, and the verification of the patched tree (docs/formats.md §7): the three
// grouped_gemm numeric-test gates in `grouped_gemm_numeric_tests.rs` and their entry in
// the `BACKEND_ENUMERATION_TODO` set of `scripts/ci/check_kernel_port_dispatch.py`.
//
// It edits those two files line by line and preserves everything it does not mean to
// change (indentation, CRLF or LF, a missing final newline). It checks both files before
// writing either and refuses a file that does not look as expected. It runs only the
// repo's own checker and verification commands, and git to make a scratch worktree of
// the pinned commit (Prepare); it must not run the tests themselves, commit, push or
// talk to GitHub. Prepare runs on the runner that ran the pinned commit; its Prepared
// (gemm_patch.json) carries the report, the patched files and the verification as data
// to a publisher that runs nothing of the repository, through the strict ParsePrepared.
// The tests' entries of gemm_tests.json (TestOutcome, TestResult, TestNames) are the
// results folder's format, owned by runner/results and named here by alias.
package patch
