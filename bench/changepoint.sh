#!/usr/bin/env bash
# Change-point detection and bisection (runner/changepoint, docs/nightly.md) on synthetic
# histories, seed 1, 3 % noise a reading (Gaussian, and heavy-tailed: Student's t with 3
# df at the same interquartile range), 3 readings a night: 2,000 histories per noise
# kind with a lasting 5 % step after 20 nights (each suspicion confirmed by a simulated
# interleaved A/B of its commit range with runner/abstat), 300 no-change histories of
# 100 judged nights, and 2,000 bisections per noise kind over 32 commits with a 5 % step
# (Bisect's default, robust likelihood; and the normal likelihood on the same readings,
# for comparison only). The last two lines read
#   changepoint: 5% step found in median N nights (90% within M), false alarms F per 100 nights
#   bisect: culprit right in X% of K runs, mean R single-model runs
# (both over both noise kinds; each noise kind has its own lines above). Exits 1 when
# N > 3, M > 6, F > 1, or the bisection of either noise kind is right in less than 95 %
# or takes more than 60 runs on average.
# Usage: bench/changepoint.sh [bench/changepoint flags: -histories N -null N -bisects K -seed S ...]
set -euo pipefail
cd "$(dirname "$0")/.."
out="bench/out/changepoint"
mkdir -p "$out"
go build -o "$out/changepoint" ./bench/changepoint
exec "$out/changepoint" -max-median 3 -max-p90 6 -max-false 1 -min-right 95 -max-runs 60 "$@"
