// Package results owns the committed results layout of docs/formats.md §3: run names and
// sampling tags, the `<run>_summary.json` and `<run>_decode_kernels.csv` formats (byte
// compatible with the target repo's own analyzer), and the number formatting they use.
// It holds plain data types only: it must not read traces, run processes or talk to
// GitHub.
package results
