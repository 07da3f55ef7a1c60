// Package benchcsv owns the benchmark CSVs of docs/formats.md §6, the files the target
// repository's harnesses write (scripts/bench_decode.sh for mlxcel, scripts/bench_mlxlm.py
// for the mlx-lm baseline): their file names
// (`{backend}_{hw}[_vlm]_{date}[_{suffix}][_single_{model}].csv`), their rows (parsed as
// CSV by header name, with the SKIP:/FAIL: result token the harness puts after
// prompt_target_len), and the checks a nightly run applies to a freshly written file on a
// ROCm host: header, naming, mislabelled backends, filled hardware, overlay and HIP
// columns, result tokens per model, and models skipped for memory although they fit in
// the device memory.
//
// It reads files and plain values only: it must not run the harness, probe the host
// (callers pass the host facts in), compare runs (runner/baseline does) or format
// reports.
package benchcsv
