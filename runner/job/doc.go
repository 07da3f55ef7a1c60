// Package job owns the host-side jobs of a `/profile rocm` request: the profile session
// (build the bench, then per model and sampling setting a plain and a profiled run under
// the idle-GPU guard, analysis, and the results folder of docs/formats.md §3 with the
// session's manifest), the nightly baseline (docs/nightly.md: a suspect confirmed by an
// A/B of the last good commit and tonight's, a confirmed regression bisected within
// the nightly's budget, all in folders below the nightly's), the compare sessions of
// two commits (docs/ab.md: both built in worktrees before any measurement, the bench's
// runs interleaved in ABBA blocks by runner/abrun, or each side's profile and their
// difference by runner/portdiff; results.Compare), the bisection of a commit range for
// one model (docs/nightly.md, "Bisection on the GPU host": runner/changepoint picks the
// commits, each checked out in its own worktree, built and measured with the harness's
// single-model run under the guard as a compare measures one; results.Bisect; the
// first bad commit found is profiled against its parent by a profile compare) and the
// grouped_gemm numeric tests
// (each test alone under the guard, its outcome told apart for the patcher,
// docs/formats.md §7).
//
// It orchestrates and writes; it does not define what it writes: the results folder's
// names, the manifests (results.Session, results.Nightly, results.Compare,
// results.Bisect) and their
// states belong to runner/results, which the publisher and the artifact intake read
// without importing this package. Every process is found through runner/host and run through runner/proc
// (nothing it starts outlives it), the pinned commit's code inside the host's sandbox
// when the host turns it on (runner/sandbox), waits and evidence through runner/guard,
// host facts through runner/hostinfo, and traces, logs and numbers through the rocprof,
// benchlog and analyze packages. It must not probe the GPU inside a guarded wait, patch
// sources, commit, or talk to GitHub.
package job
