#!/usr/bin/env bash
# Power of the A/B statistics (runner/abstat, docs/ab.md) on synthetic pairs: 20,000
# pairs per line, seed 1, 3 % noise (Gaussian, and a heavy-tailed variant on its own
# lines), half with no change and half with a true 5 % change (up or down). Prints the
# share of changes called in the right direction and of no-change pairs called a
# change at fixed repeat counts and under the adaptive plan; the last line reads
# `ab: detect 5% in X % of cases at N repeats/side, false calls Y %` (Gaussian,
# adaptive, N its cap). Exits 1 when X < 90 or Y > 5.
# Usage: bench/ab.sh [bench/ab flags: -pairs N -seed S -cap N -noise PCT -effect PCT ...]
set -euo pipefail
cd "$(dirname "$0")/.."
out="bench/out/ab"
mkdir -p "$out"
go build -o "$out/ab" ./bench/ab
exec "$out/ab" -min-detect 90 -max-false 5 "$@"
