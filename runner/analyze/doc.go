// Package analyze turns one profiled decode run (a rocprofv3 kernel trace, the bench
// log with phase marks, optionally the plain run's log and the model's config) into the
// decode metrics of docs/analysis.md §2-§3, hands the decode dispatches to the attribution
// rules, and writes `<run>_decode_kernels.csv` and `<run>_summary.json`. It reads files
// and computes; it never runs processes or talks to GitHub.
package analyze
