// Package baseline owns the noise-aware comparison of benchmark runs (docs/nightly.md):
// which rows may be compared at all (same backend, host, hardware and environment: HIP,
// overlay, build type, shape), the nightly history of a model (full sweeps of the
// default configuration only; `_suffix` experiments and single-model runs are left
// out), its robust noise band (median and MAD over the last N comparable runs, with a
// minimum history below which it says so instead of guessing), the verdict of a new
// nightly run against the last accepted baseline and that band (a suspected regression
// waits for its re-measure), the A/B comparison of two files (repeats as the noise
// estimate, single runs labelled as such), and the superseded-baseline warning for every
// (backend, host) pair the file names show.
//
// Verdict texts are generated from the same numbers the verdict is decided on, so they
// cannot contradict them. It reads harness files through runner/benchcsv and must not
// run anything (the re-measure is the caller's), format reports, or talk to GitHub.
package baseline
