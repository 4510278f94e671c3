#!/usr/bin/env bash
# Compiles the cubins bench/raw_bench.py times (tests/gpu/raw/raw_kernels.tle: TLE-Raw examples and
# the same operations in tile code) into DIR, for sm_90a. Needs clang-19 (the CUDA functions).
# Usage: bench/raw_cubins.sh TLEC DIR
set -euo pipefail
TLEC="$1"; DIR="$2"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/gpu/raw/raw_kernels.tle"
mkdir -p "$DIR"
c() { "$TLEC" "$SRC" --arch sm_90a -n "$1" -s "$2" -o "$DIR/$1.sm_90a.cubin"; }
for k in raw_vector_add tile_vector_add; do c "$k" "*fp32:16, *fp32:16, *fp32:16, i32, 1024"; done
for k in raw_gelu raw_gelu_fragment tile_gelu; do c "$k" "*fp32:16, *fp32:16, i32:16, 4, 1024"; done
for k in raw_row_sums raw_row_sums_fragment tile_row_sums tile_row_sums_staged; do c "$k" "*fp32:16, *fp32:16, 16"; done
for k in raw_mixed raw_mixed_async tile_mixed tile_mixed_staged; do c "$k" "*fp16:16, *fp32:16, i32:16, 32, 64"; done
for k in raw_pipeline tile_pipeline; do c "$k" "*fp16:16, *fp32:16, i32:16, i32, 32, 64"; done
