// Package rocprof reads the CSV files rocprofv3 writes (docs/formats.md §1): the kernel
// trace (every layout from ROCm 6.2 to 10.0, the rocpd-converted CSV and the legacy
// rocprof column names), kernel_stats and the other *_stats files, agent_info, and it
// finds those files in a trace directory or in the profiler's stderr.
//
// The kernel trace reader is built for traces of millions of rows: it streams the file
// in chunks parsed in parallel and keeps only a compact record per dispatch with
// interned names, never the text. Errors name the file, the line and the column.
//
// It must not interpret the data (decode windows, classes and roles belong to the
// analysis), run the profiler or any other process, or write files.
package rocprof
