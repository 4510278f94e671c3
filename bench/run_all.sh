#!/usr/bin/env bash
# Regenerates every benchmark report in one command on a GPU machine with Triton 3.6 and torch:
# the memory-bound suite, matmul (fp16, bf16, fp8 e4m3) against Triton and cuBLAS, attention against Triton
# and torch SDPA, tuning against Triton's autotuner with cold compile times, and the plots.
#
# Usage: bench/run_all.sh OUT_DIR
#   BUILD_DIR (env): the build tree (bench/tle-bench, src/tlec, src/tle-link, runtime/libtle_rt.so*);
#     default build/ under the repository root.
#   SKIP (env): space-separated parts to leave out: memory matmul attention tune plots.
# Writes OUT_DIR/{memory_bound,matmul,attention,tune}/ (the layout of bench/results/, so that the
# directories can replace the committed ones), the PNGs next to their JSON, and OUT_DIR/run_all.log.
# Each part is a script of its own (bench/run_suite.sh, bench/matmul_compare.py,
# bench/attention_bench.py, bench/run_tune.sh, bench/plot_results.py); this one runs them in turn,
# with the commands documented in bench/results/README.md. Takes about 20 minutes on an H200.
# Exit status: non-zero when any part fails (the others still run).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -ne 1 ]]; then
  sed -n '2,15p' "${BASH_SOURCE[0]}" >&2
  exit 2
fi
OUT="$(mkdir -p "$1" && cd "$1" && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
TLEC="$BUILD_DIR/src/tlec"
LIB="$BUILD_DIR/runtime/libtle_rt.so"
for f in "$TLEC" "$LIB" "$BUILD_DIR/bench/tle-bench"; do
  if [[ ! -e "$f" ]]; then
    echo "run_all.sh: $f not found; build the project first (scripts/setup.sh) or set BUILD_DIR" >&2
    exit 2
  fi
done
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi > /dev/null 2>&1; then
  echo "run_all.sh: no GPU (nvidia-smi fails); the benchmarks need one" >&2
  exit 77
fi
skip() { [[ " ${SKIP:-} " == *" $1 "* ]]; }
LOG="$OUT/run_all.log"
: > "$LOG"
status=0
part() { # part NAME CMD...: runs CMD, output to the log and the terminal
  local name="$1"
  shift
  echo "== [$(date -u +%H:%M:%S)] $name: $*" | tee -a "$LOG"
  "$@" 2>&1 | tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  if ((rc)); then
    echo "run_all.sh: $name failed (exit status $rc)" | tee -a "$LOG"
    status=1
  fi
}
CUBINS="$(mktemp -d "${TMPDIR:-/tmp}/tle-run-all.XXXXXX")"
trap 'rm -rf "$CUBINS"' EXIT
export LD_LIBRARY_PATH="$BUILD_DIR/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

skip memory || part memory env BUILD_DIR="$BUILD_DIR" bash "$ROOT/bench/run_suite.sh" "$OUT/memory_bound"

if ! skip matmul; then
  mkdir -p "$OUT/matmul"
  CONFIGS=(128x128x64x4x3 128x256x64x8x3)
  part matmul-cubins bash "$ROOT/bench/build_matmul_cubins.sh" "$TLEC" "$CUBINS/mm" "${CONFIGS[@]}"
  part matmul-cubins-bf16 env DTYPE=bf16 bash "$ROOT/bench/build_matmul_cubins.sh" "$TLEC" "$CUBINS/mm" "${CONFIGS[@]}"
  for dt in fp16 bf16; do
    part "matmul-$dt" python3 "$ROOT/bench/matmul_compare.py" --dtype "$dt" --lib "$LIB" --cubins "$CUBINS/mm" \
      --configs "$(IFS=,; echo "${CONFIGS[*]}")" \
      --sizes 4096x4096x4096,8192x8192x8192,8192x8192x1024,16x8192x8192,64x8192x8192,128x8192x8192 \
      --out "$OUT/matmul/matmul_compare_$dt.json"
  done
  # Decode shapes (M = 16, 64, 128 rows, N = K = 8192) also with decode-sized tiles: 128-row
  # tiles leave most of M empty and give only N / BLOCK_N programs, so BLOCK_M 64 with one
  # warpgroup, BLOCK_N 64 or 128 and BLOCK_K 128 in four stages keep more of the B stream in flight.
  DCONFIGS=(64x64x128x4x4 64x128x128x4x4)
  part matmul-cubins-decode bash "$ROOT/bench/build_matmul_cubins.sh" "$TLEC" "$CUBINS/mm" "${DCONFIGS[@]}"
  part matmul-cubins-decode-bf16 env DTYPE=bf16 bash "$ROOT/bench/build_matmul_cubins.sh" "$TLEC" "$CUBINS/mm" "${DCONFIGS[@]}"
  for dt in fp16 bf16; do
    part "matmul-decode-$dt" python3 "$ROOT/bench/matmul_compare.py" --dtype "$dt" --lib "$LIB" --cubins "$CUBINS/mm" \
      --configs "$(IFS=,; echo "${DCONFIGS[*]}")" --sizes 16x8192x8192,64x8192x8192,128x8192x8192 \
      --out "$OUT/matmul/matmul_compare_decode_$dt.json"
  done
  # The same kernel written with tensor descriptors (examples/matmul_tma.tle): tlec copies its tiles
  # with TMA; Triton runs the same source (descriptors built on the device).
  for dt in fp16 bf16; do
    part "matmul-cubins-tma-$dt" env DTYPE=$dt SOURCE=matmul_tma bash "$ROOT/bench/build_matmul_cubins.sh" "$TLEC" \
      "$CUBINS/mm" "${CONFIGS[@]}" "${DCONFIGS[@]}"
    part "matmul-tma-$dt" python3 "$ROOT/bench/matmul_compare.py" --dtype "$dt" --source matmul_tma --lib "$LIB" \
      --cubins "$CUBINS/mm" --configs "$(IFS=,; echo "${CONFIGS[*]}")" \
      --sizes 4096x4096x4096,8192x8192x8192,8192x8192x1024 --out "$OUT/matmul/matmul_compare_tma_$dt.json"
    part "matmul-tma-decode-$dt" python3 "$ROOT/bench/matmul_compare.py" --dtype "$dt" --source matmul_tma \
      --lib "$LIB" --cubins "$CUBINS/mm" --configs "$(IFS=,; echo "${DCONFIGS[*]}")" \
      --sizes 16x8192x8192,64x8192x8192,128x8192x8192 --out "$OUT/matmul/matmul_compare_tma_decode_$dt.json"
  done
  # The persistent form (examples/matmul_persistent.tle: one program per SM looping over the
  # tiles), with the 128x256 tile (one CTA per SM either way; bench/results/matmul/persistent/).
  for dt in fp16 bf16; do
    part "matmul-cubins-persistent-$dt" env DTYPE=$dt SOURCE=matmul_persistent bash "$ROOT/bench/build_matmul_cubins.sh" \
      "$TLEC" "$CUBINS/mm" 128x256x64x8x3
    part "matmul-persistent-$dt" python3 "$ROOT/bench/matmul_compare.py" --dtype "$dt" --source matmul_persistent \
      --lib "$LIB" --cubins "$CUBINS/mm" --configs 128x256x64x8x3 \
      --sizes 4096x4096x4096,8192x8192x8192,8192x8192x1024 --out "$OUT/matmul/matmul_compare_persistent_$dt.json"
  done
  # fp8 e4m3 (examples/matmul_fp8.tle: B given transposed, K contiguous), BLOCK_K 128.
  CONFIGS8=(128x128x128x8x3 128x256x128x8x3 128x256x128x8x4)
  part matmul-cubins-fp8 env DTYPE=fp8e4nv bash "$ROOT/bench/build_matmul_cubins.sh" "$TLEC" "$CUBINS/mm" "${CONFIGS8[@]}"
  part matmul-fp8e4nv python3 "$ROOT/bench/matmul_compare.py" --dtype fp8e4nv --lib "$LIB" --cubins "$CUBINS/mm" \
    --configs "$(IFS=,; echo "${CONFIGS8[*]}")" --sizes 4096x4096x4096,8192x8192x8192,8192x8192x1024 \
    --out "$OUT/matmul/matmul_compare_fp8e4nv.json"
fi

if ! skip attention; then
  mkdir -p "$OUT/attention" "$CUBINS/attn"
  # examples/attention.tle (pointer tiles) and the same written with tensor descriptors
  # (examples/attention_tma.tle; TMA copies in tlec), each with its own parameters.
  declare -A SIGS=(
    [attention]="*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32, i32:16"
    [attention_tma]="*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32, i32, i32:16")
  # fp16, then bf16 (the same sources with bf16 pointers; cubins and results named _bf16).
  for dt in fp16 bf16; do
    sfx=""; [[ $dt == bf16 ]] && sfx=_bf16
    for src in attention attention_tma; do
      for d in 64 128; do
        for c in 0 1; do
          part "$src$sfx-cubin-d$d-c$c" "$TLEC" "$ROOT/examples/$src.tle" -s "${SIGS[$src]//fp16/$dt}, $d, 128, 64, $c" -w 8 \
            --arch sm_90a -o "$CUBINS/attn/${src}${sfx}_d${d}_c${c}.sm_90a.cubin"
        done
      done
      part "$src$sfx" python3 "$ROOT/bench/attention_bench.py" --source "$src" --dtype "$dt" --lib "$LIB" \
        --cubins "$CUBINS/attn" --ctx 1024,4096,16384 --out "$OUT/attention/$src$sfx.json"
    done
  done
fi

if ! skip tune; then
  part tune-matmul env BUILD_DIR="$BUILD_DIR" TUNE_KERNELS=matmul SKIP_COMPILE=1 TUNE_ARGS="--jobs $(nproc)" \
    bash "$ROOT/bench/run_tune.sh" "$OUT/tune/matmul"
  part tune-softmax env BUILD_DIR="$BUILD_DIR" TUNE_KERNELS=softmax TUNE_ARGS="--jobs $(nproc)" \
    bash "$ROOT/bench/run_tune.sh" "$OUT/tune/softmax_compile"
fi

skip plots || part plots python3 "$ROOT/bench/plot_results.py" --results "$OUT"
echo "run_all.sh: wrote $OUT (status $status); log $LOG"
exit $status
