#!/usr/bin/env bash
# TLE-Raw on the GPU: tests/gpu/raw/raw_kernels.tle's kernels call CUDA device functions
# (raw/raw_funcs.cu) through FlagTree's protocol, run with tle-run --target gpu, each output
# checked: a vector add on global pointers; GELU on a register tile through shared memory and as
# each thread's fragment (registers), against the exact formula and against the same GELU in tile
# code; which elements a fragment holds (4 and 8 warps); Triton's tutorial GEMM with the inner
# product in CUDA (FlagTree's (outputs, inputs) form), exact on small integers; row sums by
# inline-PTX warp shuffles over a TLE-Struct buffer and over the tile's fragments in registers;
# and one kernel mixing Lite (extract_tile),
# Struct (alloc, local_ptr) and Raw (a CUDA function filling the buffer with 16-byte loads and
# stores, or with cp.async).
# Exit 77 without a GPU, or without clang-19 when the kernels must be compiled here.
# Usage: raw_gpu.sh TLE_RUN [SOURCE_DIR]
#        raw_gpu.sh --emit-tir TLEC DIR [SOURCE_DIR]   write each specialisation as tile IR (the
#                                                       raw functions' LLVM IR inside) into DIR
#        TLE_RAW_TIR=DIR raw_gpu.sh TLE_RUN [SOURCE_DIR]  run those, on a machine without clang-19
set -uo pipefail
EMIT=""
if [ "${1:-}" = "--emit-tir" ]; then
  EMIT="$3"; TLEC="$2"; shift 3; TLE_RUN=""
else
  TLE_RUN="$1"; shift
fi
SRC="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
TLE="$SRC/tests/gpu/raw/raw_kernels.tle"
TIR="${TLE_RAW_TIR:-}"
if [ -z "$EMIT" ] && [ -z "$TIR" ] && ! command -v clang-19 >/dev/null && [ -z "${TLE_CLANG:-}" ]; then
  echo "SKIPPED: no clang-19 to compile CUDA functions (set TLE_RAW_TIR to run precompiled tile IR)"; exit 77
fi
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# run ID KERNEL SIGNATURE WARPS TLE-RUN-ARGUMENTS...: compiles KERNEL (or emits it as ID.tir), then
# runs it expecting tle-run's --expect checks to pass.
run() {
  local id="$1" kernel="$2" sig="$3" warps="$4"
  shift 4
  if [ -n "$EMIT" ]; then
    "$TLEC" "$TLE" -n "$kernel" -s "$sig" -w "$warps" --emit=tile -o "$EMIT/$id.tir" || status=1
    return
  fi
  if [ -n "$TIR" ]; then
    KERNELS="$TIR/$id.tir" expect "$id" "$@"
  else
    KERNELS="$TLE" expect "$id" -n "$kernel" -s "$sig" -w "$warps" "$@"
  fi
}

GELU='(lambda x: 0.5 * x * (1 + __import__("math").tanh(0.7978845608028654 * (x + 0.044715 * x ** 3))))'
python3 "$SRC/tests/gpu/write_npy.py" "$TMP" "x:f4:5000:i % 1000" "y:f4:5000:(2 * i) % 7" "xy:f4:5000:i % 1000 + (2 * i) % 7" \
  "g:f4:64x128:(i % 97 - 48) / 16" "gy:f4:64x128:$GELU((i % 97 - 48) / 16)" \
  "gn:f4:256x2:(i % 97 - 48) / 16" "gny:f4:256x2:$GELU((i % 97 - 48) / 16)" \
  "idx2:i4:64x32:2 * i" \
  "a:f2:64x96:(i * 7) % 5 - 2" "b:f2:96x64:(i * 3) % 7 - 3" \
  "c:f4:64x64:sum(((i // 64 * 96 + k) * 7 % 5 - 2) * ((k * 64 + i % 64) * 3 % 7 - 3) for k in range(96))" \
  "r:f4:64x32:i % 13 - 6" "rs:f4:64:sum((i * 32 + j) % 13 - 6 for j in range(32))" \
  "h:f2:64x64:i % 251" "hs:f4:64x32:(i // 32 * 64 + i % 32) % 251 + (i // 32 * 64 + i % 32 + 32) % 251" \
  "hp:f2:256x64:i % 509" "hps:f4:256x32:(i // 32 * 64 + i % 32) % 509 + (i // 32 * 64 + i % 32 + 32) % 509"

run vector_add raw_vector_add "*fp32:16, *fp32:16, *fp32:16, i32, 1024" 4 --grid "cdiv(n, 1024)" \
  --arg x_ptr="$TMP/x.npy" --arg y_ptr="$TMP/y.npy" --arg out_ptr=zeros:f32:5000 --arg n=5000 --expect out_ptr="$TMP/xy.npy"
for k in raw_gelu raw_gelu_fragment tile_gelu; do
  run "$k" "$k" "*fp32:16, *fp32:16, i32:16, 16, 128" 4 --grid 4 \
    --arg x_ptr="$TMP/g.npy" --arg y_ptr=zeros:f32:64x128 --arg n_cols=128 --expect y_ptr="$TMP/gy.npy" --atol 1e-5 --rtol 1e-5
done
# Rows of 2 elements: gelu_tile's element-by-element path (rows of whole 16-byte vectors take
# the vector path above).
run gelu_narrow raw_gelu "*fp32:16, *fp32:16, i32, 64, 2" 4 --grid 4 \
  --arg x_ptr="$TMP/gn.npy" --arg y_ptr=zeros:f32:256x2 --arg n_cols=2 --expect y_ptr="$TMP/gny.npy" --atol 1e-5 --rtol 1e-5
for w in 4 8; do
  run "fragment_index_w$w" raw_fragment_index "*i32:16, 64, 32" "$w" --arg y_ptr=zeros:i32:64x32 --expect y_ptr="$TMP/idx2.npy"
done
run matmul raw_matmul "*fp16:16, *fp16:16, *fp32:16, i32, i32, i32, 32, 32, 32" 4 --grid "2, 2" \
  --arg a_ptr="$TMP/a.npy" --arg b_ptr="$TMP/b.npy" --arg c_ptr=zeros:f32:64x64 --arg M=64 --arg N=64 --arg K=96 \
  --expect c_ptr="$TMP/c.npy" --atol 0 --rtol 0
for k in raw_row_sums raw_row_sums_fragment tile_row_sums_staged; do
  run "$k" "$k" "*fp32:16, *fp32:16, 16" 4 --grid 4 \
    --arg x_ptr="$TMP/r.npy" --arg out_ptr=zeros:f32:64 --expect out_ptr="$TMP/rs.npy" --atol 0 --rtol 0
done
for k in raw_mixed raw_mixed_async; do
  run "$k" "$k" "*fp16:16, *fp32:16, i32:16, 32, 64" 4 --grid 2 \
    --arg x_ptr="$TMP/h.npy" --arg out_ptr=zeros:f32:64x32 --arg n_cols=64 --expect out_ptr="$TMP/hs.npy" --atol 0 --rtol 0
done
# The cp.async pipeline over 4 blocks of 32 rows per program (2 programs: 256 rows), and its
# tile-code twin.
for k in raw_pipeline tile_pipeline; do
  run "$k" "$k" "*fp16:16, *fp32:16, i32:16, i32, 32, 64" 4 --grid 2 \
    --arg x_ptr="$TMP/hp.npy" --arg out_ptr=zeros:f32:256x32 --arg n_cols=64 --arg n_blocks=4 \
    --expect out_ptr="$TMP/hps.npy" --atol 0 --rtol 0
done
exit $status
