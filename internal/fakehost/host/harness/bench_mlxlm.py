#!/usr/bin/env bash
# Fake scripts/bench_mlxlm.py for tests and the demo: a shell stand-in for the mlx-lm
# baseline's Python harness, with its arguments, stderr lines and CSV (docs/formats.md
# §6: 14 columns, pylm_<hw>_<date>.csv in ./benchmarks). No Python and no mlx-lm needed.
#
#   bench_mlxlm.py all [--cooldown N] [--big-cooldown N] [--suffix TAG]
#   bench_mlxlm.py <model dir>
#
# Checkpoints are the folders of MODELS_DIR (default ./models) with a config.json and a
# *.safetensors file, in name order. A model's numbers come from its fake-bench.txt,
# line `mlx-lm <decode tok/s> <prefill tok/s>` (or `mlx-lm FAIL:bench`). Like the real
# one it resumes: a model already in today's CSV is not run again. FAKE_HARNESS=pre-rocm
# plays the version that did not know ROCm (hardware tag `unknown`); FAKE_HARNESS_DATE
# fixes the date. FAKE_MLXLM_GATE=FILE makes it wait (at most 30 s) after the first
# model's row, after creating FILE.waiting, until FILE exists: a test holds the sweep
# with a row already written while it shows the guard a foreign GPU process.
set -u

MODELS_DIR="${MODELS_DIR:-./models}"
BENCHMARKS_DIR=./benchmarks
MAX_TOKENS=128
COOLDOWN=30 BIG_COOLDOWN=30 SUFFIX="" MODEL_ARG=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cooldown) COOLDOWN="$2"; shift 2 ;;
    --big-cooldown) BIG_COOLDOWN="$2"; shift 2 ;;
    --big-threshold-gb) shift 2 ;;
    --suffix) SUFFIX="$2"; shift 2 ;;
    --max-tokens) MAX_TOKENS="$2"; shift 2 ;;
    -*) echo "usage: bench_mlxlm.py [-h] [--vlm] [--cooldown COOLDOWN] [--big-cooldown BIG_COOLDOWN] model" >&2
        echo "bench_mlxlm.py: error: unrecognized arguments: $1" >&2
        exit 2 ;;
    *) MODEL_ARG="$1"; shift ;;
  esac
done
[[ -n "$MODEL_ARG" ]] || { echo "bench_mlxlm.py: error: the following arguments are required: model" >&2; exit 2; }

DATE="${FAKE_HARNESS_DATE:-$(date '+%Y-%m-%d')}"
GIB=$((1024 * 1024 * 1024))
if [[ "${FAKE_HARNESS:-rocm}" == pre-rocm ]]; then
  HW_SHORT=unknown HW_FULL=unknown LIMIT=$((128 * GIB * 85 / 100))
else
  HW_SHORT="strixhalo-${FAKE_HARNESS_GFX:-gfx1151}"
  HW_FULL="AMD_Radeon_8060S_Graphics_${FAKE_HARNESS_GFX:-gfx1151}_ROCm10.0.0_96GB"
  LIMIT=$((96 * GIB * 85 / 100))
fi
VERSION="mlx-lm-0.31.3+mlx-0.32.3.dev20260912+a7d4c85a"
PROMPT="Hello, how are you today?"

name="pylm_${HW_SHORT}_${DATE}"
[[ -n "$SUFFIX" ]] && name="${name}_${SUFFIX}"
[[ "$MODEL_ARG" != all ]] && name="${name}_single_$(basename "${MODEL_ARG%/}")"
CSV="$BENCHMARKS_DIR/$name.csv"
mkdir -p "$BENCHMARKS_DIR"

size_of() {
  local total=0 f
  for f in "$1"/*.safetensors; do
    [[ -f "$f" ]] && total=$((total + $(stat -c %s "$f")))
  done
  echo "$total"
}

models=()
if [[ "$MODEL_ARG" == all ]]; then
  for d in "$MODELS_DIR"/*/; do
    d="${d%/}"
    [[ -f "$d/config.json" ]] || continue
    ls "$d"/*.safetensors >/dev/null 2>&1 || continue
    models+=("$d")
  done
else
  [[ -d "$MODEL_ARG" ]] || { echo "Error: $MODEL_ARG is not a directory" >&2; exit 1; }
  models=("${MODEL_ARG%/}")
fi

declare -A done_models=()
if [[ -f "$CSV" ]]; then
  while IFS=, read -r m _; do
    [[ "$m" == model || -z "$m" ]] || done_models[$m]=1
  done <"$CSV"
  echo ">>> Resume: ${#done_models[@]} models already in $CSV" >&2
else
  echo "model,model_path,prompt_tokens,generated_tokens,prefill_ms,prefill_tok_s,decode_ms,decode_tok_s,date,hardware,baseline_version,build_type,max_tokens,prompt" >"$CSV"
fi

n=${#models[@]}
i=0
for d in "${models[@]}"; do
  i=$((i + 1))
  m=$(basename "$d")
  if [[ -n "${done_models[$m]:-}" ]]; then
    echo ">>> [$i/$n] [skip-done] $m" >&2
    continue
  fi
  size=$(size_of "$d")
  gb=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1073741824 }')
  if [[ "$size" -gt "$LIMIT" ]]; then
    echo ">>> [skip]   $m ($gb GB > $(awk -v s="$LIMIT" 'BEGIN { printf "%.1f", s / 1073741824 }') GB limit)" >&2
    echo "$m,./$d/,,,,,,,$DATE,$HW_FULL,$VERSION,python,$MAX_TOKENS,\"$PROMPT\",SKIP:oom_estimate" >>"$CSV"
    continue
  fi
  echo ">>> [$i/$n] [warmup+bench] $m ($gb GB) ..." >&2
  read -r _ decode prefill <<<"$(grep '^mlx-lm ' "$d/fake-bench.txt" 2>/dev/null | head -1)"
  if [[ -z "${decode:-}" || "$decode" == FAIL:* ]]; then
    echo "    FAIL:bench (0.1s)" >&2
    echo "$m,./$d/,,,,,,,$DATE,$HW_FULL,$VERSION,python,$MAX_TOKENS,\"$PROMPT\",FAIL:bench" >>"$CSV"
  else
    read -r dec_ms pre_ms <<<"$(awk -v d="$decode" -v p="$prefill" -v n="$MAX_TOKENS" 'BEGIN { printf "%.2f %.2f", n / d * 1000, 512 / p * 1000 }')"
    echo "    decode: $decode tok/s (0.1s)" >&2
    echo "$m,./$d/,512,$MAX_TOKENS,$pre_ms,$prefill,$dec_ms,$decode,$DATE,$HW_FULL,$VERSION,python,$MAX_TOKENS,\"$PROMPT\"" >>"$CSV"
  fi
  if [[ -n "${FAKE_MLXLM_GATE:-}" && -z "${gated:-}" ]]; then
    gated=1
    : >"$FAKE_MLXLM_GATE.waiting"
    for _ in $(seq 600); do
      [[ -e "$FAKE_MLXLM_GATE" ]] && break
      sleep 0.05
    done
  fi
  if [[ $i -lt $n ]]; then
    cd_secs=$COOLDOWN
    [[ "$size" -gt $((20 * GIB)) ]] && cd_secs=$BIG_COOLDOWN
    [[ "$cd_secs" -gt 0 ]] && echo "    cooldown: ${cd_secs}s" >&2
  fi
done
echo "" >&2
echo "Results saved to: $CSV" >&2
