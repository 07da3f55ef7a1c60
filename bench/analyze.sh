#!/usr/bin/env bash
# Benchmark of `perfbot analyze` on a synthetic Llama trace of 1,024 decode tokens
# (about 480k dispatches, 135 MB), against `wc -l` on the same file, medians of 5 runs
# each with a warm page cache, measured in the same run. Prints both, the ratio, the
# throughput and the peak RSS. Usage: bench/analyze.sh [TOKENS]
set -euo pipefail
cd "$(dirname "$0")/.."
tokens="${1:-1024}"
out="bench/out/analyze"
mkdir -p "$out"
go build -o "$out/perfbot" ./cmd/perfbot
go build -o "$out/timeit" ./bench/timeit
run="Meta-Llama-3.1-8B-Instruct-4bit_greedy"
if [ ! -f "$out/synth-$tokens/$run"_kernel_trace.csv ]; then
  "$out/perfbot" synth --model llama --tokens "$tokens" --seed 1 --out "$out/synth-$tokens" >/dev/null
fi
trace="$out/synth-$tokens/${run}_kernel_trace.csv"
size=$(stat -c %s "$trace")
rows=$(($(wc -l < "$trace") - 1))
cat "$trace" > /dev/null # warm the page cache

wc_line=$("$out/timeit" -n 5 -- wc -l "$trace")
# Every run after the first replaces the outputs and says so: not news here.
an_line=$("$out/timeit" -n 5 -- "$out/perfbot" analyze --trace "$trace" \
  --log "$out/synth-$tokens/${run}_bench.log" --plain-log "$out/synth-$tokens/${run}_plain_bench.log" \
  --model-dir "$out/synth-$tokens/Meta-Llama-3.1-8B-Instruct-4bit" --sampling greedy \
  --name "$run" --out-dir "$out/results" 2> >(grep -v 'replaced the existing' >&2))

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
wc_s=$(field median_s "$wc_line"); an_s=$(field median_s "$an_line"); rss=$(field max_rss_kb "$an_line")
awk -v wc="$wc_s" -v an="$an_s" -v rss="$rss" -v size="$size" -v rows="$rows" 'BEGIN {
  printf "trace: %d rows, %.1f MB\n", rows, size/1e6
  printf "wc -l:           median %.3f s\n", wc
  printf "perfbot analyze: median %.3f s (%.0f MB/s), peak RSS %.1f MB\n", an, size/1e6/an, rss/1024
  printf "ratio analyze / wc -l: %.1f (target <= 10); peak RSS target < 64 MB\n", an/wc
}'

# The attribution step alone against the whole analysis, on the same 1,024-token run.
bench=$(go test ./runner/analyze -run '^$' -bench 'AnalyzeWhole|AttributionStep' -benchtime 5x)
whole=$(awk '/^BenchmarkAnalyzeWhole/ {print $3}' <<<"$bench")
attr=$(awk '/^BenchmarkAttributionStep/ {print $3}' <<<"$bench")
awk -v w="$whole" -v a="$attr" 'BEGIN {
  printf "analysis in-process: %.1f ms; attribution step alone: %.1f ms = %.1f %% of it (target <= 20 %%)\n", w/1e6, a/1e6, 100*a/w
}'
