#!/usr/bin/env bash
# The guard's cost as a whole process, measured from outside: /usr/bin/time of
# `perfbot guard --idle-secs 0 --sample-hz 10 -- sleep SECS` with a private KFD dir, lock
# and log, then the CPU seconds (user + system of the guard and everything it started:
# the reaper, `sleep`) divided by the samples its log counts. This includes what an
# in-process benchmark cannot see: the Go runtime's own wake-ups, start-up and exit.
# The compiler pattern matches nothing, so that other people's builds on a shared
# machine cannot make the attempt contended and rerun it.
# Usage: bench/guard.sh [--secs N]   (default 20). Target: < 0.5 ms CPU per sample.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=20
while [ $# -gt 0 ]; do
  case "$1" in
    --secs) secs="$2"; shift 2 ;;
    --secs=*) secs="${1#--secs=}"; shift ;;
    *) echo "usage: bench/guard.sh [--secs N]" >&2; exit 2 ;;
  esac
done
case "$secs" in
  ''|*[!0-9]*|0) echo "--secs wants a positive whole number of seconds, got '$secs'" >&2; exit 2 ;;
esac
if [ ! -x /usr/bin/time ]; then
  echo "bench/guard.sh needs /usr/bin/time (GNU time: apt-get install time)" >&2
  exit 1
fi

out="bench/out/guard"
mkdir -p "$out"
go build -o "$out/perfbot" ./cmd/perfbot
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/kfd"

procs=$(ls /proc | grep -c '^[0-9]')
ROCM_GPU_GUARD_KFD_DIR="$scratch/kfd" ROCM_GPU_GUARD_LOCK="$scratch/guard.lock" \
  ROCM_GPU_GUARD_COMPILER_RE='perfbot-bench-no-such-compiler' ROCM_GPU_GUARD_LOCK_HELD= \
  /usr/bin/time -f '%U %S' -o "$scratch/time" \
  "$out/perfbot" guard --idle-secs 0 --sample-hz 10 --log "$scratch/guard.log" -- sleep "$secs" 2>"$scratch/stderr" || {
  cat "$scratch/stderr" >&2
  exit 1
}
read -r user sys <"$scratch/time"
# Every sample: the monitor's, and the idle wait's (one, with --idle-secs 0 and nothing
# foreign on the GPU).
monitor=$(sed -n 's/.*monitor: \([0-9]*\) samples$/\1/p' "$scratch/guard.log" | awk '{s += $1} END {print s + 0}')
waits=$(grep -c 'waiting for 0s of idle' "$scratch/guard.log" || true)
samples=$((monitor + waits))
awk -v u="$user" -v s="$sys" -v n="$samples" -v p="$procs" 'BEGIN {
  printf "CPU: user %.2f s, system %.2f s over %d samples\n", u, s, n
  printf "guard: %.2f ms CPU per sample (%d samples, %d processes)\n", (u + s) * 1000 / n, n, p
}'
