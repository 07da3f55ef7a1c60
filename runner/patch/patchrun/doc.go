// Package patchrun runs the target repo's own code on a patched tree: it is the one
// part of the patcher that starts processes. GemmGates applies the grouped_gemm gate
// patch (runner/patch's Apply) and runs the repo's dispatch checker on the result,
// Verify and VerifyWith run the verification commands, and Prepare does both in a
// scratch git worktree of the pinned commit and returns a patch.Prepared for the
// publisher. Every command goes through runner/proc, so nothing it starts outlives it,
// and under runner/sandbox when the settings say so.
//
// It runs on the runner that ran the pinned commit, never in a job that holds a
// publishing secret; the publisher and the artifact intake use runner/patch (data,
// parsing and text editing) and never this package. It must not run the tests
// themselves, commit, push or talk to GitHub.
package patchrun
