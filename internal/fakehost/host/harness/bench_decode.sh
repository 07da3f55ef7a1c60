#!/usr/bin/env bash
# Fake scripts/bench_decode.sh for tests and the demo: the mlxcel harness's arguments,
# stderr lines and CSV (docs/formats.md §6) without a GPU. Run in the mlxcel checkout.
#
#   bench_decode.sh all [--cooldown N] [--big-cooldown N] [--suffix TAG] [--output PATH]
#   bench_decode.sh <model dir> [...]          single-model mode: ..._single_<model>.csv
#
# Every folder of MODELS_DIR (default ./models) gets one row, in name order, as the real
# sweep does. A model's numbers come from its folder's fake-bench.txt, line
# `mlxcel <decode tok/s> <prefill tok/s>` (or `mlxcel FAIL:bench`, `mlxcel oom` for a
# run killed by the OOM killer); its size is the size of its *.safetensors files, and a
# model over 85% of the memory budget is skipped (SKIP:oom_estimate) before launch.
#
# FAKE_HARNESS=pre-rocm plays the harness from before it knew ROCm: it labels the run
# metal_<20 characters of the CPU name>, describes the CPU as the hardware, budgets
# against host memory (31 GiB) and writes no overlay or HIP column. FAKE_HARNESS_SCALE
# (`model=factor ...`) scales a model's decode in `all` mode, FAKE_HARNESS_SINGLE_SCALE
# in single-model mode (a re-measure); the `decode FACTOR` line of a planted change
# (target/release/fake-change.txt, copied there by the fake cargo build) scales every
# model's decode. FAKE_HARNESS_GATE=FILE makes the first model wait
# (at most 30 s) until FILE exists, after creating FILE.waiting, so a test can hold the
# sweep while it shows the guard a foreign GPU process. FAKE_HARNESS_DATE fixes the date.
set -u
trap 'echo "Interrupted (signal received)" >&2; exit 130' INT TERM

MODELS_DIR="${MODELS_DIR:-./models}"
BENCHMARKS_DIR="${BENCHMARKS_DIR:-./benchmarks}"
TEXT_PROMPT="Hello, how are you today?"
MAX_TOKENS=128
WARMUP_TOKENS=20
PROMPT_TOKENS=512
DATE="${FAKE_HARNESS_DATE:-$(date '+%Y-%m-%d')}"
COOLDOWN=0 BIG_COOLDOWN=0 SUFFIX="" OUTPUT="" MODEL_ARG=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --cooldown) COOLDOWN="$2"; shift 2 ;;
    --big-cooldown) BIG_COOLDOWN="$2"; shift 2 ;;
    --suffix) SUFFIX="$2"; shift 2 ;;
    --output) OUTPUT="$2"; shift 2 ;;
    --max-tokens) MAX_TOKENS="$2"; shift 2 ;;
    --warmup-tokens) WARMUP_TOKENS="$2"; shift 2 ;;
    --prompt-tokens) PROMPT_TOKENS="$2"; shift 2 ;;
    --no-pre-warm | --no-cooldown) shift ;;
    -*) echo "Unknown option: $1" >&2; exit 1 ;;
    *) MODEL_ARG="$1"; shift ;;
  esac
done
if [[ -z "$MODEL_ARG" ]]; then
  echo "Error: model path or 'all' required" >&2
  exit 1
fi
for bin in ./target/release/mlxcel ./target/release/mlxcel-bench-decode; do
  if [[ ! -x "$bin" ]]; then
    echo "Error: $bin not found. Run 'cargo build --release' first." >&2
    exit 1
  fi
done
if [[ "$MODEL_ARG" != all && ! -d "$MODEL_ARG" ]]; then
  echo "Error: model directory '$MODEL_ARG' not found" >&2
  exit 1
fi

GIB=$((1024 * 1024 * 1024))
GFX="${FAKE_HARNESS_GFX:-gfx1151}"
hip=$(hipconfig --version 2>/dev/null || true)
HIP="${hip%%-*}"
OVERLAY=$(sed -n 's/^commit: *//p' src/lib/mlx-cpp/patches-rocm/UPSTREAM 2>/dev/null | cut -c1-8)
MLX_PIN=$(sed -n 's/^retargeted_to_mlx_pin: *//p' src/lib/mlx-cpp/patches-rocm/UPSTREAM 2>/dev/null | cut -c1-8)
COMMIT=$(git rev-parse --short=8 HEAD 2>/dev/null || echo unknown)
VERSION=0.7.0
HEADER="model,model_path,prompt_tokens,generated_tokens,prefill_ms,prefill_tok_s,decode_ms,decode_tok_s,date,hardware,mlxcel_version,build_type,max_tokens,prompt,prompt_target_len,mlxcel_commit,mlx_commit"
if [[ "${FAKE_HARNESS:-rocm}" == pre-rocm ]]; then
  BACKEND=metal
  HW_FULL="AMD_RYZEN_AI_MAX+_395_w/_Radeon_8060S_31GB"
  HW_SHORT="amd_ryzen_ai_max+_39"
  BUDGET=$((31 * GIB * 85 / 100))
  TRAIL=",$COMMIT,$MLX_PIN"
else
  BACKEND=rocm
  HW_FULL="AMD_Radeon_8060S_Graphics_${GFX}_ROCm10.0.0_96GB"
  HW_SHORT="strixhalo-$GFX"
  [[ "$GFX" == gfx1151 ]] || HW_SHORT="amd-$GFX"
  BUDGET=$((96 * GIB * 85 / 100))
  TRAIL=",$COMMIT,$MLX_PIN,$OVERLAY,$HIP"
  HEADER="$HEADER,mlx_rocm_overlay_commit,hip_version"
fi

if [[ -z "$OUTPUT" ]]; then
  name="${BACKEND}_${HW_SHORT}_${DATE}"
  [[ -n "$SUFFIX" ]] && name="${name}_${SUFFIX}"
  [[ "$MODEL_ARG" != all ]] && name="${name}_single_$(basename "${MODEL_ARG%/}")"
  OUTPUT="$BENCHMARKS_DIR/$name.csv"
fi
mkdir -p "$(dirname "$OUTPUT")"
echo "$HEADER" >"$OUTPUT"
echo "Output: $OUTPUT" >&2
echo "Hardware: $HW_FULL ($HW_SHORT)" >&2
echo "Backend: $BACKEND" >&2
if [[ "$BACKEND" == rocm ]]; then
  echo "ROCm: 10.0.0 (HIP $HIP), $GFX" >&2
  echo "Memory budget: 85% of 96.0 GiB (device memory, from the probe GPU line)" >&2
fi
echo "" >&2

size_of() {
  local total=0 f
  for f in "$1"/*.safetensors; do
    [[ -f "$f" ]] || continue
    total=$((total + $(stat -c %s "$f")))
  done
  echo "$total"
}

scale_of() {
  local spec="$1" model="$2" kv
  for kv in $spec; do
    if [[ "${kv%%=*}" == "$model" ]]; then
      echo "${kv#*=}"
      return
    fi
  done
  echo 1
}

# A change planted in the commit the binaries were built from (docs/synth.md): its
# decode factor scales every model's decode tok/s.
CHANGE_DECODE=1
if [[ -f ./target/release/fake-change.txt ]]; then
  d=$(awk '$1 == "decode" { print $2 }' ./target/release/fake-change.txt | tail -1)
  [[ -n "$d" ]] && CHANGE_DECODE="$d"
fi

GATED=""
bench_one() {
  local dir="${1%/}/" name size rest
  name=$(basename "$dir")
  rest="$DATE,$HW_FULL,$VERSION,release,$MAX_TOKENS,\"$TEXT_PROMPT\",$PROMPT_TOKENS"
  size=$(size_of "$dir")
  if [[ "$size" -gt "$BUDGET" ]]; then
    printf '>>> [skip]   %s (%d MB > %d MB limit)\n' "$name" $((size / 1048576)) $((BUDGET / 1048576)) >&2
    echo "$name,$dir,,,,,,,$rest,SKIP:oom_estimate$TRAIL"
    return
  fi
  printf '>>> [bench]  %s (same-process warmup=%s) ...\n' "$name" "$WARMUP_TOKENS" >&2
  if [[ -n "${FAKE_HARNESS_GATE:-}" && -z "$GATED" ]]; then
    GATED=1
    : >"$FAKE_HARNESS_GATE.waiting"
    for _ in $(seq 600); do
      [[ -e "$FAKE_HARNESS_GATE" ]] && break
      sleep 0.05
    done
  fi
  local line kind decode prefill scale spec="${FAKE_HARNESS_SCALE:-}"
  [[ "$MODEL_ARG" != all ]] && spec="${FAKE_HARNESS_SINGLE_SCALE:-}"
  line=$(grep '^mlxcel ' "$dir/fake-bench.txt" 2>/dev/null | head -1)
  read -r kind decode prefill <<<"$line"
  case "${decode:-}" in
  "" | FAIL:bench)
    printf '    benchmark failed (exit %d)\n' 1 >&2
    echo "$name,$dir,,,,,,,$rest,FAIL:bench$TRAIL"
    return ;;
  oom)
    printf '    OOM at load/run (exit %d) — SKIP:oom\n' 137 >&2
    echo "$name,$dir,,,,,,,$rest,SKIP:oom$TRAIL"
    return ;;
  esac
  scale=$(scale_of "$spec" "$name")
  scale=$(awk -v s="$scale" -v c="$CHANGE_DECODE" 'BEGIN { printf "%.6f", s * c }')
  read -r decode prefill decode_ms prefill_ms <<<"$(awk -v d="$decode" -v p="$prefill" -v s="$scale" -v pt="$PROMPT_TOKENS" -v n="$MAX_TOKENS" \
    'BEGIN { d = d * s; printf "%.2f %.2f %.2f %.2f", d, p, n / d * 1000, pt / p * 1000 }')"
  printf '    decode: %s tok/s\n' "$decode" >&2
  echo "$name,$dir,$PROMPT_TOKENS,$MAX_TOKENS,$prefill_ms,$prefill,$decode_ms,$decode,$rest$TRAIL"
}

cooldown_after() {
  local secs="$COOLDOWN"
  [[ "$(size_of "$1")" -gt $((10 * GIB)) ]] && secs=$((secs + BIG_COOLDOWN))
  # The fake does not sleep: a test waits for nothing.
  [[ "$secs" -gt 0 ]] && printf '    cooldown: %ds\n' "$secs" >&2
  return 0
}

if [[ "$MODEL_ARG" == all ]]; then
  for dir in "$MODELS_DIR"/*/; do
    [[ -d "$dir" ]] || continue
    result=$(bench_one "$dir")
    echo "$result" | tee -a "$OUTPUT"
    cooldown_after "$dir"
  done
else
  result=$(bench_one "$MODEL_ARG")
  echo "$result" | tee -a "$OUTPUT"
fi
echo "" >&2
echo "Results saved to: $OUTPUT" >&2
