#!/usr/bin/env bash
# tle.gpu.warp_specialize on the GPU: tests/gpu/ws/ws_kernels.tle's kernels run with tle-run
# --target gpu: a TMA producer partition and a consumer worker of 4 warps over a ring of 2 and 3
# slots and 4 tiles (each slot's mbarriers complete more than one phase), its output checked
# against the input plus one; a tle.pipe from a scalar worker of 1 and 4 warps to the default
# partition over 2 and 3 stages and 5 iterations; a GEMM with a TMA producer and a wgmma consumer
# worker (256 x 256 x 320, 128 x 128 tiles, 5 K steps over 2, 3 and 4 stages) against the exact
# product of small integers, and the same by two consumer partitions of tile code in ping-pong;
# a tle.pipe filled by TMA copies (writer partition or one body); the struct GEMM whose consumers
# hand each tile to a storer partition, and the one whose last waves are split along K (stream-K).
# Exit 77 without a GPU.
# Usage: ws_gpu.sh TLE_RUN [SOURCE_DIR]
set -uo pipefail
TLE_RUN="$1"
SRC="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
KERNELS="$SRC/tests/gpu/ws/ws_kernels.tle"
# shellcheck source=tle_run_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/tle_run_check.sh"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 "$SRC/tests/gpu/write_npy.py" "$TMP" "x:f2:256x64:i % 1000" "x1:f2:256x64:i % 1000 + 1" \
  "p:i4:5x128:7 * (i // 128) + i % 128" \
  "a:f2:256x320:((i % 320) % 3 + 1) * ((i % 320) % 4 == (i // 320) % 4)" \
  "b:f2:320x256:((i // 256) * 7 + (i % 256) * 3) % 11 - 5" \
  "c:f4:256x256:sum((k % 3 + 1) * ((k * 7 + (i % 256) * 3) % 11 - 5) for k in range((i // 256) % 4, 320, 4))" \
  "b4:f2:320x1024:((i // 1024) * 7 + (i % 1024) * 3) % 11 - 5" \
  "c4:f4:256x1024:sum((k % 3 + 1) * ((k * 7 + (i % 1024) * 3) % 11 - 5) for k in range((i // 1024) % 4, 320, 4))"
for stages in 2 3; do
  expect "ws_tma stages=$stages" -n ws_tma -s "*fp16:16, *fp16:16, i32, i32:16, 64, 64, $stages" -w 4 \
    --arg x_ptr="$TMP/x.npy" --arg y_ptr=zeros:f16:256x64 --arg M=256 --arg N=64 --expect y_ptr="$TMP/x1.npy" --atol 0 --rtol 0
  for ww in 1 4; do
    expect "ws_pipe stages=$stages worker_warps=$ww" -n ws_pipe -s "*i32:16, i32, 128, $stages, $ww" -w 4 \
      --arg y_ptr=zeros:i32:5x128 --arg n=5 --expect y_ptr="$TMP/p.npy"
  done
done
# A tle.pipe whose field TMA copies fill (completing on the stage's "full" mbarrier), the writer a
# worker partition or the same body as the reader.
for stages in 2 3; do for ws in True False; do
  expect "pipe_tma stages=$stages ws=$ws" -n pipe_tma -s "*fp16:16, *fp16:16, i32, i32:16, 64, 64, $stages, $ws" -w 4 \
    --arg x_ptr="$TMP/x.npy" --arg y_ptr=zeros:f16:256x64 --arg M=256 --arg N=64 --expect y_ptr="$TMP/x1.npy" --atol 0 --rtol 0
done; done
# C = A @ B with small integers (exact): A's row i weighs columns k = i mod 4 by k % 3 + 1.
for stages in 2 3 4; do
  expect "ws_gemm stages=$stages" -n ws_gemm -s "*fp16:16, *fp16:16, *fp32:16, i32, i32:16, i32:16, 128, 128, 64, $stages" \
    -w 4 --grid "2, 2" --arg a_ptr="$TMP/a.npy" --arg b_ptr="$TMP/b.npy" --arg c_ptr=zeros:f32:256x256 \
    --arg M=256 --arg N=256 --arg K=320 --expect c_ptr="$TMP/c.npy" --atol 0 --rtol 0
done
# The same product by two consumer partitions that compute on tiles side by side (64 rows each,
# ping-pong on named barriers) and a TMA producer warpgroup.
for stages in 2 3; do
  expect "ws_gemm_pingpong stages=$stages" -n ws_gemm_pingpong -s "*fp16:16, *fp16:16, *fp32:16, i32, i32:16, i32:16, 128, 64, $stages" \
    -w 4 --grid "2, 2" --arg a_ptr="$TMP/a.npy" --arg b_ptr="$TMP/b.npy" --arg c_ptr=zeros:f32:256x256 \
    --arg M=256 --arg N=256 --arg K=320 --expect c_ptr="$TMP/c.npy" --atol 0 --rtol 0
done
# The persistent struct GEMM with a storer partition (bench/struct_gemm/matmul_struct_ws.tle): the
# consumers hand each finished tile to a storer warpgroup's TMA store through one staging buffer;
# 4 tiles of 128 x 128 on one program (the buffer handed over 4 times) and on 3.
GEMM="$SRC/bench/struct_gemm/matmul_struct_ws.tle"
for grid in 1 3; do
  KERNELS="$GEMM" expect "gemm_storer grid=$grid" -n matmul_struct_ws_storer \
    -s "*fp16:16, *fp16:16, *fp32:16, i32, i32:16, i32:16, 128, 128, 64, 3" -w 8 --grid $grid \
    --arg a_ptr="$TMP/a.npy" --arg b_ptr="$TMP/b.npy" --arg c_ptr=zeros:f32:256x256 \
    --arg M=256 --arg N=256 --arg K=320 --expect c_ptr="$TMP/c.npy" --atol 0 --rtol 0
done
# The stream-K struct GEMM: 16 tiles of 128 x 128 (5 k steps each) on 3 programs: 12 tiles whole,
# the other 4 cut into runs of 6, 7 and 7 k steps, so two tiles are each summed by two programs
# through the fp32 workspace and a flag (which the kernel leaves zero: a second launch with the
# first one's flags must agree).
flags=zeros:i32:3
for launch in 1 2; do
  KERNELS="$GEMM" expect "gemm_streamk launch=$launch" -n matmul_struct_ws_streamk \
    -s "*fp16:16, *fp16:16, *fp32:16, *fp32:16, *i32:16, i32, i32:16, i32:16, 128, 128, 64, 3" -w 8 --grid 3 \
    --arg a_ptr="$TMP/a.npy" --arg b_ptr="$TMP/b4.npy" --arg c_ptr=zeros:f32:256x1024 \
    --arg ws_ptr=zeros:f32:3x16384 --arg flags_ptr="$flags" --save flags_ptr="$TMP/flags.npy" \
    --arg M=256 --arg N=1024 --arg K=320 --expect c_ptr="$TMP/c4.npy" --atol 0 --rtol 0
  flags="$TMP/flags.npy"
done
exit $status
