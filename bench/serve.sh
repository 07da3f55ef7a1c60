#!/usr/bin/env bash
# Load test of `perfbot serve`: the real binary on 127.0.0.1 against a minimal GitHub
# API, fed signed copies of real webhook payloads (testdata/real/github) with fresh
# delivery ids for --secs seconds (default 30), paced at --rate deliveries a second
# (default 500, as GitHub sends: late answers do not slow the arrivals; 0 sends as fast
# as answers come) from at most --conc clients. It waits for the inbox to drain, stops
# the server and checks its database for every delivery it answered 2xx. The last line
# reads
#   serve: N deliveries/s, p50 X ms, p99 Y ms, lost L, peak RSS M MB
# (target: >= 500 deliveries/s, p99 < 50 ms, lost 0; peak RSS is the server's VmHWM).
#
# Hostile load: --hostile N adds N clients that send, for the whole run, bodies of
# --hostile-mb MB (default 24) with forged signatures, each resent as soon as it is
# answered. Target with --hostile 40: peak RSS < 200 MB (the body budget bounds what
# forged bodies hold), signed deliveries still all answered 2xx with p99 < 50 ms.
# --hostile-nice 19 runs those clients in a child process at nice 19, so on a small
# machine the generator's own CPU (resending 24 MB bodies is costly) does not stand in
# for the server's.
#
# Hung GitHub: --hung makes the minimal API take workflow dispatches and never answer
# them; eight /profile rocm for one host are sent first (more than the workers), then
# a /perfbot help on another issue every 100 ms, and a line says how many were answered
# (and how fast) while the dispatch hung, and when the server gave up on it
# (github.timeout_secs, 30 s by default).
# Usage: bench/serve.sh [--secs N] [--rate R] [--conc C] [--workers W] [--hostile N [--hostile-mb M] [--hostile-nice 19]] [--hung]
set -euo pipefail
cd "$(dirname "$0")/.."
out="bench/out/serve"
mkdir -p "$out"
go build -o "$out/perfbot" ./cmd/perfbot
go build -o "$out/serveload" ./bench/serveload
exec "$out/serveload" --bin "$out/perfbot" --data testdata/real/github "$@"
