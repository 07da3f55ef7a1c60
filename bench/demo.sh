#!/usr/bin/env bash
# Wall time of `perfbot demo` (the whole /profile rocm flow: four models, a rejected and
# rerun attempt, the numeric tests, the patch, publishing), medians of N runs against the
# target of 30 s on a 2-core machine. Usage: bench/demo.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
out="bench/out/demo"
rm -rf "$out"
mkdir -p "$out"
go build -o "$out/perfbot" ./cmd/perfbot
go build -o "$out/timeit" ./bench/timeit
# Each run needs a new output folder: timeit runs the same command, so a tiny wrapper
# gives each its own.
cat > "$out/once.sh" <<'SH'
#!/usr/bin/env bash
set -euo pipefail
dir="$(mktemp -d "$1/run-XXXXXX")"
exec "$2" demo --out "$dir" >"$dir.log" 2>&1
SH
chmod +x "$out/once.sh"
line=$("$out/timeit" -n "$runs" -- "$out/once.sh" "$(cd "$out" && pwd)" "$(cd "$out" && pwd)/perfbot")
median=$(sed -n 's/.*median_s=\([0-9.]*\).*/\1/p' <<<"$line")
echo "$line"
echo "demo: ${median} s median of ${runs} runs (target < 30 s, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
